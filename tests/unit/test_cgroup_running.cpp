// A container's cgroup once it runs, on fake trees: freeze and thaw, its pids, stats and
// OOM kills, and remove.
#include "cgroup/cgroup.hpp"
#include "cgroup_fakes.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>

using namespace minirun;
using namespace minirun::runtime::cgroup;
using minirun::testing::TempDir;
using namespace minirun::testing::cgroup_fakes;
namespace stdfs = std::filesystem;

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
