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
//
// With a joined user namespace, a new PID namespace cannot come from clone(): the
// parent's would be owned by the host's user namespace, and root of the joined one could not
// mount its procfs. It must be made in the joined user namespace, and unshare(CLONE_NEWPID)
// puts only the caller's children in it (nor will the kernel let anyone open a PID
// namespace without its pid 1, to enter it from outside). So the init works in two stages,
// as runc's nsexec does: the clone takes the recipe up to joining the namespaces, then
// unshares a PID namespace and clones its second stage into it with CLONE_PARENT, which
// is pid 1 there, a child of mini-run as the first stage was, and inherits all the first
// stage did (cgroups, limits, scheduling, namespaces joined); it goes on with the recipe,
// and the first stage reports its pid (kForked) and exits.
//
// A PID namespace joined by path together with a joined user namespace goes the same way,
// with setns() for unshare(): the parent, not root of that user namespace when rootless,
// may not join a PID namespace it owns; the init may, once it has joined it (runc's nsexec
// joins them all in its first stage too).
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "ns/namespaces.hpp"
#include "process/child.hpp"
#include "sync.hpp"
#include "syscalls.hpp"

namespace minirun::runtime::pid {

// Until leave(), children of this process are created in the container's PID namespace
// when it is not new (joined by path), or new but made in a joined user namespace.
//
// The caller calls leave() right after its clone() and fails when it fails: a process
// created afterwards in the joined namespace would be the container's, not the runtime's.
// The destructor is only a last resort for a caller that returned early (or does not call
// leave() yet): it tries the same and can only log a failure.
class JoinedForChildren {
public:
    // The setns calls go through `sys`, which must outlive the object.
    // The PID namespace among the opened ones (open_namespaces_to_join), if any, unless
    // the init joins it (Plan::pid_joined_by_init).
    static Result<JoinedForChildren>
    enter(const Plan& plan, const std::vector<OpenNamespace>& namespaces, Syscalls& sys);
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

// Init side, at the end of joining the namespaces, with a new PID namespace in a joined
// user namespace (Plan::new_pid_namespace_in_joined_user) or a PID namespace joined with one
// (Plan::pid_joined_by_init): the first stage returns only on
// a failure (it _exit()s once it has sent kForked); the second stage, pid 1, returns ok.
Status continue_as_pid_1(const Plan& plan, InitEnd& sync, Syscalls& sys);

// Parent side, right after the clone: waits for kForked, reaps the first stage and holds
// the second in `init` instead. Nothing without a new PID namespace in a joined user one.
Status take_second_stage(const Plan& plan, ParentEnd& sync, ScopedChild& init);

} // namespace minirun::runtime::pid
