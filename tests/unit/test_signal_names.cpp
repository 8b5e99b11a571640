#include "minirun/runtime.hpp"

#include <catch2/catch.hpp>
#include <csignal>

using minirun::parse_signal;

TEST_CASE("signals by number, name and SIG name, any case", "[signals]") {
    CHECK(*parse_signal("9") == SIGKILL);
    CHECK(*parse_signal("15") == SIGTERM);
    CHECK(*parse_signal("KILL") == SIGKILL);
    CHECK(*parse_signal("SIGKILL") == SIGKILL);
    CHECK(*parse_signal("sigterm") == SIGTERM);
    CHECK(*parse_signal("usr1") == SIGUSR1);
    CHECK(*parse_signal("WINCH") == SIGWINCH);
    CHECK(*parse_signal("RTMIN") == SIGRTMIN);
    CHECK(*parse_signal("RTMIN+3") == SIGRTMIN + 3);
    CHECK(*parse_signal("SIGRTMAX-1") == SIGRTMAX - 1);
    // kill(2)'s "is it there?" probe, as `runc kill ID 0` sends it.
    CHECK(*parse_signal("0") == 0);
}

TEST_CASE("bad signals are refused with the value named", "[signals]") {
    for (const char* bad : {"", "-9", "65", "FOO", "SIG", "9x", "RTMIN+99", "RTMAX+1"}) {
        INFO(bad);
        auto parsed = parse_signal(bad);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().message() == std::string("invalid signal \"") + bad + "\"");
    }
}

// Found with tests/fuzz/signals.cpp under UBSan: the offset of a real-time signal was added
// in an int, so these overflowed (undefined behaviour) before they were refused.
TEST_CASE("real-time offsets at the ends of int are refused, not overflowed", "[signals]") {
    for (const char* bad : {"RTMIN+2147483647", "SIGRTMAX--2147483648", "RTMAX-2147483647"}) {
        INFO(bad);
        auto parsed = parse_signal(bad);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().message() == std::string("invalid signal \"") + bad + "\"");
    }
    CHECK(*parse_signal("RTMIN+30") == SIGRTMAX);
}
