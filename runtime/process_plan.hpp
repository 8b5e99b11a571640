// The process plans: everything one container process gets, decided by the runtime before
// its clone(), so that the process recipe (recipe.cpp) only carries it out.
//
// Every process mini-run starts in a container takes the same recipe: the container's init
// (create.cpp, plan_init) and each process `exec` starts (exec.cpp, plan_exec). Their
// ProcessPlans are built in those two functions and nowhere else; the init's InitPlan adds
// what only the init does (the container's Plan, the start gate, the state its hooks get).
// The child reads both from its own copy of the parent's memory (clone() without
// CLONE_VM): nothing is serialised, and nothing in them changes after the clone.
#pragma once

#include "cgroup/cgroup.hpp"
#include "minirun/fd.hpp"
#include "minirun/spec.hpp"
#include "ns/namespaces.hpp"
#include "plan.hpp"
#include "procfs.hpp"
#include "security/security.hpp"
#include "state.hpp"

#include <csignal>
#include <optional>
#include <string>
#include <vector>

namespace minirun::runtime {

namespace mount {
struct BindSources; // mount/mount.hpp
} // namespace mount

struct ProcessPlan {
    spec::Process process; // the init: the plan's; exec: the options over the saved config
    int preserve_fds = 0;  // fds 3 .. 3+N-1 the process inherits
    // Capabilities resolved, the seccomp filter compiled, LSM settings checked.
    security::ProcessSecurity security;
    // Namespaces the process joins with setns(), the user namespace first; their fds are
    // held by the runtime until the clone.
    std::vector<NamespaceEntry> joins;
    // The container's cgroup files the process writes itself into first (nullptr: none of
    // its own); held by the runtime, used up by the child.
    cgroup::SelfJoin* cgroup_join = nullptr;
    // The procfs every write under /proc goes through (procfs.hpp): opened by the runtime
    // before the clone, in its own namespaces and before any mount of the container's;
    // held by the runtime, kept by the fd closing, closed by the process after its last
    // write (the LSM labels, in the privilege drop), long before anything of the
    // container's runs.
    procfs::Handle* procfs = nullptr;
    // mini-run's own fds the fd closing keeps: the sync socket, the log, the gate, ...
    std::vector<int> keep_fds;
    sigset_t signal_mask{}; // the mask the process starts with
    // linux.memoryPolicy: an exec'd process is forked from mini-run, not from the init, so it
    // does not inherit the init's.
    std::optional<spec::MemoryPolicy> memory_policy;
    // linux.personality: an exec'd process does not inherit the init's either (runc 1.3
    // applies it to both).
    std::optional<spec::Personality> personality;
    int exec_gate = -1;       // the gate's memfd (exec_gate.hpp), or -1: exec directly
    bool new_session = true;  // the init always; an exec'd process with a terminal
    bool bind_console = true; // /dev/console: the init's only
    // The pty's master goes to mini-run's own foreground relay (`run`, `exec` without
    // --detach or --console-socket): its output keeps "\n" as the process wrote it (ONLCR
    // cleared), as runc's relay does (tty.go, console.ClearONLCR).
    bool relayed_terminal = false;
    // An exec'd process in a container without a mount namespace: the init's root, which
    // it chroot()s into; -1 otherwise.
    int exec_root = -1;
    // What the seccomp listener is sent with the fd (linux.seccomp.listenerPath); the init
    // learns its host pid (container_pid) from the parent and takes it from there.
    std::string oci_version;
    pid_t container_pid = 0;
    std::string state_json;
};

struct InitPlan {
    const Plan* container = nullptr; // make_plan()'s, final
    ProcessPlan process;
    // Where `start` arrives as one byte: exec.fifo, opened read-only and non-blocking by the
    // parent before clone() (the init cannot reach the host's state directory after
    // pivot_root), or `run`'s end of its start socket; -1: start at once.
    int exec_fifo = -1;
    // The container's state for the hooks the init runs; the init fills in its host pid.
    state::Record record;
    // Wait for kParentReady after the clone: the plan's reasons (Plan::wait_for_parent), or
    // create's own (only its pid leads to the init until recovery.json has it).
    bool wait_for_parent = false;
    // `run` keeps reading the socket until the exec; after `create` has exited, a failure
    // (a startContainer hook, the execve) can only go to the log.
    bool parent_waits_for_exec = false;
    // The bind mounts' sources, opened by the parent (mount.hpp, open_bind_sources): the
    // init mounts and closes them, and asks for the ones the parent closed again.
    mount::BindSources* bind_sources = nullptr;
    // The "cgroup" mount entry's binds, worked out by create once the cgroups exist
    // (mount::planned_cgroup_binds); empty: the init finds them itself.
    std::vector<CgroupBind> cgroup_binds;
};

} // namespace minirun::runtime
