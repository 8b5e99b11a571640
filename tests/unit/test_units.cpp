#include "minirun/units.hpp"

#include <catch2/catch.hpp>

using minirun::units::parse_duration;
using minirun::units::parse_memory_size;

TEST_CASE("memory sizes read like runc's --memory", "[units]") {
    CHECK(parse_memory_size("0").value() == 0);
    CHECK(parse_memory_size("1024").value() == 1024);
    CHECK(parse_memory_size("512b").value() == 512);
    CHECK(parse_memory_size("64k").value() == 64 * 1024);
    CHECK(parse_memory_size("64m").value() == 64LL * 1024 * 1024);
    CHECK(parse_memory_size("64M").value() == 64LL * 1024 * 1024);
    CHECK(parse_memory_size("64MB").value() == 64LL * 1024 * 1024);
    CHECK(parse_memory_size("64MiB").value() == 64LL * 1024 * 1024);
    CHECK(parse_memory_size("1.5g").value() == 1536LL * 1024 * 1024);
    CHECK(parse_memory_size("2t").value() == 2LL * 1024 * 1024 * 1024 * 1024);
    CHECK(parse_memory_size("-1").value() == -1);
    for (const char* bad : {"", "m", "-5", "64x", "64 m", "1e400", "64mm", "99999999p"}) {
        INFO(bad);
        auto parsed = parse_memory_size(bad);
        REQUIRE_FALSE(parsed.ok());
        CHECK_THAT(parsed.error().message(), Catch::Contains(std::string("\"") + bad + "\""));
    }
}

TEST_CASE("durations read like Go's", "[units]") {
    using std::chrono::milliseconds;
    CHECK(parse_duration("5s").value() == milliseconds(5000));
    CHECK(parse_duration("500ms").value() == milliseconds(500));
    CHECK(parse_duration("1m30s").value() == milliseconds(90000));
    CHECK(parse_duration("2h").value() == milliseconds(7200000));
    CHECK(parse_duration("3").value() == milliseconds(3000));
    CHECK(parse_duration("0.25s").value() == milliseconds(250));
    for (const char* bad : {"", "0s", "5x", "s", "-1s", "0.1ms"}) {
        INFO(bad);
        CHECK_FALSE(parse_duration(bad).ok());
    }
}

// Found by tests/fuzz/units.cpp: a duration of 2^63 ms or more was converted from double to
// int64_t, which is undefined behaviour (UBSan: "2e+93 is outside the range of representable
// values of type 'long'").
TEST_CASE("durations beyond what milliseconds can hold are refused", "[units]") {
    for (const char* huge : {"2e90s", "9223372036854775808ms", "1e300h", "9e15s9e15s"}) {
        INFO(huge);
        auto parsed = parse_duration(huge);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().message() == std::string("duration \"") + huge + "\" is too long");
    }
    CHECK(parse_duration("9e15ms").value().count() == 9000000000000000);
}
