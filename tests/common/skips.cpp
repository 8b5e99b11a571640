// The skip facility of skips.hpp: the records skip_test() makes and the listener that
// counts each test case as passed, failed or skipped.
//
// The listener's base class is in catch.hpp's external interfaces, which this file asks
// for before including it (so it is compiled without the precompiled catch.hpp).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "skips.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>

namespace minirun_tests {

namespace {

std::vector<SkippedTest>& skip_records() {
    static std::vector<SkippedTest> records;
    return records;
}

Outcomes& counts() {
    static Outcomes outcomes;
    return outcomes;
}

bool was_skipped(const std::string& name) {
    const auto& skips = skip_records();
    return std::any_of(skips.begin(), skips.end(),
                       [&](const SkippedTest& skip) { return skip.name == name; });
}

// A test case that recorded a skip and failed nothing is skipped, not passed.
class SkipCounter : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;

    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        if (stats.totals.assertions.failed > 0) {
            ++counts().failed;
        } else if (was_skipped(stats.testInfo.name)) {
            ++counts().skipped;
        } else {
            ++counts().passed;
        }
    }
};

CATCH_REGISTER_LISTENER(SkipCounter)

} // namespace

void skip_test(const std::string& reason) {
    SkippedTest skip{Catch::getResultCapture().getCurrentTestName(), reason};
    WARN("skipped: " << reason);
    auto& records = skip_records();
    if (std::none_of(records.begin(), records.end(), [&](const SkippedTest& other) {
            return other.name == skip.name && other.reason == skip.reason;
        })) {
        records.push_back(std::move(skip));
    }
}

const std::vector<SkippedTest>& skipped_tests() {
    return skip_records();
}

const Outcomes& outcomes() {
    return counts();
}

void report_outcomes(const std::string& what) {
    const Outcomes& run = counts();
    if (run.passed + run.failed + run.skipped == 0) {
        return;
    }
    std::cout << what << " test cases: " << run.passed << " passed, " << run.failed << " failed, "
              << run.skipped << " skipped (cannot run on this machine)\n";
    size_t number = 0;
    for (const SkippedTest& skip : skip_records()) {
        std::cout << "skipped " << ++number << ": " << skip.name << ": " << skip.reason << "\n";
    }
    std::cout.flush();
}

int exit_status(int catch_status) {
    if (catch_status != 0 || counts().failed > 0) {
        return catch_status != 0 ? catch_status : 1;
    }
    return counts().skipped > 0 ? kSkippedExit : 0;
}

} // namespace minirun_tests
