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
//   - otherwise the container stays in its caller's cgroups, with a warning when the
//     config asks for no limit but names a cgroupsPath, and an error naming the first
//     limit when it asks for one. A config that asks for neither (rootless podman on a
//     cgroup v1 host, like crun's) gets no warning: during create the runtime's stderr is
//     the container's, and the line would end up in its output and `podman logs`.
#include "cgroup.hpp"
#include "cgroup_files.hpp"
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
    if (resources.pids) {
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
                               const std::string& fs_prefix, bool path_asked) {
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
    if (!wanted.empty()) {
        return Error(EPERM, cat(wanted.front().path, ": cannot be applied: running rootless, and ",
                                why, "; remove the limits or delegate a cgroup"));
    }
    std::string stays = cat("running rootless, and ", why,
                            ": the container stays in its caller's cgroups, without limits");
    if (path_asked) {
        log::warning(stays);
    } else {
        log::debug(stays);
    }
    return Cgroup();
}

} // namespace minirun::runtime::cgroup
