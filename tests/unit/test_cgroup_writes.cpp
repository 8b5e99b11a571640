// Golden tests of Cgroup::apply: the exact sequence of (file, value) writes for a few rich
// linux.resources configs on v1, v2 and hybrid fakes, recorded through
// files::observe_writes. They pin which files each controller writes, with which
// conversions and in which order, and where a failing controller stops the sequence.
#include "capture_stderr.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_files.hpp"
#include "cgroup_fakes.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace minirun;
using namespace minirun::runtime::cgroup;
using namespace minirun::testing::cgroup_fakes;
using minirun::testing::capture_stderr;
using minirun::testing::TempDir;

namespace {

// Every write while it lives, as "file value": the file relative to `base`, its
// "mini-run/c1/" dropped ("memory/memory.limit_in_bytes" on v1, "memory.max" on v2), and
// newlines in the value shown as "\n".
class WriteLog {
public:
    explicit WriteLog(std::string base) : base_(std::move(base) + "/") {
        files::observe_writes([this](const std::string& path, std::string_view value) {
            std::string file = path.starts_with(base_) ? path.substr(base_.size()) : path;
            if (size_t at = file.find("mini-run/c1/"); at != std::string::npos) {
                file.erase(at, std::string("mini-run/c1/").size());
            }
            std::string shown;
            for (char c : value) {
                shown += c == '\n' ? std::string("\\n") : std::string(1, c);
            }
            lines_.push_back(file + " " + shown);
        });
    }
    WriteLog(const WriteLog&) = delete;
    WriteLog& operator=(const WriteLog&) = delete;
    ~WriteLog() { files::observe_writes({}); }
    [[nodiscard]] const std::vector<std::string>& lines() const { return lines_; }

private:
    std::string base_;
    std::vector<std::string> lines_;
};

spec::Resources rich_v1_resources() {
    spec::Resources r;
    r.devices.push_back({false, "a", std::nullopt, std::nullopt, "rwm"});
    r.devices.push_back({true, "c", 1, 3, "rwm"});
    r.devices.push_back({true, "b", 8, std::nullopt, "r"});
    r.memory = spec::MemoryResources{};
    r.memory->limit = 64 << 20;
    r.memory->reservation = 32 << 20;
    r.memory->swap = 128 << 20;
    r.memory->kernel = 1 << 30;
    r.memory->kernel_tcp = 16 << 20;
    r.memory->swappiness = 10;
    r.memory->disable_oom_killer = true;
    r.cpu = spec::CpuResources{};
    r.cpu->shares = 512;
    r.cpu->quota = 50000;
    r.cpu->period = 100000;
    r.cpu->burst = 1000;
    r.cpu->realtime_period = 1000000;
    r.cpu->realtime_runtime = 950000;
    r.cpu->cpus = "0-1";
    r.cpu->mems = "0";
    r.cpu->idle = 1;
    r.pids = spec::PidsResources{10};
    r.block_io = spec::BlockIoResources{};
    r.block_io->weight = 300;
    r.block_io->leaf_weight = 200;
    r.block_io->weight_device.push_back({8, 0, 400, 100});
    r.block_io->weight_device.push_back({8, 16, std::nullopt, 50});
    r.block_io->throttle_read_bps_device.push_back({8, 0, 1000});
    r.block_io->throttle_write_bps_device.push_back({8, 0, 2000});
    r.block_io->throttle_read_iops_device.push_back({8, 16, 30});
    r.block_io->throttle_write_iops_device.push_back({8, 16, 50});
    r.hugepage_limits.push_back({"2MB", 2 << 20});
    r.hugepage_limits.push_back({"1GB", 0});
    r.network = spec::NetworkResources{0x100001, {{"eth0", 5}, {"lo", 2}}};
    return r;
}

spec::Resources rich_v2_resources() {
    spec::Resources r;
    r.memory = spec::MemoryResources{};
    r.memory->limit = 64 << 20;
    r.memory->reservation = 32 << 20;
    r.memory->swap = 128 << 20;
    r.memory->kernel_tcp = 16 << 20;
    r.memory->swappiness = 10;
    r.cpu = spec::CpuResources{};
    r.cpu->idle = 1;
    r.cpu->shares = 1024;
    r.cpu->quota = 50000;
    r.cpu->period = 200000;
    r.cpu->burst = 1000;
    r.cpu->cpus = "0-1";
    r.cpu->mems = "0";
    r.pids = spec::PidsResources{10};
    r.block_io = spec::BlockIoResources{};
    r.block_io->weight = 500;
    r.block_io->leaf_weight = 100;
    r.block_io->weight_device.push_back({8, 0, 200, std::nullopt});
    r.block_io->weight_device.push_back({8, 16, std::nullopt, 50});
    r.block_io->throttle_read_bps_device.push_back({8, 0, 1048576});
    r.block_io->throttle_write_bps_device.push_back({8, 0, 0});
    r.block_io->throttle_read_iops_device.push_back({8, 16, 100});
    r.block_io->throttle_write_iops_device.push_back({8, 16, 200});
    r.hugepage_limits.push_back({"2MB", 4 << 20});
    r.hugepage_limits.push_back({"1GB", 0});
    r.rdma["mlx4_0"] = spec::RdmaLimit{2, 3};
    r.rdma["mlx5_1"] = spec::RdmaLimit{};
    r.rdma["mlx5_2"] = spec::RdmaLimit{std::nullopt, 7};
    r.unified["memory.high"] = "50000000";
    r.unified["io.max"] = "8:0 rbps=1\n8:16 wbps=2\n";
    return r;
}

// What rich_v2_resources() writes on a unified host, in order.
const std::vector<std::string> kRichV2Writes = std::vector<std::string>{
    "cpuset.cpus 0-1",
    "cpuset.mems 0",
    "memory.swap.max 67108864",
    "memory.max 67108864",
    "memory.low 33554432",
    "cpu.idle 1",
    "cpu.weight 100",
    "cpu.max 50000 200000",
    "cpu.max.burst 1000",
    "pids.max 10",
    "io.weight default 4950",
    "io.weight 8:0 1920",
    "io.max 8:0 rbps=1048576",
    "io.max 8:0 wbps=max",
    "io.max 8:16 riops=100",
    "io.max 8:16 wiops=200",
    "hugetlb.2MB.max 4194304",
    "hugetlb.2MB.rsvd.max 4194304",
    "hugetlb.1GB.max 0",
    "rdma.max mlx4_0 hca_handle=2 hca_object=3",
    "rdma.max mlx5_2 hca_object=7",
    "io.max 8:0 rbps=1",
    "io.max 8:16 wbps=2",
    "memory.high 50000000",
};

// The legacy fake with the files a rich config needs that it lacks.
void add_v1_knobs(const FakeLegacy& fake) {
    make_cgroup(fake.dir("memory"), {"memory.kmem.tcp.limit_in_bytes", "memory.usage_in_bytes"});
    make_cgroup(fake.dir("cpu,cpuacct"),
                {"cpu.rt_period_us", "cpu.rt_runtime_us", "cpu.cfs_burst_us", "cpu.idle"});
    make_cgroup(fake.dir("blkio"),
                {"blkio.leaf_weight", "blkio.leaf_weight_device", "blkio.throttle.write_bps_device",
                 "blkio.throttle.read_iops_device"});
    make_cgroup(fake.dir("hugetlb"),
                {"hugetlb.2MB.rsvd.limit_in_bytes", "hugetlb.1GB.limit_in_bytes"});
}

void add_v2_knobs(const FakeUnified& fake) {
    make_cgroup(fake.dir, {"cpu.idle", "cpu.max.burst", "hugetlb.2MB.rsvd.max", "hugetlb.1GB.max",
                           "rdma.max", "memory.current"});
}

} // namespace

