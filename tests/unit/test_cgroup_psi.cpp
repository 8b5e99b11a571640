// Pressure stall information (cgroup_psi.cpp): the *.pressure files' text to runc's
// PSIStats JSON, and `events --stats` taking it from the cgroup2 directory when it is there.
#include "cgroup/cgroup.hpp"
#include "cgroup/controllers.hpp"
#include "cgroup_fakes.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace minirun;
using namespace minirun::runtime::cgroup;
using namespace minirun::testing::cgroup_fakes;
using controllers::parse_psi;

namespace {

nlohmann::json psi_data(nlohmann::json avg10, nlohmann::json avg60, nlohmann::json avg300,
                        uint64_t total) {
    return {{"avg10", avg10}, {"avg60", avg60}, {"avg300", avg300}, {"total", total}};
}

const char* kMemoryPressure = "some avg10=1.71 avg60=2.36 avg300=2.57 total=230548833\n"
                              "full avg10=1.00 avg60=1.01 avg300=0.00 total=157622356\n";

} // namespace

TEST_CASE("psi: some and full lines, as runc's PSIStats", "[cgroup][psi]") {
    auto psi = parse_psi(kMemoryPressure);
    REQUIRE(psi);
    CHECK(*psi == nlohmann::json{{"some", psi_data(1.71, 2.36, 2.57, 230548833)},
                                 {"full", psi_data(1, 1.01, 0, 157622356)}});
    // As Go writes a float64: a whole percentage without a fraction, the rest as parsed.
    CHECK(psi->dump() == R"({"full":{"avg10":1,"avg300":0,"avg60":1.01,"total":157622356},)"
                         R"("some":{"avg10":1.71,"avg300":2.57,"avg60":2.36,"total":230548833}})");
}

TEST_CASE("psi: a file without a full line has full at zero", "[cgroup][psi]") {
    // cpu.pressure before Linux 5.13 has the "some" line only; runc's struct still has
    // "full", all zero.
    auto psi = parse_psi("some avg10=95.85 avg60=55.69 avg300=26.78 total=5689168432");
    REQUIRE(psi);
    CHECK((*psi)["some"] == psi_data(95.85, 55.69, 26.78, 5689168432));
    CHECK((*psi)["full"] == psi_data(0, 0, 0, 0));
}

TEST_CASE("psi: unknown lines and keys are skipped, the order does not matter", "[cgroup][psi]") {
    auto psi = parse_psi("full total=7 avg300=0.50 avg60=0.25 avg10=100.00 future=1\n"
                         "\n"
                         "other avg10=x\n"
                         "some  avg10=0.10\tavg60=0.20 avg300=0.30 total=1\n");
    REQUIRE(psi);
    CHECK((*psi)["full"] == psi_data(100, 0.25, 0.5, 7));
    CHECK((*psi)["some"] == psi_data(0.1, 0.2, 0.3, 1));
}

TEST_CASE("psi: a malformed file is an error naming the line", "[cgroup][psi]") {
    struct Case {
        const char* text;
        const char* message;
    };
    for (const Case& bad : {
             Case{"some avg10=abc avg60=0.00 avg300=0.00 total=0",
                  "line 1: invalid PSI value \"avg10=abc\""},
             Case{"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10 0.00",
                  "line 2: invalid PSI data \"avg10\""},
             Case{"some avg10=0.00 total=-1", "line 1: invalid PSI value \"total=-1\""},
             Case{"some avg10=-1.00", "line 1: invalid PSI value \"avg10=-1.00\""},
             Case{"some avg10=nan", "line 1: invalid PSI value \"avg10=nan\""},
             Case{"some avg10=1.0x", "line 1: invalid PSI value \"avg10=1.0x\""},
             Case{"", "no \"some\" or \"full\" line"},
             Case{"garbage\n", "no \"some\" or \"full\" line"},
         }) {
        INFO(bad.text);
        auto psi = parse_psi(bad.text);
        REQUIRE_FALSE(psi);
        CHECK(psi.error().message() == bad.message);
        CHECK(psi.error().errno_value() == EINVAL);
    }
}

TEST_CASE("psi: events --stats has cpu, memory and blkio psi where the files are",
          "[cgroup][psi]") {
    FakeUnified fake;
    Cgroup cgroup = fake.cgroup();
    SECTION("no pressure files (a kernel without PSI): no psi, as runc") {
        auto stats = cgroup.stats();
        REQUIRE(stats);
        CHECK_FALSE((*stats)["cpu"].contains("psi"));
        CHECK_FALSE((*stats)["memory"].contains("psi"));
        CHECK_FALSE((*stats)["blkio"].contains("psi"));
    }
    SECTION("all three") {
        put(fake.dir + "/cpu.pressure", "some avg10=0.50 avg60=0.00 avg300=0.00 total=42\n");
        put(fake.dir + "/memory.pressure", kMemoryPressure);
        put(fake.dir + "/io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n"
                                       "full avg10=0.00 avg60=0.00 avg300=0.00 total=8\n");
        auto stats = cgroup.stats();
        REQUIRE(stats);
        CHECK((*stats)["cpu"]["psi"] ==
              nlohmann::json{{"some", psi_data(0.5, 0, 0, 42)}, {"full", psi_data(0, 0, 0, 0)}});
        CHECK((*stats)["memory"]["psi"] == *parse_psi(kMemoryPressure));
        CHECK((*stats)["blkio"]["psi"]["full"]["total"] == 8);
        // The rest of the sections is as before.
        CHECK((*stats)["cpu"]["usage"].contains("user"));
    }
    SECTION("one of them only") {
        put(fake.dir + "/io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n");
        auto stats = cgroup.stats();
        REQUIRE(stats);
        CHECK_FALSE((*stats)["cpu"].contains("psi"));
        CHECK_FALSE((*stats)["memory"].contains("psi"));
        CHECK((*stats)["blkio"]["psi"]["some"]["total"] == 9);
    }
    SECTION("a malformed one fails the stats, naming the file (as runc)") {
        put(fake.dir + "/memory.pressure", "some avg10=oops\n");
        auto stats = cgroup.stats();
        REQUIRE_FALSE(stats);
        CHECK(stats.error().message() == fake.dir + "/memory.pressure: line 1: invalid PSI "
                                                    "value \"avg10=oops\"");
    }
}

TEST_CASE("psi: a legacy host (no cgroup2) has none", "[cgroup][psi]") {
    FakeLegacy fake;
    auto stats = fake.cgroup().stats();
    REQUIRE(stats);
    CHECK_FALSE((*stats)["cpu"].contains("psi"));
    CHECK_FALSE((*stats)["memory"].contains("psi"));
    CHECK_FALSE((*stats)["blkio"].contains("psi"));
}
