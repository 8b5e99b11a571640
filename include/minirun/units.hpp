// Sizes and durations as people type them on the command line (runc's formats).
#pragma once

#include "minirun/error.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
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

// The one uid_t/gid_t value that is no id: (uid_t)-1 tells setresuid(2) and setresgid(2)
// to leave that id unchanged, so a process given it would stay root (crun CVE-2026-30892's
// class). Refused wherever an id is read (exec --user, -g, process.user).
inline constexpr uint32_t kNoId = 4294967295U;

// `exec --user`'s value, as runc 1.3's exec.go reads it: "<uid>[:<gid>]", decimal numbers
// only. runc does not look names up, and neither does this: a name would be resolved in
// the container's /etc/passwd, which the container's own processes may have rewritten.
// Each id is 0 to 4294967294 (kNoId is refused); "" (an unset shell variable), ":", a
// sign, a name, anything else is refused with one line. Without ":<gid>", `gid` is empty:
// the process keeps its own gid, as with runc.
struct UserIds {
    uint32_t uid = 0;
    std::optional<uint32_t> gid;
};
Result<UserIds> parse_user_ids(std::string_view text);

} // namespace minirun::units
