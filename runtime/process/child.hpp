// Creating the processes mini-run runs in a container: clone() and ownership of the child.
#pragma once

#include "minirun/error.hpp"

#include <sys/types.h>

#include <optional>
#include <utility>

namespace minirun::runtime {

// clone3() (clone() on older kernels) with `flags` (CLONE_NEW*), like fork(): 0 in the
// child, its pid in the parent. Without CLONE_VM or a new stack the child runs on a copy
// of our memory, so it can read everything the parent prepared.
//
// With `cgroup_fd` (a cgroup2 directory) the child is born in that cgroup
// (CLONE_INTO_CGROUP, Linux 5.7): nothing has to move it there afterwards. Where the
// kernel refuses that, the child is cloned without it, and `*born_in_cgroup` says which.
Result<pid_t> clone_with(unsigned long flags, int cgroup_fd = -1, bool* born_in_cgroup = nullptr);

// A child until it is handed over or reaped: on any early return it is SIGKILLed and
// reaped, so a failure leaves neither a process nor a zombie behind (and its mounts die
// with its mount namespace).
class ScopedChild {
public:
    ScopedChild() = default;
    explicit ScopedChild(pid_t pid) : pid_(pid) {}
    ScopedChild(const ScopedChild&) = delete;
    ScopedChild& operator=(const ScopedChild&) = delete;
    ScopedChild(ScopedChild&&) = delete;
    ScopedChild& operator=(ScopedChild&&) = delete;
    ~ScopedChild();

    void reset(pid_t pid) { pid_ = pid; }
    [[nodiscard]] pid_t get() const { return pid_; }
    pid_t release() { return std::exchange(pid_, -1); }

    // Blocks until the child has exited (waitpid, retried on EINTR): its wait status. The
    // child is no longer held afterwards, also when this fails.
    Result<int> reap();
    // waitpid(WNOHANG): the wait status once the child has exited (it is no longer held
    // then), nothing while it runs.
    Result<std::optional<int>> try_reap();
    // SIGKILL, then reap, as the destructor does; nothing without a child. While the child
    // is unreaped its pid cannot belong to anyone else.
    void kill_and_reap();

private:
    pid_t pid_ = -1;
};

} // namespace minirun::runtime
