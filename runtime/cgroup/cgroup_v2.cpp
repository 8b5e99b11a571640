// cgroup v2: the files of the unified hierarchy and the conversions from the spec's v1
// units (shares, blkio weights, memory+swap), as runc's libcontainer/cgroups/fs2 does them.
#include "cgroup/cgroup_devices.hpp"
#include "cgroup/cgroup_files.hpp"
#include "fs.hpp"
#include "minirun/log.hpp"

#include <fcntl.h>

#include <algorithm>

namespace minirun::runtime::cgroup {

uint64_t shares_to_weight(uint64_t shares) {
    if (shares == 0) {
        return 0;
    }
    // v1 shares run 2..262144, v2 weights 1..10000; runc maps the ranges linearly.
    shares = std::clamp<uint64_t>(shares, 2, 262144);
    return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t blkio_weight_to_io_weight(uint64_t weight) {
    if (weight == 0) {
        return 0;
    }
    weight = std::clamp<uint64_t>(weight, 10, 1000);
    return 1 + (weight - 10) * 9999 / 990;
}

namespace files {
namespace {

// "max" is v2's "no limit", which v1 configs spell -1.
std::string limit_text(int64_t value) {
    return value == -1 ? std::string("max") : cat(value);
}

// The spec's swap is memory+swap (v1's memsw); memory.swap.max is swap alone. runc's
// ConvertMemorySwapToCgroupV2Value: -1 stays "max", unset stays unset, and an
// unlimited memory with swap unsaid makes swap unlimited too.
Result<int64_t> swap_only(int64_t swap, int64_t limit) {
    if (limit == -1 && swap == 0) {
        return int64_t{-1};
    }
    if (swap == -1 || swap == 0) {
        return swap;
    }
    if (limit == 0 || limit == -1) {
        return Error(EINVAL, "linux.resources.memory: a swap limit needs a memory limit");
    }
    if (swap < limit) {
        return Error(EINVAL, cat("linux.resources.memory: swap (memory+swap, ", swap,
                                 ") must not be below limit (", limit, ")"));
    }
    return swap - limit;
}

} // namespace

Status memory_v2(const std::string& dir, const spec::MemoryResources& memory, bool updating) {
    int64_t limit = memory.limit.value_or(0);
    int64_t swap = memory.swap.value_or(0);
    int64_t reservation = memory.reservation.value_or(0);
    if (memory.swappiness || memory.disable_oom_killer.value_or(false) || memory.kernel ||
        memory.kernel_tcp) {
        // cgroup v2 has no such knobs; runc ignores them too.
        log::debug("cgroup v2: memory swappiness, disableOOMKiller, kernel and kernelTCP are "
                   "ignored");
    }
    if (limit == 0 && swap == 0 && reservation == 0) {
        return {};
    }
    MR_TRY(check_usage(dir, "memory.current", memory, updating));
    MR_ASSIGN(int64_t swap_max, swap_only(swap, limit));
    // Swap first, as runc: a lower memory.max then never meets a stale swap limit.
    if (swap_max != 0 || swap > 0) { // swap == limit: no swap at all, "0"
        // Without swap accounting "unlimited" holds already; a limit cannot be applied.
        if (swap_max != -1 || exists(dir, "memory.swap.max")) {
            MR_TRY(write_supported(dir, "memory.swap.max", limit_text(swap_max),
                                   "linux.resources.memory.swap"));
        }
    }
    if (limit != 0) {
        MR_TRY(write(dir, "memory.max", limit_text(limit)));
    }
    if (reservation != 0) {
        MR_TRY(write(dir, "memory.low", limit_text(reservation)));
    }
    return {};
}

Status cpu_v2(const std::string& dir, const spec::CpuResources& cpu) {
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

Status io_v2(const std::string& dir, const spec::BlockIoResources& block_io) {
    // With the BFQ scheduler io.bfq.weight takes the blkio weights as they are (and is
    // the only per-device one that works); io.weight wants the converted range.
    bool bfq = exists(dir, "io.bfq.weight");
    auto weight_value = [&](uint16_t weight) {
        return bfq ? uint64_t{weight} : blkio_weight_to_io_weight(weight);
    };
    std::string weight_file = bfq ? "io.bfq.weight" : "io.weight";
    if (block_io.weight && *block_io.weight != 0) {
        MR_TRY(write(dir, weight_file, cat("default ", weight_value(*block_io.weight))));
    }
    if (block_io.leaf_weight) {
        log::debug("cgroup v2 has no leaf weights: blockIO.leafWeight is ignored");
    }
    for (const auto& entry : block_io.weight_device) {
        if (entry.weight && *entry.weight != 0) {
            MR_TRY(write(dir, weight_file,
                         cat(entry.major, ":", entry.minor, " ", weight_value(*entry.weight))));
        }
    }
    auto limit = [&](const std::vector<spec::BlockIoDeviceThrottle>& devices,
                     const char* key) -> Status {
        for (const auto& entry : devices) {
            // v1 takes rate 0 as "remove the limit"; io.max refuses 0 and says "max".
            std::string rate = entry.rate == 0 ? std::string("max") : cat(entry.rate);
            MR_TRY(write(dir, "io.max", cat(entry.major, ":", entry.minor, " ", key, "=", rate)));
        }
        return {};
    };
    MR_TRY(limit(block_io.throttle_read_bps_device, "rbps"));
    MR_TRY(limit(block_io.throttle_write_bps_device, "wbps"));
    MR_TRY(limit(block_io.throttle_read_iops_device, "riops"));
    MR_TRY(limit(block_io.throttle_write_iops_device, "wiops"));
    return {};
}

Status hugetlb_v2(const std::string& dir, const std::vector<spec::HugepageLimit>& limits) {
    for (const auto& limit : limits) {
        MR_TRY(check_page_size(limit.page_size));
        MR_TRY(write(dir, cat("hugetlb.", limit.page_size, ".max"), cat(limit.limit)));
        // Reservations (Linux 5.7) are charged separately; runc limits both alike.
        if (std::string rsvd = cat("hugetlb.", limit.page_size, ".rsvd.max"); exists(dir, rsvd)) {
            MR_TRY(write(dir, rsvd, cat(limit.limit)));
        }
    }
    return {};
}

Status devices_v2(const std::string& dir, const std::vector<spec::DeviceCgroupRule>& rules) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", dir));
    }
    MR_TRY_WRAP(attach_device_program(fd.get(), rules), cat("device rules of cgroup ", dir));
    return {};
}

Status unified_v2(const std::string& dir, const std::map<std::string, std::string>& values,
                  const std::set<std::string>& controllers) {
    for (const auto& [key, value] : values) {
        if (key.empty() || key.find('/') != std::string::npos || key == "." || key == "..") {
            return Error(EINVAL, cat("linux.resources.unified: ", quoted(key),
                                     " is not a file name of the cgroup's directory"));
        }
        size_t dot = key.find('.');
        if (dot == std::string::npos || dot == 0) {
            return Error(EINVAL, cat("linux.resources.unified: ", quoted(key),
                                     " is not of the form CONTROLLER.PARAMETER"));
        }
        std::string controller = key.substr(0, dot);
        // "cgroup." files are the core's, in every directory.
        if (controller != "cgroup" && !controllers.contains(controller) && !exists(dir, key)) {
            // runtime-spec: an error. "invalid configuration" is runc's word for it.
            return Error(EOPNOTSUPP, cat("linux.resources.unified: ", quoted(key),
                                         ": invalid configuration: controller ", quoted(controller),
                                         " is not available in ", dir));
        }
        // Multi-line values are one write per line, as the kernel parses them (io.max
        // takes one device per write).
        for (std::string_view line : fs::split(value, '\n')) {
            if (!line.empty()) {
                MR_TRY(write(dir, key, line));
            }
        }
    }
    return {};
}

// --- statistics ---------------------------------------------------------------------

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

void memory_stats_v2(const std::string& dir, nlohmann::json& out) {
    if (auto text = read(dir, "memory.stat")) {
        auto raw = key_values(*text);
        set_nonzero(out, "cache", raw["file"]);
        if (!raw.empty()) {
            out["raw"] = raw;
        }
    }
    uint64_t usage = uint_or_zero(dir, "memory.current");
    uint64_t limit = uint_or_zero(dir, "memory.max");
    out["usage"] = memory_entry(usage, 0, 0, limit);
    // v1 reported memory+swap; runc keeps that meaning on v2 by adding memory in.
    uint64_t swap_usage = uint_or_zero(dir, "memory.swap.current");
    uint64_t swap_limit = uint_or_zero(dir, "memory.swap.max");
    if (swap_limit != UINT64_MAX) {
        swap_limit = limit > UINT64_MAX - swap_limit ? UINT64_MAX : swap_limit + limit;
    }
    out["swap"] = memory_entry(swap_usage + usage, 0, 0, swap_limit);
}

void io_stats_v2(const std::string& dir, nlohmann::json& out) {
    auto text = read(dir, "io.stat");
    if (!text) {
        return;
    }
    // "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0", one line per device, into
    // v1's shape: bytes and operations, "Read" and "Write".
    nlohmann::json bytes = nlohmann::json::array();
    nlohmann::json ios = nlohmann::json::array();
    for (std::string_view line : fs::split(*text, '\n')) {
        auto fields = fs::split(line, ' ');
        auto numbers = fs::split(fields[0], ':');
        uint64_t major = 0;
        uint64_t minor = 0;
        if (numbers.size() != 2 || !parse_uint(numbers[0], major) ||
            !parse_uint(numbers[1], minor)) {
            continue;
        }
        for (size_t i = 1; i < fields.size(); ++i) {
            size_t equals = fields[i].find('=');
            uint64_t value = 0;
            if (equals == std::string_view::npos ||
                !parse_uint(fields[i].substr(equals + 1), value)) {
                continue;
            }
            std::string_view key = fields[i].substr(0, equals);
            nlohmann::json* table = key == "rbytes" || key == "wbytes" ? &bytes
                                    : key == "rios" || key == "wios"   ? &ios
                                                                       : nullptr;
            if (table == nullptr) {
                continue;
            }
            nlohmann::json entry = {{"op", key.starts_with('r') ? "Read" : "Write"}};
            set_nonzero(entry, "major", major);
            set_nonzero(entry, "minor", minor);
            set_nonzero(entry, "value", value);
            table->push_back(std::move(entry));
        }
    }
    if (!bytes.empty()) {
        out["ioServiceBytesRecursive"] = bytes;
    }
    if (!ios.empty()) {
        out["ioServicedRecursive"] = ios;
    }
}

} // namespace files
} // namespace minirun::runtime::cgroup
