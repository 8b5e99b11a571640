// Cgroups for a rootless container: only where the host delegated a cgroup to the caller.
//
// Without the host's root, the only cgroups a caller may make and move processes into are
// those of a cgroup v2 subtree it was given (chowned to it: the directory, its
// cgroup.procs and cgroup.subtree_control, as systemd's Delegate=yes does). The kernel
// also asks for write access to cgroup.procs of the common ancestor of where a process is
// and where it goes (cgroup v2's delegation rules), so the caller must already live in
// that subtree. v1 hierarchies are never delegated in practice (and v1 delegation is no
// containment: a v1 cgroup's owner can change its own limits). So:
//   - a writable delegated v2 subtree holds the container's path: the container gets its
//     cgroup2 directory there, and the limits its controllers take;
//   - otherwise the container stays in its caller's cgroups when the config asks for
//     nothing (runc says nothing then either: a debug line only, so that the container's
//     own output is all a caller sees), and the create fails, as runc's does, when it asks
//     for a limit (the first one is named) or names its cgroup (linux.cgroupsPath).
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_files.hpp"
#include "fs.hpp"
#include "minirun/log.hpp"

#include <unistd.h>

#include <set>

namespace minirun::runtime::cgroup {
namespace {

bool writable(const std::string& path) {
    return ::access(path.c_str(), W_OK) == 0;
}

} // namespace

std::vector<RequestedController> requested_controllers(const spec::Resources& resources) {
    const std::string base = "linux.resources.";
    std::vector<RequestedController> wanted;
    if (resources.memory) {
        wanted.push_back({base + "memory", "memory"});
    }
    if (resources.cpu) {
        const spec::CpuResources& cpu = *resources.cpu;
        if (cpu.shares || cpu.quota || cpu.burst || cpu.period || cpu.realtime_runtime ||
            cpu.realtime_period || cpu.idle) {
            wanted.push_back({base + "cpu", "cpu"});
        }
        if (!cpu.cpus.empty() || !cpu.mems.empty()) {
            wanted.push_back({base + (cpu.cpus.empty() ? "cpu.mems" : "cpu.cpus"), "cpuset"});
        }
    }
    if (resources.pids && resources.pids->limit) {
        wanted.push_back({base + "pids", "pids"});
    }
    if (resources.block_io) {
        wanted.push_back({base + "blockIO", "io"});
    }
    if (!resources.hugepage_limits.empty()) {
        wanted.push_back({base + "hugepageLimits", "hugetlb"});
    }
    if (resources.network) {
        // net_cls and net_prio exist in v1 only.
        wanted.push_back({base + "network", "net_cls"});
    }
    if (!resources.rdma.empty()) {
        wanted.push_back({base + "rdma", "rdma"});
    }
    for (const auto& [key, value] : resources.unified) {
        (void)value;
        wanted.push_back({cat(base, "unified[", quoted(key), "]"), key.substr(0, key.find('.'))});
    }
    return wanted;
}

Result<Cgroup> rootless_cgroup(const Host& host, const std::string& relative_path,
                               const std::optional<spec::Resources>& resources,
                               const std::string& fs_prefix, bool explicit_path) {
    std::vector<RequestedController> wanted =
        resources ? requested_controllers(*resources) : std::vector<RequestedController>{};
    const Hierarchy* v2 = nullptr;
    for (const Hierarchy& hierarchy : host.hierarchies) {
        if (hierarchy.v2) {
            v2 = &hierarchy;
        }
    }
    std::string why = "this host has no cgroup v2 tree";
    if (v2 != nullptr) {
        Host only_v2 = host;
        only_v2.hierarchies = {*v2};
        Cgroup cgroup = Cgroup::for_path(only_v2, relative_path, fs_prefix);
        const std::string dir = cgroup.paths().begin()->second;
        // The deepest directory that exists already: the one the container's is made in.
        std::string existing = dir;
        while (existing.size() > 1 && ::access(existing.c_str(), F_OK) != 0) {
            existing = fs::split_parent(existing).first;
        }
        if (writable(existing) && writable(existing + "/cgroup.procs")) {
            auto controllers = files::read(existing, "cgroup.controllers");
            std::set<std::string> have =
                controllers ? files::words(*controllers) : std::set<std::string>{};
            for (const RequestedController& request : wanted) {
                if (!have.contains(request.controller)) {
                    return Error(EPERM,
                                 cat(request.path, ": cannot be applied: the delegated cgroup ",
                                     existing, " has no ", request.controller, " controller"));
                }
            }
            return cgroup;
        }
        why = cat("no cgroup v2 subtree is delegated to uid ", ::geteuid(), " (", existing,
                  " is not writable)");
    }
    // The words after the first colon are runc's (its tests look for them).
    if (!wanted.empty()) {
        return Error(EPERM, cat(wanted.front().path, ": cannot be applied: running rootless, and ",
                                why, ": cannot set ", wanted.front().controller,
                                " limit: container could not join or create cgroup; remove the "
                                "limits or delegate a cgroup"));
    }
    if (explicit_path) {
        return Error(EACCES,
                     cat("linux.cgroupsPath ", quoted(relative_path),
                         ": unable to apply cgroup configuration: running rootless, and ", why,
                         ": permission denied; remove linux.cgroupsPath or "
                         "delegate a cgroup"));
    }
    log::debug(cat("running rootless, and ", why,
                   ": the container stays in its caller's cgroups, without limits"));
    return Cgroup();
}

} // namespace minirun::runtime::cgroup
