#include "plan.hpp"

#include "fs.hpp"
#include "minirun/rootless.hpp"
#include "ns/cgroup_ns.hpp"
#include "ns/namespaces.hpp"
#include "process/systemd.hpp"

#include <algorithm>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

namespace minirun::runtime {

using spec::NamespaceType;

bool Plan::creates(NamespaceType type) const {
    if (type == NamespaceType::time) {
        return new_time_namespace;
    }
    if (type == NamespaceType::pid && new_pid_namespace_in_joined_user) {
        return true;
    }
    auto flag = static_cast<unsigned long>(spec::namespace_kind(type).clone_flag);
    return ((clone_flags | unshare_flags) & flag) != 0;
}

bool Plan::joins_namespace(NamespaceType type) const {
    return std::any_of(joins.begin(), joins.end(),
                       [type](const NamespaceToJoin& join) { return join.type == type; });
}

std::string id_map_text(const std::vector<spec::IdMapping>& mappings) {
    std::string text;
    for (const spec::IdMapping& mapping : mappings) {
        text += cat(mapping.container_id, ' ', mapping.host_id, ' ', mapping.size, '\n');
    }
    return text;
}

Result<MountStep> plan_mount(const spec::Mount& mount, const std::string& bundle) {
    MountStep step;
    step.destination = fs::clean_path(mount.destination);
    step.options = parse_mount_options(mount.options);
    step.fs_type = mount.type;
    // A "bind" type is a bind mount even without the option, as runc reads it.
    if (mount.type == "bind") {
        step.options.bind = true;
    }
    if (step.options.bind) {
        step.fs_type.clear();
        if (mount.source.empty()) {
            return Error(EINVAL, "source: a bind mount needs a source");
        }
        // Bind sources are host paths; relative ones are relative to the bundle.
        step.source = mount.source.front() == '/' ? mount.source : bundle + "/" + mount.source;
        // CVE-2023-25809: a read-only rbind of /sys (what a rootless container without a
        // network namespace of its own gets) leaves its submounts as they were, and so
        // /sys/fs/cgroup writable where a cgroup is delegated to the caller, whom the
        // container's root is. Rootless, such a bind is read-only all the way down.
        if (rootless::active() && step.options.recursive && (step.options.flags & MS_RDONLY) != 0 &&
            (step.source == "/sys" || step.source.starts_with("/sys/"))) {
            step.options.recursive_readonly = true;
        }
        return step;
    }
    if (mount.type.empty()) {
        return Error(EINVAL, "type: required unless the mount is a bind mount");
    }
    step.source = mount.source.empty() ? mount.type : mount.source;
    step.is_cgroup = mount.type == "cgroup";
    return step;
}

Result<std::optional<MountIdMap>> plan_idmap(const spec::Mount& mount, const MountStep& step,
                                             const spec::Spec& spec) {
    // Mappings without "idmap" or "ridmap" (which the spec only says SHOULD be there) mean
    // "idmap", as runc reads them: a runtime must not ignore them silently.
    bool has_mappings = !mount.uid_mappings.empty();
    if (!step.options.idmap && !has_mappings) {
        return std::optional<MountIdMap>{};
    }
    // runc's rule too: the mapping is a property of a mount made from an existing tree;
    // a new filesystem (proc, tmpfs, ...) gets its ids from its own user namespace.
    if (!step.options.bind) {
        return Error(EINVAL, cat("options: idmapped mounts are only supported for bind "
                                 "mounts, not type ",
                                 quoted(mount.type)));
    }
    MountIdMap idmap;
    idmap.recursive = step.options.recursive_idmap;
    if (has_mappings) {
        idmap.uid_map = id_map_text(mount.uid_mappings);
        idmap.gid_map = id_map_text(mount.gid_mappings);
        return std::optional<MountIdMap>{std::move(idmap)};
    }
    // No mappings: the container's user namespace's (the spec's MAY; runc does the same).
    const spec::Namespace* user = spec.linux.find_namespace(NamespaceType::user);
    if (user == nullptr) {
        return Error(EINVAL, "options: idmap without uidMappings and gidMappings needs a user "
                             "namespace in linux.namespaces, whose mappings it takes");
    }
    if (!user->path.empty()) {
        idmap.userns_path = user->path;
    } else {
        idmap.uid_map = id_map_text(spec.linux.uid_mappings);
        idmap.gid_map = id_map_text(spec.linux.gid_mappings);
    }
    return std::optional<MountIdMap>{std::move(idmap)};
}

namespace {

Status plan_namespaces(const spec::Spec& spec, Plan& plan) {
    const auto& namespaces = spec.linux.namespaces;
    unsigned long new_flags = 0;
    for (size_t i = 0; i < namespaces.size(); ++i) {
        const spec::Namespace& ns = namespaces[i];
        int flag = clone_flag_of(ns.type);
        if (!ns.path.empty()) {
            plan.joins.push_back({ns.type, flag, ns.path, i});
        } else if (ns.type == NamespaceType::time) {
            // A time namespace's offsets can only be written before any process is in
            // it, so the init creates it itself (time.cpp) instead of clone() doing it.
            plan.new_time_namespace = true;
        } else {
            new_flags |= static_cast<unsigned long>(flag);
        }
    }
    // Join the user namespace first: its privileges then govern joining the others.
    std::stable_partition(plan.joins.begin(), plan.joins.end(),
                          [](const NamespaceToJoin& j) { return j.type == NamespaceType::user; });

    bool joins_user = plan.joins_namespace(NamespaceType::user);
    bool creates_user = (new_flags & CLONE_NEWUSER) != 0;
    if (joins_user) {
        // New namespaces must belong to the joined user namespace, so the init creates
        // them after setns() instead of clone() creating them before. Not a PID namespace:
        // unshare() would put only the init's children in it, so the parent makes it in
        // the joined user namespace and clones the init into it as pid 1 (pid.hpp).
        plan.new_pid_namespace_in_joined_user = (new_flags & CLONE_NEWPID) != 0;
        plan.pid_joined_by_init = plan.joins_namespace(NamespaceType::pid);
        plan.unshare_flags = new_flags & ~static_cast<unsigned long>(CLONE_NEWPID);
        return {};
    }
    if (creates_user && !plan.joins.empty()) {
        return Error(EINVAL,
                     cat("linux.namespaces[", plan.joins.front().config_index, "]: joining a ",
                         spec::namespace_type_name(plan.joins.front().type),
                         " namespace together with a new user namespace is not "
                         "supported"));
    }
    // A cgroup namespace is made by the init once it is in its cgroups (cgroup_ns.hpp).
    cgroup_ns::unshare_after_joining(new_flags, plan.unshare_flags);
    plan.clone_flags = new_flags;
    plan.wait_for_parent = plan.wait_for_parent || creates_user;
    return {};
}

Status plan_rootfs(const spec::Spec& spec, Plan& plan) {
    const std::string& root = spec.root.path;
    std::string path = root.front() == '/' ? root : plan.bundle + "/" + root;
    auto resolved = fs::real_path(path);
    if (!resolved) {
        return resolved.error().wrap(cat("root.path: rootfs ", quoted(path)));
    }
    struct stat info {};
    if (::stat(resolved->c_str(), &info) < 0 || !S_ISDIR(info.st_mode)) {
        return Error(ENOTDIR, cat("root.path: rootfs ", quoted(path), " is not a directory"));
    }
    plan.rootfs = std::move(*resolved);
    return {};
}

Status plan_mounts(const spec::Spec& spec, const PlanInput& input, Plan& plan) {
    const auto& mounts = spec.mounts;
    plan.setup_dev = true;
    for (size_t i = 0; i < mounts.size(); ++i) {
        auto step = plan_mount(mounts[i], plan.bundle);
        if (!step) {
            return step.error().wrap(cat("mounts[", i, "]"));
        }
        auto idmap = plan_idmap(mounts[i], *step, spec);
        if (!idmap) {
            return idmap.error().wrap(cat("mounts[", i, "]"));
        }
        step->idmap = std::move(*idmap);
        // A destination that names the rootfs's host path means the path inside it, as runc
        // reads it (pathrs.LexicallyStripRoot): "$rootfs/mnt" is /mnt.
        if (plan.rootfs != "/" && fs::at_or_below(plan.rootfs, step->destination)) {
            step->destination = fs::clean_path(
                cat("/", std::string_view(step->destination).substr(plan.rootfs.size())));
        }
        // A /dev bound from elsewhere is the user's: we do not add devices to it.
        if (step->destination == "/dev" && step->options.bind) {
            plan.setup_dev = false;
        }
        plan.mounts.push_back(std::move(*step));
    }
    if (!input.notify_dir.empty()) {
        // runc's mount (notify_socket.go), after the config's: nothing of theirs covers it.
        spec::Mount notify{std::string(systemd::kNotifyDirInContainer), "", input.notify_dir,
                           {"bind", "nosuid", "noexec", "nodev", "ro"}, {}, {}};
        MR_ASSIGN(MountStep step, plan_mount(notify, plan.bundle));
        plan.mounts.push_back(std::move(step));
    }
    const std::string& propagation = spec.linux.rootfs_propagation;
    plan.root_propagation =
        propagation.empty() ? (MS_PRIVATE | MS_REC) : propagation_flags(propagation);
    return {};
}

// What the init does with the container's process and the container's identity: copied
// out of the spec, so that the init never needs it.
void plan_process(const spec::Spec& spec, const PlanInput& input, Plan& plan) {
    plan.process = *spec.process;
    plan.preserve_fds = input.preserve_fds + input.listen_fds;
    if (input.listen_fds > 0) {
        plan.process.env.push_back(cat("LISTEN_FDS=", input.listen_fds));
        plan.process.env.emplace_back("LISTEN_PID=1");
    }
    if (!input.notify_dir.empty()) {
        // Ours replaces the config's (runc appends it, and of duplicates the last wins).
        std::erase_if(plan.process.env,
                      [](const std::string& entry) { return entry.starts_with("NOTIFY_SOCKET="); });
        plan.process.env.push_back(cat("NOTIFY_SOCKET=", systemd::kNotifySocketInContainer));
    }
    plan.oci_version = spec.oci_version;
    plan.hostname = spec.hostname;
    plan.domainname = spec.domainname;
    plan.sysctls = spec.linux.sysctl;
    plan.personality = spec.linux.personality;
    plan.memory_policy = spec.linux.memory_policy;
    plan.devices = spec.linux.devices;
    plan.masked_paths = spec.linux.masked_paths;
    plan.readonly_paths = spec.linux.readonly_paths;
    plan.root_readonly = spec.root.readonly;
    plan.create_container_hooks = spec.hooks.create_container;
    plan.start_container_hooks = spec.hooks.start_container;
}

} // namespace

Result<Plan> make_plan(const spec::Spec& spec, const PlanInput& input) {
    Plan plan;
    plan.id = input.id;
    if (!spec.process) {
        return Error(EINVAL, "process: required to run a container");
    }
    auto bundle = fs::real_path(input.bundle);
    if (!bundle) {
        return bundle.error().wrap("bundle");
    }
    plan.bundle = std::move(*bundle);

    MR_TRY(plan_rootfs(spec, plan));
    MR_TRY(plan_namespaces(spec, plan));
    MR_TRY(plan_mounts(spec, input, plan));
    plan_process(spec, input, plan);

    const spec::Linux& linux = spec.linux;
    if (plan.has_own(NamespaceType::user)) {
        plan.uid_map = id_map_text(linux.uid_mappings);
        plan.gid_map = id_map_text(linux.gid_mappings);
    }
    const spec::Hooks& hooks = spec.hooks;
    plan.runtime_hooks = !hooks.prestart.empty() || !hooks.create_runtime.empty();
    // The init's host pid goes into the state its hooks and the seccomp listener get.
    plan.wait_for_parent = plan.wait_for_parent || !hooks.create_container.empty() ||
                           !hooks.start_container.empty() ||
                           (linux.seccomp && !linux.seccomp->listener_path.empty());
    if (!linux.net_devices.empty()) {
        // The parent moves them into the namespace clone() made (or the one joined by path)
        // while the init waits; one the init unshares later would not exist yet.
        if ((plan.unshare_flags & CLONE_NEWNET) != 0) {
            return Error(EINVAL, "linux.netDevices: not supported with a new network namespace "
                                 "in a joined user namespace");
        }
        plan.wait_for_parent = true;
    }
    for (const auto& [clock, offset] : linux.time_offsets) {
        plan.time_offsets += cat(clock, ' ', offset.secs, ' ', offset.nanosecs, '\n');
    }
    return plan;
}

} // namespace minirun::runtime
