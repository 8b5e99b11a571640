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

namespace minirun::runtime::pid {

// While alive, children of this process are created in the plan's joined PID namespace.
class JoinedForChildren {
public:
    static Result<JoinedForChildren> enter(const Plan& plan);
    // The same for an open namespace fd (exec joins the container's).
    static Result<JoinedForChildren> enter_fd(int namespace_fd);
    JoinedForChildren() = default;
    JoinedForChildren(JoinedForChildren&&) = default;
    JoinedForChildren& operator=(JoinedForChildren&&) = default;
    JoinedForChildren(const JoinedForChildren&) = delete;
    JoinedForChildren& operator=(const JoinedForChildren&) = delete;
    ~JoinedForChildren();

private:
    UniqueFd own_; // the parent's own PID namespace, to return to
};

} // namespace minirun::runtime::pid