TEST_CASE("cgroup v1 golden: a rich config's writes, in order", "[cgroup]") {
    FakeLegacy fake;
    REQUIRE(fake.cgroup().create());
    add_v1_knobs(fake);
    WriteLog writes(fake.base);
    std::string warned = capture_stderr([&] { REQUIRE(fake.cgroup().apply(rich_v1_resources())); });
    CHECK_THAT(warned, Catch::Contains(
                           "linux.resources.memory.kernel is ignored (deprecated by the kernel)"));
    CHECK(writes.lines() == std::vector<std::string>{
                                "cpuset/cpuset.cpus 0-1",
                                "cpuset/cpuset.mems 0",
                                "devices/devices.deny a",
                                "devices/devices.allow c 1:3 rwm",
                                "devices/devices.allow b 8:* r",
                                "memory/memory.limit_in_bytes 67108864",
                                "memory/memory.memsw.limit_in_bytes 134217728",
                                "memory/memory.soft_limit_in_bytes 33554432",
                                "memory/memory.kmem.tcp.limit_in_bytes 16777216",
                                "memory/memory.swappiness 10",
                                "memory/memory.oom_control 1",
                                "cpu,cpuacct/cpu.rt_period_us 1000000",
                                "cpu,cpuacct/cpu.rt_runtime_us 950000",
                                "cpu,cpuacct/cpu.shares 512",
                                "cpu,cpuacct/cpu.cfs_period_us 100000",
                                "cpu,cpuacct/cpu.cfs_quota_us 50000",
                                "cpu,cpuacct/cpu.cfs_burst_us 1000",
                                "cpu,cpuacct/cpu.idle 1",
                                "pids/pids.max 10",
                                "blkio/blkio.weight 300",
                                "blkio/blkio.leaf_weight 200",
                                "blkio/blkio.weight_device 8:0 400",
                                "blkio/blkio.leaf_weight_device 8:0 100",
                                "blkio/blkio.leaf_weight_device 8:16 50",
                                "blkio/blkio.throttle.read_bps_device 8:0 1000",
                                "blkio/blkio.throttle.write_bps_device 8:0 2000",
                                "blkio/blkio.throttle.read_iops_device 8:16 30",
                                "blkio/blkio.throttle.write_iops_device 8:16 50",
                                "hugetlb/hugetlb.2MB.limit_in_bytes 2097152",
                                "hugetlb/hugetlb.2MB.rsvd.limit_in_bytes 2097152",
                                "hugetlb/hugetlb.1GB.limit_in_bytes 0",
                                "net_cls,net_prio/net_cls.classid 1048577",
                                "net_cls,net_prio/net_prio.ifpriomap eth0 5",
                                "net_cls,net_prio/net_prio.ifpriomap lo 2",
                            });
}

