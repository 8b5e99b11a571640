#include "cgroup/cgroup.hpp"
#include "skips.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace minirun;
using namespace minirun::runtime::cgroup;
using minirun::testing::TempDir;
namespace stdfs = std::filesystem;

namespace {

// This machine's cgroup mounts: v1 controllers each on its own, a named systemd
// hierarchy, and the cgroup2 leftover at /sys/fs/cgroup/unified.
const char* kHybridMounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
const char* kHybridProcCgroup = "9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n"
                                "5:devices:/\n4:memory:/process_api/53bb\n3:cpuset:/\n"
                                "2:cpuacct:/\n1:cpu:/\n0::/\n";

// A classic systemd legacy host: combined hierarchies, no cgroup2.
const char* kLegacyMounts =
    "25 18 0:21 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
    "26 25 0:22 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
    "28 25 0:24 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "29 25 0:25 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    "30 25 0:26 / /sys/fs/cgroup/net_cls,net_prio rw - cgroup cgroup rw,net_cls,net_prio\n"
    "31 25 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
    "32 25 0:28 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset,clone_children\n"
    "33 25 0:29 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio\n"
    "34 25 0:30 / /sys/fs/cgroup/hugetlb rw - cgroup cgroup rw,hugetlb\n"
    "35 25 0:31 / /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n"
    "36 25 0:32 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
    "37 18 0:33 / /run/elsewhere rw - cgroup cgroup rw,perf_event\n";
const char* kLegacyProcCgroup = "11:freezer:/\n10:devices:/user.slice\n9:hugetlb:/\n8:blkio:/\n"
                                "7:cpuset:/\n6:pids:/user.slice/u\n5:net_cls,net_prio:/\n"
                                "4:memory:/user.slice\n3:cpu,cpuacct:/user.slice\n"
                                "1:name=systemd:/user.slice/session-1.scope\n";

const char* kUnifiedMounts =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

void put(const std::string& path, const std::string& content) {
    stdfs::create_directories(stdfs::path(path).parent_path());
    std::ofstream(path) << content;
}

std::string get(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

const Hierarchy* find(const Host& host, const std::string& key) {
    for (const auto& hierarchy : host.hierarchies) {
        if (hierarchy.key == key) {
            return &hierarchy;
        }
    }
    return nullptr;
}

// Interface files of a fake cgroup directory, empty unless given.
void make_cgroup(const std::string& dir, const std::vector<std::string>& names,
                 const std::map<std::string, std::string>& contents = {}) {
    stdfs::create_directories(dir);
    for (const auto& name : names) {
        put(cat(dir, "/", name), "");
    }
    for (const auto& [name, content] : contents) {
        put(cat(dir, "/", name), content);
    }
}

const std::vector<std::string> kV2Files = {
    "cgroup.procs", "cgroup.freeze", "cgroup.subtree_control",
    "memory.max",   "memory.low",    "memory.swap.max",
    "memory.high",  "pids.max",      "cpu.max",
    "cpu.weight",   "cpuset.cpus",   "cpuset.mems",
    "io.weight",    "io.max",        "hugetlb.2MB.max"};

// A unified host's fake tree with the container's directory at /mini-run/c1.
struct FakeUnified {
    TempDir tmp;
    Host host = host_from(fs::parse_mountinfo(kUnifiedMounts), "0::/\n",
                          "cpuset cpu io memory hugetlb pids rdma\n");
    std::string root = tmp.path() + "/sys/fs/cgroup";
    std::string dir = root + "/mini-run/c1";

    FakeUnified() {
        make_cgroup(root, {"cgroup.procs", "cgroup.subtree_control"},
                    {{"cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n"}});
        make_cgroup(root + "/mini-run", {"cgroup.procs"},
                    {{"cgroup.controllers", "cpu memory\n"}, {"cgroup.subtree_control", ""}});
        make_cgroup(dir, kV2Files, {{"cgroup.controllers", "cpuset cpu io memory hugetlb pids\n"}});
    }
    [[nodiscard]] Cgroup cgroup() const {
        return Cgroup::for_path(host, "/mini-run/c1", tmp.path());
    }
    [[nodiscard]] std::string file(const std::string& name) const { return get(dir + "/" + name); }
};

// A legacy host's fake tree (kLegacyMounts) with /mini-run/c1 in every hierarchy.
struct FakeLegacy {
    TempDir tmp;
    Host host = host_from(fs::parse_mountinfo(kLegacyMounts), kLegacyProcCgroup, "");
    std::string base = tmp.path() + "/sys/fs/cgroup";

    FakeLegacy() {
        for (const auto& hierarchy : host.hierarchies) {
            make_cgroup(tmp.path() + hierarchy.mount_point, {"cgroup.procs"});
            make_cgroup(tmp.path() + hierarchy.mount_point + "/mini-run/c1", {"cgroup.procs"});
        }
        make_cgroup(dir("memory"),
                    {"memory.limit_in_bytes", "memory.soft_limit_in_bytes", "memory.swappiness",
                     "memory.oom_control"},
                    {{"memory.memsw.limit_in_bytes", "9223372036854771712\n"}});
        make_cgroup(dir("cpu,cpuacct"), {"cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us"});
        make_cgroup(dir("cpuset"), {"cpuset.cpus", "cpuset.mems"});
        make_cgroup(dir("pids"), {"pids.max"});
        make_cgroup(dir("blkio"),
                    {"blkio.weight", "blkio.weight_device", "blkio.throttle.read_bps_device",
                     "blkio.throttle.write_iops_device"});
        make_cgroup(dir("hugetlb"), {"hugetlb.2MB.limit_in_bytes"});
        make_cgroup(dir("net_cls,net_prio"), {"net_cls.classid", "net_prio.ifpriomap"});
        make_cgroup(dir("devices"), {"devices.allow", "devices.deny"});
        make_cgroup(dir("freezer"), {}, {{"freezer.state", "THAWED\n"}});
    }
    [[nodiscard]] std::string dir(const std::string& key) const {
        return base + "/" + key + "/mini-run/c1";
    }
    [[nodiscard]] Cgroup cgroup() const {
        return Cgroup::for_path(host, "/mini-run/c1", tmp.path());
    }
    [[nodiscard]] std::string file(const std::string& key, const std::string& name) const {
        return get(dir(key) + "/" + name);
    }
};

} // namespace

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
    CHECK(shares_to_weight(1024) == 39);
    CHECK(shares_to_weight(2) == 1);
    CHECK(shares_to_weight(262144) == 10000);
    CHECK(shares_to_weight(0) == 0);
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

TEST_CASE("cgroup: create counts the processes a cgroup already has, and refuses a frozen one",
          "[cgroup]") {
    FakeLegacy fake;
    auto idle = fake.cgroup().create();
    REQUIRE(idle);
    CHECK(*idle == 0);

    // runc's behaviour: shared, with a warning (the caller's), not refused.
    put(fake.dir("memory") + "/cgroup.procs", "4242\n4343\n");
    auto busy = fake.cgroup().create();
    REQUIRE(busy);
    CHECK(*busy == 2);
    put(fake.dir("memory") + "/cgroup.procs", "");
    put(fake.dir("memory") + "/sub/cgroup.procs", "17\n"); // a sub-cgroup counts
    auto below = fake.cgroup().create();
    REQUIRE(below);
    CHECK(*below == 1);
    stdfs::remove_all(fake.dir("memory") + "/sub");

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

TEST_CASE("cgroup v2: apply writes every file", "[cgroup]") {
    FakeUnified fake;
    spec::Resources resources;
    resources.memory = spec::MemoryResources{};
    resources.memory->limit = 64 << 20;
    resources.memory->reservation = 32 << 20;
    resources.memory->swap = 128 << 20;
    resources.pids = spec::PidsResources{10};
    resources.cpu = spec::CpuResources{};
    resources.cpu->shares = 1024;
    resources.cpu->quota = 50000;
    resources.cpu->period = 200000;
    resources.cpu->cpus = "0-1";
    resources.cpu->mems = "0";
    resources.block_io = spec::BlockIoResources{};
    resources.block_io->weight = 500;
    resources.block_io->throttle_read_bps_device.push_back({8, 0, 1048576});
    resources.hugepage_limits.push_back({"2MB", 4 << 20});
    resources.unified["memory.high"] = "50000000";
    REQUIRE(fake.cgroup().apply(resources));

    CHECK(fake.file("memory.max") == "67108864");
    CHECK(fake.file("memory.low") == "33554432");
    CHECK(fake.file("memory.swap.max") == "67108864"); // memory+swap minus memory
    CHECK(fake.file("pids.max") == "10");
    CHECK(fake.file("cpu.max") == "50000 200000");
    CHECK(fake.file("cpu.weight") == "39");
    CHECK(fake.file("cpuset.cpus") == "0-1");
    CHECK(fake.file("cpuset.mems") == "0");
    CHECK(fake.file("io.weight") == "default 4950");
    CHECK(fake.file("io.max") == "8:0 rbps=1048576");
    CHECK(fake.file("hugetlb.2MB.max") == "4194304");
    CHECK(fake.file("memory.high") == "50000000");
    CHECK_FALSE(stdfs::exists(fake.dir + "/cpu.idle")); // nothing unset is written or made

    SECTION("unlimited and no-swap values") {
        spec::Resources more;
        more.memory = spec::MemoryResources{};
        more.memory->limit = -1;
        more.pids = spec::PidsResources{0};
        more.cpu = spec::CpuResources{};
        more.cpu->quota = -1;
        more.block_io = spec::BlockIoResources{};
        more.block_io->weight_device.push_back({8, 16, 100, std::nullopt});
        REQUIRE(fake.cgroup().apply(more, true));
        CHECK(fake.file("memory.max") == "max");
        CHECK(fake.file("memory.swap.max") == "max");
        CHECK(fake.file("pids.max") == "max");
        CHECK(fake.file("cpu.max") == "max 100000");
        CHECK(fake.file("io.weight") == "8:16 910");

        more = {};
        more.memory = spec::MemoryResources{};
        more.memory->limit = 1000;
        more.memory->swap = 1000;
        REQUIRE(fake.cgroup().apply(more));
        CHECK(fake.file("memory.swap.max") == "0");
        more.memory->swap = 999;
        auto below = fake.cgroup().apply(more);
        REQUIRE_FALSE(below);
        CHECK_THAT(below.error().message(), Catch::Contains("swap"));
    }
    SECTION("unified keys are checked") {
        spec::Resources raw;
        raw.unified["../escape"] = "1";
        CHECK_FALSE(fake.cgroup().apply(raw));
        raw.unified = {{"rdma.max", "mlx4_0 hca_handle=2"}};
        auto missing = fake.cgroup().apply(raw);
        REQUIRE_FALSE(missing);
        CHECK_THAT(missing.error().message(), Catch::Contains("controller \"rdma\""));
        raw.unified = {{"io.max", "8:0 rbps=1\n8:16 wbps=2\n"}};
        REQUIRE(fake.cgroup().apply(raw));
        CHECK(fake.file("io.max") == "8:16 wbps=2"); // one write per line
    }
    SECTION("a value whose file is missing names the file") {
        stdfs::remove(fake.dir + "/memory.max");
        spec::Resources memory;
        memory.memory = spec::MemoryResources{};
        memory.memory->limit = 4096;
        auto failed = fake.cgroup().apply(memory);
        REQUIRE_FALSE(failed);
        CHECK_THAT(failed.error().message(), Catch::Contains(fake.dir + "/memory.max"));
    }
}

TEST_CASE("cgroup v1: apply writes every file", "[cgroup]") {
    FakeLegacy fake;
    REQUIRE(fake.cgroup().create());
    spec::Resources resources;
    resources.memory = spec::MemoryResources{};
    resources.memory->limit = 64 << 20;
    resources.memory->swap = 128 << 20;
    resources.memory->reservation = 32 << 20;
    resources.memory->swappiness = 10;
    resources.memory->disable_oom_killer = true;
    resources.cpu = spec::CpuResources{};
    resources.cpu->shares = 512;
    resources.cpu->quota = 50000;
    resources.cpu->period = 100000;
    resources.cpu->cpus = "1";
    resources.pids = spec::PidsResources{10};
    resources.block_io = spec::BlockIoResources{};
    resources.block_io->weight = 300;
    resources.block_io->weight_device.push_back({8, 0, 200, std::nullopt});
    resources.block_io->throttle_read_bps_device.push_back({8, 0, 1000});
    resources.block_io->throttle_write_iops_device.push_back({8, 16, 50});
    resources.hugepage_limits.push_back({"2MB", 2 << 20});
    resources.network = spec::NetworkResources{0x100001, {{"eth0", 5}}};
    resources.devices.push_back({false, "a", std::nullopt, std::nullopt, "rwm"});
    REQUIRE(fake.cgroup().apply(resources));

    CHECK(fake.file("memory", "memory.limit_in_bytes") == "67108864");
    CHECK(fake.file("memory", "memory.memsw.limit_in_bytes") == "134217728");
    CHECK(fake.file("memory", "memory.soft_limit_in_bytes") == "33554432");
    CHECK(fake.file("memory", "memory.swappiness") == "10");
    CHECK(fake.file("memory", "memory.oom_control") == "1");
    CHECK(fake.file("cpu,cpuacct", "cpu.shares") == "512");
    CHECK(fake.file("cpu,cpuacct", "cpu.cfs_quota_us") == "50000");
    CHECK(fake.file("cpu,cpuacct", "cpu.cfs_period_us") == "100000");
    CHECK_FALSE(stdfs::exists(fake.dir("cpu,cpuacct") + "/cpu.idle"));
    CHECK(fake.file("cpuset", "cpuset.cpus") == "1");
    CHECK(fake.file("cpuset", "cpuset.mems").empty());
    CHECK(fake.file("pids", "pids.max") == "10");
    CHECK(fake.file("blkio", "blkio.weight") == "300");
    CHECK(fake.file("blkio", "blkio.weight_device") == "8:0 200");
    CHECK(fake.file("blkio", "blkio.throttle.read_bps_device") == "8:0 1000");
    CHECK(fake.file("blkio", "blkio.throttle.write_iops_device") == "8:16 50");
    CHECK_FALSE(stdfs::exists(fake.dir("blkio") + "/blkio.leaf_weight"));
    CHECK(fake.file("hugetlb", "hugetlb.2MB.limit_in_bytes") == "2097152");
    CHECK(fake.file("net_cls,net_prio", "net_cls.classid") == "1048577");
    CHECK(fake.file("net_cls,net_prio", "net_prio.ifpriomap") == "eth0 5");
    CHECK(fake.file("devices", "devices.deny") == "a");

    SECTION("update: both memory values, unlimited pids") {
        spec::Resources update;
        update.memory = spec::MemoryResources{};
        update.memory->limit = 256 << 20;
        update.memory->swap = 512 << 20;
        update.pids = spec::PidsResources{-1};
        REQUIRE(fake.cgroup().apply(update, true));
        CHECK(fake.file("memory", "memory.limit_in_bytes") == "268435456");
        CHECK(fake.file("memory", "memory.memsw.limit_in_bytes") == "536870912");
        CHECK(fake.file("pids", "pids.max") == "max");
    }
    SECTION("a controller no hierarchy has is an error") {
        stdfs::remove_all(fake.dir("net_cls,net_prio"));
        auto paths = fake.cgroup().paths();
        paths.erase("net_cls,net_prio");
        spec::Resources network;
        network.network = spec::NetworkResources{7, {}};
        auto failed = Cgroup::from_paths(paths).apply(network);
        REQUIRE_FALSE(failed);
        CHECK_THAT(failed.error().message(), Catch::Contains("net_cls"));
        spec::Resources raw;
        raw.unified["memory.high"] = "1";
        CHECK_FALSE(fake.cgroup().apply(raw)); // no cgroup2 on a legacy host
    }
}

TEST_CASE("cgroup v1: a knob this kernel lacks is an error naming the field", "[cgroup]") {
    // runtime.md: a property that cannot be applied fails the create; the fake has no
    // cpu.idle, no CFQ leaf weights, no RT group scheduling.
    FakeLegacy fake;
    REQUIRE(fake.cgroup().create());
    auto failure = [&](auto&& set) {
        spec::Resources resources;
        set(resources);
        auto applied = fake.cgroup().apply(resources);
        REQUIRE_FALSE(applied);
        CHECK(applied.error().errno_value() == ENOTSUP);
        return applied.error().message();
    };
    CHECK_THAT(failure([](spec::Resources& r) {
                   r.block_io = spec::BlockIoResources{};
                   r.block_io->leaf_weight = 300;
               }),
               Catch::StartsWith("linux.resources.blockIO.leafWeight: cannot be applied: this "
                                 "kernel has no blkio.leaf_weight in "));
    CHECK_THAT(failure([](spec::Resources& r) {
                   r.cpu = spec::CpuResources{};
                   r.cpu->idle = 1;
               }),
               Catch::StartsWith("linux.resources.cpu.idle: cannot be applied"));
    CHECK_THAT(failure([](spec::Resources& r) {
                   r.cpu = spec::CpuResources{};
                   r.cpu->realtime_runtime = 1000;
               }),
               Catch::StartsWith("linux.resources.cpu.realtimeRuntime: cannot be applied"));
    stdfs::remove(fake.dir("blkio") + "/blkio.weight");
    CHECK_THAT(failure([](spec::Resources& r) {
                   r.block_io = spec::BlockIoResources{};
                   r.block_io->weight = 300;
               }),
               Catch::StartsWith("linux.resources.blockIO.weight: cannot be applied"));
    stdfs::remove(fake.dir("memory") + "/memory.memsw.limit_in_bytes");
    CHECK_THAT(failure([](spec::Resources& r) {
                   r.memory = spec::MemoryResources{};
                   r.memory->limit = 64 << 20;
                   r.memory->swap = 128 << 20;
               }),
               Catch::StartsWith("linux.resources.memory.swap: cannot be applied"));
    // Unlimited swap is what a kernel without swap accounting has: nothing to apply.
    spec::Resources unlimited;
    unlimited.memory = spec::MemoryResources{};
    unlimited.memory->limit = 64 << 20;
    unlimited.memory->swap = -1;
    CHECK(fake.cgroup().apply(unlimited));
    CHECK(fake.file("memory", "memory.limit_in_bytes") == "67108864");
}

TEST_CASE("cgroup hybrid: v1 controllers, hugetlb and unified keys in cgroup2", "[cgroup]") {
    TempDir tmp;
    Host host = host_from(fs::parse_mountinfo(kHybridMounts), kHybridProcCgroup, "hugetlb\n");
    Cgroup cgroup = Cgroup::for_path(host, "/c1", tmp.path());
    for (const auto& [key, dir] : cgroup.paths()) {
        make_cgroup(dir, {"cgroup.procs"});
    }
    std::string v1_memory = cgroup.paths().at("memory");
    std::string v2 = cgroup.paths().at("unified");
    make_cgroup(v1_memory, {"memory.limit_in_bytes"});
    make_cgroup(cgroup.paths().at("devices"), {"devices.allow", "devices.deny"});
    make_cgroup(v2, {"hugetlb.2MB.max", "hugetlb.1GB.max"}, {{"cgroup.controllers", "hugetlb\n"}});
    spec::Resources resources;
    resources.memory = spec::MemoryResources{};
    resources.memory->limit = 1 << 20;
    resources.hugepage_limits.push_back({"2MB", 0});
    resources.unified["hugetlb.1GB.max"] = "0";
    resources.devices.push_back({false, "a", std::nullopt, std::nullopt, "rwm"});
    REQUIRE(cgroup.apply(resources));
    CHECK(get(v1_memory + "/memory.limit_in_bytes") == "1048576");
    CHECK_FALSE(stdfs::exists(v2 + "/memory.max"));
    CHECK(get(v2 + "/hugetlb.2MB.max") == "0");
    CHECK(get(v2 + "/hugetlb.1GB.max") == "0");
    CHECK(get(cgroup.paths().at("devices") + "/devices.deny") == "a"); // v1's job, no BPF

    // The v1 freezer, not cgroup.freeze.
    put(cgroup.paths().at("freezer") + "/freezer.state", "THAWED\n");
    REQUIRE(cgroup.freeze());
    CHECK(get(cgroup.paths().at("freezer") + "/freezer.state") == "FROZEN");
    CHECK(*cgroup.frozen());
    REQUIRE(cgroup.thaw());
    CHECK_FALSE(*cgroup.frozen());
}

TEST_CASE("cgroup v2: freeze, pids, stats, oom kills", "[cgroup]") {
    FakeUnified fake;
    Cgroup cgroup = fake.cgroup();
    put(fake.dir + "/cgroup.events", "populated 1\nfrozen 1\n");
    REQUIRE(cgroup.freeze());
    CHECK(fake.file("cgroup.freeze") == "1");
    CHECK(*cgroup.frozen());
    REQUIRE(cgroup.thaw());
    CHECK(fake.file("cgroup.freeze") == "0");
    CHECK_FALSE(*cgroup.frozen());

    put(fake.dir + "/cgroup.procs", "12\n13\n");
    put(fake.dir + "/sub/cgroup.procs", "14\n12\n");
    CHECK(*cgroup.pids() == std::vector<pid_t>{12, 13, 14});

    put(fake.dir + "/cpu.stat", "usage_usec 100\nuser_usec 60\nsystem_usec 40\nnr_periods 5\n"
                                "nr_throttled 2\nthrottled_usec 7\n");
    put(fake.dir + "/memory.current", "1000\n");
    put(fake.dir + "/memory.max", "max\n");
    put(fake.dir + "/memory.swap.current", "10\n");
    put(fake.dir + "/memory.swap.max", "max\n");
    put(fake.dir + "/memory.stat", "anon 1\nfile 2\n");
    put(fake.dir + "/pids.current", "4\n");
    put(fake.dir + "/pids.max", "20\n");
    put(fake.dir + "/hugetlb.2MB.current", "2097152\n");
    put(fake.dir + "/hugetlb.2MB.events", "max 3\n");
    put(fake.dir + "/hugetlb.2MB.rsvd.max", "max\n");
    put(fake.dir + "/io.stat", "8:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n");
    auto stats = cgroup.stats();
    REQUIRE(stats);
    const auto& data = *stats;
    CHECK(data["cpu"]["usage"]["total"] == 100000);
    CHECK(data["cpu"]["usage"]["user"] == 60000);
    CHECK(data["cpu"]["usage"]["kernel"] == 40000);
    CHECK(data["cpu"]["throttling"]["periods"] == 5);
    CHECK(data["cpu"]["throttling"]["throttledPeriods"] == 2);
    CHECK(data["cpu"]["throttling"]["throttledTime"] == 7000);
    CHECK(data["memory"]["usage"]["usage"] == 1000);
    CHECK(data["memory"]["usage"]["limit"] == UINT64_MAX);
    CHECK(data["memory"]["swap"]["usage"] == 1010);
    CHECK(data["memory"]["swap"]["limit"] == UINT64_MAX);
    CHECK(data["memory"]["cache"] == 2);
    CHECK(data["memory"]["raw"]["anon"] == 1);
    CHECK(data["pids"] == nlohmann::json{{"current", 4}, {"limit", 20}});
    CHECK(data["hugetlb"] == nlohmann::json{{"2MB", {{"usage", 2097152}, {"failcnt", 3}}}});
    CHECK(data["blkio"]["ioServiceBytesRecursive"] ==
          nlohmann::json::parse(
              R"([{"major":8,"op":"Read","value":4096},{"major":8,"op":"Write"}])"));

    put(fake.dir + "/memory.events", "low 0\nhigh 0\nmax 1\noom 1\noom_kill 3\n");
    CHECK(*cgroup.oom_kill_count() == 3);
}

TEST_CASE("cgroup v1: stats, pids, oom kills, freeze", "[cgroup]") {
    FakeLegacy fake;
    Cgroup cgroup = fake.cgroup();
    std::string cpu = fake.dir("cpu,cpuacct");
    put(cpu + "/cpuacct.usage", "123456\n");
    put(cpu + "/cpuacct.usage_percpu", "100 200 \n");
    put(cpu + "/cpuacct.stat", "user 10\nsystem 5\n");
    put(cpu + "/cpu.stat", "nr_periods 3\nnr_throttled 1\nthrottled_time 999\n");
    std::string memory = fake.dir("memory");
    put(memory + "/memory.usage_in_bytes", "8192\n");
    put(memory + "/memory.max_usage_in_bytes", "16384\n");
    put(memory + "/memory.failcnt", "2\n");
    put(memory + "/memory.limit_in_bytes", "67108864\n");
    put(memory + "/memory.stat", "cache 4096\nrss 8192\n");
    put(memory + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
    put(fake.dir("pids") + "/pids.current", "3\n");
    put(fake.dir("pids") + "/pids.max", "max\n");
    put(fake.dir("hugetlb") + "/hugetlb.2MB.usage_in_bytes", "2097152\n");
    put(fake.dir("hugetlb") + "/hugetlb.2MB.failcnt", "0\n");
    put(fake.dir("blkio") + "/blkio.throttle.io_service_bytes_recursive",
        "8:0 Read 512\n8:0 Write 0\nTotal 512\n");

    auto stats = cgroup.stats();
    REQUIRE(stats);
    const auto& data = *stats;
    const uint64_t tick = 1'000'000'000ULL / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
    CHECK(data["cpu"]["usage"]["total"] == 123456);
    CHECK(data["cpu"]["usage"]["percpu"] == nlohmann::json{100, 200});
    CHECK(data["cpu"]["usage"]["user"] == 10 * tick);
    CHECK(data["cpu"]["usage"]["kernel"] == 5 * tick);
    CHECK(data["cpu"]["throttling"] ==
          nlohmann::json{{"periods", 3}, {"throttledPeriods", 1}, {"throttledTime", 999}});
    CHECK(data["memory"]["usage"] ==
          nlohmann::json{{"usage", 8192}, {"max", 16384}, {"failcnt", 2}, {"limit", 67108864}});
    CHECK(data["memory"]["swap"] ==
          nlohmann::json{{"failcnt", 0}, {"limit", 9223372036854771712ULL}});
    CHECK(data["memory"]["cache"] == 4096);
    CHECK(data["memory"]["raw"] == nlohmann::json{{"cache", 4096}, {"rss", 8192}});
    CHECK(data["pids"] == nlohmann::json{{"current", 3}});
    CHECK(data["hugetlb"] == nlohmann::json{{"2MB", {{"usage", 2097152}, {"failcnt", 0}}}});
    CHECK(
        data["blkio"]["ioServiceBytesRecursive"] ==
        nlohmann::json::parse(R"([{"major":8,"op":"Read","value":512},{"major":8,"op":"Write"}])"));
    CHECK(*cgroup.oom_kill_count() == 2);

    // pids come from the freezer hierarchy, sub-cgroups included.
    put(fake.dir("freezer") + "/cgroup.procs", "7\n");
    put(fake.dir("freezer") + "/inner/cgroup.procs", "8\n");
    CHECK(*cgroup.pids() == std::vector<pid_t>{7, 8});

    REQUIRE(cgroup.freeze());
    CHECK(fake.file("freezer", "freezer.state") == "FROZEN");
    CHECK(*cgroup.frozen());
    REQUIRE(cgroup.thaw());
    CHECK(fake.file("freezer", "freezer.state") == "THAWED");
}

TEST_CASE("cgroup: remove takes sub-cgroups first and never the hierarchy root", "[cgroup]") {
    TempDir tmp;
    // Only directories in the container's part of the tree: plain directories can be
    // removed only when empty, where cgroupfs ones keep their interface files.
    std::string root = tmp.path() + "/memory";
    put(root + "/cgroup.procs", "");
    stdfs::create_directories(root + "/c1/a/b");
    stdfs::create_directories(root + "/c1/c");
    Cgroup cgroup = Cgroup::from_paths({{"memory", root + "/c1"}});
    REQUIRE(cgroup.remove());
    CHECK_FALSE(stdfs::exists(root + "/c1"));
    CHECK(stdfs::exists(root));
    REQUIRE(cgroup.remove()); // gone already is fine

    auto refused = Cgroup::from_paths({{"memory", root}}).remove();
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message(), Catch::Contains("root of its hierarchy"));
    CHECK(stdfs::exists(root + "/cgroup.procs"));

    CHECK(Cgroup().remove());
    CHECK(Cgroup().pids()->empty());
}

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
    CHECK(escape.error().message() == "--cgroup \"../other\": ../other is not a sub cgroup path");
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
