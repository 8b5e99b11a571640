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

// CPU lists like cpuset's and taskset -c's: "0-3,7" (cpus 0, 1, 2, 3 and 7), sorted and
// without duplicates. Empty text is an empty list; a malformed one says what is wrong.
// process.execCPUAffinity's format; cpus above kMaxCpu are refused (Linux's NR_CPUS limit).
inline constexpr uint32_t kMaxCpu = 8191;
Result<std::vector<uint32_t>> parse_cpu_list(std::string_view text);

} // namespace minirun::units