TEST_CASE("cgroup v1 golden: update writes memsw before a limit above it", "[cgroup]") {
    FakeLegacy fake;
    add_v1_knobs(fake);
    put(fake.dir("memory") + "/memory.usage_in_bytes", "1000\n");
    spec::Resources update;
    update.memory = spec::MemoryResources{};
    update.memory->check_before_update = true;
    WriteLog writes(fake.base);
    SECTION("a limit above the current memsw: memsw first") {
        put(fake.dir("memory") + "/memory.memsw.limit_in_bytes", "134217728\n");
        update.memory->limit = 256 << 20;
        update.memory->swap = 512 << 20;
        REQUIRE(fake.cgroup().apply(update, true));
        CHECK(writes.lines() == std::vector<std::string>{
                                    "memory/memory.memsw.limit_in_bytes 536870912",
                                    "memory/memory.limit_in_bytes 268435456",
                                });
    }
    SECTION("a limit below it: the limit first") {
        put(fake.dir("memory") + "/memory.memsw.limit_in_bytes", "536870912\n");
        update.memory->limit = 64 << 20;
        update.memory->swap = 96 << 20;
        REQUIRE(fake.cgroup().apply(update, true));
        CHECK(writes.lines() == std::vector<std::string>{
                                    "memory/memory.limit_in_bytes 67108864",
                                    "memory/memory.memsw.limit_in_bytes 100663296",
                                });
    }
    SECTION("unlimited values") {
        spec::Resources unlimited;
        unlimited.memory = spec::MemoryResources{};
        unlimited.memory->limit = -1;
        unlimited.pids = spec::PidsResources{-1};
        unlimited.cpu = spec::CpuResources{};
        unlimited.cpu->quota = -1;
        REQUIRE(fake.cgroup().apply(unlimited, true));
        // memsw first: -1 is above any current value.
        CHECK(writes.lines() == std::vector<std::string>{
                                    "memory/memory.memsw.limit_in_bytes -1",
                                    "memory/memory.limit_in_bytes -1",
                                    "cpu,cpuacct/cpu.cfs_quota_us -1",
                                    "pids/pids.max max",
                                });
    }
    SECTION("a limit below the usage is refused before any write") {
        put(fake.dir("memory") + "/memory.usage_in_bytes", "999999999\n");
        update.memory->limit = 64 << 20;
        auto refused = fake.cgroup().apply(update, true);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().message() ==
              "rejecting memory limit 67108864 below the current usage 999999999");
        CHECK(writes.lines().empty());
    }
}

