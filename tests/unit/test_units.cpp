#include "minirun/units.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

using minirun::units::parse_duration;
using minirun::units::parse_memory_size;

TEST_CASE("memory sizes read like runc's --memory", "[units]") {
    CHECK(parse_memory_size("0").value() == 0);
    CHECK(parse_memory_size("1024").value() == 1024);
    CHECK(parse_memory_size("512b").value() == 512);
    CHECK(parse_memory_size("64k").value() == 64LL * 1024);
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

// exec --user as runc 1.3 takes it (<uid>[:<gid>], numbers only), without its holes: no
// name, sign or empty part is read as 0 (root), and (uid_t)-1 is refused, since
// setresuid(2) would read it as "leave the uid unchanged" (crun CVE-2026-30892's class).
TEST_CASE("exec --user: <uid>[:<gid>], exactly, or one line", "[units]") {
    using minirun::units::parse_user_ids;
    auto ok = parse_user_ids("1000");
    REQUIRE(ok.ok());
    CHECK(ok->uid == 1000);
    CHECK_FALSE(ok->gid.has_value()); // the process keeps its gid, as with runc
    ok = parse_user_ids("1000:100");
    REQUIRE(ok.ok());
    CHECK(ok->uid == 1000);
    CHECK(ok->gid == 100u);
    ok = parse_user_ids("0:0");
    REQUIRE(ok.ok());
    CHECK((ok->uid == 0 && ok->gid == 0u));
    ok = parse_user_ids("4294967294:4294967294");
    REQUIRE(ok.ok());
    CHECK((ok->uid == 4294967294U && ok->gid == 4294967294U));

    const std::vector<std::pair<std::string, std::string>> refused = {
        {"", R"(--user "": the uid is empty)"},
        {":", R"(--user ":": the uid is empty)"},
        {"1:", R"(--user "1:": the gid is empty)"},
        {":1", R"(--user ":1": the uid is empty)"},
        {"-1", R"(--user "-1": the uid "-1" is not a number; names are not looked up)"},
        {"+1", R"(--user "+1": the uid "+1" is not a number; names are not looked up)"},
        {"abc", R"(--user "abc": the uid "abc" is not a number; names are not looked up)"},
        {"root", R"(--user "root": the uid "root" is not a number; names are not looked up)"},
        {"1:abc", R"(--user "1:abc": the gid "abc" is not a number; names are not looked up)"},
        {"1:2:3", R"(--user "1:2:3": the gid "2:3" is not a number; names are not looked up)"},
        {" 1", R"(--user " 1": the uid " 1" is not a number; names are not looked up)"},
        {"4294967295",
         R"(--user "4294967295": the uid 4294967295 is out of range: at most 4294967294)"},
        {"0:4294967295",
         R"(--user "0:4294967295": the gid 4294967295 is out of range: at most 4294967294)"},
        {"4294967296",
         R"(--user "4294967296": the uid 4294967296 is out of range: at most 4294967294)"},
        {"99999999999999999999999", R"(--user "99999999999999999999999": the uid )"
                                    R"(99999999999999999999999 is out of range: at most )"
                                    R"(4294967294)"},
    };
    for (const auto& [text, message] : refused) {
        CAPTURE(text);
        auto bad = parse_user_ids(text);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().errno_value() == EINVAL);
        CHECK(bad.error().message() == message + " (expected <uid>[:<gid>], decimal numbers)");
        CHECK(bad.error().message().find('\n') == std::string::npos);
    }
}
