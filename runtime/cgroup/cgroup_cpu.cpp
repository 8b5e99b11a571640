// The cpu controller: shares, CFS quota and period, burst, RT bandwidth and SCHED_IDLE
// groups, and the cpu (and v1 cpuacct) statistics.
//
//   v1  cpu.rt_period_us, cpu.rt_runtime_us, cpu.shares, cpu.cfs_period_us,
//       cpu.cfs_quota_us, cpu.cfs_burst_us, cpu.idle (runc's libcontainer/cgroups/fs/cpu.go)
//   v2  cpu.idle, cpu.weight (shares converted), cpu.max ("quota period"), cpu.max.burst;
//       no RT bandwidth (runc's libcontainer/cgroups/fs2/cpu.go)
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"
#include "fs.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <numbers>

namespace minirun::runtime::cgroup {

namespace {

// Go's math.Log2, which the conversion below is defined with: exact for powers of two
// (1024 must give exactly 10, or 100 would round up to 101), log(frac)/ln 2 + exp otherwise.
double go_log2(double value) {
    int exponent = 0;
    double fraction = std::frexp(value, &exponent);
    if (fraction == 0.5) {
        return exponent - 1;
    }
    return std::log(fraction) * (1 / std::numbers::ln2) + exponent;
}

} // namespace

uint64_t shares_to_weight(uint64_t shares) {
    // 0: not set. v1 shares run 2..262144, v2 weights 1..10000. The linear map runc used
    // until 1.3.1 (1 + (shares - 2) * 9999 / 262142) sent the default 1024 shares to
    // weight 39, not the default 100, so a container that asked for the default got 39%
    // of a sibling's CPU (kubernetes#131216). runc 1.3.2+ (opencontainers/cgroups
    // ConvertCPUSharesToCgroupV2Value) and crun 1.23+ fit a quadratic in log2(shares)
    // through the three points 2 -> 1, 1024 -> 100, 262144 -> 10000.
    if (shares == 0) {
        return 0;
    }
    if (shares <= 2) {
        return 1;
    }
    if (shares >= 262144) {
        return 10000;
    }
    double log = go_log2(static_cast<double>(shares));
    double exponent = (log * log + 125 * log) / 612.0 - 7.0 / 34.0;
    return static_cast<uint64_t>(std::ceil(std::pow(10, exponent)));
}

namespace controllers {
namespace {

using files::key_values;
using files::parse_uint;
using files::read;
using files::read_uint;
using files::set_nonzero;
using files::write;
using files::write_supported;

// v1's CFS bandwidth: cpu.cfs_period_us, then cpu.cfs_quota_us.
Status cfs_bandwidth_v1(const std::string& dir, const spec::CpuResources& cpu) {
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
    return {};
}

// v1's RT bandwidth: cpu.rt_period_us, then cpu.rt_runtime_us, as runc's SetRtSched
// (opencontainers/cgroups fs/cpu.go). The kernel refuses (EINVAL) a period below the
// group's current runtime (runtime <= period, sched_rt's tg_rt_schedulable), so raising
// both works period first, but lowering the period under the old runtime needs the new
// runtime first: runc then writes the runtime and tries the period again, and so do we.
// (And the other way round: a runtime above the old period is refused too, which the
// period-first order avoids.)
Status rt_bandwidth_v1(const std::string& dir, const spec::CpuResources& cpu) {
    uint64_t period = cpu.realtime_period.value_or(0);
    int64_t runtime = cpu.realtime_runtime.value_or(0);
    bool period_pending = false;
    if (period != 0) {
        auto written = write_supported(dir, "cpu.rt_period_us", cat(period),
                                       "linux.resources.cpu.realtimePeriod");
        if (!written) {
            if (written.error().errno_value() != EINVAL || runtime == 0) {
                return written;
            }
            period_pending = true;
        }
    }
    if (runtime != 0) {
        MR_TRY(write_supported(dir, "cpu.rt_runtime_us", cat(runtime),
                               "linux.resources.cpu.realtimeRuntime"));
        if (period_pending) {
            MR_TRY(write_supported(dir, "cpu.rt_period_us", cat(period),
                                   "linux.resources.cpu.realtimePeriod"));
        }
    }
    return {};
}

// cpuacct.usage_all: "cpu user system" then one line per cpu, in nanoseconds (Linux 4.16).
void percpu_user_kernel(const std::string& text, nlohmann::json& usage) {
    std::vector<uint64_t> user;
    std::vector<uint64_t> kernel;
    for (std::string_view line : fs::split(text, '\n')) {
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

void cpuacct_stats_v1(const std::string& dir, nlohmann::json& usage) {
    set_nonzero(usage, "total", files::uint_or_zero(dir, "cpuacct.usage"));
    if (auto text = read(dir, "cpuacct.usage_percpu")) {
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
    const uint64_t ns_per_tick = 1'000'000'000ULL / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
    if (auto text = read(dir, "cpuacct.stat")) {
        auto values = key_values(*text);
        usage["user"] = values["user"] * ns_per_tick;
        usage["kernel"] = values["system"] * ns_per_tick;
    }
    if (auto text = read(dir, "cpuacct.usage_all")) {
        percpu_user_kernel(*text, usage);
    }
}

} // namespace

bool cpu_wanted(const spec::Resources& resources) {
    const auto& cpu = resources.cpu;
    return cpu && (cpu->shares || cpu->quota || cpu->period || cpu->burst ||
                   cpu->realtime_runtime || cpu->realtime_period || cpu->idle);
}

Status cpu_v1(const std::string& dir, const Request& request) {
    const spec::CpuResources& cpu = *request.resources.cpu;
    // RT bandwidth first, as runc: a SCHED_RR process may only join with runtime set.
    MR_TRY(rt_bandwidth_v1(dir, cpu));
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
    MR_TRY(cfs_bandwidth_v1(dir, cpu));
    if (cpu.burst) {
        MR_TRY(write(dir, "cpu.cfs_burst_us", cat(*cpu.burst)));
    }
    if (cpu.idle) {
        MR_TRY(write_supported(dir, "cpu.idle", cat(*cpu.idle), "linux.resources.cpu.idle"));
    }
    return {};
}

Status cpu_v2(const std::string& dir, const Request& request) {
    const spec::CpuResources& cpu = *request.resources.cpu;
    if (cpu.realtime_period.value_or(0) != 0 || cpu.realtime_runtime.value_or(0) != 0) {
        // The v2 cpu controller has no RT bandwidth files (RT tasks run in the root's), and
        // a property that cannot be applied is an error (runtime.md).
        return Error(ENOTSUP, "linux.resources.cpu.realtimeRuntime, realtimePeriod: cannot be "
                              "applied: cgroup v2 has no realtime CPU limits");
    }
    if (cpu.idle) {
        MR_TRY(write_supported(dir, "cpu.idle", cat(*cpu.idle), "linux.resources.cpu.idle"));
    }
    if (cpu.shares && *cpu.shares != 0) {
        MR_TRY(write(dir, "cpu.weight", cat(shares_to_weight(*cpu.shares))));
    }
    int64_t quota = cpu.quota.value_or(0);
    uint64_t period = cpu.period.value_or(0);
    if (quota != 0 || period != 0) {
        // The kernel's default period is 100 ms; "max" is no quota.
        constexpr uint64_t kDefaultPeriod = 100000;
        MR_TRY(write(dir, "cpu.max",
                     cat(quota > 0 ? cat(quota) : std::string("max"), " ",
                         period != 0 ? period : kDefaultPeriod)));
    }
    if (cpu.burst) {
        MR_TRY(write(dir, "cpu.max.burst", cat(*cpu.burst)));
    }
    return {};
}

void cpu_stats_v1(const std::string& cpu_dir, const std::string& cpuacct_dir, nlohmann::json& out) {
    nlohmann::json& usage = out["usage"];
    if (!cpuacct_dir.empty()) {
        cpuacct_stats_v1(cpuacct_dir, usage);
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

void cpu_stats_v2(const std::string& dir, nlohmann::json& out) {
    auto text = read(dir, "cpu.stat");
    if (!text) {
        return;
    }
    // Microseconds in cpu.stat, nanoseconds in the stats.
    auto values = key_values(*text);
    nlohmann::json& usage = out["usage"];
    set_nonzero(usage, "total", values["usage_usec"] * 1000);
    usage["user"] = values["user_usec"] * 1000;
    usage["kernel"] = values["system_usec"] * 1000;
    nlohmann::json& throttling = out["throttling"];
    set_nonzero(throttling, "periods", values["nr_periods"]);
    set_nonzero(throttling, "throttledPeriods", values["nr_throttled"]);
    set_nonzero(throttling, "throttledTime", values["throttled_usec"] * 1000);
}

} // namespace controllers
} // namespace minirun::runtime::cgroup
