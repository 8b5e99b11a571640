#include "create_resources.hpp"

#include "cgroup/cgroup_devices.hpp"
#include "minirun/log.hpp"
#include "minirun/rootless.hpp"

#include <unistd.h>

#include <algorithm>

namespace minirun::runtime {

PendingState::~PendingState() {
    if (dir_ == nullptr) {
        return;
    }
    if (auto removed = dir_->remove(); !removed) {
        log::warning(
            cat("undo a failed create: remove the state directory: ", removed.error().message()));
    }
}

PendingCgroup::~PendingCgroup() {
    if (cgroup_ == nullptr) {
        return;
    }
    if (auto removed = cgroup_->remove(); !removed) {
        log::warning(cat("undo a failed create: remove the cgroups: ", removed.error().message()));
    }
}

// The container's cgroups, made and limited (cgroup*.cpp). Rootless, only a cgroup v2
// subtree delegated to the caller can hold them (cgroup_rootless.cpp).
Result<cgroup::Cgroup> make_cgroup(const spec::Linux& linux, const CreateOptions& options,
                                   cgroup::Host* host_out) {
    // An engine that manages the cgroups itself (podman --cgroups=disabled) keeps the
    // container where it put the caller, as crun does.
    if (options.no_cgroups) {
        return cgroup::Cgroup();
    }
    MR_ASSIGN(cgroup::Host host, cgroup::detect_host());
    if (host.hierarchies.empty()) {
        return Error(ENOENT, "no cgroup hierarchy is mounted under /sys/fs/cgroup");
    }
    if (options.systemd_cgroup) {
        log::warning("--systemd-cgroup: systemd is not asked for a scope; the "
                     "\"slice:prefix:name\" path is mapped onto cgroupfs directly");
    }
    // A relative path starts at our own cgroup; they agree across hierarchies in practice
    // (a process is moved into all of them at once), the cgroup2 one is preferred.
    std::string own_path = "/";
    for (const char* key : {"", "unified"}) {
        if (auto it = host.own_paths.find(key); it != host.own_paths.end()) {
            own_path = it->second;
            break;
        }
    }
    if (own_path == "/" && !host.own_paths.empty()) {
        own_path = host.own_paths.begin()->second;
    }
    MR_ASSIGN(std::string path, cgroup::resolve_path(linux.cgroups_path, options.id,
                                                     options.systemd_cgroup, own_path));
    if (rootless::active()) {
        MR_ASSIGN(cgroup::Cgroup cgroup, cgroup::rootless_cgroup(host, path, linux.resources, "",
                                                                 !linux.cgroups_path.empty()));
        // Neither a cgroup nor a pid namespace of its own: nothing holds all its processes,
        // so `kill` cannot reach them all. runc 1.3 warns in these words (create.bats).
        const bool private_pid = std::any_of(
            linux.namespaces.begin(), linux.namespaces.end(), [](const spec::Namespace& ns) {
                return ns.type == spec::NamespaceType::pid && ns.path.empty();
            });
        if (cgroup.empty() && !private_pid) {
            log::warning("Creating a rootless container with no cgroup and no private pid "
                         "namespace. Such configuration is strongly discouraged (as it is "
                         "impossible to properly kill all container's processes)");
        }
        return cgroup;
    }
    auto cgroup = cgroup::Cgroup::for_path(host, path);
    if (host_out != nullptr) {
        *host_out = std::move(host);
    }
    return cgroup;
}

Status limit_cgroup(const spec::Linux& linux, cgroup::Cgroup& cgroup) {
    if (cgroup.empty()) {
        return {};
    }
    spec::Resources resources = linux.resources.value_or(spec::Resources{});
    // Rootless, the device allow-list cannot be attached (a BPF program needs the host's
    // CAP_SYS_ADMIN), and is not needed: no device node can be made, only host nodes the
    // caller may open anyway are bind-mounted (mount_devices.cpp).
    if (!rootless::active()) {
        resources.devices = cgroup::effective_device_rules(linux);
    }
    MR_TRY_WRAP(cgroup.apply(resources), "linux.resources");
    return {};
}

Status make_rdt_group(const spec::Linux& linux, const std::string& id,
                      std::optional<intel_rdt::PendingGroup>& group) {
    if (!linux.intel_rdt) {
        return {};
    }
    // The spec: without a mounted resctrl in the runtime's mount namespace, an error.
    std::string root = intel_rdt::find_root();
    if (root.empty()) {
        return Error(ENODEV, cat("linux.intelRdt: cannot be applied: this host has no resctrl "
                                 "filesystem mounted (",
                                 intel_rdt::kDefaultRoot, ")"));
    }
    MR_ASSIGN(auto made, intel_rdt::prepare(root, *linux.intel_rdt, id));
    group.emplace(std::move(made));
    return {};
}

} // namespace minirun::runtime