TEST_CASE("cgroup v2 golden: a rich config's writes, in order", "[cgroup]") {
    FakeUnified fake;
    add_v2_knobs(fake);
    WriteLog writes(fake.root);
    REQUIRE(fake.cgroup().apply(rich_v2_resources()));
    CHECK(writes.lines() == kRichV2Writes);
}

TEST_CASE("cgroup v2 golden: BFQ weights, unlimited values, refusals", "[cgroup]") {
    FakeUnified fake;
    add_v2_knobs(fake);
    WriteLog writes(fake.root);
    SECTION("BFQ takes blkio weights as they are") {
        make_cgroup(fake.dir, {"io.bfq.weight"});
        spec::Resources bfq;
        bfq.block_io = spec::BlockIoResources{};
        bfq.block_io->weight = 500;
        bfq.block_io->weight_device.push_back({8, 0, 200, std::nullopt});
        REQUIRE(fake.cgroup().apply(bfq));
        CHECK(writes.lines() ==
              std::vector<std::string>{"io.bfq.weight default 500", "io.bfq.weight 8:0 200"});
    }
    SECTION("unlimited values on update") {
        spec::Resources unlimited;
        unlimited.memory = spec::MemoryResources{};
        unlimited.memory->limit = -1;
        unlimited.pids = spec::PidsResources{-1};
        unlimited.cpu = spec::CpuResources{};
        unlimited.cpu->quota = -1;
        REQUIRE(fake.cgroup().apply(unlimited, true));
        CHECK(writes.lines() == std::vector<std::string>{
                                    "memory.swap.max max",
                                    "memory.max max",
                                    "cpu.max max 100000",
                                    "pids.max max",
                                });
    }
    SECTION("a v1-only controller stops the sequence where it comes") {
        spec::Resources network = rich_v2_resources();
        network.network = spec::NetworkResources{7, {}};
        auto failed = fake.cgroup().apply(network);
        REQUIRE_FALSE(failed);
        CHECK(failed.error().message() ==
              "cannot set net_cls limits: cgroup v2 has no net_cls controller");
        // Everything before net_cls in the table, nothing after it (rdma, unified).
        CHECK(writes.lines() ==
              std::vector<std::string>(kRichV2Writes.begin(), kRichV2Writes.begin() + 19));
    }
    SECTION("realtime cpu limits are refused before any cpu write") {
        spec::Resources realtime;
        realtime.cpu = spec::CpuResources{};
        realtime.cpu->shares = 1024;
        realtime.cpu->realtime_runtime = 1000;
        realtime.cpu->cpus = "0";
        auto failed = fake.cgroup().apply(realtime);
        REQUIRE_FALSE(failed);
        CHECK(failed.error().errno_value() == ENOTSUP);
        CHECK(writes.lines() == std::vector<std::string>{"cpuset.cpus 0"}); // cpuset comes first
    }
}

