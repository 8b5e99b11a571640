// What the helpers_*.cpp files (the implementation of helpers.hpp) share: small functions
// over /proc, deadlines and the record of Child objects not reaped yet. Not for the tests.
#pragma once

#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace it::detail {

using Clock = std::chrono::steady_clock;

[[noreturn]] inline void fail_errno(const std::string& what) {
    throw std::runtime_error(what + ": " + std::strerror(errno));
}

inline int remaining_ms(Clock::time_point deadline, int cap_ms) {
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, cap_ms));
}

inline std::vector<pid_t> all_pids() {
    std::vector<pid_t> pids;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) {
        return pids;
    }
    while (const dirent* entry = readdir(proc)) {
        char* end = nullptr;
        long pid = std::strtol(entry->d_name, &end, 10);
        if (end != entry->d_name && *end == '\0' && pid > 0) {
            pids.push_back(static_cast<pid_t>(pid));
        }
    }
    closedir(proc);
    return pids;
}

// The parent pid from /proc/<pid>/stat (the field after the state, after the last ')').
inline std::optional<pid_t> parent_of(pid_t pid) {
    auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) {
        return std::nullopt;
    }
    auto close = stat->rfind(')');
    if (close == std::string::npos) {
        return std::nullopt;
    }
    std::istringstream fields(stat->substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    if (!(fields >> state >> ppid)) {
        return std::nullopt;
    }
    return ppid;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
inline std::string unescape_octal(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 3 < text.size() &&
            std::isdigit(static_cast<unsigned char>(text[i + 1])) != 0) {
            out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 3)), nullptr, 8));
            i += 3;
        } else {
            out += text[i];
        }
    }
    return out;
}

inline bool path_is_under(std::string_view path, std::string_view dir) {
    return path == dir || (path.size() > dir.size() && path.substr(0, dir.size()) == dir &&
                           path[dir.size()] == '/');
}

inline int unlink_entry(const char* path, const struct stat* /*sb*/, int type,
                        struct FTW* /*ftw*/) {
    if (type == FTW_DP || type == FTW_D) {
        ::rmdir(path);
    } else {
        ::unlink(path);
    }
    return 0; // keep going; leftovers are reported by the tests, not here
}

// True when `text` contains `marker` not followed by a digit: "it-x-1-1" must not match
// the command line of container "it-x-1-12".
inline bool mentions_marker(std::string_view text, std::string_view marker) {
    for (size_t at = text.find(marker); at != std::string_view::npos;
         at = text.find(marker, at + 1)) {
        size_t end = at + marker.size();
        if (end == text.size() || std::isdigit(static_cast<unsigned char>(text[end])) == 0) {
            return true;
        }
    }
    return false;
}

inline int unique_counter() {
    static int counter = 0;
    return ++counter;
}

// The pids of Child objects not reaped yet: reap_orphans() leaves them to their Child.
inline std::set<pid_t>& live_children() {
    static std::set<pid_t> pids;
    return pids;
}

} // namespace it::detail
