// Rootless cgroups where none is delegated (cgroup_rootless.cpp): what is said, and when.
#include "capture_stderr.hpp"
#include "cgroup.hpp"

#include <catch2/catch.hpp>

using namespace minirun;
using namespace minirun::runtime::cgroup;
using minirun::testing::capture_stderr;

namespace {

// cgroup v1 only: no v2 tree a rootless caller could have been given.
const char* kV1Mounts = "25 18 0:21 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
                        "29 25 0:25 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
                        "31 25 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
const char* kV1ProcCgroup = "6:pids:/\n4:memory:/\n";

} // namespace

TEST_CASE("rootless cgroup: none delegated, no cgroupsPath, no limits: nothing said",
          "[cgroup][rootless]") {
    // Rootless podman on a cgroup v1 host: no cgroupsPath, no limits. The runtime's stderr
    // is the container's during create, so a warning would be in the container's output.
    Host host = host_from(fs::parse_mountinfo(kV1Mounts), kV1ProcCgroup, "");
    std::optional<Result<Cgroup>> cgroup;
    std::string said = capture_stderr(
        [&] { cgroup = rootless_cgroup(host, "/mini-run/c1", std::nullopt, "", false); });
    REQUIRE(cgroup->ok());
    CHECK((*cgroup)->empty());
    CHECK(said.empty());
}

TEST_CASE("rootless cgroup: none delegated, a cgroupsPath asked for: a warning",
          "[cgroup][rootless]") {
    Host host = host_from(fs::parse_mountinfo(kV1Mounts), kV1ProcCgroup, "");
    std::optional<Result<Cgroup>> cgroup;
    std::string said = capture_stderr(
        [&] { cgroup = rootless_cgroup(host, "/mine/c1", spec::Resources{}, "", true); });
    REQUIRE(cgroup->ok());
    CHECK((*cgroup)->empty());
    CHECK(said == "mini-run: warning: running rootless, and this host has no cgroup v2 tree: "
                  "the container stays in its caller's cgroups, without limits\n");
}

TEST_CASE("rootless cgroup: none delegated, a limit: an error, cgroupsPath or not",
          "[cgroup][rootless]") {
    Host host = host_from(fs::parse_mountinfo(kV1Mounts), kV1ProcCgroup, "");
    spec::Resources resources;
    resources.pids = spec::PidsResources{};
    for (bool path_asked : {false, true}) {
        INFO("path_asked " << path_asked);
        auto cgroup = rootless_cgroup(host, "/mini-run/c1", resources, "", path_asked);
        REQUIRE_FALSE(cgroup.ok());
        CHECK(cgroup.error().message() ==
              "linux.resources.pids: cannot be applied: running rootless, and this host has "
              "no cgroup v2 tree; remove the limits or delegate a cgroup");
    }
}
