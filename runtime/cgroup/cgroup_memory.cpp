// The memory controller: limits, swap, reservation and the OOM killer, and its statistics.
//
//   v1  memory.limit_in_bytes, memory.memsw.limit_in_bytes (memory+swap, as the spec's swap),
//       memory.soft_limit_in_bytes, memory.kmem.tcp.limit_in_bytes, memory.swappiness,
//       memory.oom_control (runc's libcontainer/cgroups/fs/memory.go)
//   v2  memory.swap.max (swap alone: the spec's value minus the limit), memory.max,
//       memory.low (runc's libcontainer/cgroups/fs2/memory.go)
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"
#include "minirun/log.hpp"

#include <cerrno>
#include <cstdint>

namespace minirun::runtime::cgroup::controllers {
namespace {

using files::exists;
using files::read;
using files::read_uint;
using files::uint_or_zero;
using files::write;
using files::write_supported;

// The usage check of linux.resources.memory.checkBeforeUpdate.
Status check_usage(const std::string& dir, const std::string& usage_file,
                   const spec::MemoryResources& memory, bool updating) {
    if (!updating || !memory.check_before_update.value_or(false) || memory.limit.value_or(0) <= 0) {
        return {};
    }
    MR_ASSIGN(uint64_t usage, read_uint(dir, usage_file));
    if (static_cast<uint64_t>(*memory.limit) < usage) {
        return Error(EBUSY, cat("rejecting memory limit ", *memory.limit,
                                " below the current usage ", usage));
    }
    return {};
}

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

// v1's memory.limit_in_bytes and memory.memsw.limit_in_bytes. The kernel keeps
// limit <= memsw at every write: raising the limit above the current memsw needs memsw
// raised first; otherwise the limit goes first, so that a lower memsw fits under it.
Status limit_and_swap_v1(const std::string& dir, const spec::MemoryResources& memory,
                         bool updating) {
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
    bool swap_first = false;
    if (updating && limit != 0 && swap != 0 && has_memsw) {
        MR_ASSIGN(uint64_t current_memsw, read_uint(dir, memsw));
        swap_first = swap == -1 || limit == -1 || static_cast<uint64_t>(limit) > current_memsw;
    }
    if (swap_first) {
        MR_TRY(write_swap());
        return write_limit();
    }
    MR_TRY(write_limit());
    return write_swap();
}

// runc's MemoryEntry: limit and failcnt always, usage and max when not zero.
nlohmann::json memory_entry(uint64_t usage, uint64_t max, uint64_t failcnt, uint64_t limit) {
    nlohmann::json entry = {{"limit", limit}, {"failcnt", failcnt}};
    files::set_nonzero(entry, "usage", usage);
    files::set_nonzero(entry, "max", max);
    return entry;
}

} // namespace

bool memory_wanted(const spec::Resources& resources) {
    const auto& memory = resources.memory;
    return memory && (memory->limit || memory->reservation || memory->swap || memory->kernel ||
                      memory->kernel_tcp || memory->swappiness || memory->disable_oom_killer);
}

Status memory_v1(const std::string& dir, const Request& request) {
    const spec::MemoryResources& memory = *request.resources.memory;
    MR_TRY(check_usage(dir, "memory.usage_in_bytes", memory, request.updating));
    MR_TRY(limit_and_swap_v1(dir, memory, request.updating));
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

Status memory_v2(const std::string& dir, const Request& request) {
    const spec::MemoryResources& memory = *request.resources.memory;
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
    MR_TRY(check_usage(dir, "memory.current", memory, request.updating));
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

void memory_stats_v1(const std::string& dir, nlohmann::json& out) {
    if (auto text = read(dir, "memory.stat")) {
        auto raw = files::key_values(*text);
        files::set_nonzero(out, "cache", raw["cache"]);
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

void memory_stats_v2(const std::string& dir, nlohmann::json& out) {
    if (auto text = read(dir, "memory.stat")) {
        auto raw = files::key_values(*text);
        files::set_nonzero(out, "cache", raw["file"]);
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

} // namespace minirun::runtime::cgroup::controllers
