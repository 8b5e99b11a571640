// linux.maskedPaths and linux.readonlyPaths: parts of the container's /proc and /sys that
// must not be read or written (kernel memory, SysRq, firmware, ...).
//
// After pivot_root, so that the paths name the container's own procfs and sysfs. A masked
// file is covered by a bind of /dev/null, a masked directory by an empty read-only tmpfs
// (one, bound onto each: mask_directory);
// the /dev/null is checked to really be the null device (1:3) first, or a rootfs or
// mounts[] entry that made it something else (a host file) would be bound over the path
// instead (CVE-2025-31133 class).
#include "fs.hpp"
#include "minirun/explain.hpp"
#include "mount/mount.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace minirun::runtime::mount {
namespace {

// The path below the root, or an invalid fd when it does not exist (nothing to protect).
Result<UniqueFd> existing(int root_fd, const std::string& path) {
    auto fd = fs::open_in_root(root_fd, path, O_PATH | O_NOFOLLOW);
    if (!fd && fd.error().errno_value() == ENOENT) {
        return UniqueFd();
    }
    return fd;
}

Result<UniqueFd> verified_dev_null(int root_fd) {
    MR_ASSIGN(UniqueFd fd, fs::open_in_root(root_fd, "/dev/null", O_PATH, RESOLVE_NO_SYMLINKS));
    struct stat info {};
    if (::fstat(fd.get(), &info) < 0) {
        return Error::from_errno("stat /dev/null");
    }
    if (!S_ISCHR(info.st_mode) || info.st_rdev != makedev(1, 3)) {
        return Error(EPERM, "/dev/null in the container is not the null device");
    }
    return fd;
}

UniqueFd open_root() {
    return UniqueFd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
}

} // namespace

Status mask_paths(const Plan& plan, Syscalls& sys) {
    if (plan.masked_paths.empty()) {
        return {};
    }
    UniqueFd root = open_root();
    if (!root) {
        return Error::from_errno("open /");
    }
    return mask_paths_below(root.get(), plan.masked_paths, sys);
}

namespace {

// A masked directory: one read-only tmpfs shared by all of them, as runc 1.3 does (mask.bats
// "directories share tmpfs"): the first gets the tmpfs (a block and an inode at most:
// nothing can be written to it anyway), each later one a bind of it, which is read-only as
// its source is. Fewer superblocks, and the same st_dev for every masked directory. Should a
// bind fail, the rest get a tmpfs each, as runc falls back.
Status mask_directory(int root_fd, const std::string& path, int target, UniqueFd& shared,
                      bool& bind_failed, Syscalls& sys) {
    if (shared && !bind_failed) {
        if (explain::enabled()) {
            explain::step(cat("mount(the masking tmpfs on ", path, ", MS_BIND): masked"));
        }
        if (sys.mount_on(fs::fd_path(shared.get()), target, "", MS_BIND, "")) {
            return {};
        }
        bind_failed = true;
    }
    if (explain::enabled()) {
        explain::step(cat("mount(\"tmpfs\" on ", path, ", MS_RDONLY): masked"));
    }
    MR_TRY(sys.mount_on("tmpfs", target, "tmpfs", MS_RDONLY, "nr_blocks=1,nr_inodes=1"));
    if (!shared && !bind_failed) {
        // A fresh lookup reaches the tmpfs now on the path (the target fd is beneath it).
        MR_ASSIGN(shared, fs::open_in_root(root_fd, path, O_PATH | O_NOFOLLOW));
    }
    return {};
}

} // namespace

Status mask_paths_below(int root_fd, const std::vector<std::string>& paths, Syscalls& sys) {
    UniqueFd dev_null;
    UniqueFd shared_mask;
    bool bind_failed = false;
    for (size_t i = 0; i < paths.size(); ++i) {
        std::string where = cat("linux.maskedPaths[", i, "] ", paths[i]);
        MR_ASSIGN(UniqueFd target, existing(root_fd, paths[i]));
        if (!target) {
            continue;
        }
        struct stat info {};
        if (::fstat(target.get(), &info) < 0) {
            return Error::from_errno(where);
        }
        if (S_ISDIR(info.st_mode)) {
            MR_TRY_WRAP(
                mask_directory(root_fd, paths[i], target.get(), shared_mask, bind_failed, sys),
                where);
            continue;
        }
        if (!dev_null) {
            auto verified = verified_dev_null(root_fd);
            if (!verified) {
                return verified.error().wrap(where);
            }
            dev_null = std::move(*verified);
        }
        if (explain::enabled()) {
            explain::step(cat("mount(\"/dev/null\" on ", paths[i], ", MS_BIND): masked"));
        }
        MR_TRY_WRAP(sys.mount_on(fs::fd_path(dev_null.get()), target.get(), "", MS_BIND, ""),
                    where);
    }
    return {};
}

Status make_paths_readonly(const Plan& plan, Syscalls& sys) {
    const auto& paths = plan.readonly_paths;
    if (paths.empty()) {
        return {};
    }
    UniqueFd root = open_root();
    if (!root) {
        return Error::from_errno("open /");
    }
    for (size_t i = 0; i < paths.size(); ++i) {
        std::string where = cat("linux.readonlyPaths[", i, "] ", paths[i]);
        MR_ASSIGN(UniqueFd target, existing(root.get(), paths[i]));
        if (!target) {
            continue;
        }
        // A bind of the path onto itself makes it a mount of its own, which alone can then
        // be made read-only.
        if (explain::enabled()) {
            explain::step(cat("mount(", paths[i],
                              " onto itself, MS_BIND|MS_REC, then MS_REMOUNT|MS_RDONLY)"));
        }
        MR_TRY_WRAP(sys.mount_on(fs::fd_path(target.get()), target.get(), "", MS_BIND | MS_REC, ""),
                    where);
        MR_ASSIGN(UniqueFd mounted, fs::open_in_root(root.get(), paths[i], O_PATH | O_NOFOLLOW));
        MR_TRY_WRAP(remount_bind(mounted.get(), MS_RDONLY, sys), where);
    }
    return {};
}

} // namespace minirun::runtime::mount
