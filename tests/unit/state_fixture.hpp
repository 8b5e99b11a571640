// What the state unit tests share (test_state*.cpp): sample records, reading a file, and a
// child process to stand for a container's init.
#pragma once

#include "state.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace state_test {

namespace state = minirun::state;
using minirun::state::Record;

inline bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

inline Record sample_record() {
    Record record;
    record.oci_version = "1.2.0";
    record.id = "box";
    record.pid = 4242;
    record.pid_start_time = 18446744073709551000ULL; // beyond int64: must stay unsigned
    record.bundle = "/srv/bundles/box";
    record.rootfs = "/srv/bundles/box/rootfs";
    record.created = "2026-11-30T00:16:07.123456789Z";
    record.owner = "root";
    record.annotations = {{"org.example/a", "1"}, {"b", "two words"}};
    record.paused = true;
    record.cgroup_paths = {{"memory", "/sys/fs/cgroup/memory/mini-run/box"},
                           {"unified", "/sys/fs/cgroup/unified/mini-run/box"}};
    return record;
}

// A record describing this very test process, alive and with its true start time.
inline Record live_record() {
    Record record = sample_record();
    record.pid = ::getpid();
    auto start = state::process_start_time(record.pid);
    REQUIRE(start.ok());
    record.pid_start_time = *start;
    record.paused = false;
    return record;
}

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A forked child that blocks until told to exit; killed and reaped on destruction so that
// a failed assertion never leaks a process.
class Child {
public:
    // `before_ready` runs in the child before it reports ready.
    template <typename Fn>
    explicit Child(Fn before_ready) {
        int ready[2];
        int release[2];
        REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);
        REQUIRE(::pipe2(release, O_CLOEXEC) == 0);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            // Only the parent may hold the write end, or the read below never sees EOF.
            ::close(release[1]);
            before_ready();
            char byte = 'r';
            (void)!::write(ready[1], &byte, 1);
            (void)!::read(release[0], &byte, 1);
            ::_exit(0);
        }
        ::close(ready[1]);
        ::close(release[0]);
        release_fd_ = release[1];
        char byte = 0;
        REQUIRE(::read(ready[0], &byte, 1) == 1);
        ::close(ready[0]);
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() {
        ::close(release_fd_);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    [[nodiscard]] pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
    int release_fd_ = -1;
};

} // namespace state_test
