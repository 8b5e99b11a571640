#include "runner.hpp"

#include "minirun/log.hpp"

#include <ctime>

namespace minirun::runtime {
namespace {

int64_t now_ns() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

} // namespace

StepLog::StepLog(std::string_view who) : who_(who), on_(log::enabled(log::Level::debug)) {}

void StepLog::begin() {
    if (on_) {
        started_ns_ = now_ns();
    }
}

void StepLog::done(size_t number, std::string_view name) {
    if (on_) {
        log::debug(
            cat(who_, " step ", number, " ", name, ": ", (now_ns() - started_ns_) / 1000, " us"));
    }
}

void StepLog::failed(size_t number, std::string_view name, const Error& error) {
    if (on_) {
        log::debug(cat(who_, " step ", number, " ", name, " failed after ",
                       (now_ns() - started_ns_) / 1000, " us: ", error.message()));
    }
}

} // namespace minirun::runtime
