// linux.intelRdt: parsing, and the resctrl group against a fake resctrl tree in a temp
// dir (plain directories and files standing in for the kernel's): the files written, the
// join of an existing closID group, and what a failed create or a delete removes.
#include "cgroup/intel_rdt.hpp"
#include "temp_dir.hpp"

#include "minirun/spec.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace minirun;
using minirun::testing::TempDir;
namespace rdt = minirun::runtime::intel_rdt;
namespace stdfs = std::filesystem;

namespace {

Result<spec::Spec> parse_with(const nlohmann::json& intel_rdt) {
    auto json = nlohmann::json::parse(spec::default_spec_json(false, 0, 0));
    json["linux"]["intelRdt"] = intel_rdt;
    return spec::parse_spec(json.dump());
}

spec::IntelRdt parsed(const nlohmann::json& intel_rdt) {
    auto spec = parse_with(intel_rdt);
    INFO((spec ? std::string() : spec.error().message()));
    REQUIRE(spec.ok());
    REQUIRE(spec->linux.intel_rdt.has_value());
    return *spec->linux.intel_rdt;
}

std::string error_of(const nlohmann::json& intel_rdt) {
    auto spec = parse_with(intel_rdt);
    REQUIRE_FALSE(spec.ok());
    return spec.error().message();
}

std::string contents(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool is_dir(const std::string& path) {
    std::error_code error;
    return stdfs::is_directory(path, error);
}

// resctrl removes a group's files with its directory; the fake's plain files go first.
void remove_fake_files(const std::string& dir) {
    for (const char* name : {"tasks", "schemata"}) {
        ::unlink((dir + "/" + name).c_str());
    }
}

} // namespace

TEST_CASE("intelRdt: the fields are read; wrong values name their field", "[intelrdt]") {
    auto full = parsed({{"closID", "guaranteed_group"},
                        {"l3CacheSchema", "L3:0=7f0;1=1f"},
                        {"memBwSchema", "MB:0=20;1=70"},
                        {"schemata", {"L2:0=f;1=f"}},
                        {"enableMonitoring", true},
                        {"enableCMT", true},
                        {"enableMBM", false}});
    CHECK(full.clos_id == "guaranteed_group");
    CHECK(full.l3_cache_schema == "L3:0=7f0;1=1f");
    CHECK(full.mem_bw_schema == "MB:0=20;1=70");
    CHECK(full.schemata == std::vector<std::string>{"L2:0=f;1=f"});
    CHECK(full.enable_monitoring);
    CHECK(full.enable_cmt);
    CHECK_FALSE(full.enable_mbm);
    CHECK(parsed(nlohmann::json::object()).clos_id.empty());

    CHECK(error_of({{"closID", "../escape"}}) ==
          "linux.intelRdt.closID: must name a directory of its own, got \"../escape\"");
    CHECK(error_of({{"closID", ".."}}) ==
          "linux.intelRdt.closID: must name a directory of its own, got \"..\"");
    CHECK(error_of({{"memBwSchema", "L3:0=f"}}) ==
          "linux.intelRdt.memBwSchema: must start with \"MB:\", got \"L3:0=f\"");
    CHECK(error_of({{"memBwSchema", "MB:0=20\nMB:1=30"}}) ==
          "linux.intelRdt.memBwSchema: must be one line");
    CHECK(error_of({{"schemata", "L3:0=f"}}) ==
          "linux.intelRdt.schemata: expected an array, got string");
    CHECK(error_of({{"schemata", {"L3:0=f\nMB:0=1"}}}) ==
          "linux.intelRdt.schemata[0]: must be one line of the schemata file");
    CHECK(error_of({{"enableMonitoring", "yes"}}) ==
          "linux.intelRdt.enableMonitoring: expected a boolean, got string");
}

TEST_CASE("intelRdt: what goes into schemata, in which order", "[intelrdt]") {
    CHECK(rdt::schemata_writes(parsed({{"l3CacheSchema", "L3:0=f"}})) ==
          std::vector<std::string>{"L3:0=f"});
    CHECK(rdt::schemata_writes(parsed({{"memBwSchema", "MB:0=20"}})) ==
          std::vector<std::string>{"MB:0=20"});
    CHECK(rdt::schemata_writes(parsed({{"l3CacheSchema", "L3:0=f"}, {"memBwSchema", "MB:0=20"}})) ==
          std::vector<std::string>{"L3:0=f\nMB:0=20"});
    // The spec: l3CacheSchema's own MB: line gives way to memBwSchema.
    CHECK(rdt::schemata_writes(
              parsed({{"l3CacheSchema", "L3:0=f\nMB:0=90"}, {"memBwSchema", "MB:0=20"}})) ==
          std::vector<std::string>{"L3:0=f\nMB:0=20"});
    CHECK(rdt::schemata_writes(parsed({{"l3CacheSchema", "L3:0=f\nMB:0=90"}})) ==
          std::vector<std::string>{"L3:0=f\nMB:0=90"});
    // schemata last, in a write of its own.
    CHECK(rdt::schemata_writes(
              parsed({{"schemata", {"L2:0=3", "MB:0=50"}}, {"l3CacheSchema", "L3:0=f"}})) ==
          std::vector<std::string>{"L3:0=f", "L2:0=3\nMB:0=50"});
    CHECK(rdt::schemata_writes(parsed({{"closID", "x"}})).empty());
}

TEST_CASE("intelRdt: the container's own group: made, written, joined, removed", "[intelrdt]") {
    TempDir root;
    auto config = parsed({{"l3CacheSchema", "L3:0=f0"}, {"memBwSchema", "MB:0=50"}});
    auto group = rdt::prepare(root.path(), config, "web");
    REQUIRE(group.ok());
    CHECK(group->dir == root.path() + "/web");
    CHECK(group->created);
    CHECK(contents(root.path() + "/web/schemata") == "L3:0=f0\nMB:0=50\n");
    REQUIRE(rdt::add_process(*group, 4242).ok());
    CHECK(contents(root.path() + "/web/tasks") == "4242\n");
    // Only these two files: nothing else is written anywhere.
    size_t entries = 0;
    for (const auto& entry : stdfs::recursive_directory_iterator(root.path())) {
        (void)entry;
        ++entries;
    }
    CHECK(entries == 3); // web, web/schemata, web/tasks

    // A second container with the same id (or a leftover) is refused, untouched.
    auto again = rdt::prepare(root.path(), config, "web");
    REQUIRE_FALSE(again.ok());
    CHECK(again.error().message() ==
          "linux.intelRdt: " + root.path() +
              "/web exists already (without closID the group is the container's own, named "
              "after its id)");
    CHECK(contents(root.path() + "/web/tasks") == "4242\n");

    // delete (and exec) find it again from the config and the id alone.
    auto found = rdt::group_of(root.path(), config, "web");
    CHECK(found.dir == group->dir);
    CHECK(found.created);
    remove_fake_files(group->dir);
    REQUIRE(rdt::undo(found).ok());
    CHECK_FALSE(is_dir(root.path() + "/web"));
}

TEST_CASE("intelRdt: a closID group that exists is joined when its schemata match", "[intelrdt]") {
    TempDir root;
    std::string dir = root.path() + "/shared";
    REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
    // As the kernel shows it: names padded, every domain, leading zeros.
    const std::string existing = "    L3:0=00f0;1=fff\n    MB:0=100;1= 50\n";
    std::ofstream(dir + "/schemata") << existing;

    auto matching =
        parsed({{"closID", "shared"}, {"l3CacheSchema", "L3:0=f0"}, {"memBwSchema", "MB:1=50"}});
    auto group = rdt::prepare(root.path(), matching, "c1");
    REQUIRE(group.ok());
    CHECK(group->dir == dir);
    CHECK_FALSE(group->created);
    CHECK(contents(dir + "/schemata") == existing); // compared, not written
    REQUIRE(rdt::add_process(*group, 7).ok());
    CHECK(contents(dir + "/tasks") == "7\n");
    // Not ours: neither a failed create nor a delete removes it.
    REQUIRE(rdt::undo(*group).ok());
    CHECK_FALSE(rdt::group_of(root.path(), matching, "c1").created);
    REQUIRE(rdt::undo(rdt::group_of(root.path(), matching, "c1")).ok());
    CHECK(is_dir(dir));

    // Other values, or a resource the group lacks: refused, nothing written.
    auto other = rdt::prepare(root.path(),
                              parsed({{"closID", "shared"}, {"l3CacheSchema", "L3:0=ff"}}), "c2");
    REQUIRE_FALSE(other.ok());
    CHECK(other.error().message() ==
          "linux.intelRdt.closID: group \"shared\" exists with other schemata: L3 domain 0 is f0 "
          "in the group, ff in the config");
    auto lacking = rdt::prepare(root.path(),
                                parsed({{"closID", "shared"}, {"l3CacheSchema", "L2:0=3"}}), "c3");
    REQUIRE_FALSE(lacking.ok());
    CHECK_THAT(lacking.error().message(),
               Catch::Matchers::EndsWith("the group has no L2 line, the config has \"L2:0=3\""));
    CHECK(contents(dir + "/schemata") == existing);

    // schemata (the 1.3 field) is written to a joined group too.
    auto with_lines =
        rdt::prepare(root.path(), parsed({{"closID", "shared"}, {"schemata", {"L3:1=ff"}}}), "c4");
    REQUIRE(with_lines.ok());
    CHECK(contents(dir + "/schemata") == "L3:1=ff\n");
}

TEST_CASE("intelRdt: a closID with no schema must exist; a missing one is made and written",
          "[intelrdt]") {
    TempDir root;
    auto missing = rdt::prepare(root.path(), parsed({{"closID", "gold"}}), "c1");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message() == "linux.intelRdt.closID: no resctrl group \"gold\" (" +
                                           root.path() +
                                           "/gold): without a schema it must exist already");
    CHECK_FALSE(is_dir(root.path() + "/gold"));

