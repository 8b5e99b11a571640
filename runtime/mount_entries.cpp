// mounts[]: one entry at a time, each onto a destination resolved inside the rootfs.
#include "fs.hpp"
#include "mount.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>

namespace minirun::runtime::mount {
namespace {

// /proc and /sys are where a runtime later writes security settings (sysctl, masks); a
// symlink there could redirect those writes into the rootfs or elsewhere
// (CVE-2023-27561 class), so their destinations must be real directories.
bool needs_real_directory(const MountStep& step) {
    return step.fs_type == "proc" || step.fs_type == "sysfs";
}

Status mount_bind(int root_fd, const MountStep& step, Syscalls& sys) {
    struct stat source {};
    if (::stat(step.source.c_str(), &source) < 0) {
        return Error::from_errno(cat("source ", quoted(step.source)));
    }
    // The mount point must be of the source's kind: a directory for a directory, a file
    // (any non-directory can be bound onto one) otherwise.
    auto target = S_ISDIR(source.st_mode)
                      ? fs::mkdir_all_in_root(root_fd, step.destination, 0755)
                      : fs::ensure_file_in_root(root_fd, step.destination, 0644);
    if (!target) {
        return target.error();
    }
    unsigned long bind_flags = step.options.recursive ? (MS_BIND | MS_REC) : MS_BIND;
    MR_TRY(sys.mount(step.source, fs::fd_path(target->get()), "", bind_flags, ""));

    // The kernel ignores MS_RDONLY and friends on the bind itself; they take a remount of
    // the new mount, which a fresh lookup from the root now reaches.
    unsigned long flags = step.options.flags & ~MS_REMOUNT;
    if (flags != 0) {
        MR_ASSIGN(UniqueFd mounted, fs::open_in_root(root_fd, step.destination, O_PATH));
        MR_TRY(remount_bind(fs::fd_path(mounted.get()), flags, sys));
    }
    return {};
}

Status mount_filesystem(int root_fd, const MountStep& step, Syscalls& sys) {
    MR_ASSIGN(UniqueFd target, fs::mkdir_all_in_root(root_fd, step.destination, 0755));
    if (needs_real_directory(step)) {
        auto real =
            fs::open_in_root(root_fd, step.destination, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        if (!real) {
            return Error(ELOOP, cat("destination must be a directory, not a symlink"));
        }
        target = std::move(*real);
    }
    return sys.mount(step.source, fs::fd_path(target.get()), step.fs_type, step.options.flags,
                     step.options.data);
}

} // namespace

Status mount_entry(const Plan& plan, int root_fd, const MountStep& step, Syscalls& sys) {
    if (step.is_cgroup) {
        return mount_cgroup(plan, root_fd, step, sys);
    }
    if (step.options.bind) {
        MR_TRY(mount_bind(root_fd, step, sys));
    } else {
        auto mounted = mount_filesystem(root_fd, step, sys);
        // sysfs may only be mounted by the owner of the network namespace. Without one of
        // its own, a container in a user namespace gets the host's /sys bound read-only,
        // as runc does.
        if (!mounted && step.fs_type == "sysfs" && mounted.error().errno_value() == EPERM &&
            plan.creates(spec::NamespaceType::user) &&
            !plan.has_own(spec::NamespaceType::network)) {
            MountStep bind = step;
            bind.source = "/sys";
            bind.fs_type.clear();
            bind.options.bind = true;
            bind.options.recursive = true;
            bind.options.flags |= MS_RDONLY;
            MR_TRY(mount_bind(root_fd, bind, sys));
        } else if (!mounted) {
            return mounted.error();
        }
    }
    if (step.options.propagation != 0) {
        MR_ASSIGN(UniqueFd mounted, fs::open_in_root(root_fd, step.destination, O_PATH));
        MR_TRY_WRAP(sys.mount("", fs::fd_path(mounted.get()), "", step.options.propagation, ""),
                    "set propagation");
    }
    return {};
}

} // namespace minirun::runtime::mount
