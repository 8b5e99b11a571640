// The process recipe: every step a container's process takes between clone() and execve(),
// as one table (recipe.cpp). The container's init and each process `exec` starts take
// their part of it, each in the table's order; what each gets was decided before the
// clone, in its ProcessPlan (process_plan.hpp).
#pragma once

#include "minirun/fd.hpp"
#include "process/process.hpp"
#include "process_plan.hpp"
#include "runner.hpp"
#include "sync.hpp"
#include "syscalls.hpp"

#include <span>
#include <string>

namespace minirun::runtime {

// One process taking the recipe: its plan, its end of the sync socket, and what the steps
// find out on the way.
struct ProcessSetup {
    ProcessSetup(Syscalls& sys_, const ProcessPlan& plan_, InitEnd& sync_, bool born_in_v2_)
        : sys(sys_), plan(plan_), process(plan_.process), sync(sync_),
          born_in_v2_cgroup(born_in_v2_), container_pid(plan_.container_pid),
          state_json(plan_.state_json) {}

    Syscalls& sys;
    const ProcessPlan& plan;
    const spec::Process& process; // plan.process
    InitEnd& sync;
    bool born_in_v2_cgroup = false; // clone3 placed it in the cgroup2 directory already

    // Found by the steps.
    UniqueFd listener;
    bool in_cwd = false;
    std::string home;
    std::string executable;
    process::PreparedExec exec;
    // For the seccomp listener: the plan's (exec), or what the init learns on the way.
    pid_t container_pid = 0;
    std::string state_json;
};

// The init: a process that also has the container's plan, and its InitPlan.
struct InitSetup : ProcessSetup {
    InitSetup(Syscalls& sys_, const InitPlan& init_, InitEnd& sync_, bool born_in_v2_)
        : ProcessSetup(sys_, init_.process, sync_, born_in_v2_), init(init_),
          container(*init_.container), record(init_.record) {}

    const InitPlan& init;
    const Plan& container;
    state::Record record; // the init's host pid filled in from kParentReady
    UniqueFd root;        // the prepared rootfs, until pivot_root
    bool created_sent = false;
};

// A step of the process recipe: what the init does, what an exec'd process does, or both
// (nullptr: that process does not take the step). The init's function gets the init's
// setup, so no step can reach the container's plan from an exec'd process.
struct ProcessStep {
    std::string_view name;
    std::string_view why;
    Taker taker = Taker::both;
    Status (*init)(InitSetup&) = nullptr;
    Status (*exec)(ProcessSetup&) = nullptr;
    bool seals = false;

    [[nodiscard]] Status operator()(InitSetup& setup) const { return init(setup); }
    [[nodiscard]] Status operator()(ProcessSetup& setup) const { return exec(setup); }
};

// The one recipe, in order (recipe.cpp).
std::span<const ProcessStep> process_recipe();

// Runs in the child right after clone(). Never returns: it execs the container's process
// or reports the error over the sync socket and exits.
[[noreturn]] void run_init(const InitPlan& plan, InitEnd& sync, Syscalls& sys,
                           bool born_in_v2_cgroup) noexcept;
[[noreturn]] void run_exec_process(const ProcessPlan& plan, InitEnd& sync, Syscalls& sys,
                                   bool born_in_v2_cgroup) noexcept;

} // namespace minirun::runtime
