// The cgroup code without root, on fake trees (cgroup_fakes.hpp): the host's layout,
// linux.cgroupsPath, create and exec --cgroup. Apply is in test_cgroup_apply.cpp and
// test_cgroup_writes.cpp, a running cgroup in test_cgroup_running.cpp, the real cgroupfs
// in test_cgroup_root.cpp.
#include "cgroup/cgroup.hpp"
#include "cgroup_fakes.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace minirun;
using namespace minirun::runtime::cgroup;
using minirun::testing::TempDir;
using namespace minirun::testing::cgroup_fakes;
namespace stdfs = std::filesystem;

TEST_CASE("cgroup host: this machine's hybrid layout", "[cgroup]") {
    Host host = host_from(fs::parse_mountinfo(kHybridMounts), kHybridProcCgroup, "hugetlb\n");
    CHECK(host.layout == Layout::hybrid);
    REQUIRE(host.hierarchies.size() == 10);
    CHECK(host.mounts_are_hierarchies);
    const Hierarchy* cpu = find(host, "cpu");
    REQUIRE(cpu != nullptr);
    CHECK_FALSE(cpu->v2);
    CHECK(cpu->mount_point == "/sys/fs/cgroup/cpu");
    CHECK(cpu->mount_root == "/");
    CHECK(cpu->controllers == std::vector<std::string>{"cpu"});
    const Hierarchy* systemd = find(host, "systemd");
    REQUIRE(systemd != nullptr);
    CHECK(systemd->controllers == std::vector<std::string>{"name=systemd"});
    const Hierarchy* unified = find(host, "unified");
    REQUIRE(unified != nullptr);
    CHECK(unified->v2);
    CHECK(unified->controllers == std::vector<std::string>{"hugetlb"});
    CHECK(find(host, "") == nullptr);
    CHECK(host.own_paths.at("memory") == "/process_api/53bb");
    CHECK(host.own_paths.at("cpu") == "/");
    CHECK(host.own_paths.at("unified") == "/");
    CHECK(host.own_paths.at("systemd") == "/");

    Cgroup cgroup = Cgroup::for_path(host, "/mini-run/x");
    CHECK(cgroup.paths().size() == 10);
    CHECK(cgroup.paths().at("memory") == "/sys/fs/cgroup/memory/mini-run/x");
    CHECK(cgroup.paths().at("unified") == "/sys/fs/cgroup/unified/mini-run/x");
}

