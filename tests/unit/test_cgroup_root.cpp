// The cgroup code on this machine's real cgroupfs, as root: create, limit, self-join,
// freeze, remove, on v1 and v2.
#include "cgroup/cgroup.hpp"
#include "cgroup_fakes.hpp"
#include "temp_dir.hpp"

#include "skips.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

using namespace minirun;
using namespace minirun::runtime::cgroup;
using minirun::testing::TempDir;
using namespace minirun::testing::cgroup_fakes;
namespace stdfs = std::filesystem;

namespace {

// Undone whatever happens in a root test: the child killed and reaped, the cgroup thawed
// and removed.
struct CgroupCleanup {
    const Cgroup& cgroup;
    pid_t child = -1;
    ~CgroupCleanup() {
        if (child > 0) {
            ::kill(child, SIGKILL);
            ::waitpid(child, nullptr, 0);
        }
        (void)cgroup.thaw();
        (void)cgroup.remove();
    }
};

// The first hierarchy of this host that `wanted` accepts; nullptr when there is none.
template <typename Predicate>
const Hierarchy* find_hierarchy(const Host& host, Predicate wanted) {
    auto found = std::find_if(host.hierarchies.begin(), host.hierarchies.end(), wanted);
    return found == host.hierarchies.end() ? nullptr : &*found;
}

// A child that moves itself into `cgroup` (SelfJoin, as the init does) and then only
// waits to be killed; -1 when fork fails or the child could not join.
pid_t fork_joined_sleeper(const Cgroup& cgroup) {
    auto joiner = cgroup.open_self_join();
    int ready[2];
    if (!joiner || ::pipe2(ready, O_CLOEXEC) < 0) {
        return -1;
    }
    pid_t child = ::fork();
    if (child == 0) {
        ::close(ready[0]);
        char joined = joiner->join(false) ? 'y' : 'n';
        (void)::write(ready[1], &joined, 1);
        for (;;) {
            ::pause();
        }
    }
    ::close(ready[1]);
    char joined = 'n';
    bool ok = child > 0 && ::read(ready[0], &joined, 1) == 1 && joined == 'y';
    ::close(ready[0]);
    if (!ok && child > 0) {
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        return -1;
    }
    return child;
}

} // namespace

TEST_CASE("cgroup on this machine: create, limit, self-join, freeze, remove", "[cgroup-root]") {
    if (::geteuid() != 0) {
        minirun_tests::skip_test("needs root");
        return;
    }
    auto host = detect_host();
    REQUIRE(host);
    std::string path = "/mini-run-unittest-" + std::to_string(::getpid());
    Cgroup cgroup = Cgroup::for_path(*host, path);
    REQUIRE_FALSE(cgroup.empty());
    CgroupCleanup cleanup{cgroup};

    REQUIRE(cgroup.create());
    for (const auto& [key, dir] : cgroup.paths()) {
        INFO(key);
        CHECK(stdfs::is_directory(dir));
    }
    spec::Resources resources;
    resources.memory = spec::MemoryResources{};
    resources.memory->limit = 64 << 20;
    resources.pids = spec::PidsResources{10};
    resources.cpu = spec::CpuResources{};
    resources.cpu->shares = 512;
    auto applied = cgroup.apply(resources);
    INFO((applied ? std::string() : applied.error().message()));
    REQUIRE(applied);

    cleanup.child = fork_joined_sleeper(cgroup);
    pid_t child = cleanup.child;
    REQUIRE(child > 0);
    auto read = [&](const std::string& key, const std::string& name) {
        auto found = cgroup.paths().find(key);
        return found == cgroup.paths().end() ? std::string("(no " + key + ")")
                                             : get(found->second + "/" + name);
    };
    switch (host->layout) {
    case Layout::unified:
        CHECK(read("", "memory.max") == "67108864\n");
        CHECK(read("", "pids.max") == "10\n");
        CHECK(read("", "cpu.weight") == std::to_string(shares_to_weight(512)) + "\n");
        break;
    default:
        CHECK(read("memory", "memory.limit_in_bytes") == "67108864\n");
        CHECK(read("pids", "pids.max") == "10\n");
        for (const auto& [key, dir] : cgroup.paths()) {
            if (key == "cpu" || key.starts_with("cpu,")) {
                CHECK(get(dir + "/cpu.shares") == "512\n");
            }
        }
        break;
    }
    CHECK(*cgroup.pids() == std::vector<pid_t>{child});
    auto stats = cgroup.stats();
    REQUIRE(stats);
    CHECK((*stats)["pids"]["current"] == 1);
    CHECK((*stats)["memory"]["usage"]["limit"] == 64 << 20);
    if (auto cpuset = cgroup.paths().find("cpuset"); cpuset != cgroup.paths().end()) {
        CHECK(get(cpuset->second + "/cpuset.cpus") != "\n"); // copied from the parent
    }

    REQUIRE(cgroup.freeze());
    CHECK(*cgroup.frozen());
    REQUIRE(cgroup.thaw());
    CHECK_FALSE(*cgroup.frozen());

    auto removed = cgroup.remove();
    INFO((removed ? std::string() : removed.error().message()));
    REQUIRE(removed);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    cleanup.child = -1;
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    for (const auto& [key, dir] : cgroup.paths()) {
        INFO(key);
        CHECK_FALSE(stdfs::exists(dir));
    }
}

