// Rootless without a delegated cgroup (runtime/cgroup/cgroup_rootless.cpp), as runc's cgroups.bats
// and the rest of its suite see it when run rootless: nothing said for a config that asks
// for no cgroup, a create that fails for a limit or for a linux.cgroupsPath.
#include "capture_stderr.hpp"
#include "cgroup/cgroup.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace minirun;
using namespace minirun::runtime::cgroup;
namespace stdfs = std::filesystem;

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

TEST_CASE("requested_controllers: each limit with its JSON path and controller", "[rootless]") {
    spec::Resources none;
    none.devices.push_back({}); // device rules are not limits
    CHECK(requested_controllers(none).empty());

    spec::Resources all;
    all.memory = spec::MemoryResources{};
    all.memory->limit = 1 << 20;
    all.cpu = spec::CpuResources{};
    all.cpu->cpus = "0";
    all.pids = spec::PidsResources{100};
    all.hugepage_limits.push_back({"2MB", 1 << 21});
    all.unified["io.max"] = "8:0 rbps=1";
    auto wanted = requested_controllers(all);
    std::vector<std::pair<std::string, std::string>> got;
    for (const auto& request : wanted) {
        got.emplace_back(request.path, request.controller);
    }
    CHECK(got == std::vector<std::pair<std::string, std::string>>{
                     {"linux.resources.memory", "memory"},
                     {"linux.resources.cpu.cpus", "cpuset"},
                     {"linux.resources.pids", "pids"},
                     {"linux.resources.hugepageLimits", "hugetlb"},
                     {"linux.resources.unified[\"io.max\"]", "io"}});
}

TEST_CASE("rootless_cgroup: a delegated cgroup2 directory takes the limits it has "
          "controllers for",
          "[rootless]") {
    minirun::testing::TempDir fake;
    const std::string delegated = fake.path() + "/sys/fs/cgroup/unified/user";
    stdfs::create_directories(delegated);
    std::ofstream(delegated + "/cgroup.procs") << "";
    std::ofstream(delegated + "/cgroup.controllers") << "hugetlb pids\n";

    Host host;
    host.layout = Layout::hybrid;
    host.hierarchies.push_back({false, "/sys/fs/cgroup/memory", "/", {"memory"}, "memory"});
    host.hierarchies.push_back({true, "/sys/fs/cgroup/unified", "/", {"hugetlb"}, "unified"});

    spec::Resources pids;
    pids.pids = spec::PidsResources{10};
    auto cgroup = rootless_cgroup(host, "/user/ctr", pids, fake.path());
    REQUIRE(cgroup);
    // only the cgroup2 directory: the v1 memory hierarchy is never delegated
    CHECK(cgroup->paths() == std::map<std::string, std::string>{{"unified", delegated + "/ctr"}});

    spec::Resources memory;
    memory.memory = spec::MemoryResources{};
    memory.memory->limit = 1 << 20;
    auto refused = rootless_cgroup(host, "/user/ctr", memory, fake.path());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message() ==
          cat("linux.resources.memory: cannot be applied: the delegated cgroup ", delegated,
              " has no memory controller"));
}
