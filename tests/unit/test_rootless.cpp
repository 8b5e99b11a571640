// Rootless: detection, the state root and /etc/subuid ranges (include/minirun/rootless.hpp);
// its cgroups are in test_cgroup_rootless.cpp.
#include "minirun/rootless.hpp"

#include <catch2/catch.hpp>

using namespace minirun;
using namespace minirun::rootless;

TEST_CASE("uid_map_is_whole: only the initial user namespace's map", "[rootless]") {
    CHECK(uid_map_is_whole("         0          0 4294967295\n"));
    CHECK(uid_map_is_whole("0 0 4294967295"));
    // rootless podman's: its user namespace maps the user and its subuid range
    CHECK_FALSE(uid_map_is_whole("         0       1001          1\n"
                                 "         1     200000      65536\n"));
    CHECK_FALSE(uid_map_is_whole("0 0 65536\n"));
    CHECK_FALSE(uid_map_is_whole("0 1 4294967295\n"));
    CHECK_FALSE(uid_map_is_whole(""));
    CHECK_FALSE(uid_map_is_whole("0 0 4294967295 7\n"));
}

TEST_CASE("override_detection: --rootless true|false wins over detection", "[rootless]") {
    override_detection(true);
    CHECK(active());
    override_detection(false);
    CHECK_FALSE(active());
    override_detection(std::nullopt);
}

TEST_CASE("choose_state_root: XDG_RUNTIME_DIR when it is the caller's", "[rootless]") {
    StateRootFacts facts;
    facts.euid = 1001;
    facts.xdg_runtime_dir = "/run/user/1001";
    facts.xdg_owner = 1001;
    auto chosen = choose_state_root(facts);
    REQUIRE(chosen);
    CHECK(chosen->path == "/run/user/1001/mini-run");
    CHECK(chosen->warning.empty());

    SECTION("someone else's XDG_RUNTIME_DIR: /run/user/<uid>, with a warning") {
        facts.xdg_runtime_dir = "/tmp";
        facts.xdg_owner = 0;
        facts.run_user_owner = 1001;
        chosen = choose_state_root(facts);
        REQUIRE(chosen);
        CHECK(chosen->path == "/run/user/1001/mini-run");
        CHECK(chosen->warning ==
              "XDG_RUNTIME_DIR \"/tmp\" belongs to uid 0, not to you (uid 1001): not used for "
              "state");
    }
    SECTION("unset, and no /run/user/<uid> of ours: an error that says what to do") {
        facts.xdg_runtime_dir.reset();
        facts.xdg_owner.reset();
        facts.run_user_owner = 0;
        chosen = choose_state_root(facts);
        REQUIRE_FALSE(chosen);
        CHECK(chosen.error().message() ==
              "running rootless, and no directory for container state: XDG_RUNTIME_DIR is not "
              "set, and /run/user/1001 is not yours; set XDG_RUNTIME_DIR to a directory of "
              "yours, or pass --root");
    }
    SECTION("XDG_RUNTIME_DIR that is not a directory") {
        facts.xdg_owner.reset();
        chosen = choose_state_root(facts);
        REQUIRE_FALSE(chosen);
        CHECK_THAT(chosen.error().message(),
                   Catch::Contains("XDG_RUNTIME_DIR \"/run/user/1001\" is not a directory"));
    }
}

TEST_CASE("parse_subid: the user's ranges, by name or uid", "[rootless]") {
    const std::string text = "alice:100000:65536\n"
                             "bob:165536:65536\n"
                             "1001:300000:1000\n"
                             "alice:500000:10\n"
                             "broken line\n"
                             "alice:x:5\n"
                             "alice:7:0\n"
                             "alice:4294967000:1000\n";
    auto ranges = parse_subid(text, "alice", 1001);
    REQUIRE(ranges.size() == 3);
    CHECK(ranges[0].start == 100000);
    CHECK(ranges[0].count == 65536);
    CHECK(ranges[1].start == 300000); // by uid
    CHECK(ranges[2].start == 500000);
    CHECK(parse_subid(text, "carol", 1002).empty());
    CHECK(parse_subid("", "alice", 1001).empty());
}

TEST_CASE("maps_only_own_id: one mapping of size 1 onto the caller's id", "[rootless]") {
    CHECK(maps_only_own_id({{0, 1001, 1}}, 1001));
    CHECK_FALSE(maps_only_own_id({{0, 1001, 2}}, 1001));
    CHECK_FALSE(maps_only_own_id({{0, 1002, 1}}, 1001));
    CHECK_FALSE(maps_only_own_id({{0, 1001, 1}, {1, 100000, 65536}}, 1001));
    CHECK_FALSE(maps_only_own_id({}, 1001));
}

TEST_CASE("check_subid_mappings: own id and subuid ranges pass, others are named", "[rootless]") {
    const std::vector<SubidRange> ranges = {{100000, 65536}, {300000, 10}};
    CHECK(check_subid_mappings({{0, 1001, 1}, {1, 100000, 65536}}, "linux.uidMappings", 1001,
                               "alice", "/etc/subuid", ranges));
    CHECK(check_subid_mappings({{0, 300002, 8}}, "linux.uidMappings", 1001, "alice", "/etc/subuid",
                               ranges));

    auto outside = check_subid_mappings({{0, 1001, 1}, {1, 100000, 65537}}, "linux.uidMappings",
                                        1001, "alice", "/etc/subuid", ranges);
    REQUIRE_FALSE(outside);
    CHECK(outside.error().message() ==
          "linux.uidMappings[1]: host ids 100000-165536 are not yours: /etc/subuid gives "
          "\"alice\" 100000-165535, 300000-300009 (and its own id 1001)");

    auto someone_else = check_subid_mappings({{0, 0, 1}}, "linux.gidMappings", 1001, "alice",
                                             "/etc/subgid", ranges);
    REQUIRE_FALSE(someone_else);
    CHECK_THAT(someone_else.error().message(),
               Catch::StartsWith("linux.gidMappings[0]: host ids 0-0 are not yours"));

    auto no_range = check_subid_mappings({{0, 1001, 1}, {1, 100000, 10}}, "linux.uidMappings", 1001,
                                         "alice", "/etc/subuid", {});
    REQUIRE_FALSE(no_range);
    CHECK(no_range.error().message() ==
          "linux.uidMappings[1]: host ids 100000-100009 are not yours: /etc/subuid gives "
          "\"alice\" (id 1001) no range; only 1001 itself can be mapped");
}
