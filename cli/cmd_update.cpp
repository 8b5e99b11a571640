// mini-run update [--resources FILE|-] [shorthand flags] ID: change a live container's
// cgroup limits. The file holds a LinuxResources object (as podman and containerd send
// it); runc's shorthand flags are applied on top of it.
#include "commands.hpp"
#include "minirun/file.hpp"
#include "minirun/runtime.hpp"
#include "minirun/units.hpp"

#include <iostream>
#include <iterator>
#include <optional>

namespace minirun::cli {
namespace {

struct UpdateFlags {
    std::string id;
    std::string resources_file;
    std::optional<std::string> memory;
    std::optional<std::string> memory_reservation;
    std::optional<std::string> memory_swap;
    std::optional<uint64_t> cpu_shares;
    std::optional<int64_t> cpu_quota;
    std::optional<uint64_t> cpu_period;
    std::optional<uint64_t> cpu_burst;
    std::optional<int64_t> cpu_idle;
    std::optional<int64_t> cpu_rt_runtime;
    std::optional<uint64_t> cpu_rt_period;
    std::optional<std::string> cpuset_cpus;
    std::optional<std::string> cpuset_mems;
    std::optional<int64_t> pids_limit;
    std::optional<uint16_t> blkio_weight;
};

Result<spec::Resources> read_resources(const std::string& file) {
    if (file.empty()) {
        return spec::Resources{};
    }
    std::string text;
    if (file == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
        MR_ASSIGN(text, fs::read_file(file));
    }
    return spec::parse_resources(text, file == "-" ? "--resources -" : file);
}

Result<int64_t> memory_flag(const std::optional<std::string>& value, std::string_view flag) {
    auto bytes = units::parse_memory_size(*value);
    if (!bytes) {
        return bytes.error().wrap(flag);
    }
    return *bytes;
}

// runc's cpu flags, over what --resources gave.
Status apply_cpu_flags(const UpdateFlags& flags, std::optional<spec::CpuResources>& cpu) {
    auto cpu_part = [&cpu]() -> spec::CpuResources& {
        if (!cpu) {
            cpu.emplace();
        }
        return *cpu;
    };
    if (flags.cpu_shares) {
        cpu_part().shares = *flags.cpu_shares;
    }
    if (flags.cpu_quota) {
        cpu_part().quota = *flags.cpu_quota;
    }
    if (flags.cpu_period) {
        cpu_part().period = *flags.cpu_period;
    }
    // cpu.cfs_burst_us (v1) or cpu.max.burst (v2).
    if (flags.cpu_burst) {
        cpu_part().burst = *flags.cpu_burst;
    }
    // cpu.idle: 1 makes the cgroup SCHED_IDLE, 0 takes it back (Linux 5.15).
    if (flags.cpu_idle) {
        if (*flags.cpu_idle != 0 && *flags.cpu_idle != 1) {
            return Error(EINVAL, cat("--cpu-idle: must be 0 or 1, got ", *flags.cpu_idle));
        }
        cpu_part().idle = *flags.cpu_idle;
    }
    if (flags.cpu_rt_runtime) {
        cpu_part().realtime_runtime = *flags.cpu_rt_runtime;
    }
    if (flags.cpu_rt_period) {
        cpu_part().realtime_period = *flags.cpu_rt_period;
    }
    if (flags.cpuset_cpus) {
        cpu_part().cpus = *flags.cpuset_cpus;
    }
    if (flags.cpuset_mems) {
        cpu_part().mems = *flags.cpuset_mems;
    }
    return {};
}

Result<spec::Resources> resources_from(const UpdateFlags& flags) {
    MR_ASSIGN(spec::Resources resources, read_resources(flags.resources_file));
    auto& memory = resources.memory;
    if (flags.memory) {
        MR_ASSIGN(int64_t bytes, memory_flag(flags.memory, "--memory"));
        memory.emplace().limit = bytes;
    }
    if (flags.memory_reservation) {
        MR_ASSIGN(int64_t bytes, memory_flag(flags.memory_reservation, "--memory-reservation"));
        if (!memory) {
            memory.emplace();
        }
        memory->reservation = bytes;
    }
    if (flags.memory_swap) {
        MR_ASSIGN(int64_t bytes, memory_flag(flags.memory_swap, "--memory-swap"));
        if (!memory) {
            memory.emplace();
        }
        memory->swap = bytes;
    }
    MR_TRY(apply_cpu_flags(flags, resources.cpu));
    if (flags.pids_limit) {
        resources.pids.emplace().limit = *flags.pids_limit;
    }
    if (flags.blkio_weight) {
        if (*flags.blkio_weight < 10 || *flags.blkio_weight > 1000) {
            return Error(EINVAL,
                         cat("--blkio-weight: ", *flags.blkio_weight, " is out of range 10..1000"));
        }
        if (!resources.block_io) {
            resources.block_io.emplace();
        }
        resources.block_io->weight = *flags.blkio_weight;
    }
    return resources;
}

} // namespace

CommandRunner add_update_command(CLI::App& app, GlobalOptions& global) {
    auto flags = std::make_shared<UpdateFlags>();
    CLI::App* command =
        app.add_subcommand("update", "change a running container's resource limits");
    command->add_option("--resources,-r", flags->resources_file,
                        "a LinuxResources JSON file, or - for standard input");
    command->add_option("--memory", flags->memory, "memory limit (64m, 1g; -1: unlimited)");
    command->add_option("--memory-reservation", flags->memory_reservation, "memory soft limit");
    command->add_option("--memory-swap", flags->memory_swap, "memory plus swap limit");
    // runc spells it --cpu-share; engines and people also write --cpu-shares.
    command->add_option("--cpu-share,--cpu-shares", flags->cpu_shares, "CPU shares (weight)");
    command->add_option("--cpu-quota", flags->cpu_quota, "CPU CFS quota in microseconds");
    command->add_option("--cpu-period", flags->cpu_period, "CPU CFS period in microseconds");
    command->add_option("--cpu-burst", flags->cpu_burst,
                        "CPU CFS burst in microseconds, on top of the quota");
    command->add_option("--cpu-idle", flags->cpu_idle, "1: the cgroup is SCHED_IDLE; 0: it is not");
    command->add_option("--cpu-rt-runtime", flags->cpu_rt_runtime, "realtime runtime (us)");
    command->add_option("--cpu-rt-period", flags->cpu_rt_period, "realtime period (us)");
    command->add_option("--cpuset-cpus", flags->cpuset_cpus, "CPUs to run on (0-3, 0,1)");
    command->add_option("--cpuset-mems", flags->cpuset_mems, "memory nodes to use");
    command->add_option("--pids-limit", flags->pids_limit, "maximum number of processes");
    command->add_option("--blkio-weight", flags->blkio_weight, "block IO weight (10..1000)");
    // Accepted like runc, which ignores them on current kernels.
    command->add_option("--kernel-memory")->description("accepted for runc compatibility");
    command->add_option("--kernel-memory-tcp")->description("accepted for runc compatibility");
    add_id(*command, flags->id);
    return [flags, &global]() {
        auto resources = resources_from(*flags);
        if (!resources) {
            return fail(resources.error().message());
        }
        if (auto updated = update_container(global.root, flags->id, *resources); !updated) {
            return fail(updated.error().message());
        }
        return 0;
    };
}

} // namespace minirun::cli
