// What the seccomp unit tests share (test_seccomp*.cpp): building filters from configs and
// running a filter in a forked child.
//
// Loading a filter needs no root once no_new_privs is set, but it is for good: every test
// loads its filter in a forked child, which makes its syscalls and reports through its exit
// status (0: as expected, 1..99: the step that went wrong) or the signal that killed it.
#pragma once

#include "security/seccomp.hpp"
#include "security/seccomp_bpf.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace seccomp_test {

using minirun::UniqueFd;
using minirun::runtime::seccomp::Filter;
namespace spec = minirun::spec;

// An errno nothing here returns by itself, so seeing it proves the filter answered.
constexpr int kFilterErrno = EXDEV;
constexpr int kLoadFailed = 100;
constexpr int kNoNewPrivsFailed = 101;

inline spec::SeccompArg arg(uint32_t index, const char* op, uint64_t value,
                            uint64_t value_two = 0) {
    spec::SeccompArg out;
    out.index = index;
    out.op = op;
    out.value = value;
    out.value_two = value_two;
    return out;
}

inline spec::SeccompSyscall rule(std::vector<std::string> names, const char* action,
                                 std::optional<uint32_t> errno_ret = std::nullopt,
                                 std::vector<spec::SeccompArg> args = {}) {
    spec::SeccompSyscall out;
    out.names = std::move(names);
    out.action = action;
    out.errno_ret = errno_ret;
    out.args = std::move(args);
    return out;
}

inline spec::Seccomp config(const char* default_action, std::vector<spec::SeccompSyscall> syscalls,
                            std::optional<uint32_t> default_errno = std::nullopt) {
    spec::Seccomp out;
    out.default_action = default_action;
    out.default_errno_ret = default_errno;
    out.syscalls = std::move(syscalls);
    return out;
}

inline Filter build(const spec::Seccomp& seccomp) {
    auto result = Filter::build(seccomp);
    INFO((result.ok() ? std::string() : result.error().message()));
    REQUIRE(result.ok());
    return std::move(result).value();
}

inline std::string build_error(const spec::Seccomp& seccomp) {
    auto result = Filter::build(seccomp);
    REQUIRE_FALSE(result.ok());
    return result.error().message();
}

// A raw syscall's result, checked in the child: failed with `expected` errno.
inline bool fails_with(long rc, int expected) {
    return rc == -1 && errno == expected;
}

struct Outcome {
    bool exited = false;
    int code = -1;
    int signal = 0;
};

// Forks; the child sets no_new_privs, loads `filter` and exits with body(listener fd).
template <typename Body>
inline Outcome run_filtered(const Filter& filter, Body body) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // SIGSYS dumps core by default; the tests that expect it want no core files.
        rlimit no_core{0, 0};
        (void)::setrlimit(RLIMIT_CORE, &no_core);
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
            ::_exit(kNoNewPrivsFailed);
        }
        auto listener = filter.load(minirun::linux_syscalls());
        if (!listener.ok()) {
            ::_exit(kLoadFailed);
        }
        ::_exit(body(listener->get()));
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    Outcome outcome;
    if (WIFEXITED(status)) {
        outcome.exited = true;
        outcome.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        outcome.signal = WTERMSIG(status);
    }
    return outcome;
}

inline void check_exits_0(const Outcome& outcome) {
    INFO("exited " << outcome.exited << " code " << outcome.code << " signal " << outcome.signal);
    CHECK(outcome.exited);
    CHECK(outcome.code == 0);
}

inline void check_killed_by_sigsys(const Outcome& outcome) {
    INFO("exited " << outcome.exited << " code " << outcome.code);
    CHECK_FALSE(outcome.exited);
    CHECK(outcome.signal == SIGSYS);
}

// One message from a socket: its bytes and every fd it carried.
struct Received {
    std::string payload;
    std::vector<UniqueFd> fds;
    bool truncated = false;
};

inline Received receive_message(int socket) {
    std::array<char, 8192> buffer{};
    iovec iov{buffer.data(), buffer.size()};
    // Room for several fds, to see that exactly one came.
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 4)> control{};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    ssize_t got = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    REQUIRE(got >= 0);
    Received received;
    received.payload.assign(buffer.data(), static_cast<size_t>(got));
    received.truncated = (message.msg_flags & MSG_CTRUNC) != 0;
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
         header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
            size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; ++i) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
                received.fds.emplace_back(fd);
            }
        }
    }
    return received;
}

inline std::array<UniqueFd, 2> stream_pair() {
    std::array<int, 2> fds{};
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds.data()) == 0);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

} // namespace seccomp_test
