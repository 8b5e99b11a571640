#include "mount.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"
#include "mount_options.hpp"

#include <fcntl.h>
#include <sys/mount.h>

namespace minirun::runtime::mount {
unsigned long setup_propagation(unsigned long configured) {
    bool wants_host_mounts = (configured & (MS_SLAVE | MS_SHARED)) != 0;
    return (wants_host_mounts ? MS_SLAVE : MS_PRIVATE) | MS_REC;
}

Status remount_bind(const std::string& target, unsigned long flags, Syscalls& sys) {
    MR_ASSIGN(unsigned long current, sys.mount_flags_of(target));
    unsigned long locked = locked_mount_flags(current);
    // An explicit atime choice replaces the inherited one; the others are only added.
    constexpr unsigned long kAtime = MS_NOATIME | MS_RELATIME | MS_STRICTATIME;
    if ((flags & kAtime) != 0) {
        locked &= ~kAtime;
    }
    // MS_RDONLY from the source stays only if asked for or locked: a bind of a read-only
    // mount inside a user namespace cannot become writable anyway.
    return sys.mount("", target, "", MS_BIND | MS_REMOUNT | flags | locked, "");
}

Result<UniqueFd> prepare_rootfs(const Plan& plan, Syscalls& sys) {
    // 1. Our copy of the host's mounts still propagates to and from the host where they
    //    are shared. Before anything is mounted, "/" becomes recursively private, or a
    //    slave where the config wants mounts from the host to keep arriving: either way no
    //    mount is shared any more, so nothing made below can reach the host, and
    //    pivot_root(2), which refuses shared mounts, will work. The configured propagation
    //    itself is applied to the container's own root after pivot_root (finalize_root).
    if (explain::enabled()) {
        unsigned long flags = setup_propagation(plan.root_propagation);
        explain::step(cat("mount(\"/\", ", explain::mount_flag_names(flags),
                          "): nothing mounted from here on reaches the host"));
    }
    MR_TRY_WRAP(sys.mount("", "/", "", setup_propagation(plan.root_propagation), ""),
                "linux.rootfsPropagation: set propagation of /");

    // 2. pivot_root(2) needs the new root to be a mount point; a recursive bind of the
    //    rootfs onto itself makes it one, and carries along mounts already below it.
    if (explain::enabled()) {
        explain::step(cat("mount(", quoted(plan.rootfs),
                          " onto itself, MS_BIND|MS_REC): a mount point for pivot_root"));
    }
    MR_TRY_WRAP(sys.mount(plan.rootfs, plan.rootfs, "", MS_BIND | MS_REC, ""),
                "bind the rootfs onto itself");
    // Opened after the bind, so the fd is the root of the new mount, and from here on
    // every path inside the rootfs is resolved relative to it.
    UniqueFd root(::open(plan.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) {
        return Error::from_errno(cat("open rootfs ", quoted(plan.rootfs)));
    }

    // 3. mounts[] in the order given: later entries may mount inside earlier ones
    //    (/dev, then /dev/pts).
    for (size_t i = 0; i < plan.mounts.size(); ++i) {
        const MountStep& step = plan.mounts[i];
        MR_TRY_WRAP(mount_entry(plan, root.get(), step, sys),
                    cat("mounts[", i, "] on ", step.destination));
    }

    // 4. Devices after the mounts, so they land in the /dev tmpfs, not the rootfs below.
    if (plan.setup_dev) {
        MR_TRY_WRAP(create_devices(plan, root.get(), sys), "devices");
    }

    // 5. Like runc, a missing cwd is created; while we still hold the rootfs fd it is
    //    created without following any symlink out of the rootfs.
    MR_TRY_WRAP(fs::mkdir_all_in_root(root.get(), plan.spec.process->cwd, 0755), "process.cwd");
    return root;
}

Status pivot_into(int root_fd, Syscalls& sys) {
    // pivot_root(".", ".") stacks the old root on top of the new one at "/"; no
    // directory for it is needed inside the rootfs.
    MR_TRY(sys.fchdir(root_fd));
    explain::step(R"(pivot_root(".", "."): the rootfs becomes /, the old root lies on it)");
    MR_TRY(sys.pivot_root(".", "."));
    // The old root may be shared with the host (rootfsPropagation "shared"): made a
    // slave, its detach below cannot propagate to and unmount anything on the host.
    MR_TRY_WRAP(sys.mount("", ".", "", MS_SLAVE | MS_REC, ""), "make the old root a slave");
    explain::step("umount2(old root, MNT_DETACH): the host's file system is out of reach");
    MR_TRY_WRAP(sys.umount2(".", MNT_DETACH), "detach the old root");
    return sys.chdir("/");
}

Status finalize_root(const Plan& plan, Syscalls& sys) {
    // The configured propagation of the container's root, now that it is "/": shared
    // here means shared among the container's own mounts, never with the host's.
    if (plan.root_propagation != setup_propagation(plan.root_propagation)) {
        MR_TRY_WRAP(sys.mount("", "/", "", plan.root_propagation, ""), "linux.rootfsPropagation");
    }
    if (plan.spec.root.readonly) {
        explain::step(R"(mount("/", MS_BIND|MS_REMOUNT|MS_RDONLY): root.readonly)");
        MR_TRY_WRAP(remount_bind("/", MS_RDONLY, sys), "root.readonly");
    }
    return {};
}

} // namespace minirun::runtime::mount