TEST_CASE("cgroup hybrid golden: v1 hierarchies first, cgroup2 for what v1 lacks", "[cgroup]") {
    TempDir tmp;
    Host host = host_from(fs::parse_mountinfo(kHybridMounts), kHybridProcCgroup, "hugetlb\n");
    Cgroup cgroup = Cgroup::for_path(host, "/mini-run/c1", tmp.path());
    for (const auto& [key, dir] : cgroup.paths()) {
        make_cgroup(dir, {"cgroup.procs"});
    }
    std::string v2 = cgroup.paths().at("unified");
    make_cgroup(cgroup.paths().at("memory"), {"memory.limit_in_bytes"});
    make_cgroup(cgroup.paths().at("pids"), {"pids.max"});
    make_cgroup(cgroup.paths().at("devices"), {"devices.allow", "devices.deny"});
    make_cgroup(v2, {"hugetlb.2MB.max", "hugetlb.1GB.max", "memory.max"},
                {{"cgroup.controllers", "hugetlb\n"}});
    spec::Resources resources;
    resources.memory = spec::MemoryResources{};
    resources.memory->limit = 1 << 20;
    resources.pids = spec::PidsResources{5};
    resources.hugepage_limits.push_back({"2MB", 0});
    resources.unified["hugetlb.1GB.max"] = "0";
    resources.devices.push_back({false, "a", std::nullopt, std::nullopt, "rwm"});
    WriteLog writes(tmp.path() + "/sys/fs/cgroup");
    REQUIRE(cgroup.apply(resources));
    CHECK(writes.lines() == std::vector<std::string>{
                                "devices/devices.deny a",
                                "memory/memory.limit_in_bytes 1048576",
                                "pids/pids.max 5",
                                "unified/hugetlb.2MB.max 0",
                                "unified/hugetlb.1GB.max 0",
                            });

    SECTION("a controller neither has is an error") {
        spec::Resources rdma;
        rdma.rdma["mlx4_0"] = spec::RdmaLimit{1, 1};
        auto failed = cgroup.apply(rdma);
        REQUIRE_FALSE(failed);
        CHECK(failed.error().message() ==
              "cannot set rdma limits: no cgroup hierarchy holds the \"rdma\" controller");
    }
}

TEST_CASE("pids.limit: absent leaves pids.max, 0 is a limit, a negative one is max",
          "[cgroup][pids]") {
    // runtime-spec 1.3: `limit` is optional and 0 a real limit (cgroup_pids.cpp says where
    // runc 1.3 differs).
    struct Case {
        std::optional<int64_t> limit;
        std::vector<std::string> v1;
        std::vector<std::string> v2;
    };
    const std::vector<Case> cases = {
        {std::nullopt, {}, {}},
        {0, {"pids/pids.max 0"}, {"pids.max 0"}},
        {-1, {"pids/pids.max max"}, {"pids.max max"}},
        {-42, {"pids/pids.max max"}, {"pids.max max"}},
        {1, {"pids/pids.max 1"}, {"pids.max 1"}},
        {32771, {"pids/pids.max 32771"}, {"pids.max 32771"}},
    };
    for (const Case& c : cases) {
        INFO("limit " << (c.limit ? std::to_string(*c.limit) : std::string("absent")));
        spec::Resources resources;
        resources.pids = spec::PidsResources{c.limit};
        for (bool update : {false, true}) {
            {
                FakeLegacy fake;
                WriteLog writes(fake.base);
                REQUIRE(fake.cgroup().apply(resources, update));
                CHECK(writes.lines() == c.v1);
            }
            FakeUnified fake;
            WriteLog writes(fake.root);
            REQUIRE(fake.cgroup().apply(resources, update));
            CHECK(writes.lines() == c.v2);
        }
    }
}
