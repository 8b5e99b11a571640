// What `create` makes that outlives a failure unless undone: the state directory and the
// cgroups. Each is held by a guard that undoes it unless the create commits
// (create.cpp, CreateRun), and a failed undo is a warning, never silent.
#pragma once

#include "cgroup/cgroup.hpp"
#include "cgroup/intel_rdt.hpp"
#include "minirun/runtime.hpp"
#include "plan.hpp"
#include "state.hpp"

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

// The container's cgroups, found (not made yet) for the plan and the command line; `host`,
// when given, gets the layout they were found in (left empty without cgroups).
Result<cgroup::Cgroup> make_cgroup(const spec::Linux& linux, const CreateOptions& options,
                                   cgroup::Host* host = nullptr);

// The limits of linux.resources and the device allow-list, which every container gets.
Status limit_cgroup(const spec::Linux& linux, cgroup::Cgroup& cgroup);

// linux.intelRdt: the resctrl group made or joined and its schemata written before any
// process is inside (intel_rdt.cpp), into `group`; none without the section.
Status make_rdt_group(const spec::Linux& linux, const std::string& id,
                      std::optional<intel_rdt::PendingGroup>& group);

} // namespace minirun::runtime
