// mounts[]: one entry at a time, each onto a destination resolved inside the rootfs.
#include "fs.hpp"
#include "minirun/explain.hpp"
#include "mount/mount.hpp"
#include "mountinfo.hpp"
#include "proc_mounts.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <vector>

namespace minirun::runtime::mount {
namespace {

// /proc and /sys are where a runtime later writes security settings (sysctl, masks); a
// symlink there could redirect those writes into the rootfs or elsewhere
// (CVE-2023-27561 class), so their destinations must be real directories.
bool needs_real_directory(const MountStep& step) {
    return step.fs_type == "proc" || step.fs_type == "sysfs";
}

// "0710": a mode as runc's "mode=%04o" writes it.
std::string octal_mode(mode_t mode) {
    std::array<char, 8> text{};
    (void)std::snprintf(text.data(), text.size(), "%04o", static_cast<unsigned>(mode));
    return text.data();
}

// runc's checkProcMount (proc_mounts.hpp) once more, on the destination as resolved in the
// rootfs: the config's was checked when it was read, but a symlink on the way (/foo ->
// /proc/sys) would lead a mount under /proc all the same (CVE-2025-52881's foothold). A bind
// onto /proc itself must bring the root of a procfs (`source_fd`, its opened source).
Status check_resolved_destination(int root_fd, int target_fd, const MountStep& step,
                                  int source_fd) {
    MR_ASSIGN(std::string inside, fs::path_in_root(root_fd, target_fd));
    if (auto problem = proc_mounts::destination_problem(inside, step.fs_type, step.options.bind)) {
        return Error(EPERM, inside == step.destination
                                ? *problem
                                : cat(*problem, " (where ", quoted(step.destination), " leads)"));
    }
    if (step.options.bind && proc_mounts::classify(inside) == proc_mounts::Where::proc_root) {
        if (auto problem = proc_mounts::source_problem(inside, source_fd)) {
            return Error(EPERM, *problem);
        }
    }
    return {};
}

// `source` is a detached copy of the source (open_bind_sources, mount.cpp), moved into place.
// `source_locked`: whether runc would find its flags locked (apply_bind_flags).
// Returns that tree's fd, which now names the attached mount: every later step on this
// mount (its flags, propagation, "rro", the deferred read-only) goes through it. A second
// lookup of the destination by path would let a racer who swaps a component of it
// (CVE-2021-30465, CVE-2024-45310 class) aim the step at another mount: a "ro" volume
// left writable, propagation set on the wrong mount.
Result<UniqueFd> mount_bind(int root_fd, const MountStep& step, UniqueFd source, bool source_locked,
                            Syscalls& sys) {
    struct stat info {};
    if (!source || ::fstat(source.get(), &info) < 0) {
        return Error::from_errno(source ? errno : EBADF, cat("source ", quoted(step.source)));
    }
    // The mount point must be of the source's kind: a directory for a directory, a file
    // (any non-directory can be bound onto one) otherwise.
    auto target = S_ISDIR(info.st_mode) ? fs::mkdir_all_in_root(root_fd, step.destination, 0755)
                                        : fs::ensure_file_in_root(root_fd, step.destination, 0644);
    if (!target) {
        return target.error();
    }
    MR_TRY(check_resolved_destination(root_fd, target->get(), step, source.get()));
    MR_TRY(sys.move_mount(source.get(), target->get()));

    // A bind takes MS_RDONLY and friends only through a remount of the new mount: the
    // remount goes to the root of the mount the tree fd names (mount_on: "." from it, or
    // its magic link for a file), not to whatever the destination's path now leads to.
    MR_TRY(apply_bind_flags(source.get(), step.options, source_locked, sys));
    return source;
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
Status copy_tree(int from_dir, int to_dir, Syscalls& sys) {
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
            MR_TRY(sys.mkdirat(to_dir, name, 0700));
            UniqueFd from(
                ::openat(from_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            UniqueFd to(::openat(to_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!from || !to) {
                return Error::from_errno(name);
            }
            MR_TRY_WRAP(copy_tree(from.get(), to.get(), sys), name);
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
            MR_TRY(sys.symlinkat(target, to_dir, name));
        } else {
            MR_TRY(sys.mknodat(to_dir, name, st.st_mode, st.st_rdev));
        }
        MR_TRY(sys.fchownat(to_dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW));
        // After the chown, which clears set-id bits.
        if (!S_ISLNK(st.st_mode)) {
            MR_TRY(sys.fchmodat(to_dir, name, mode));
        }
    }
    return {};
}

// The directory a filesystem is mounted on, made if missing. A tmpfs on a directory that
// was there takes that directory's mode unless the options say otherwise (runc 1.3,
// createOpenMountpoint, issue 4971: "mode=" of the directory ahead of the options, whose own
// mode= comes later and wins); on a directory made here it keeps tmpfs's 1777.
Result<UniqueFd> existing_or_new_target(int root_fd, const MountStep& step, std::string& data) {
    if (step.fs_type == "tmpfs") {
        auto existing = fs::open_in_root(root_fd, step.destination, O_PATH);
        if (existing) {
            struct stat info {};
            if (::fstat(existing->get(), &info) < 0) {
                return Error::from_errno("check tmpfs source mode");
            }
            data = cat("mode=", octal_mode(info.st_mode & 07777), data.empty() ? "" : ",", data);
        } else if (existing.error().errno_value() != ENOENT) {
            return existing.error().wrap("lookup mountpoint target");
        }
    }
    return fs::mkdir_all_in_root(root_fd, step.destination, 0755);
}

Status mount_filesystem(int root_fd, const MountStep& step, Syscalls& sys) {
    std::string data = step.options.data;
    UniqueFd target;
    if (needs_real_directory(step)) {
        // Checked before anything is created: a symlink there must not make us mkdir its
        // target inside the rootfs. The words are runc's, which its users look for.
        auto real =
            fs::open_in_root(root_fd, step.destination, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        if (!real && real.error().errno_value() == ENOENT) {
            MR_TRY(fs::mkdir_all_in_root(root_fd, step.destination, 0755));
            real = fs::open_in_root(root_fd, step.destination, O_PATH | O_DIRECTORY,
                                    RESOLVE_NO_SYMLINKS);
        }
        if (!real) {
            return Error(ELOOP, cat(quoted(step.destination),
                                    " cannot be mounted because it is "
                                    "not a directory: ",
                                    step.fs_type, " must be mounted on ordinary directory"));
        }
        target = std::move(*real);
    } else {
        MR_ASSIGN(target, existing_or_new_target(root_fd, step, data));
    }
    MR_TRY(check_resolved_destination(root_fd, target.get(), step, -1));
    UniqueFd covered; // "tmpcopyup": the directory the tmpfs hides, opened before the mount
    if (step.options.tmpcopyup && step.fs_type == "tmpfs") {
        covered = UniqueFd(::openat(target.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!covered) {
            return Error::from_errno("tmpcopyup: open the directory");
        }
    }
    auto mounted = sys.mount_on(step.source, target.get(), step.fs_type, step.options.flags, data);
    // devpts refuses a gid= its user namespace does not map (EINVAL): a rootless container
    // maps only its user's own gid, and runc's and our own default configs ask for gid=5
    // (tty). Without the option the ptys get the creating process's gid, as crun and runc
    // do in that case.
    if (!mounted && mounted.error().errno_value() == EINVAL && step.fs_type == "devpts" &&
        data.find("gid=") != std::string::npos) {
        std::string without_gid;
        for (std::string_view option : fs::split(data, ',')) {
            if (!option.starts_with("gid=")) {
                without_gid += cat(without_gid.empty() ? "" : ",", option);
            }
        }
        mounted =
            sys.mount_on(step.source, target.get(), step.fs_type, step.options.flags, without_gid);
    }
    if (!mounted) {
        return mounted.error();
    }
    if (covered) {
        MR_ASSIGN(UniqueFd mounted,
                  fs::open_in_root(root_fd, step.destination, O_RDONLY | O_DIRECTORY));
        MR_TRY_WRAP(copy_tree(covered.get(), mounted.get(), sys), "tmpcopyup");
    }
    return {};
}

// "rro" (runtime-spec 1.1): read-only all the way down, submounts included, which
// MS_RDONLY alone cannot do; mount_setattr(2) with AT_RECURSIVE can (Linux 5.12). On the
// mount `mounted` names, by fd (AT_EMPTY_PATH), not by a lookup of its destination.
Status make_recursively_readonly(int mounted, Syscalls& sys) {
    MR_TRY_WRAP(sys.mount_setattr(mounted, true, MOUNT_ATTR_RDONLY, 0), "rro");
    return {};
}

// Each of `flags` in turn on the mount `mounted` names (0: nothing to do).
Status set_propagation(int mounted, const std::vector<unsigned long>& flags, Syscalls& sys) {
    for (unsigned long propagation : flags) {
        if (propagation == 0) {
            continue;
        }
        MR_TRY_WRAP(sys.mount_on("", mounted, "", propagation, ""), "set propagation");
    }
    return {};
}

} // namespace

Result<UniqueFd> mount_entry(const Plan& plan, int root_fd, const MountStep& configured,
                             UniqueFd source, bool defer_readonly,
                             const std::vector<CgroupBind>& cgroup_binds, Syscalls& sys) {
    MountStep step = configured;
    if (defer_readonly) {
        step.options.flags &= ~static_cast<unsigned long>(MS_RDONLY);
        step.options.recursive_readonly = false;
    }
    if (explain::enabled()) {
        unsigned long flags = step.options.flags;
        flags |= step.options.bind ? static_cast<unsigned long>(MS_BIND) : 0UL;
        flags |= step.options.recursive ? static_cast<unsigned long>(MS_REC) : 0UL;
        explain::step(
            cat("mount(", quoted(step.options.bind ? step.source : step.fs_type), " on ",
                step.destination, ", ", explain::mount_flag_names(flags),
                step.options.data.empty() ? "" : ", ", step.options.data, ")",
                defer_readonly ? ", read-only once its submounts exist" : "",
                step.idmap ? ", idmapped by the parent" : "",
                step.is_cgroup ? ": cgroup hierarchies (runtime/mount/mount_cgroup.cpp)" : ""));
    }
    if (step.is_cgroup) {
        MR_TRY(mount_cgroup(plan, cgroup_binds, root_fd, step, sys));
        return UniqueFd(); // finish_readonly looks it up
    }
    UniqueFd mounted; // the mount this entry made, for the steps after it
    if (step.options.bind) {
        MR_ASSIGN(mounted, mount_bind(root_fd, step, std::move(source), sources_locked(plan), sys));
        MR_TRY(set_propagation(mounted.get(), bind_propagation(plan, step), sys));
    } else {
        auto made = mount_filesystem(root_fd, step, sys);
        // sysfs may only be mounted by the owner of the network namespace. Without one of
        // its own, a container in a user namespace gets the host's /sys bound read-only,
        // as runc does.
        if (!made && step.fs_type == "sysfs" && made.error().errno_value() == EPERM &&
            plan.creates(spec::NamespaceType::user) &&
            !plan.has_own(spec::NamespaceType::network)) {
            MountStep bind = step;
            bind.source = "/sys";
            bind.fs_type.clear();
            bind.options.bind = true;
            bind.options.recursive = true;
            bind.options.flags |= MS_RDONLY;
            MR_ASSIGN(int host_sys, sys.open_tree_clone("/sys", true));
            MR_ASSIGN(mounted,
                      mount_bind(root_fd, bind, UniqueFd(host_sys), sources_locked(plan), sys));
            MR_TRY(set_propagation(mounted.get(), bind_propagation(plan, bind), sys));
            // CVE-2023-25809: the submounts too (plan.cpp, plan_mount says why).
            MR_TRY(make_recursively_readonly(mounted.get(), sys));
        } else if (!made) {
            return made.error();
        } else if (step.options.recursive_readonly || step.options.propagation != 0 ||
                   defer_readonly) {
            // A new filesystem made by mount(2) onto the target's fd: its root is reached
            // by the lookup that crosses onto it (mount_filesystem says where that stays).
            MR_ASSIGN(mounted, fs::open_in_root(root_fd, step.destination, O_PATH));
        }
    }
    if (step.options.recursive_readonly) {
        MR_TRY(make_recursively_readonly(mounted.get(), sys));
    }
    if (!step.options.bind) {
        MR_TRY(set_propagation(mounted.get(), {step.options.propagation}, sys));
    }
    return mounted;
}

std::vector<unsigned long> bind_propagation(const Plan& plan, const MountStep& step) {
    // The bind is the parent's open_tree(OPEN_TREE_CLONE) copy, made before the init's "/"
    // lost its peers: the kernel's clone_mnt() keeps a copy in its source's peer group
    // (only CL_PRIVATE would not), so until told otherwise the bind is still shared with
    // the source's mount on the host, both ways.
    const unsigned long wanted = step.options.propagation;
    if (wanted == 0) {
        // No word of its own: the bind gets what "/" got, a slave or private, as a bind
        // made after that step would have inherited (and as runc's binds do).
        return {setup_propagation(plan.root_propagation)};
    }
    if ((wanted & MS_SHARED) != 0 && !keeps_host_peers(plan)) {
        // Shared among the container's mounts only: made a slave first, so that mounts
        // from the host still arrive but the container's own never go back, which is
        // what runc gives such a bind under an rslave or rprivate "/".
        return {MS_SLAVE | (wanted & MS_REC), wanted};
    }
    return {wanted};
}

bool keeps_host_peers(const Plan& plan) {
    // rootfsPropagation "shared"/"rshared" asks for mounts to travel both ways (Docker's
    // -v src:dst:rshared, Kubernetes' Bidirectional). Never from a user namespace: the
    // kernel itself turns shared mounts into slaves when it copies them into a mount
    // namespace of a less privileged user namespace (copy_mnt_ns, CL_SHARED_TO_SLAVE), so
    // that such a namespace cannot mount onto the host; a moved-in detached copy must not
    // get around that.
    return (plan.root_propagation & MS_SHARED) != 0 && !plan.has_own(spec::NamespaceType::user);
}

Status finish_readonly(int root_fd, const MountStep& step, UniqueFd mounted, bool source_locked,
                       Syscalls& sys) {
    if (!mounted) { // a cgroup entry: made by mount_cgroup, its mounts not kept
        MR_ASSIGN(mounted, fs::open_in_root(root_fd, step.destination, O_PATH));
    }
    unsigned long flags = step.options.flags & ~MS_REMOUNT;
    if ((flags & MS_RDONLY) != 0) {
        if (step.options.bind) {
            MR_TRY(apply_bind_flags(mounted.get(), step.options, source_locked, sys));
        } else {
            // A remount of the filesystem itself; without data its options stay as they are.
            MR_TRY_WRAP(sys.mount_on("", mounted.get(), "", MS_REMOUNT | flags, ""),
                        "make it read-only");
        }
    }
    if (step.options.recursive_readonly) {
        MR_TRY(make_recursively_readonly(mounted.get(), sys));
    }
    return {};
}

} // namespace minirun::runtime::mount
