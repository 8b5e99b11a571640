// The integration tests' entry point: they need root (namespaces, mounts), the built
// mini-run and the example rootfs. Without root they report "skipped" to CTest (exit 77).
//
// A test that cannot run on this machine calls it::skip_test(reason) (tests/common/skips.hpp,
// shared with the unit tests): the end of the run counts the test cases passed, failed and
// skipped and lists the skipped ones with their reasons. Skips do not fail the run, nor make
// it exit 77 here: 77 means the whole binary could not run (not root).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "skips.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

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
    minirun_tests::report_outcomes("integration");
    return failures;
}
