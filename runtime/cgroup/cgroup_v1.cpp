// cgroup v1: the files each controller's limits and statistics are in, and their units.
// The names and write orders follow runc's libcontainer/cgroups/fs, so a config behaves
// the same under both runtimes.
#include "cgroup/cgroup_devices.hpp"
#include "cgroup/cgroup_files.hpp"
#include "fs.hpp"
#include "minirun/log.hpp"

#include <unistd.h>

#include <filesystem>

namespace minirun::runtime::cgroup::files {
namespace {

std::string device(int64_t major, int64_t minor) {
    return cat(major, ":", minor);
}

Status throttle(const std::string& dir, const std::string& name,
                const std::vector<spec::BlockIoDeviceThrottle>& devices) {
    for (const auto& entry : devices) {
        MR_TRY(write(dir, name, cat(device(entry.major, entry.minor), " ", entry.rate)));
    }
    return {};
}

} // namespace

Status memory_v1(const std::string& dir, const spec::MemoryResources& memory, bool updating) {
    MR_TRY(check_usage(dir, "memory.usage_in_bytes", memory, updating));
    // 0 means "not set" for these, as in runc.
    int64_t limit = memory.limit.value_or(0);
    int64_t swap = memory.swap.value_or(0);
    const std::string memsw = "memory.memsw.limit_in_bytes";
    bool has_memsw = exists(dir, memsw);
    // An unlimited memory with swap unsaid means unlimited memory+swap too (runc).
    if (limit == -1 && swap == 0 && has_memsw) {
        swap = -1;
    }
    auto write_limit = [&]() -> Status {
        return limit == 0 ? Status() : write(dir, "memory.limit_in_bytes", cat(limit));
    };
    auto write_swap = [&]() -> Status {
        // No swap accounting cannot limit swap, but "unlimited" (-1) is what it has.
        if (swap == 0 || (swap == -1 && !has_memsw)) {
            return Status();
        }
        return write_supported(dir, memsw, cat(swap), "linux.resources.memory.swap");
    };
    // The kernel keeps memory.limit_in_bytes <= memory.memsw.limit_in_bytes at every
    // write. Raising the limit above the current memsw needs memsw raised first;
    // otherwise the limit goes first, so that a lower memsw fits under it.
    bool swap_first = false;
    if (updating && limit != 0 && swap != 0 && has_memsw) {
        MR_ASSIGN(uint64_t current_memsw, read_uint(dir, memsw));
        swap_first = swap == -1 || limit == -1 || static_cast<uint64_t>(limit) > current_memsw;
    }
    if (swap_first) {
        MR_TRY(write_swap());
        MR_TRY(write_limit());
    } else {
        MR_TRY(write_limit());
        MR_TRY(write_swap());
    }
    if (memory.reservation && *memory.reservation != 0) {
        MR_TRY(write(dir, "memory.soft_limit_in_bytes", cat(*memory.reservation)));
    }
    if (memory.kernel) {
        // Linux 5.4 deprecated kernel memory limits and 6.x refuses them; runc ignores them.
        log::warning("linux.resources.memory.kernel is ignored (deprecated by the kernel)");
    }
    if (memory.kernel_tcp && *memory.kernel_tcp != 0) {
        MR_TRY(write(dir, "memory.kmem.tcp.limit_in_bytes", cat(*memory.kernel_tcp)));
    }
    if (memory.swappiness) {
        MR_TRY(write(dir, "memory.swappiness", cat(*memory.swappiness)));
    }
    if (memory.disable_oom_killer.value_or(false)) {
        MR_TRY(write(dir, "memory.oom_control", "1"));
    }
    return {};
}

Status cpu_v1(const std::string& dir, const spec::CpuResources& cpu) {
    // RT bandwidth first: the period bounds the runtime (runtime <= period).
    if (cpu.realtime_period && *cpu.realtime_period != 0) {
        MR_TRY(write_supported(dir, "cpu.rt_period_us", cat(*cpu.realtime_period),
                               "linux.resources.cpu.realtimePeriod"));
    }
    if (cpu.realtime_runtime && *cpu.realtime_runtime != 0) {
        MR_TRY(write_supported(dir, "cpu.rt_runtime_us", cat(*cpu.realtime_runtime),
                               "linux.resources.cpu.realtimeRuntime"));
    }
    if (cpu.shares && *cpu.shares != 0) {
        MR_TRY(write(dir, "cpu.shares", cat(*cpu.shares)));
        // The kernel clamps shares into 2..262144 silently; runc reports the clamp.
        MR_ASSIGN(uint64_t kept, read_uint(dir, "cpu.shares"));
        if (kept != *cpu.shares) {
            return Error(EINVAL,
                         cat("cpu shares ", *cpu.shares, " out of range: the kernel set ", kept,
                             " (", kept > *cpu.shares ? "minimum" : "maximum", " allowed)"));
        }
    }
    int64_t quota = cpu.quota.value_or(0);
    uint64_t period = cpu.period.value_or(0);
    bool period_pending = false;
    if (period != 0) {
        // A shorter period can be refused (EINVAL) while the old quota / new period
        // exceeds the parent's bandwidth; after the new quota it fits (runc retries too).
        auto written = write(dir, "cpu.cfs_period_us", cat(period));
        if (!written) {
            if (written.error().errno_value() != EINVAL || quota == 0) {
                return written;
            }
            period_pending = true;
        }
    }
    if (quota != 0) {
        MR_TRY(write(dir, "cpu.cfs_quota_us", cat(quota)));
        if (period_pending) {
            MR_TRY(write(dir, "cpu.cfs_period_us", cat(period)));
        }
    }
    if (cpu.burst) {
        MR_TRY(write(dir, "cpu.cfs_burst_us", cat(*cpu.burst)));
    }
    if (cpu.idle) {
        MR_TRY(write_supported(dir, "cpu.idle", cat(*cpu.idle), "linux.resources.cpu.idle"));
    }
    return {};
}

Status cpuset(const std::string& dir, const spec::CpuResources& cpu) {
    if (!cpu.cpus.empty()) {
        MR_TRY(write(dir, "cpuset.cpus", cpu.cpus));
    }
    if (!cpu.mems.empty()) {
        MR_TRY(write(dir, "cpuset.mems", cpu.mems));
    }
    return {};
}

Status pids(const std::string& dir, const spec::PidsResources& pids) {
    // The spec's 0 or negative limit is "no limit" (runc normalises both to "max").
    return write(dir, "pids.max", pids.limit > 0 ? cat(pids.limit) : std::string("max"));
}

Status blkio_v1(const std::string& dir, const spec::BlockIoResources& block_io) {
    // Under BFQ the weights are blkio.bfq.*; blkio.weight is CFQ's (gone since Linux 5.0).
    // runc picks BFQ's where both exist.
    bool bfq = exists(dir, "blkio.bfq.weight");
    std::string weight_file = bfq ? "blkio.bfq.weight" : "blkio.weight";
    std::string weight_device_file = bfq ? "blkio.bfq.weight_device" : "blkio.weight_device";
    if (block_io.weight && *block_io.weight != 0) {
        MR_TRY(write_supported(dir, weight_file, cat(*block_io.weight),
                               "linux.resources.blockIO.weight"));
    }
    if (block_io.leaf_weight && *block_io.leaf_weight != 0) {
        MR_TRY(write_supported(dir, "blkio.leaf_weight", cat(*block_io.leaf_weight),
                               "linux.resources.blockIO.leafWeight"));
    }
    for (const auto& entry : block_io.weight_device) {
        std::string where = device(entry.major, entry.minor);
        if (entry.weight && *entry.weight != 0) {
            MR_TRY(write_supported(dir, weight_device_file, cat(where, " ", *entry.weight),
                                   "linux.resources.blockIO.weightDevice.weight"));
        }
        if (entry.leaf_weight && *entry.leaf_weight != 0) {
            MR_TRY(write_supported(dir, "blkio.leaf_weight_device",
                                   cat(where, " ", *entry.leaf_weight),
                                   "linux.resources.blockIO.weightDevice.leafWeight"));
        }
    }
    MR_TRY(throttle(dir, "blkio.throttle.read_bps_device", block_io.throttle_read_bps_device));
    MR_TRY(throttle(dir, "blkio.throttle.write_bps_device", block_io.throttle_write_bps_device));
    MR_TRY(throttle(dir, "blkio.throttle.read_iops_device", block_io.throttle_read_iops_device));
    MR_TRY(throttle(dir, "blkio.throttle.write_iops_device", block_io.throttle_write_iops_device));
    return {};
}

Status hugetlb_v1(const std::string& dir, const std::vector<spec::HugepageLimit>& limits) {
    for (const auto& limit : limits) {
        MR_TRY(check_page_size(limit.page_size));
        MR_TRY(write(dir, cat("hugetlb.", limit.page_size, ".limit_in_bytes"), cat(limit.limit)));
        // Reservations (Linux 5.7) are charged separately; runc limits both alike.
        if (std::string rsvd = cat("hugetlb.", limit.page_size, ".rsvd.limit_in_bytes");
            exists(dir, rsvd)) {
            MR_TRY(write(dir, rsvd, cat(limit.limit)));
        }
    }
    return {};
}

Status net_cls_v1(const std::string& dir, const spec::NetworkResources& network) {
    if (network.class_id) {
        MR_TRY(write(dir, "net_cls.classid", cat(*network.class_id)));
    }
    return {};
}

Status net_prio_v1(const std::string& dir, const spec::NetworkResources& network) {
    for (const auto& priority : network.priorities) {
        MR_TRY(write(dir, "net_prio.ifpriomap", cat(priority.name, " ", priority.priority)));
    }
    return {};
}

Status rdma(const std::string& dir, const std::map<std::string, spec::RdmaLimit>& limits) {
    for (const auto& [name, limit] : limits) {
        std::string line = name;
        if (limit.hca_handles) {
            line += cat(" hca_handle=", *limit.hca_handles);
        }
        if (limit.hca_objects) {
            line += cat(" hca_object=", *limit.hca_objects);
        }
        if (line != name) {
            MR_TRY(write(dir, "rdma.max", line));
        }
    }
    return {};
}

Status devices_v1(const std::string& dir, const std::vector<spec::DeviceCgroupRule>& rules) {
    return write_each(dir, v1_device_writes(rules));
}

// --- statistics ---------------------------------------------------------------------

namespace {

// blkio.*_recursive: "8:0 Read 4096" lines, and a "Total N" line that runc skips.
nlohmann::json blkio_entries(const std::string& dir, const std::string& name) {
    nlohmann::json entries = nlohmann::json::array();
    auto text = read(dir, name);
    if (!text) {
        return entries;
    }
    for (std::string_view line : fs::split(*text, '\n')) {
        auto fields = fs::split(line, ' ');
        if (fields.size() < 2 || fields[0] == "Total") {
            continue;
        }
        auto numbers_of = fs::split(fields[0], ':');
        if (numbers_of.size() != 2) {
            continue;
        }
        uint64_t major = 0;
        uint64_t minor = 0;
        uint64_t value = 0;
        if (!parse_uint(numbers_of[0], major) || !parse_uint(numbers_of[1], minor) ||
            !parse_uint(fields.back(), value)) {
            continue;
        }
        nlohmann::json entry = nlohmann::json::object();
        set_nonzero(entry, "major", major);
        set_nonzero(entry, "minor", minor);
        set_nonzero(entry, "value", value);
        if (fields.size() == 3) {
            entry["op"] = std::string(fields[1]);
        }
        entries.push_back(std::move(entry));
    }
    return entries;
}

} // namespace

void cpu_stats_v1(const std::string& cpu_dir, const std::string& cpuacct_dir, nlohmann::json& out) {
    nlohmann::json& usage = out["usage"];
    if (!cpuacct_dir.empty()) {
        set_nonzero(usage, "total", uint_or_zero(cpuacct_dir, "cpuacct.usage"));
        if (auto text = read(cpuacct_dir, "cpuacct.usage_percpu")) {
            std::vector<uint64_t> percpu;
            for (std::string_view word : fs::split(*text, ' ')) {
                if (uint64_t value = 0; parse_uint(word, value)) {
                    percpu.push_back(value);
                }
            }
            if (!percpu.empty()) {
                usage["percpu"] = percpu;
            }
        }
        // cpuacct.stat counts USER_HZ ticks; the stats are in nanoseconds.
        const uint64_t ns_per_tick =
            1'000'000'000ULL / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
        if (auto text = read(cpuacct_dir, "cpuacct.stat")) {
            auto values = key_values(*text);
            usage["user"] = values["user"] * ns_per_tick;
            usage["kernel"] = values["system"] * ns_per_tick;
        }
        // "cpu user system" then one line per cpu, in nanoseconds (Linux 4.16).
        if (auto text = read(cpuacct_dir, "cpuacct.usage_all")) {
            std::vector<uint64_t> user;
            std::vector<uint64_t> kernel;
            for (std::string_view line : fs::split(*text, '\n')) {
                auto fields = fs::split(line, ' ');
                if (fields.size() != 3 || fields[0] == "cpu") {
                    continue;
                }
                uint64_t user_ns = 0;
                uint64_t kernel_ns = 0;
                if (parse_uint(fields[1], user_ns) && parse_uint(fields[2], kernel_ns)) {
                    user.push_back(user_ns);
                    kernel.push_back(kernel_ns);
                }
            }
            if (!user.empty()) {
                usage["percpu_user"] = user;
                usage["percpu_kernel"] = kernel;
            }
        }
    }
    if (!cpu_dir.empty()) {
        if (auto text = read(cpu_dir, "cpu.stat")) {
            auto values = key_values(*text);
            nlohmann::json& throttling = out["throttling"];
            set_nonzero(throttling, "periods", values["nr_periods"]);
            set_nonzero(throttling, "throttledPeriods", values["nr_throttled"]);
            set_nonzero(throttling, "throttledTime", values["throttled_time"]);
        }
    }
}

void memory_stats_v1(const std::string& dir, nlohmann::json& out) {
    if (auto text = read(dir, "memory.stat")) {
        auto raw = key_values(*text);
        set_nonzero(out, "cache", raw["cache"]);
        if (!raw.empty()) {
            out["raw"] = raw;
        }
    }
    auto entry = [&](const std::string& prefix) {
        return memory_entry(uint_or_zero(dir, prefix + ".usage_in_bytes"),
                            uint_or_zero(dir, prefix + ".max_usage_in_bytes"),
                            uint_or_zero(dir, prefix + ".failcnt"),
                            uint_or_zero(dir, prefix + ".limit_in_bytes"));
    };
    out["usage"] = entry("memory");
    out["swap"] = entry("memory.memsw");
    out["kernel"] = entry("memory.kmem");
    out["kernelTCP"] = entry("memory.kmem.tcp");
}

void pids_stats(const std::string& dir, nlohmann::json& out) {
    set_nonzero(out, "current", uint_or_zero(dir, "pids.current"));
    // "max" is no limit, which runc reports as 0.
    if (uint64_t limit = uint_or_zero(dir, "pids.max"); limit != UINT64_MAX) {
        set_nonzero(out, "limit", limit);
    }
}

void blkio_stats_v1(const std::string& dir, nlohmann::json& out) {
    // BFQ's counters where the BFQ scheduler is in use, the throttling layer's otherwise
    // (it sees every request, whatever the scheduler).
    std::string prefix =
        exists(dir, "blkio.bfq.io_service_bytes_recursive") ? "blkio.bfq." : "blkio.throttle.";
    if (auto bytes = blkio_entries(dir, prefix + "io_service_bytes_recursive"); !bytes.empty()) {
        out["ioServiceBytesRecursive"] = bytes;
    }
    if (auto ios = blkio_entries(dir, prefix + "io_serviced_recursive"); !ios.empty()) {
        out["ioServicedRecursive"] = ios;
    }
}

void hugetlb_stats(const std::string& dir, bool v2, nlohmann::json& out) {
    // One set of files per page size the kernel supports: hugetlb.<size>.max (v2) or
    // hugetlb.<size>.limit_in_bytes (v1), reservations (".rsvd.") aside.
    const std::string suffix = v2 ? ".max" : ".limit_in_bytes";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        std::string name = entry.path().filename().string();
        if (!name.starts_with("hugetlb.") || !name.ends_with(suffix) ||
            name.find(".rsvd.") != std::string::npos) {
            continue;
        }
        std::string size = name.substr(8, name.size() - 8 - suffix.size());
        std::string base = cat("hugetlb.", size);
        nlohmann::json stats;
        if (v2) {
            set_nonzero(stats, "usage", uint_or_zero(dir, base + ".current"));
            uint64_t failcnt = 0;
            if (auto events = read(dir, base + ".events")) {
                failcnt = key_values(*events)["max"];
            }
            stats["failcnt"] = failcnt;
        } else {
            set_nonzero(stats, "usage", uint_or_zero(dir, base + ".usage_in_bytes"));
            set_nonzero(stats, "max", uint_or_zero(dir, base + ".max_usage_in_bytes"));
            stats["failcnt"] = uint_or_zero(dir, base + ".failcnt");
        }
        out[size] = stats;
    }
}

} // namespace minirun::runtime::cgroup::files
