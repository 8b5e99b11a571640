// Sizes and durations as people type them on the command line (runc's formats).
#pragma once

#include "minirun/error.hpp"

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

namespace minirun::units {

// Memory sizes like runc's --memory: "1024", "64k", "64m", "1.5g", "2GiB", "64MB"
// (binary multiples whatever the spelling, as docker's RAMInBytes reads them), and "-1"
// for unlimited.
Result<int64_t> parse_memory_size(std::string_view text);

// Go durations like runc's --interval: "5s", "500ms", "1m30s", "2h"; a bare number is
// seconds.
Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// Lists of numbers in the kernel's "cpulist" format, as cpuset and taskset -c take them:
// "0-3,7" (0, 1, 2, 3 and 7), sorted and without duplicates. Empty text is an empty list; a
// malformed one says what is wrong ("bad cpu list "0-": expected a cpu number after '-'").
// Numbers above `max` are refused. The cost is bounded by the text's length and `max`.
struct NumberList {
    std::string_view noun; // "cpu", "node": what the numbers are, for messages
    uint32_t max;
};
Result<std::vector<uint32_t>> parse_number_list(std::string_view text, const NumberList& list);

// CPU lists: process.execCPUAffinity's format; cpus above kMaxCpu are refused (Linux's
// NR_CPUS limit).
inline constexpr uint32_t kMaxCpu = 8191;
Result<std::vector<uint32_t>> parse_cpu_list(std::string_view text);

} // namespace minirun::units
