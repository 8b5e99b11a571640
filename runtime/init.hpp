// The container's init: the clone of mini-run that becomes the container's process.
#pragma once

#include "cgroup.hpp"
#include "minirun/state.hpp"
#include "namespaces.hpp"
#include "plan.hpp"
#include "security.hpp"
#include "sync.hpp"

#include <csignal>
#include <vector>

namespace minirun::runtime {

struct InitContext {
    SyncSocket sync; // the init's end
    const std::vector<OpenNamespace>* namespaces = nullptr;
    sigset_t exec_signal_mask{}; // the mask the container's process starts with
    // exec.fifo, opened read-only and non-blocking by the parent before clone() (the init
    // cannot reach the host's state directory after pivot_root); -1: start at once.
    int exec_fifo = -1;
    // The container's state for the hooks the init runs; the init fills in its host pid.
    state::Record record;
    // `run` keeps reading the socket until the exec; after `create` has exited, a failure
    // (a startContainer hook, the execve) can only go to the log.
    bool parent_waits_for_exec = false;
    // Capabilities, seccomp and LSM settings, prepared by the parent.
    const security::ProcessSecurity* security = nullptr;
    // The container's cgroups, which the init joins first (none: nullptr), and whether
    // clone3 placed it in the cgroup2 one already.
    cgroup::SelfJoin* cgroup_join = nullptr;
    bool born_in_v2_cgroup = false;
    // The bind mounts' sources, opened by the parent (mount.hpp, open_bind_sources): the
    // init mounts and closes them.
    std::vector<UniqueFd>* bind_sources = nullptr;
    // The exec gate's memfd (exec_gate.hpp), or -1: the init execs the process itself.
    int exec_gate = -1;
    bool created_sent = false;
};

// Runs in the child right after clone(). Never returns: it execs the container's process
// or reports the error over the sync socket and exits.
[[noreturn]] void run_init(const Plan& plan, InitContext& context) noexcept;

} // namespace minirun::runtime
