// Sizes and durations as people type them on the command line (runc's formats).
#pragma once

#include "minirun/error.hpp"

#include <chrono>
#include <cstdint>
#include <string_view>

namespace minirun::units {

// Memory sizes like runc's --memory: "1024", "64k", "64m", "1.5g", "2GiB", "64MB"
// (binary multiples whatever the spelling, as docker's RAMInBytes reads them), and "-1"
// for unlimited.
Result<int64_t> parse_memory_size(std::string_view text);

// Go durations like runc's --interval: "5s", "500ms", "1m30s", "2h"; a bare number is
// seconds.
Result<std::chrono::milliseconds> parse_duration(std::string_view text);

} // namespace minirun::units
