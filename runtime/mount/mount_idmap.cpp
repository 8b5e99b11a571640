// Idmapped bind mounts (runtime-spec 1.2: mounts[].uidMappings/gidMappings, "idmap",
// "ridmap"): the files of the source appear with their owners translated through a user
// namespace's mappings, without a chown on disk.
//
// mount_setattr(2) MOUNT_ATTR_IDMAP wants CAP_SYS_ADMIN in the user namespace the source's
// filesystem was mounted in, the host's for the host's ext4 or tmpfs: the container's init,
// root only in its own user namespace, could not do it. So the parent, still the host's
// root, idmaps the detached copies open_bind_sources() made, before clone(); the init then
// moves them into place like any other bind (mount_entries.cpp). A source opened late (one
// inside the rootfs, mount_sources.cpp) is idmapped by the parent's helper, host's root as
// well, when the init asks for it. The user namespace a mount
// maps through is one made for the purpose with the mappings it needs (a short-lived
// child's, see make_user_namespace), or the joined one the config names. Once set, the
// mapping belongs to the mount: the namespace's fd, and its child, are gone before clone().
#include "fs.hpp"
#include "minirun/explain.hpp"
#include "mount/mount.hpp"
#include "process/child.hpp"

#include <fcntl.h>

namespace minirun::runtime::mount {
namespace {

// A user namespace with these maps (uid_map(5) text), as an fd: a child is cloned into a
// new one (it lives as long as it does, or as long as an fd opened on its
// /proc/<pid>/ns/user), its maps are written from here (the host's root needs no setgroups
// "deny"), its /proc/<pid>/ns/user is opened, and the child is killed again.
Result<UniqueFd> make_user_namespace(const MountIdMap& idmap, Syscalls& sys) {
    ScopedChild holder; // killed and reaped on the way out
    MR_ASSIGN(pid_t pid, sys.clone_userns_holder());
    holder.reset(pid);
    // Its own procfs handle (procfs.hpp): the parent, or its helper in the init's mount
    // namespace (mount_sources.cpp), before anything of the container's runs.
    MR_ASSIGN(procfs::Handle proc, procfs::Handle::open());
    MR_TRY_WRAP(sys.write_proc(proc, cat(pid, "/uid_map"), idmap.uid_map), "uidMappings");
    MR_TRY_WRAP(sys.write_proc(proc, cat(pid, "/gid_map"), idmap.gid_map), "gidMappings");
    // ns/user is a magic link, which the handle does not follow: its directory comes from
    // the handle, the link is followed from there.
    MR_ASSIGN(UniqueFd ns_dir, proc.open_file(cat(pid, "/ns"), O_PATH | O_DIRECTORY));
    UniqueFd ns(::openat(ns_dir.get(), "user", O_RDONLY | O_CLOEXEC));
    if (!ns) {
        return Error::from_errno(cat("open /proc/", pid, "/ns/user"));
    }
    return ns;
}

std::string describe_namespace(const MountIdMap& idmap) {
    if (!idmap.userns_path.empty()) {
        return cat("the joined user namespace ", quoted(idmap.userns_path));
    }
    auto one_line = [](std::string text) {
        while (!text.empty() && text.back() == '\n') {
            text.pop_back();
        }
        for (char& c : text) {
            c = c == '\n' ? ',' : c;
        }
        return text;
    };
    return cat("a user namespace with uid_map ", quoted(one_line(idmap.uid_map)), " and gid_map ",
               quoted(one_line(idmap.gid_map)));
}

bool same_namespace(const MountIdMap& a, const MountIdMap& b) {
    return a.userns_path == b.userns_path && a.uid_map == b.uid_map && a.gid_map == b.gid_map;
}

// The user namespace `idmap` maps through: the joined one, or one made for it.
Result<UniqueFd> namespace_for(const MountIdMap& idmap, const std::string& context, Syscalls& sys) {
    if (idmap.userns_path.empty()) {
        auto created = make_user_namespace(idmap, sys);
        if (!created) {
            return created.error().wrap(context);
        }
        return std::move(*created);
    }
    UniqueFd joined(::open(idmap.userns_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!joined) {
        return Error::from_errno(
            cat(context, ": open the user namespace ", quoted(idmap.userns_path)));
    }
    return joined;
}

Status idmap_through(const MountStep& step, const std::string& context, int source, int userns,
                     Syscalls& sys) {
    const MountIdMap& idmap = *step.idmap;
    if (explain::enabled()) {
        explain::step(cat("mount_setattr(open_tree(", quoted(step.source), "), ",
                          idmap.recursive ? "AT_RECURSIVE, " : "", "MOUNT_ATTR_IDMAP, ",
                          describe_namespace(idmap),
                          "): the bind shows its files' owners mapped, by the host's root, as "
                          "only the filesystem's owner may"));
    }
    auto mapped = sys.mount_setattr_idmap(source, idmap.recursive, userns);
    if (!mapped) {
        // EINVAL: a filesystem without idmapped mount support (proc, sysfs, ...: no
        // FS_ALLOW_IDMAP), or an rbind whose tree holds one.
        return Error::from_errno(mapped.error().errno_value(),
                                 cat(context, ": cannot idmap ", quoted(step.source),
                                     mapped.error().errno_value() == EINVAL
                                         ? " (its filesystem does not support idmapped "
                                           "mounts)"
                                         : ""));
    }
    return {};
}

} // namespace

Status idmap_bind_sources(const Plan& plan, std::vector<UniqueFd>& sources, Syscalls& sys) {
    // Mounts with the same mappings share one user namespace.
    std::vector<std::pair<const MountIdMap*, UniqueFd>> namespaces;
    for (size_t i = 0; i < plan.mounts.size(); ++i) {
        const MountStep& step = plan.mounts[i];
        if (!step.idmap || !sources.at(i)) {
            continue; // not idmapped, or opened late (mount_sources.cpp idmaps it then)
        }
        std::string context = cat("mounts[", i, "] on ", step.destination);
        int userns = -1;
        for (const auto& [known, fd] : namespaces) {
            if (same_namespace(*known, *step.idmap)) {
                userns = fd.get();
            }
        }
        if (userns < 0) {
            MR_ASSIGN(UniqueFd made, namespace_for(*step.idmap, context, sys));
            userns = made.get();
            namespaces.emplace_back(&*step.idmap, std::move(made));
        }
        MR_TRY(idmap_through(step, context, sources[i].get(), userns, sys));
    }
    return {};
}

Status idmap_source(const Plan& plan, size_t index, int source, Syscalls& sys) {
    const MountStep& step = plan.mounts.at(index);
    if (!step.idmap) {
        return {};
    }
    std::string context = cat("mounts[", index, "] on ", step.destination);
    MR_ASSIGN(UniqueFd userns, namespace_for(*step.idmap, context, sys));
    return idmap_through(step, context, source, userns.get(), sys);
}

} // namespace minirun::runtime::mount
