// The "cgroup" entry of mounts[]: the container's view of the cgroup hierarchies.
//
// There is no single "cgroup" filesystem to mount. On a unified (v2) host it is one
// cgroup2 mount. On a v1 or hybrid host (this project's CI) each controller is its own
// hierarchy, so, like runc, mini-run puts a tmpfs at the destination and binds into it,
// per hierarchy, the directory of the cgroup the container is in (cpu, memory, ...,
// and "unified" for the cgroup2 part of a hybrid host). `create` usually knows those
// directories already (planned_cgroup_binds); otherwise the init reads its mountinfo and
// /proc/self/cgroup.
#include "cgroup/cgroup.hpp"
#include "fs.hpp"
#include "minirun/rootless.hpp"
#include "mount/mount.hpp"
#include "mountinfo.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <optional>

namespace minirun::runtime::mount {
namespace {

// Which of our /proc/self/cgroup lines belongs to this hierarchy.
std::optional<std::string> own_path_in(const fs::MountInfo& hierarchy,
                                       const std::vector<fs::CgroupMembership>& memberships) {
    for (const auto& membership : memberships) {
        if (hierarchy.fs_type == "cgroup2") {
            if (membership.hierarchy_id == 0) {
                return membership.path;
            }
            continue;
        }
        if (membership.hierarchy_id == 0 || membership.controllers.empty()) {
            continue;
        }
        bool all = true;
        for (std::string_view controller : fs::split(membership.controllers, ',')) {
            all = all && fs::has_option(hierarchy.super_options, controller);
        }
        if (all) {
            return membership.path;
        }
    }
    return std::nullopt;
}

// The mount data naming a v1 hierarchy's controllers: its superblock options without
// the read-write flag ("rw,cpu,cpuacct" -> "cpu,cpuacct").
std::string controllers_of(const fs::MountInfo& hierarchy) {
    std::string out;
    for (std::string_view option : fs::split(hierarchy.super_options, ',')) {
        if (!option.empty() && option != "rw" && option != "ro") {
            out += out.empty() ? "" : ",";
            out += option;
        }
    }
    return out;
}

// Host directory of our cgroup in `hierarchy`, given its mount root (usually "/").
std::string host_directory(const fs::MountInfo& hierarchy, const std::string& own_path) {
    std::string relative = own_path;
    if (hierarchy.root != "/" && relative.starts_with(hierarchy.root)) {
        relative = relative.substr(hierarchy.root.size());
    }
    return fs::clean_path(hierarchy.mount_point + "/" + relative);
}

Status bind_hierarchy(int root_fd, const std::string& destination, const std::string& source,
                      unsigned long flags, Syscalls& sys) {
    MR_ASSIGN(UniqueFd target, fs::mkdir_all_in_root(root_fd, destination, 0755));
    MR_TRY(sys.mount_on(source, target.get(), "", MS_BIND | MS_REC, ""));
    MR_ASSIGN(UniqueFd mounted, fs::open_in_root(root_fd, destination, O_PATH));
    return remount_bind(mounted.get(), flags, sys);
}

// A hierarchy's directory in the fresh tmpfs: ours alone (no other process sees this
// mount namespace yet, so nothing else can have put a symlink there), so it is made and
// opened by its one name, relative to the tmpfs, without a walk from the root.
Result<UniqueFd> hierarchy_dir(int tmpfs_fd, const std::string& name) {
    if (::mkdirat(tmpfs_fd, name.c_str(), 0755) != 0 && errno != EEXIST) {
        return Error::from_errno(cat("mkdir ", name));
    }
    UniqueFd dir(::openat(tmpfs_fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) {
        return Error::from_errno(cat("open ", name));
    }
    return dir;
}

// The same as bind_hierarchy, into the tmpfs.
Status bind_into_tmpfs(int tmpfs_fd, const std::string& name, const std::string& source,
                       unsigned long flags, Syscalls& sys) {
    MR_ASSIGN(UniqueFd target, hierarchy_dir(tmpfs_fd, name));
    MR_TRY(sys.mount_on(source, target.get(), "", MS_BIND | MS_REC, ""));
    // Looked up again: `target` is still the directory below the bind, the name now leads
    // to the bind's root, which is what the remount must name.
    UniqueFd mounted(::openat(tmpfs_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!mounted) {
        return Error::from_errno(cat("open ", name));
    }
    return remount_bind(mounted.get(), flags, sys);
}

// The tmpfs that holds one directory per hierarchy on a v1 or hybrid host; its fd.
Result<UniqueFd> mount_holder(int root_fd, const MountStep& step, unsigned long flags,
                              Syscalls& sys) {
    MR_ASSIGN(UniqueFd target, fs::mkdir_all_in_root(root_fd, step.destination, 0755));
    MR_TRY(sys.mount_on("tmpfs", target.get(), "tmpfs", flags & ~MS_RDONLY, "mode=755"));
    return fs::open_in_root(root_fd, step.destination, O_PATH | O_DIRECTORY);
}

// Read-only at last, when asked: the directories in it had to be made first.
Status finish_holder(const UniqueFd& tmpfs, unsigned long flags, Syscalls& sys) {
    if ((flags & MS_RDONLY) != 0) {
        MR_TRY(sys.mount_on("", tmpfs.get(), "", MS_REMOUNT | flags, "mode=755"));
    }
    return {};
}

} // namespace

std::vector<CgroupBind> planned_cgroup_binds(const Plan& plan, const cgroup::Host& host,
                                             const cgroup::Cgroup& cgroup) {
    // Only where the init's view is sure to be ours: it joins the container's cgroup in
    // every hierarchy the entry shows, and no cgroup namespace asks for fresh mounts.
    if (host.layout == cgroup::Layout::unified || !host.mounts_are_hierarchies ||
        plan.has_own(spec::NamespaceType::cgroup)) {
        return {};
    }
    std::vector<CgroupBind> binds;
    for (const auto& hierarchy : host.hierarchies) {
        auto dir = cgroup.paths().find(hierarchy.key);
        if (dir == cgroup.paths().end()) {
            return {};
        }
        binds.push_back({hierarchy.key, dir->second});
    }
    return binds;
}

Status mount_cgroup(const Plan& plan, const std::vector<CgroupBind>& binds, int root_fd,
                    const MountStep& step, Syscalls& sys) {
    unsigned long flags = step.options.flags & ~MS_REMOUNT;
    // CVE-2023-25809 class: rootless, the cgroups bound here are the caller's own, and a
    // delegated one is writable by the container's root, which is the caller: limits the
    // container could lift. Always read-only then, whatever the config asks.
    if (rootless::active()) {
        flags |= MS_RDONLY;
    }
    if (!binds.empty()) {
        MR_ASSIGN(UniqueFd tmpfs, mount_holder(root_fd, step, flags, sys));
        for (const CgroupBind& bind : binds) {
            MR_TRY_WRAP(bind_into_tmpfs(tmpfs.get(), bind.name, bind.source, flags, sys),
                        cat("cgroup hierarchy ", bind.name));
        }
        return finish_holder(tmpfs, flags, sys);
    }

    // Otherwise as the init sees it: its mounts and its memberships.
    MR_ASSIGN(auto mounts, fs::read_mountinfo());
    MR_ASSIGN(std::string cgroup_text, fs::read_file("/proc/self/cgroup"));
    auto memberships = fs::parse_proc_cgroup(cgroup_text);

    for (const auto& info : mounts) {
        if (cgroup::is_unified_root(info)) {
            // Unified host. With a cgroup namespace of its own the container's mount shows
            // its cgroup as the root; without one, a fresh mount shows the whole tree, and
            // where even that is refused (a user namespace) we bind our own cgroup.
            MR_ASSIGN(UniqueFd target, fs::mkdir_all_in_root(root_fd, step.destination, 0755));
            auto mounted = sys.mount_on("cgroup2", target.get(), "cgroup2", flags, "");
            if (mounted || mounted.error().errno_value() != EPERM) {
                return mounted;
            }
            auto own = own_path_in(info, memberships);
            return bind_hierarchy(root_fd, step.destination,
                                  host_directory(info, own.value_or("/")), flags, sys);
        }
    }

    // v1 or hybrid: a tmpfs to hold one directory per hierarchy.
    MR_ASSIGN(UniqueFd tmpfs, mount_holder(root_fd, step, flags, sys));
    for (const auto& info : mounts) {
        if (!cgroup::is_hierarchy_mount(info)) {
            continue;
        }
        auto own = own_path_in(info, memberships);
        if (!own) {
            continue;
        }
        std::string name = fs::split_parent(info.mount_point).second;
        // With a cgroup namespace of its own, a fresh mount of the hierarchy shows the
        // container's cgroup as its root, which is the point of the namespace.
        if (plan.has_own(spec::NamespaceType::cgroup)) {
            MR_ASSIGN(UniqueFd sub, hierarchy_dir(tmpfs.get(), name));
            auto mounted = sys.mount_on("cgroup", sub.get(), info.fs_type, flags,
                                        info.fs_type == "cgroup" ? controllers_of(info) : "");
            if (mounted) {
                continue;
            }
            if (mounted.error().errno_value() != EPERM) {
                return mounted.error().wrap(cat("cgroup hierarchy ", name));
            }
        }
        MR_TRY_WRAP(bind_into_tmpfs(tmpfs.get(), name, host_directory(info, *own), flags, sys),
                    cat("cgroup hierarchy ", name));
    }
    return finish_holder(tmpfs, flags, sys);
}

} // namespace minirun::runtime::mount
