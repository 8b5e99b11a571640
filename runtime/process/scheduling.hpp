// How the kernel schedules a container's processes: process.scheduler (sched_setattr(2)),
// process.ioPriority (ioprio_set(2)) and process.execCPUAffinity (sched_setaffinity(2)).
//
// The init and every exec'd process set their own scheduler and I/O priority early in the
// recipe, while still the host's root in the host's user namespace: the kernel checks
// CAP_SYS_NICE (a real-time policy, a lower nice, the RT I/O class) there. execCPUAffinity is
// for exec'd processes only (runtime-spec: not the init): `initial` is the runtime's own while
// it starts the process, so the clone is born with it (InitialAffinity, exec.cpp); `final`
// is the process's once it is in the container's cgroup. Without a `final`, the init and each
// exec'd process reset theirs there (runc 1.3).
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "syscalls.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace minirun::runtime::scheduling {

// The attributes sched_setattr(2) gets for a process.scheduler, and its --explain text.
SchedAttr sched_attr_of(const spec::Scheduler& scheduler);
std::string describe(const spec::Scheduler& scheduler);

// process.scheduler, for the calling process; nothing when absent.
Status apply_scheduler(const std::optional<spec::Scheduler>& scheduler, Syscalls& sys);

// process.ioPriority, for the calling process (its children inherit it); nothing when absent.
Status apply_io_priority(const std::optional<spec::IoPriority>& priority, Syscalls& sys);

// Every cpu, which the kernel narrows to the cgroup's cpuset: what the init takes once in
// its cgroups, as runc's tryResetCPUAffinity, so that the affinity mini-run was started with
// (taskset, systemd's CPUAffinity=) does not leak into the container. A refusal is only
// logged (runc's too): the process keeps the affinity it has.
void reset_affinity(Syscalls& sys);

// process.execCPUAffinity.final, once the process is in the container's cgroup. Absent or
// "": reset_affinity (the spec: "the container's default CPU affinity"), so that neither
// `initial` nor mini-run's own stays.
Status apply_final_affinity(const std::optional<spec::ExecCpuAffinity>& affinity, Syscalls& sys);

// This process's affinity as a hex mask ("0x3": cpus 0 and 1), for the debug line runc's
// nsexec writes and its tests read ("nsexec...: affinity: 0x3").
std::string affinity_mask_text();

// process.execCPUAffinity.initial for the runtime itself, from construction (apply()) until
// destruction, when it gets its own cpus back: what it clones meanwhile inherits them.
class InitialAffinity {
public:
    InitialAffinity() = default;
    InitialAffinity(const InitialAffinity&) = delete;
    InitialAffinity& operator=(const InitialAffinity&) = delete;
    ~InitialAffinity();

    Status apply(const std::optional<spec::ExecCpuAffinity>& affinity, Syscalls& sys);

private:
    Syscalls* sys_ = nullptr; // set: the runtime's own cpus are to be restored
    std::vector<uint32_t> own_;
};

} // namespace minirun::runtime::scheduling