TEST_CASE("cgroup host: a mount over a hierarchy hides it", "[cgroup]") {
    // engines-test.sh's way of running crun 1.8.1: a tmpfs over /sys/fs/cgroup/unified.
    std::string mounts =
        cat(kHybridMounts, "50 41 0:60 / /sys/fs/cgroup/unified rw,relatime - tmpfs tmpfs rw\n");
    Host host = host_from(fs::parse_mountinfo(mounts), kHybridProcCgroup, "");
    CHECK(host.layout == Layout::legacy);
    CHECK(host.hierarchies.size() == 9);
    CHECK_FALSE(host.mounts_are_hierarchies); // the hidden cgroup2 is still a cgroup mount
    CHECK(find(host, "unified") == nullptr);
    CHECK(find(host, "memory") != nullptr);

    // A cgroup2 mounted again on top is visible again; a tmpfs over the whole tree hides all.
    std::string again =
        cat(mounts, "51 50 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
    CHECK(find(host_from(fs::parse_mountinfo(again), kHybridProcCgroup, ""), "unified") != nullptr);
    std::string whole = cat(kHybridMounts, "52 31 0:61 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n");
    CHECK(host_from(fs::parse_mountinfo(whole), kHybridProcCgroup, "").hierarchies.empty());
}

TEST_CASE("cgroup host: legacy with combined and named hierarchies", "[cgroup]") {
    Host host = host_from(fs::parse_mountinfo(kLegacyMounts), kLegacyProcCgroup, "");
    CHECK(host.layout == Layout::legacy);
    CHECK(host.hierarchies.size() == 10); // perf_event outside /sys/fs/cgroup does not count
    CHECK(host.mounts_are_hierarchies);
    const Hierarchy* cpu = find(host, "cpu,cpuacct");
    REQUIRE(cpu != nullptr);
    CHECK(cpu->controllers == std::vector<std::string>{"cpu", "cpuacct"});
    const Hierarchy* cpuset = find(host, "cpuset");
    REQUIRE(cpuset != nullptr);
    CHECK(cpuset->controllers == std::vector<std::string>{"cpuset"}); // not clone_children
    CHECK(find(host, "systemd")->controllers == std::vector<std::string>{"name=systemd"});
    CHECK(host.own_paths.at("cpu,cpuacct") == "/user.slice");
    CHECK(host.own_paths.at("net_cls,net_prio") == "/");
    CHECK(host.own_paths.at("systemd") == "/user.slice/session-1.scope");
    CHECK(host.own_paths.at("pids") == "/user.slice/u");
}

TEST_CASE("cgroup host: unified", "[cgroup]") {
    Host host = host_from(fs::parse_mountinfo(kUnifiedMounts), "0::/user.slice/term.scope\n",
                          "cpuset cpu io memory pids\n");
    CHECK(host.layout == Layout::unified);
    REQUIRE(host.hierarchies.size() == 1);
    CHECK(host.hierarchies[0].key.empty());
    CHECK(host.hierarchies[0].v2);
    CHECK(host.hierarchies[0].controllers ==
          std::vector<std::string>{"cpu", "cpuset", "io", "memory", "pids"});
    CHECK(host.own_paths.at("") == "/user.slice/term.scope");
    Cgroup cgroup = Cgroup::for_path(host, "/a/b", "/fake");
    CHECK(cgroup.paths() == std::map<std::string, std::string>{{"", "/fake/sys/fs/cgroup/a/b"}});
}

TEST_CASE("cgroup host: a hierarchy mounted from a subtree", "[cgroup]") {
    Host host =
        host_from(fs::parse_mountinfo("30 23 0:26 /outer /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"),
                  "0::/outer/inner\n", "memory\n");
    CHECK(host.hierarchies[0].mount_root == "/outer");
    Cgroup cgroup = Cgroup::for_path(host, "/outer/inner/c");
    CHECK(cgroup.paths().at("") == "/sys/fs/cgroup/inner/c");
}

TEST_CASE("cgroup paths: linux.cgroupsPath as runc reads it", "[cgroup]") {
    CHECK(*resolve_path("", "c1", false, "/user.slice") == "/c1");
    CHECK(*resolve_path("/a/b", "c1", false, "/user.slice") == "/a/b");
    CHECK(*resolve_path("/a//b/", "c1", false, "/") == "/a/b");
    CHECK(*resolve_path("a/b", "c1", false, "/user.slice") == "/user.slice/a/b");
    CHECK(*resolve_path("a", "c1", false, "/") == "/a");
    auto climbing = resolve_path("/a/../../b", "c1", false, "/");
    REQUIRE_FALSE(climbing);
    CHECK_THAT(climbing.error().message(), Catch::Contains("linux.cgroupsPath"));

    CHECK(*resolve_path("a-b.slice:pfx:name", "c1", true, "/") ==
          "/a.slice/a-b.slice/pfx-name.scope");
    CHECK(*resolve_path("system.slice:docker:abc", "c1", true, "/") ==
          "/system.slice/docker-abc.scope");
    CHECK(*resolve_path(":runc:abc", "c1", true, "/") == "/system.slice/runc-abc.scope");
    CHECK(*resolve_path("", "c1", true, "/") == "/system.slice/mini-run-c1.scope");
    CHECK(*resolve_path("-.slice:p:n", "c1", true, "/") == "/p-n.scope");
    CHECK(*resolve_path("a.slice::n.slice", "c1", true, "/") == "/a.slice/n.slice");
    for (const char* bad : {"a/b", "a.slice:p", "a.slice:p:n:x", "a--b.slice:p:n", "-a.slice:p:n",
                            "nota-slice:p:n", "a.slice:p:../n", "a.slice:p:"}) {
        INFO(bad);
        auto resolved = resolve_path(bad, "c1", true, "/");
        REQUIRE_FALSE(resolved);
        CHECK_THAT(resolved.error().message(), Catch::Contains("linux.cgroupsPath"));
    }
}

TEST_CASE("cgroup conversions: runc's shares and blkio weight mappings", "[cgroup]") {
    // runc 1.3.2+ / crun 1.23+ (opencontainers/cgroups ConvertCPUSharesToCgroupV2Value):
    // the default shares are the default weight.
    CHECK(shares_to_weight(1024) == 100);
    CHECK(shares_to_weight(2) == 1);
    CHECK(shares_to_weight(262144) == 10000);
    CHECK(shares_to_weight(0) == 0); // not set
    // Clamped like the kernel clamps shares.
    CHECK(shares_to_weight(1) == 1);
    CHECK(shares_to_weight(500000) == 10000);
    // Between the fitted points (values of the Go function).
    CHECK(shares_to_weight(3) == 2);
    CHECK(shares_to_weight(100) == 17);
    CHECK(shares_to_weight(512) == 59);
    CHECK(shares_to_weight(2048) == 174);
    CHECK(shares_to_weight(4096) == 303);
    CHECK(shares_to_weight(100000) == 4340);
    CHECK(shares_to_weight(262143) == 10000);
    // Monotonic over the whole range.
    uint64_t previous = 1;
    for (uint64_t shares = 2; shares <= 262144; shares += 97) {
        uint64_t weight = shares_to_weight(shares);
        CHECK((weight >= previous && weight <= 10000));
        previous = weight;
    }
    CHECK(blkio_weight_to_io_weight(10) == 1);
    CHECK(blkio_weight_to_io_weight(1000) == 10000);
    CHECK(blkio_weight_to_io_weight(500) == 4950);
}

TEST_CASE("cgroup v2: create enables controllers down the chain", "[cgroup]") {
    FakeUnified fake;
    // An existing, idle cgroup is reused; the levels above get the root's controllers,
    // as far as each level has them.
    REQUIRE(fake.cgroup().create());
    CHECK(get(fake.root + "/cgroup.subtree_control") == "+rdma"); // plain files keep the last
    CHECK(get(fake.root + "/mini-run/cgroup.subtree_control") == "+memory");

    put(fake.root + "/mini-run/cgroup.subtree_control", "cpu memory\n");
    put(fake.root + "/cgroup.subtree_control", "cpuset cpu io memory hugetlb pids rdma\n");
    REQUIRE(fake.cgroup().create());
    CHECK(get(fake.root + "/mini-run/cgroup.subtree_control") == "cpu memory\n"); // untouched
}

TEST_CASE("cgroup: create refuses a cgroup with processes, or a frozen one", "[cgroup]") {
    FakeLegacy fake;
    REQUIRE(fake.cgroup().create()); // existing and empty: used

    // runc 1.3 (1.1 warned and shared it): refused in its words, and what this create
    // made is removed again.
    stdfs::remove_all(fake.dir("blkio")); // made before "memory" is looked at
    put(fake.dir("memory") + "/cgroup.procs", "4242\n4343\n");
    auto busy = fake.cgroup().create();
    REQUIRE_FALSE(busy);
    CHECK(busy.error().message() == "container's cgroup is not empty: 2 process(es) found");
    CHECK_FALSE(stdfs::exists(fake.dir("blkio")));
    put(fake.dir("memory") + "/cgroup.procs", "");
    put(fake.dir("memory") + "/sub/cgroup.procs", "17\n"); // a sub-cgroup counts
    auto below = fake.cgroup().create();
    REQUIRE_FALSE(below);
    CHECK(below.error().message() == "container's cgroup is not empty: 1 process(es) found");
    stdfs::remove_all(fake.dir("memory") + "/sub");
    REQUIRE(fake.cgroup().create());

    stdfs::remove_all(fake.dir("pids"));
    put(fake.dir("freezer") + "/freezer.state", "FROZEN\n");
    auto frozen = fake.cgroup().create();
    REQUIRE_FALSE(frozen);
    CHECK(frozen.error().message() ==
          "container's cgroup unexpectedly frozen: \"" + fake.dir("freezer") + "\"");
    CHECK_FALSE(stdfs::exists(fake.dir("pids"))); // refused before anything was made

    FakeUnified unified;
    put(unified.dir + "/cgroup.freeze", "1\n");
    auto frozen_v2 = unified.cgroup().create();
    REQUIRE_FALSE(frozen_v2);
    CHECK_THAT(frozen_v2.error().message(),
               Catch::StartsWith("container's cgroup unexpectedly frozen"));
}

TEST_CASE("cgroup: exec --cgroup moves hierarchies to sub-cgroups, as runc reads the flag",
          "[cgroup]") {
    FakeLegacy fake;
    Cgroup base = fake.cgroup();
    make_cgroup(fake.dir("memory") + "/submem", {"cgroup.procs"});
    make_cgroup(fake.dir("cpu,cpuacct") + "/subcpu", {"cgroup.procs"});

    auto none = base.for_exec({});
    REQUIRE(none);
    CHECK(none->paths() == base.paths());
    auto root = base.for_exec({"/"});
    REQUIRE(root);
    CHECK(root->paths() == base.paths());

    auto moved = base.for_exec({"memory:submem", "cpu:subcpu"});
    REQUIRE(moved);
    for (const auto& [key, dir] : moved->paths()) {
        INFO(key);
        if (key == "memory") {
            CHECK(dir == fake.dir("memory") + "/submem");
        } else if (key == "cpu,cpuacct") {
            CHECK(dir == fake.dir("cpu,cpuacct") + "/subcpu"); // named by one of its two
        } else {
            CHECK(dir == base.paths().at(key));
        }
    }

    auto escape = base.for_exec({"../other"});
    REQUIRE_FALSE(escape);
    CHECK(escape.error().message() ==
          "--cgroup \"../other\": bad sub cgroup path: ../other is not a sub cgroup path");
    CHECK_FALSE(base.for_exec({"submem/../.."}));
    // Lexically below the container's cgroup, as runc's path.Join sees it.
    auto down_and_back = base.for_exec({"memory:nothing/../submem"});
    REQUIRE(down_and_back);
    CHECK(down_and_back->paths().at("memory") == fake.dir("memory") + "/submem");
    auto unknown = base.for_exec({"whaaat:/"});
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message() == "--cgroup \"whaaat:/\": unknown controller \"whaaat\"");
    // Every hierarchy moves without a controller: pids has no "submem".
    auto missing = base.for_exec({"submem"});
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message(),
               Catch::Contains("adding pid to cgroups: open ") &&
                   Catch::Contains("/submem/cgroup.procs: no such file or directory"));
}
