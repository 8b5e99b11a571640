// mounts[]: one entry at a time, each onto a destination resolved inside the rootfs.
#include "fs.hpp"
#include "minirun/explain.hpp"
#include "mount.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

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

Status copy_file_contents(int from_fd, int to_fd) {
    char buffer[65536];
    for (;;) {
        ssize_t n = ::read(from_fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return check_syscall(static_cast<int>(n), "read");
        }
        for (ssize_t done = 0; done < n;) {
            ssize_t written = ::write(to_fd, buffer + done, static_cast<size_t>(n - done));
            if (written < 0 && errno != EINTR) {
                return Error::from_errno("write");
            }
            done += written > 0 ? written : 0;
        }
    }
}

// Copies the entries of directory `from_dir` into `to_dir`, recursively, keeping each one's
// kind, mode and owner (what runc and crun do for "tmpcopyup").
Status copy_tree(int from_dir, int to_dir) {
    int listing_fd = ::openat(from_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listing_fd < 0) {
        return Error::from_errno("open");
    }
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::fdopendir(listing_fd), ::closedir);
    if (!dir) {
        ::close(listing_fd);
        return Error::from_errno("fdopendir");
    }
    while (const dirent* entry = ::readdir(dir.get())) {
        const char* name = entry->d_name;
        if (std::string_view(name) == "." || std::string_view(name) == "..") {
            continue;
        }
        struct stat st {};
        MR_TRY(check_syscall(::fstatat(from_dir, name, &st, AT_SYMLINK_NOFOLLOW), name));
        mode_t mode = st.st_mode & 07777;
        if (S_ISDIR(st.st_mode)) {
            MR_TRY(check_syscall(::mkdirat(to_dir, name, 0700), name));
            UniqueFd from(
                ::openat(from_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            UniqueFd to(::openat(to_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!from || !to) {
                return Error::from_errno(name);
            }
            MR_TRY_WRAP(copy_tree(from.get(), to.get()), name);
        } else if (S_ISREG(st.st_mode)) {
            UniqueFd from(::openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
            UniqueFd to(
                ::openat(to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
            if (!from || !to) {
                return Error::from_errno(name);
            }
            MR_TRY_WRAP(copy_file_contents(from.get(), to.get()), name);
        } else if (S_ISLNK(st.st_mode)) {
            std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
            ssize_t length = ::readlinkat(from_dir, name, target.data(), target.size());
            if (length < 0) {
                return Error::from_errno(name);
            }
            target.resize(static_cast<size_t>(length));
            MR_TRY(check_syscall(::symlinkat(target.c_str(), to_dir, name), name));
        } else {
            MR_TRY(check_syscall(::mknodat(to_dir, name, st.st_mode, st.st_rdev), name));
        }
        MR_TRY(check_syscall(::fchownat(to_dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW),
                             name));
        // After the chown, which clears set-id bits.
        if (!S_ISLNK(st.st_mode)) {
            MR_TRY(check_syscall(::fchmodat(to_dir, name, mode, 0), name));
        }
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
    UniqueFd covered; // "tmpcopyup": the directory the tmpfs hides, opened before the mount
    if (step.options.tmpcopyup && step.fs_type == "tmpfs") {
        covered = UniqueFd(::openat(target.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!covered) {
            return Error::from_errno("tmpcopyup: open the directory");
        }
    }
    MR_TRY(sys.mount(step.source, fs::fd_path(target.get()), step.fs_type, step.options.flags,
                     step.options.data));
    if (covered) {
        MR_ASSIGN(UniqueFd mounted,
                  fs::open_in_root(root_fd, step.destination, O_RDONLY | O_DIRECTORY));
        MR_TRY_WRAP(copy_tree(covered.get(), mounted.get()), "tmpcopyup");
    }
    return {};
}

} // namespace

Status mount_entry(const Plan& plan, int root_fd, const MountStep& step, Syscalls& sys) {
    if (explain::enabled()) {
        unsigned long flags = step.options.flags;
        flags |= step.options.bind ? static_cast<unsigned long>(MS_BIND) : 0UL;
        flags |= step.options.recursive ? static_cast<unsigned long>(MS_REC) : 0UL;
        explain::step(cat("mount(", quoted(step.options.bind ? step.source : step.fs_type), " on ",
                          step.destination, ", ", explain::mount_flag_names(flags),
                          step.options.data.empty() ? "" : ", ", step.options.data, ")",
                          step.is_cgroup ? ": cgroup hierarchies (runtime/mount_cgroup.cpp)" : ""));
    }
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
