#include "minirun/error.hpp"
#include "minirun/log.hpp"
#include "minirun/runtime.hpp"
#include "minirun/spec.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

using namespace minirun;

TEST_CASE("cat writes every part as `<<` would", "[error]") {
    // Each part beside what an ostream makes of it: text and integers take the short way.
    auto streamed = [](const auto&... parts) {
        std::ostringstream out;
        (out << ... << parts);
        return out.str();
    };
    const std::string text = "/sys/fs/cgroup";
    const std::string_view view = "view";
    const char* none = nullptr;
    const char letter = 'x';
    const unsigned char byte = 'y';
    const int negative = -42;
    const uint64_t largest = UINT64_MAX;
    const int64_t smallest = INT64_MIN;
    const pid_t pid = 4242;
    const double fraction = 0.25;
    CHECK(cat(text, "/", "memory", '/', pid) == "/sys/fs/cgroup/memory/4242");
    CHECK(cat(text, view, letter, byte) == streamed(text, view, letter, byte));
    CHECK(cat(negative, " ", largest, " ", smallest, " ", size_t{0}) ==
          streamed(negative, " ", largest, " ", smallest, " ", size_t{0}));
    CHECK(cat(true, false, fraction, 1e21) == streamed(true, false, fraction, 1e21));
    CHECK(cat("a", none, "b") == "ab");
    // A manipulator changes how the rest of the line is written, as in a stream.
    CHECK(cat("mask ", std::hex, 240, " ", 255U) == "mask f0 ff");
    CHECK(cat() == "");
}

TEST_CASE("errors carry context up the chain and keep errno", "[error]") {
    Error inner = Error::from_errno(ENOENT, "open x");
    CHECK(inner.message() == "open x: No such file or directory");
    Error outer = inner.wrap("mounts[2]");
    CHECK(outer.message() == "mounts[2]: open x: No such file or directory");
    CHECK(outer.errno_value() == ENOENT);

    auto fails = []() -> Status {
        return Error(EINVAL, "bad");
    };
    auto caller = [&]() -> Result<int> {
        MR_TRY_WRAP(fails(), "step");
        return 1;
    };
    auto result = caller();
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().message() == "step: bad");
    CHECK(quoted("a\"b") == "\"a\\\"b\"");
}

// Found by tests/fuzz/config_json.cpp: quoted() of a std::string inside namespace minirun
// was std::quoted (argument-dependent lookup), which keeps newlines, so a namespace type
// with a newline in it gave a two-line error. quoted is an object now, which ADL ignores.
TEST_CASE("quoted: every argument type escapes control characters, messages stay one line",
          "[error]") {
    const std::string text = "a\nb\"c\\d\te";
    const std::string expected = R"("a\nb\"c\\d?e")";
    CHECK(quoted(text) == expected);
    CHECK(quoted(std::string_view(text)) == expected);
    CHECK(quoted(text.c_str()) == expected);
    CHECK(cat("x ", quoted(text)) == "x " + expected);

    auto parsed = spec::parse_spec(R"({"ociVersion": "1.0.2", "process": {"args": ["sh"],
        "cwd": "/"}, "root": {"path": "rootfs"},
        "linux": {"namespaces": [{"type": "us\ner"}]}})");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message() == R"(linux.namespaces[0].type: unknown namespace "us\ner")");
}

TEST_CASE("container ids", "[id]") {
    for (const char* good : {"a", "abc-DEF_1.2+3", "0123456789abcdef", "x."}) {
        CHECK(validate_container_id(good).ok());
    }
    for (const char* bad : {"", ".", "..", "../x", "a/b", ".hidden", "sp ace", "a\nb", "é"}) {
        CHECK_FALSE(validate_container_id(bad).ok());
    }
    CHECK(validate_container_id(std::string(1024, 'a')).ok());
    CHECK_FALSE(validate_container_id(std::string(1025, 'a')).ok());
    CHECK_THAT(validate_container_id("a/b").error().message(),
               Catch::StartsWith("invalid container id \"a/b\""));
}

TEST_CASE("log lines: one JSON object with level, msg and an RFC 3339 time", "[log]") {
    std::string time = log::rfc3339_now();
    CHECK(std::regex_match(time, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z)")));
    std::string line = log::json_line(log::Level::error, "exec: \"x\"\nfailed", time);
    CHECK(line.find('\n') == std::string::npos);
    auto parsed = nlohmann::json::parse(line);
    CHECK(parsed["level"] == "error");
    CHECK(parsed["msg"] == "exec: \"x\"\nfailed");
    CHECK(parsed["time"] == time);
}

TEST_CASE("log lines: the text format is runc's (logrus): time, level, quoted msg", "[log]") {
    std::string line =
        log::text_line(log::Level::debug, "exec: \"x\"\nfailed", "2026-12-01T10:00:00.000000000Z");
    CHECK(line == R"(time="2026-12-01T10:00:00.000000000Z" level=debug msg="exec: \"x\"\nfailed")");
}
