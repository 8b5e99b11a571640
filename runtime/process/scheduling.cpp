#include "process/scheduling.hpp"

#include "minirun/explain.hpp"
#include "minirun/log.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <string_view>

namespace minirun::runtime::scheduling {
namespace {

constexpr int kIoPrioClassShift = 13; // <linux/ioprio.h>

std::string cpu_text(const std::optional<std::string>& text) {
    return quoted(text.value_or(""));
}

// The mask this process runs on now, as cpu numbers.
Result<std::vector<uint32_t>> own_cpus() {
    constexpr uint32_t kCount = 8192;
    cpu_set_t* set = CPU_ALLOC(kCount);
    if (set == nullptr) {
        return Error(ENOMEM, "sched_getaffinity: out of memory");
    }
    const size_t size = CPU_ALLOC_SIZE(kCount);
    CPU_ZERO_S(size, set);
    std::vector<uint32_t> cpus;
    int result = ::sched_getaffinity(0, size, set);
    int saved = errno;
    for (uint32_t cpu = 0; result == 0 && cpu < kCount; ++cpu) {
        if (CPU_ISSET_S(cpu, size, set)) {
            cpus.push_back(cpu);
        }
    }
    CPU_FREE(set);
    if (result != 0) {
        return Error::from_errno(saved, "sched_getaffinity");
    }
    return cpus;
}

} // namespace

SchedAttr sched_attr_of(const spec::Scheduler& scheduler) {
    SchedAttr attr;
    attr.policy = scheduler.policy_value;
    attr.flags = scheduler.flag_bits;
    attr.nice = scheduler.nice;
    attr.priority = static_cast<uint32_t>(scheduler.priority);
    attr.runtime = scheduler.runtime;
    attr.deadline = scheduler.deadline;
    attr.period = scheduler.period;
    return attr;
}

std::string describe(const spec::Scheduler& scheduler) {
    std::string text = cat(scheduler.policy, ", nice ", scheduler.nice);
    if (scheduler.priority != 0) {
        text += cat(", priority ", scheduler.priority);
    }
    for (const std::string& flag : scheduler.flags) {
        text += cat(", ", flag);
    }
    if (scheduler.policy == "SCHED_DEADLINE") {
        text += cat(", runtime/deadline/period ", scheduler.runtime, "/", scheduler.deadline, "/",
                    scheduler.period, " ns");
    }
    return text;
}

Status apply_scheduler(const std::optional<spec::Scheduler>& scheduler, Syscalls& sys) {
    if (!scheduler) {
        return {};
    }
    const std::string what = describe(*scheduler);
    if (explain::enabled()) {
        explain::step(cat("sched_setattr(", what, "): process.scheduler"));
    }
    Status status = sys.sched_setattr(sched_attr_of(*scheduler));
    if (status) {
        return {};
    }
    const int error = status.error().errno_value();
    std::string hint;
    if (error == EPERM && scheduler->policy == "SCHED_DEADLINE") {
        // runc's words first (its scheduler.bats looks for them): the usual cause is a
        // cpuset narrower than every cpu, which sched_setattr(2) refuses for SCHED_DEADLINE.
        hint = " (process scheduler can't be used together with AllowedCPUs: a SCHED_DEADLINE "
               "process must be allowed every cpu, so no linux.resources.cpu.cpus or "
               "execCPUAffinity narrower than that; and it needs CAP_SYS_NICE)";
    } else if (error == EPERM) {
        hint = " (a real-time policy or a lower nice needs CAP_SYS_NICE in the host's user "
               "namespace; a real-time one, with cgroup v1 real-time group scheduling, also "
               "runtime in the container's cpu cgroup: linux.resources.cpu.realtimeRuntime)";
    } else if (error == EBUSY && scheduler->policy == "SCHED_DEADLINE") {
        hint = " (the kernel has no deadline bandwidth left for it)";
    } else if (error == EINVAL && scheduler->policy == "SCHED_ISO") {
        hint = " (Linux has no SCHED_ISO)";
    }
    return Error(error,
                 cat("process.scheduler: sched_setattr(", what, "): ", std::strerror(error), hint));
}

Status apply_io_priority(const std::optional<spec::IoPriority>& priority, Syscalls& sys) {
    if (!priority) {
        return {};
    }
    const std::string what = cat(priority->io_class, ", ", priority->priority);
    if (explain::enabled()) {
        explain::step(cat("ioprio_set(IOPRIO_WHO_PROCESS, ", what, "): process.ioPriority"));
    }
    Status status =
        sys.ioprio_set((priority->class_value << kIoPrioClassShift) | priority->priority);
    if (status) {
        return {};
    }
    const int error = status.error().errno_value();
    std::string hint = error == EPERM ? " (IOPRIO_CLASS_RT needs CAP_SYS_NICE or CAP_SYS_ADMIN "
                                        "in the host's user namespace)"
                                      : "";
    return Error(error,
                 cat("process.ioPriority: ioprio_set(", what, "): ", std::strerror(error), hint));
}

void reset_affinity(Syscalls& sys) {
    if (explain::enabled()) {
        explain::step("sched_setaffinity(every cpu): the cgroup's cpuset decides, not the "
                      "affinity mini-run was started with");
    }
    if (Status status = sys.sched_setaffinity({}); !status) {
        // runc's tryResetCPUAffinity only logs it too: the process keeps what it inherited.
        log::debug(cat("reset the cpu affinity: ", status.error().message()));
    }
}

Status apply_final_affinity(const std::optional<spec::ExecCpuAffinity>& affinity, Syscalls& sys) {
    if (!affinity || !affinity->final || affinity->final_cpus.empty()) {
        reset_affinity(sys); // "the container's default CPU affinity" (runtime-spec)
        return {};
    }
    if (explain::enabled()) {
        explain::step(cat("sched_setaffinity(", cpu_text(affinity->final),
                          "): process.execCPUAffinity.final"));
    }
    Status status = sys.sched_setaffinity(affinity->final_cpus);
    if (status) {
        return {};
    }
    return Error(status.error().errno_value(),
                 cat("process.execCPUAffinity.final: sched_setaffinity(", cpu_text(affinity->final),
                     "): ", std::strerror(status.error().errno_value()),
                     " (none of these cpus is online in the container's cpuset?)"));
}

std::string affinity_mask_text() {
    auto cpus = own_cpus();
    if (!cpus) {
        return cpus.error().message();
    }
    // Hex digits from the highest cpu down, as runc's nsexec prints the mask ("0x3").
    std::vector<unsigned> nibbles(cpus->empty() ? 1 : (cpus->back() / 4) + 1, 0);
    for (uint32_t cpu : *cpus) {
        nibbles[cpu / 4] |= 1U << (cpu % 4);
    }
    std::string text = "0x";
    std::for_each(nibbles.rbegin(), nibbles.rend(),
                  [&text](uint32_t nibble) { text += "0123456789abcdef"[nibble]; });
    return text;
}

Status InitialAffinity::apply(const std::optional<spec::ExecCpuAffinity>& affinity, Syscalls& sys) {
    if (!affinity || !affinity->initial || affinity->initial_cpus.empty()) {
        return {};
    }
    MR_ASSIGN(own_, own_cpus());
    if (explain::enabled()) {
        explain::step(cat("sched_setaffinity(", cpu_text(affinity->initial),
                          "): process.execCPUAffinity.initial, until the process is cloned"));
    }
    Status status = sys.sched_setaffinity(affinity->initial_cpus);
    if (!status) {
        return Error(status.error().errno_value(),
                     cat("process.execCPUAffinity.initial: sched_setaffinity(",
                         cpu_text(affinity->initial),
                         "): ", std::strerror(status.error().errno_value()),
                         " (none of these cpus is online and allowed to mini-run?)"));
    }
    sys_ = &sys;
    return {};
}

InitialAffinity::~InitialAffinity() {
    if (sys_ == nullptr) {
        return;
    }
    Status status = sys_->sched_setaffinity(own_);
    if (!status) {
        log::warning(cat("give mini-run its own cpus back: ", status.error().message()));
    }
}

} // namespace minirun::runtime::scheduling
