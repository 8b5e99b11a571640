// tmpcopyup and idmapped binds with mappings of their own, through the seam (see
// test_mount_setup.cpp): the calls they make and how their failures are named.
#include "mount_setup_fixture.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>

using namespace minirun;
using namespace minirun::runtime;
using nlohmann::json;
namespace stdfs = std::filesystem;
using namespace mount_setup_test;

namespace {

// A bind of <bundle>/data on /data idmapped with mappings of its own, in a container with
// a new user namespace.
Plan own_idmap_plan(Fixture& f, const json& uid_mappings, const json& gid_mappings) {
    stdfs::create_directories(f.dir.path() + "/data");
    json config = config_with_mounts(json::array({{{"destination", "/data"},
                                                   {"source", "data"},
                                                   {"options", {"bind", "idmap"}},
                                                   {"uidMappings", uid_mappings},
                                                   {"gidMappings", gid_mappings}}}));
    config["linux"]["namespaces"].push_back({{"type", "user"}});
    config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    return f.plan(config);
}

} // namespace

TEST_CASE("rootfs: an idmapped bind with mappings of its own gets a user namespace made for it",
          "[mount][idmap]") {
    Fixture f;
    Plan plan = own_idmap_plan(f, {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}},
                               {{{"containerID", 0}, {"hostID", 200000}, {"size", 10}}});
    auto sources = mount::open_bind_sources(plan, f.sys);
    REQUIRE(sources.ok());
    auto mapped = mount::idmap_bind_sources(plan, sources->fds, f.sys);
    REQUIRE(mapped.ok());
    // The holder's pid is in the map writes' paths: compare from the clone on.
    auto clone = std::find(f.sys.calls.begin(), f.sys.calls.end(), "clone_userns_holder");
    REQUIRE(clone != f.sys.calls.end());
    std::vector<std::string> after(clone + 1, f.sys.calls.end());
    REQUIRE(after.size() == 3);
    CHECK_THAT(after[0], Catch::StartsWith("write_proc /proc/") &&
                             Catch::EndsWith("/uid_map 0 100000 65536"));
    CHECK_THAT(after[1],
               Catch::StartsWith("write_proc /proc/") && Catch::EndsWith("/gid_map 0 200000 10"));
    CHECK(after[2] == "mount_setattr_idmap " + f.dir.path() + "/data");
}

TEST_CASE("rootfs: an idmap namespace that cannot be made is named in the error",
          "[mount][idmap]") {
    Fixture f;
    json one = {{{"containerID", 0}, {"hostID", 100000}, {"size", 1}}};
    Plan plan = own_idmap_plan(f, one, one);
    auto sources = mount::open_bind_sources(plan, f.sys);
    REQUIRE(sources.ok());
    SECTION("the clone") {
        f.sys.fail("clone_userns_holder", EAGAIN);
        auto mapped = mount::idmap_bind_sources(plan, sources->fds, f.sys);
        REQUIRE_FALSE(mapped.ok());
        CHECK(mapped.error().errno_value() == EAGAIN);
        CHECK_THAT(mapped.error().message(), Catch::StartsWith("mounts[0] on /data: "));
    }
    SECTION("the uid map") {
        f.sys.fail("write_proc", EPERM);
        auto mapped = mount::idmap_bind_sources(plan, sources->fds, f.sys);
        REQUIRE_FALSE(mapped.ok());
        CHECK(mapped.error().errno_value() == EPERM);
        CHECK_THAT(mapped.error().message(),
                   Catch::StartsWith("mounts[0] on /data: uidMappings: "));
    }
}

TEST_CASE("rootfs: tmpcopyup copies the covered directory's entries through the seam", "[mount]") {
    Fixture f;
    const std::string cache = f.rootfs + "/cache";
    stdfs::create_directories(cache + "/sub");
    ::chmod((cache + "/sub").c_str(), 0750);
    struct stat sub {};
    REQUIRE(::stat((cache + "/sub").c_str(), &sub) == 0);
    json config = config_with_mounts(json::array({{{"destination", "/cache"},
                                                   {"type", "tmpfs"},
                                                   {"source", "tmpfs"},
                                                   {"options", {"tmpcopyup"}}}}));
    config["root"]["readonly"] = false;
    Plan plan = f.plan(config);
    SECTION("a directory: made, given its owner, then its mode") {
        REQUIRE(prepare(plan, f.sys).ok());
        auto mount_call = std::find(f.sys.calls.begin(), f.sys.calls.end(), "mount " + cache);
        REQUIRE(mount_call != f.sys.calls.end());
        std::vector<std::string> copy;
        std::copy_if(
            mount_call + 1, f.sys.calls.end(), std::back_inserter(copy),
            [&](const std::string& call) { return call.find(cache + "/") != std::string::npos; });
        CHECK(copy ==
              std::vector<std::string>{"mkdir " + cache + "/sub 448",
                                       cat("chown ", cache, "/sub ", sub.st_uid, ":", sub.st_gid),
                                       "chmod " + cache + "/sub 488"});
    }
    SECTION("a failed copy is the mount's error") {
        f.sys.fail("mkdir", EPERM);
        auto prepared = prepare(plan, f.sys);
        REQUIRE_FALSE(prepared.ok());
        CHECK(prepared.error().errno_value() == EPERM);
        CHECK_THAT(prepared.error().message(),
                   Catch::Contains("tmpcopyup: mkdir: injected failure"));
    }
}