    auto made =
        rdt::prepare(root.path(), parsed({{"closID", "gold"}, {"l3CacheSchema", "L3:0=3"}}), "c1");
    REQUIRE(made.ok());
    CHECK(made->created);
    CHECK(contents(root.path() + "/gold/schemata") == "L3:0=3\n");
    // A failed create removes what it made.
    remove_fake_files(made->dir);
    REQUIRE(rdt::undo(*made).ok());
    CHECK_FALSE(is_dir(root.path() + "/gold"));

    REQUIRE(::mkdir((root.path() + "/gold").c_str(), 0755) == 0);
    auto joined = rdt::prepare(root.path(), parsed({{"closID", "gold"}}), "c2");
    REQUIRE(joined.ok());
    CHECK_FALSE(joined->created);
    CHECK_FALSE(stdfs::exists(root.path() + "/gold/schemata"));
}

TEST_CASE("intelRdt: enableMonitoring gives the container a monitoring group", "[intelrdt]") {
    TempDir root;
    std::string dir = root.path() + "/shared";
    REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
    REQUIRE(::mkdir((dir + "/mon_groups").c_str(), 0755) == 0);
    auto config = parsed({{"closID", "shared"}, {"enableMonitoring", true}});
    {
        auto group = rdt::prepare(root.path(), config, "c1");
        REQUIRE(group.ok());
        CHECK(group->monitor_dir == dir + "/mon_groups/c1");
        REQUIRE(rdt::add_process(*group, 99).ok());
        CHECK(contents(dir + "/tasks") == "99\n");
        CHECK(contents(dir + "/mon_groups/c1/tasks") == "99\n");
        // A failed create: the pending group goes, the shared one stays.
        rdt::PendingGroup pending(*group);
        ::unlink((dir + "/mon_groups/c1/tasks").c_str());
    }
    CHECK_FALSE(is_dir(dir + "/mon_groups/c1"));
    CHECK(is_dir(dir));

    // Committed, it stays until delete.
    auto group = rdt::prepare(root.path(), config, "c2");
    REQUIRE(group.ok());
    {
        rdt::PendingGroup pending(*group);
        pending.commit();
    }
    CHECK(is_dir(dir + "/mon_groups/c2"));
    REQUIRE(rdt::undo(rdt::group_of(root.path(), config, "c2")).ok());
    CHECK_FALSE(is_dir(dir + "/mon_groups/c2"));
    CHECK(is_dir(dir));
}

TEST_CASE("intelRdt: resctrl is found in mountinfo", "[intelrdt]") {
    TempDir dir;
    std::string with = dir.path() + "/with";
    std::ofstream(with)
        << "22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
        << "40 22 0:35 / /sys/fs/resctrl rw,relatime shared:20 - resctrl resctrl rw,mba_MBps\n";
    CHECK(rdt::find_root(with) == "/sys/fs/resctrl");
    std::string without = dir.path() + "/without";
    std::ofstream(without) << "22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n";
    CHECK(rdt::find_root(without).empty());
    CHECK(rdt::find_root(dir.path() + "/none").empty());
}
