// Tests that say what they did not test, for both test binaries (tests/unit and
// tests/integration).
//
// A test case that cannot run on this machine (a kernel feature, a cgroup controller, a
// capability it lacks) calls skip_test(reason) and returns:
//
//     if (!gate) {
//         minirun_tests::skip_test("no exec gate here: " + gate.error().message());
//         return;
//     }
//
// Catch2 v2 has no skipped state, so a listener (skips.cpp) counts each test case as
// passed, failed or skipped: one that recorded a skip and failed nothing is skipped, not
// passed. At the end of the run report_outcomes() prints the counts and lists each skipped
// test case with its reason ("skipped N: <name>: <reason>").
#pragma once

#include <string>
#include <vector>

namespace minirun_tests {

// Records the current test case's name and `reason`, and WARNs "skipped: <reason>" (shown
// by Catch's console reporter). The caller then returns from the test case.
void skip_test(const std::string& reason);

struct SkippedTest {
    std::string name;
    std::string reason;
};
// What skip_test() recorded, in order, each (name, reason) once.
const std::vector<SkippedTest>& skipped_tests();

struct Outcomes {
    size_t passed = 0;
    size_t failed = 0;
    size_t skipped = 0;
};
// The test cases run so far, as the listener counted them.
const Outcomes& outcomes();

// Prints "<what> test cases: N passed, M failed, K skipped (cannot run on this machine)"
// and one line per skipped test case; nothing when no test case ran (--list-tests, a
// filter that matched nothing).
void report_outcomes(const std::string& what);

// CTest's "skipped" exit status (SKIP_RETURN_CODE 77 in CMakeLists.txt).
inline constexpr int kSkippedExit = 77;

// The exit status of a run whose Catch session returned `catch_status`: that status when
// something failed, kSkippedExit when nothing failed and a test case was skipped, else 0.
int exit_status(int catch_status);

} // namespace minirun_tests
