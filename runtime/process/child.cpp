#include "process/child.hpp"

#include "minirun/explain.hpp"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>

namespace minirun::runtime {
namespace {

// The kernel's struct clone_args, version 2 (88 bytes: set_tid and cgroup added).
struct CloneArgs {
    uint64_t flags;
    uint64_t pidfd;
    uint64_t child_tid;
    uint64_t parent_tid;
    uint64_t exit_signal;
    uint64_t stack;
    uint64_t stack_size;
    uint64_t tls;
    uint64_t set_tid;
    uint64_t set_tid_size;
    uint64_t cgroup;
};

#ifndef CLONE_INTO_CGROUP
constexpr uint64_t CLONE_INTO_CGROUP = 0x200000000ULL;
#endif

} // namespace

Result<pid_t> clone_with(unsigned long flags, int cgroup_fd, bool* born_in_cgroup) {
    CloneArgs args{};
    args.flags = flags;
    args.exit_signal = SIGCHLD;
    if (explain::enabled()) {
        explain::step(cat("clone3(", explain::clone_flag_names(flags),
                          cgroup_fd >= 0 ? "|CLONE_INTO_CGROUP" : "",
                          "): the init starts in its new namespaces"));
    }
    long pid = -1;
    if (cgroup_fd >= 0) {
        // Born in its cgroup, the child never migrates: a migration takes the cgroup
        // threadgroup lock for writing, which waits for an RCU grace period.
        CloneArgs into = args;
        into.flags |= CLONE_INTO_CGROUP;
        into.cgroup = static_cast<uint64_t>(cgroup_fd);
        pid = ::syscall(SYS_clone3, &into, sizeof(into));
        if (pid >= 0 && born_in_cgroup != nullptr) {
            *born_in_cgroup = true;
        }
    }
    // Older kernels (E2BIG: a larger struct than they know; ENOSYS) or a cgroup the
    // kernel will not take the child into: the plain clone, and the parent moves it.
    if (pid < 0) {
        pid = ::syscall(SYS_clone3, &args, sizeof(args));
    }
    if (pid < 0 && errno == ENOSYS) {
        pid = ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, 0);
    }
    if (pid < 0) {
        return Error::from_errno("clone");
    }
    return static_cast<pid_t>(pid);
}

ScopedChild::~ScopedChild() {
    kill_and_reap();
}

Result<int> ScopedChild::reap() {
    int status = 0;
    pid_t pid = std::exchange(pid_, -1);
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return Error::from_errno(cat("wait for process ", pid));
        }
    }
    return status;
}

Result<std::optional<int>> ScopedChild::try_reap() {
    int status = 0;
    pid_t got = 0;
    do {
        got = ::waitpid(pid_, &status, WNOHANG);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return Error::from_errno(cat("wait for process ", std::exchange(pid_, -1)));
    }
    if (got == 0) {
        return std::optional<int>();
    }
    pid_ = -1;
    return std::optional<int>(status);
}

void ScopedChild::kill_and_reap() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        (void)reap();
    }
}

} // namespace minirun::runtime
