// Rootless without a delegated cgroup (runtime/cgroup_rootless.cpp), as runc's cgroups.bats
// and the rest of its suite see it when run rootless: nothing said for a config that asks
// for no cgroup, a create that fails for a limit or for a linux.cgroupsPath.
#include "capture_stderr.hpp"
#include "cgroup.hpp"

#include <catch2/catch.hpp>

using namespace minirun;
using namespace minirun::runtime::cgroup;

namespace {

Host v1_only_host() {
    Host host;
    host.hierarchies.push_back({false, "/sys/fs/cgroup/pids", "/", {"pids"}, "pids"});
    return host;
}

} // namespace

TEST_CASE("rootless_cgroup: no cgroup asked for, none had: no word on stderr", "[rootless]") {
    // The container's own output is all its caller sees (runc's tests read the first line).
    Result<Cgroup> cgroup = Cgroup();
    std::string said = minirun::testing::capture_stderr(
        [&] { cgroup = rootless_cgroup(v1_only_host(), "/mini-run/x", std::nullopt); });
    REQUIRE(cgroup);
    CHECK(cgroup->empty());
    CHECK(said.empty());
}

TEST_CASE("rootless_cgroup: a limit without a delegated cgroup fails with runc's words",
          "[rootless]") {
    spec::Resources pids;
    pids.pids = spec::PidsResources{10};
    auto refused = rootless_cgroup(v1_only_host(), "/mini-run/x", pids);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message() ==
          "linux.resources.pids: cannot be applied: running rootless, and this host has no "
          "cgroup v2 tree: cannot set pids limit: container could not join or create cgroup; "
          "remove the limits or delegate a cgroup");
}

TEST_CASE("rootless_cgroup: a linux.cgroupsPath without a delegated cgroup fails", "[rootless]") {
    // runc: an explicit path is an error even without limits ("unable to apply cgroup
    // configuration ... permission denied"); only the default path is given up silently.
    auto refused = rootless_cgroup(v1_only_host(), "/mine/x", std::nullopt, "", true);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message() ==
          "linux.cgroupsPath \"/mine/x\": unable to apply cgroup configuration: running "
          "rootless, and this host has no cgroup v2 tree: permission denied; remove "
          "linux.cgroupsPath or delegate a cgroup");
    CHECK(refused.error().errno_value() == EACCES);
}
