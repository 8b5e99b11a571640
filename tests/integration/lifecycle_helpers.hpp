// What the lifecycle tests share (lifecycle_test.cpp, lifecycle_run_test.cpp): waiting for
// files, reading the state's pid, matching error messages.
#pragma once

#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace lifecycle_test {

using namespace it;

// A loop that keeps the container running, and reacts to signals within 0.1 s.
constexpr const char* loop = "while true; do sleep 0.1; done";

inline bool file_exists(const std::string& path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0;
}

inline bool wait_for_file(const std::string& path, Millis timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!file_exists(path)) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

// Bind-mounts a host directory over the container's /tmp (read-write), so what the
// container writes there shows on the host.
inline void bind_host_dir(TempBundle& bundle, const std::string& host_dir,
                          const std::string& destination = "/tmp") {
    bundle.config["mounts"].push_back({{"destination", destination},
                                       {"type", "bind"},
                                       {"source", host_dir},
                                       {"options", {"rbind", "rw"}}});
}

inline std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// Error messages are checked for the contract's keywords, case-insensitively.
inline bool mentions(const std::string& text, const std::string& keyword) {
    return contains(lower(text), lower(keyword));
}

// The init's pid, from the state.
inline pid_t state_pid(const Runtime& runtime, const std::string& id) {
    auto state = runtime.state(id);
    if (!state || !(*state)["pid"].is_number_integer()) {
        return -1;
    }
    return (*state)["pid"].get<pid_t>();
}

} // namespace lifecycle_test
