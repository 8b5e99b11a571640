// The integration tests' entry point: they need root (namespaces, mounts), the built
// mini-run and the example rootfs. Without root they report "skipped" to CTest (exit 77).
//
// A test that cannot run on this machine calls it::skip_test(reason): Catch2 v2 has no
// skipped state, so a listener counts each test case as passed, failed or skipped, and the
// end of the run lists the skipped ones with their reasons. Skips do not fail the run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "helpers.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

namespace {

struct Outcomes {
    size_t passed = 0;
    size_t failed = 0;
    size_t skipped = 0;
};

Outcomes& outcomes() {
    static Outcomes counts;
    return counts;
}

// A test case that recorded a skip and failed nothing is skipped, not passed.
class SkipCounter : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;

    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        const auto& skips = it::skipped_tests();
        bool skipped = std::any_of(skips.begin(), skips.end(), [&](const it::SkippedTest& skip) {
            return skip.name == stats.testInfo.name;
        });
        if (stats.totals.assertions.failed > 0) {
            ++outcomes().failed;
        } else if (skipped) {
            ++outcomes().skipped;
        } else {
            ++outcomes().passed;
        }
    }
};

void print_outcomes() {
    const Outcomes& counts = outcomes();
    if (counts.passed + counts.failed + counts.skipped == 0) {
        return; // nothing ran (--list-tests, a filter that matched nothing)
    }
    std::cout << "integration test cases: " << counts.passed << " passed, " << counts.failed
              << " failed, " << counts.skipped << " skipped (cannot run on this machine)\n";
    size_t number = 0;
    for (const it::SkippedTest& skip : it::skipped_tests()) {
        std::cout << "skipped " << ++number << ": " << skip.name << ": " << skip.reason << "\n";
    }
    std::cout.flush();
}

} // namespace

CATCH_REGISTER_LISTENER(SkipCounter)

int main(int argc, char** argv) {
    if (geteuid() != 0) {
        std::cerr << "integration tests need root; skipping\n";
        return 77;
    }
    // A container that exits before reading its stdin must not kill the test run.
    ::signal(SIGPIPE, SIG_IGN);

    struct stat st {};
    const std::string binary = it::minirun_binary();
    if (stat(binary.c_str(), &st) != 0) {
        std::cerr << "integration tests: mini-run binary " << binary
                  << " not found; build it first (cmake --build build)\n";
        return 1;
    }
    const std::string busybox = it::example_rootfs() + "/bin/busybox";
    if (stat(busybox.c_str(), &st) != 0) {
        std::cerr << "integration tests: the example rootfs is missing (" << busybox
                  << " not found); run scripts/make-rootfs.sh first\n";
        return 1;
    }
    int failures = Catch::Session().run(argc, argv);
    print_outcomes();
    return failures;
}
