// Cgroup::apply on fake v1, v2 and hybrid trees: the files each limit ends up in, and the
// errors of what cannot be applied. The order of the writes is pinned in
// test_cgroup_writes.cpp.
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

namespace {

// The typed fields of every v2 controller, and one unified key.
spec::Resources every_v2_field() {
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
    return resources;
}

} // namespace

TEST_CASE("cgroup v2: apply writes every file", "[cgroup]") {
    FakeUnified fake;
    spec::Resources resources = every_v2_field();
    REQUIRE(fake.cgroup().apply(resources));

    CHECK(fake.file("memory.max") == "67108864");
    CHECK(fake.file("memory.low") == "33554432");
    CHECK(fake.file("memory.swap.max") == "67108864"); // memory+swap minus memory
    CHECK(fake.file("pids.max") == "10");
    CHECK(fake.file("cpu.max") == "50000 200000");
    CHECK(fake.file("cpu.weight") == "100"); // 1024 shares: runc 1.3.2+'s conversion
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
        more.pids = spec::PidsResources{-1}; // 0 is a limit (runtime-spec 1.3)
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
