// The container's init and the processes `exec` starts: the clones of mini-run that become
// a container's processes, and the one recipe both follow (init.cpp, process_recipe()).
#pragma once

#include "cgroup/cgroup.hpp"
#include "ns/namespaces.hpp"
#include "plan.hpp"
#include "process/process.hpp"
#include "runner.hpp"
#include "security/security.hpp"
#include "state.hpp"
#include "sync.hpp"
#include "syscalls.hpp"

#include <csignal>
#include <span>
#include <string>
#include <vector>

namespace minirun::runtime {

// What the parent prepared for the init before clone() (create, create.cpp).
struct InitContext {
    InitEnd sync; // the init's end
    const std::vector<OpenNamespace>* namespaces = nullptr;
    sigset_t exec_signal_mask{}; // the mask the container's process starts with
    // Where `start` arrives as one byte: exec.fifo, opened read-only and non-blocking by the
    // parent before clone() (the init cannot reach the host's state directory after
    // pivot_root), or `run`'s end of its start socket; -1: start at once.
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

// The state of one process taking the recipe: what the parent handed it, and what the
// steps find out on the way (the listener, the executable, ...). The init fills `plan`
// and `init`; an exec'd process leaves them null and sets `exec_root`.
struct ProcessSetup {
    ProcessSetup(Syscalls& sys_, const spec::Process& process_, int preserve_fds_, InitEnd& sync_,
                 const security::ProcessSecurity& security_)
        : sys(sys_), process(process_), preserve_fds(preserve_fds_), sync(sync_),
          security(security_) {}

    Syscalls& sys;
    const spec::Process& process;
    int preserve_fds = 0;
    InitEnd& sync;
    const security::ProcessSecurity& security;
    cgroup::SelfJoin* cgroup_join = nullptr; // nullptr: no cgroups of its own
    bool born_in_v2_cgroup = false;
    std::vector<NamespaceEntry> joins; // user first
    std::vector<int> keep_fds;         // mini-run's own, kept by the fd closing
    sigset_t exec_signal_mask{};
    // For the seccomp listener: the container's state.
    std::string oci_version;
    pid_t container_pid = 0;
    std::string state_json;

    const Plan* plan = nullptr; // the init's
    // linux.memoryPolicy, from the plan (the init) or the saved config (exec); null: none.
    const spec::MemoryPolicy* memory_policy = nullptr;
    InitContext* init = nullptr; // the init's
    int exec_root = -1;          // exec without a mount namespace: the init's root
    int exec_gate = -1;          // the gate's memfd (exec_gate.hpp), or -1: exec directly
    bool new_session = true;     // the init always; an exec'd process with a terminal
    bool bind_console = true;    // /dev/console: the init's only

    // Found by the steps.
    UniqueFd listener;
    UniqueFd root; // the init's rootfs, from its preparation until pivot_root
    bool in_cwd = false;
    std::string home;
    std::string executable;
    process::PreparedExec exec;
};

// The one recipe, in order (init.cpp). run_recipe(process_recipe(), Taker::init, ...)
// is the init; Taker::exec, an exec'd process.
std::span<const Step<ProcessSetup>> process_recipe();

// Runs in the child right after clone(). Never returns: it execs the container's process
// or reports the error over the sync socket and exits.
[[noreturn]] void run_init(const Plan& plan, InitContext& context, Syscalls& sys) noexcept;

// The same for a process `exec` starts, whose ProcessSetup exec.cpp filled in.
[[noreturn]] void run_exec_setup(ProcessSetup& setup) noexcept;

} // namespace minirun::runtime
