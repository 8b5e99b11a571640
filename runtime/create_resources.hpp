// What `create` makes that outlives a failure unless undone: the state directory and the
// cgroups. Each is held by a guard that undoes it unless the create commits
// (container.cpp, CreateRun), and a failed undo is a warning, never silent.
#pragma once

#include "cgroup.hpp"
#include "minirun/runtime.hpp"
#include "minirun/state.hpp"
#include "plan.hpp"

namespace minirun::runtime {

// A state directory that is removed again unless the create it belongs to succeeds.
class PendingState {
public:
    explicit PendingState(state::StateDir& dir) : dir_(&dir) {}
    PendingState(const PendingState&) = delete;
    PendingState& operator=(const PendingState&) = delete;
    PendingState(PendingState&&) = delete;
    PendingState& operator=(PendingState&&) = delete;
    ~PendingState();
    void commit() { dir_ = nullptr; }

private:
    state::StateDir* dir_;
};

// Cgroups that are removed again unless the create they belong to succeeds.
class PendingCgroup {
public:
    explicit PendingCgroup(const cgroup::Cgroup& cgroup) : cgroup_(&cgroup) {}
    PendingCgroup(const PendingCgroup&) = delete;
    PendingCgroup& operator=(const PendingCgroup&) = delete;
    PendingCgroup(PendingCgroup&&) = delete;
    PendingCgroup& operator=(PendingCgroup&&) = delete;
    ~PendingCgroup();
    void commit() { cgroup_ = nullptr; }

private:
    const cgroup::Cgroup* cgroup_;
};

// The container's cgroups, found (not made yet) for the plan and the command line.
Result<cgroup::Cgroup> make_cgroup(const Plan& plan, const CreateOptions& options);

// The limits of linux.resources and the device allow-list, which every container gets.
Status limit_cgroup(const Plan& plan, cgroup::Cgroup& cgroup);

// Whether the v1 directories are made while the init mounts, not before the clone: the
// parent's cgroup work (a mkdir and several writes in each of up to a dozen hierarchies,
// about 1.5 ms here) then runs on the second core beside the init's mounts, and the init
// joins them (kCgroupFile) right before the first thing that needs them: the "cgroup"
// mount entry (it binds the container's own directories) or, without one, the hooks.
// What runs outside the container's v1 cgroups meanwhile is mini-run's init code alone:
// it forks nothing (the pids limit has nothing to count), runs nothing of the
// container's (the devices and freezer rules guard nothing yet; the device nodes it makes
// are those of linux.devices, which the allow-list admits anyway), and its mounts'
// kernel memory is charged to the caller's memory cgroup rather than the container's.
// Every limit is in place, and the init inside, before the first hook and long before
// the container's process is exec'd.
//
// Not where the order is the point: a new cgroup namespace (its root is the cgroup its
// creator is in when it unshares), linux.memoryPolicy (the cpuset bounds its nodes),
// process.scheduler (SCHED_DEADLINE admission is per cpuset), a shared or caller-made
// layout without v1 hierarchies (nothing to overlap), and --explain=step, whose cards
// show one process at a time. The cgroup2 directory of a hybrid host is still made
// before the clone: clone3(CLONE_INTO_CGROUP) puts the init there at birth.
bool joins_cgroups_late(const Plan& plan, const cgroup::Cgroup& cgroup);

} // namespace minirun::runtime
