// The PID namespace (CLONE_NEWPID): the container's first process is PID 1.
//
// A new PID namespace is created by clone() itself, so the init is PID 1 from its first
// instruction; it sees only its descendants in a /proc mounted from inside, and when it
// exits the kernel kills every other process of the namespace, so nothing outlives the
// container. Like any init, it receives from outside only the signals it has handlers
// for (and SIGKILL/SIGSTOP).
//
// Joining an existing PID namespace is different from the others: setns() with
// CLONE_NEWPID does not move the caller, only its future children. So the parent joins it
// just around clone() and then returns to its own.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "plan.hpp"
#include "syscalls.hpp"

namespace minirun::runtime::pid {

// Until leave(), children of this process are created in the plan's joined PID namespace.
//
// The caller calls leave() right after its clone() and fails when it fails: a process
// created afterwards in the joined namespace would be the container's, not the runtime's.
// The destructor is only a last resort for a caller that returned early (or does not call
// leave() yet): it tries the same and can only log a failure.
class JoinedForChildren {
public:
    // The setns calls go through `sys`, which must outlive the object.
    static Result<JoinedForChildren> enter(const Plan& plan, Syscalls& sys);
    // The same for an open namespace fd (exec joins the container's).
    static Result<JoinedForChildren> enter_fd(int namespace_fd, Syscalls& sys);
    // An object that returns to `own` as if it had been joined from there: for tests.
    static JoinedForChildren returning_to(UniqueFd own, Syscalls& sys = linux_syscalls());
    JoinedForChildren() = default;
    JoinedForChildren(JoinedForChildren&&) = default;
    JoinedForChildren& operator=(JoinedForChildren&&) = default;
    JoinedForChildren(const JoinedForChildren&) = delete;
    JoinedForChildren& operator=(const JoinedForChildren&) = delete;
    ~JoinedForChildren();

    // Returns to the runtime's own PID namespace for future children. Done once: later
    // calls, and the destructor, do nothing (also after a failure, which is reported here).
    [[nodiscard]] Status leave();
    // Stays for good: a rootless exec (one that entered the container's user namespace for
    // this one, or runs as root of a user namespace, as under rootless podman) may not
    // return to a PID namespace owned by the host's user namespace (exec.cpp). It makes no
    // children afterwards.
    void stay() { own_.reset(); }

private:
    UniqueFd own_; // the parent's own PID namespace, to return to
    Syscalls* sys_ = &linux_syscalls();
};

} // namespace minirun::runtime::pid
