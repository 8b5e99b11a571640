// The unit tests' entry point. A test case that cannot run on this machine calls
// minirun_tests::skip_test(reason) (tests/common/skips.hpp): the end of the run counts the
// test cases passed, failed and skipped, lists the skipped ones with their reasons, and the
// run exits 77 (CTest's SKIP_RETURN_CODE) when something was skipped and nothing failed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "skips.hpp"

int main(int argc, char** argv) {
    int status = Catch::Session().run(argc, argv);
    minirun_tests::report_outcomes("unit");
    return minirun_tests::exit_status(status);
}