// The v2 driver on a real cgroup2 mount: this machine's /sys/fs/cgroup/unified (hybrid,
// hugetlb only) or a unified host's /sys/fs/cgroup. Only the v2 directory is used, so
// freezing and killing go through cgroup.freeze and cgroup.kill.
TEST_CASE("cgroup v2 on this machine: placement, cgroup.freeze, cgroup.kill, hugetlb",
          "[cgroup-root]") {
    if (::geteuid() != 0) {
        minirun_tests::skip_test("needs root");
        return;
    }
    auto host = detect_host();
    REQUIRE(host);
    const Hierarchy* v2 = find_hierarchy(*host, [](const Hierarchy& h) { return h.v2; });
    if (v2 == nullptr) {
        minirun_tests::skip_test("no cgroup2 mount");
        return;
    }
    const std::string& mount = v2->mount_point;
    const std::string& key = v2->key;
    std::string dir = mount + "/mini-run-unittest-v2-" + std::to_string(::getpid());
    Cgroup cgroup = Cgroup::from_paths({{key, dir}});
    CgroupCleanup cleanup{cgroup};
    REQUIRE(cgroup.create());
    if (stdfs::exists(dir + "/hugetlb.2MB.max")) {
        spec::Resources resources;
        resources.hugepage_limits.push_back({"2MB", 4 << 20});
        REQUIRE(cgroup.apply(resources));
        CHECK(get(dir + "/hugetlb.2MB.max") == "4194304\n");
    }

    cleanup.child = fork_joined_sleeper(cgroup);
    pid_t child = cleanup.child;
    REQUIRE(child > 0);
    CHECK(get(dir + "/cgroup.procs") == std::to_string(child) + "\n");
    std::string membership = get("/proc/" + std::to_string(child) + "/cgroup");
    std::string relative = dir.substr(mount.size());
    CHECK(membership.find("0::" + relative + "\n") != std::string::npos);

    REQUIRE(cgroup.freeze());
    CHECK(*cgroup.frozen());
    CHECK(get(dir + "/cgroup.freeze") == "1\n");
    CHECK(get(dir + "/cgroup.events").find("frozen 1") != std::string::npos);
    REQUIRE(cgroup.thaw());
    CHECK_FALSE(*cgroup.frozen());

    // remove() kills what is left: with cgroup.kill where the kernel has it.
    CHECK(stdfs::exists(dir + "/cgroup.kill"));
    REQUIRE(cgroup.remove());
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    cleanup.child = -1;
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    CHECK_FALSE(stdfs::exists(dir));
}

// Creates in parallel share the default parent: one may find it made by another that has
// not copied cpuset.cpus/mems into it yet. Joining a cgroup below an empty cpuset fails
// with ENOSPC, so the parent is filled first (seen with 8-way parallel `run`s).
TEST_CASE("cgroup v1 cpuset: a parent still empty is filled before its child", "[cgroup-root]") {
    if (::geteuid() != 0) {
        minirun_tests::skip_test("needs root");
        return;
    }
    auto host = detect_host();
    REQUIRE(host);
    const Hierarchy* cpuset = find_hierarchy(*host, [](const Hierarchy& h) {
        return !h.v2 && std::find(h.controllers.begin(), h.controllers.end(), "cpuset") !=
                            h.controllers.end();
    });
    if (cpuset == nullptr) {
        minirun_tests::skip_test("no v1 cpuset hierarchy");
        return;
    }
    const std::string& mount = cpuset->mount_point;
    const std::string& key = cpuset->key;
    const std::string parent = mount + "/mini-run-unittest-cpuset-" + std::to_string(::getpid());
    REQUIRE(::mkdir(parent.c_str(), 0755) == 0); // as a concurrent create left it: empty
    CHECK(get(parent + "/cpuset.cpus") == "\n");
    {
        Cgroup cgroup = Cgroup::from_paths({{key, parent + "/c"}});
        CgroupCleanup cleanup{cgroup};
        REQUIRE(cgroup.create());
        CHECK(get(parent + "/cpuset.cpus") == get(mount + "/cpuset.cpus"));
        CHECK(get(parent + "/c/cpuset.mems") == get(mount + "/cpuset.mems"));
        cleanup.child = fork_joined_sleeper(cgroup);
        CHECK(cleanup.child > 0);
    }
    CHECK(::rmdir(parent.c_str()) == 0);
}
