#include "mount/mount.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"
#include "minirun/rootless.hpp"
#include "mount/mount_options.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

namespace minirun::runtime::mount {
unsigned long setup_propagation(unsigned long configured) {
    bool wants_host_mounts = (configured & (MS_SLAVE | MS_SHARED)) != 0;
    return (wants_host_mounts ? MS_SLAVE : MS_PRIVATE) | MS_REC;
}

Status remount_bind(int target_fd, unsigned long flags, Syscalls& sys) {
    MR_ASSIGN(unsigned long current, sys.mount_flags_of(target_fd));
    unsigned long locked = locked_mount_flags(current);
    // An explicit atime choice replaces the inherited one; the others are only added.
    constexpr unsigned long kAtime = MS_NOATIME | MS_RELATIME | MS_STRICTATIME;
    if ((flags & kAtime) != 0) {
        locked &= ~kAtime;
    }
    // MS_RDONLY from the source stays only if asked for or locked: a bind of a read-only
    // mount inside a user namespace cannot become writable anyway.
    return sys.mount_on("", target_fd, "", MS_BIND | MS_REMOUNT | flags | locked, "");
}

Status apply_bind_flags(int target_fd, const MountOptions& options, bool source_locked,
                        Syscalls& sys) {
    if (!bind_needs_remount(options)) {
        return {}; // the source's flags, all of them
    }
    const unsigned long requested = options.flags & ~static_cast<unsigned long>(MS_REMOUNT);
    MR_ASSIGN(unsigned long statvfs_flags, sys.mount_flags_of(target_fd));
    const unsigned long current = statvfs_mount_flags(statvfs_flags);
    // First exactly what was asked for, as "mount --bind -o" would set it.
    Status first = source_locked && !locked_flags_allow(current, requested)
                       ? Status(Error(EPERM, "the source's flags are locked"))
                       : sys.mount_on("", target_fd, "", MS_BIND | MS_REMOUNT | requested, "");
    if (first.ok()) {
        return {};
    }
    // Then as "mount --bind -o remount,...": the source's lockable flags kept.
    auto retry = with_locked_flags(requested, options.cleared, current);
    if (!retry) {
        // runc's words, with the first attempt's error last as Go spells it.
        const int error = first.error().errno_value();
        std::string reason = std::strerror(error);
        reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
        return Error(error, cat("failed to set user-requested vfs flags on bind-mount: ",
                                retry.error().message(), ": ", reason));
    }
    Status second = sys.mount_on("", target_fd, "", MS_BIND | MS_REMOUNT | *retry, "");
    if (!second) {
        return second.error().wrap(cat("remount with locked flags ",
                                       mount_flag_words(current & *retry & ~requested),
                                       " re-applied"));
    }
    return {};
}

bool sources_locked(const Plan& plan) {
    return plan.has_own(spec::NamespaceType::user);
}

namespace {

bool is_below(const std::string& path, const std::string& dir) {
    return dir == "/" ||
           (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

// Whether a later entry of mounts[], or the default devices, go inside entry `index`, a
// tmpfs or a bind (where mount points may have to be made). Not a kernel filesystem such as
// sysfs: its mount points exist already, and a user namespace may mount it only as
// read-only as the host's own (mount_too_revealing), so it is mounted read-only at once.
bool has_mounts_inside(const Plan& plan, size_t index) {
    const MountStep& step = plan.mounts[index];
    if (step.is_cgroup || (!step.options.bind && step.fs_type != "tmpfs")) {
        return false;
    }
    const std::string& dir = step.destination;
    if (plan.setup_dev && (dir == "/dev" || is_below("/dev", dir))) {
        return true;
    }
    for (size_t later = index + 1; later < plan.mounts.size(); ++later) {
        if (is_below(plan.mounts[later].destination, dir)) {
            return true;
        }
    }
    return false;
}

} // namespace

Result<BindSources> open_bind_sources(const Plan& plan, Syscalls& sys, size_t held_ahead) {
    BindSources sources;
    sources.fds.resize(plan.mounts.size());
    sources.reopened.resize(plan.mounts.size(), false);
    size_t held = 0;
    // open_tree(OPEN_TREE_CLONE) needs CAP_SYS_ADMIN over the caller's mount namespace. A
    // rootless caller may lack it (an unprivileged user; root of a user namespace that does
    // not own its mount namespace) and then leaves the sources to the init, which has it
    // over its own (mount_entry opens them there, as the caller's uid sees them).
    bool may_clone_mounts = ::geteuid() == 0;
    for (size_t i = 0; i < plan.mounts.size(); ++i) {
        const MountStep& step = plan.mounts[i];
        if (!step.options.bind || step.is_cgroup || source_opened_late(plan, step)) {
            continue;
        }
        auto fd = may_clone_mounts ? sys.open_tree_clone(step.source, step.options.recursive)
                                   : Result<int>(Error(EPERM, "open_tree"));
        if (!fd && fd.error().errno_value() == ENOENT) {
            continue; // maybe made by then (an earlier entry's mount): opened late
        }
        if (!fd && fd.error().errno_value() == EPERM && rootless::active()) {
            if (step.idmap) {
                return Error(EPERM, cat("mounts[", i, "] on ", step.destination,
                                        ": an idmapped mount needs the host's root "
                                        "(mount_setattr on the source's mount)"));
            }
            may_clone_mounts = false;
            continue;
        }
        if (!fd) {
            return Error::from_errno(
                fd.error().errno_value(),
                cat("mounts[", i, "] on ", step.destination, ": source ", quoted(step.source)));
        }
        UniqueFd source(*fd);
        if (held == held_ahead) {
            sources.reopened[i] = true; // checked; closed now, opened again at its turn
            continue;
        }
        sources.fds[i] = std::move(source);
        ++held;
    }
    return sources;
}

Result<UniqueFd> reopen_bind_source(const Plan& plan, size_t index, Syscalls& sys) {
    const MountStep& step = plan.mounts.at(index);
    auto fd = sys.open_tree_clone(step.source, step.options.recursive);
    if (!fd) { // in the words of open_bind_sources
        return Error::from_errno(
            fd.error().errno_value(),
            cat("mounts[", index, "] on ", step.destination, ": source ", quoted(step.source)));
    }
    UniqueFd source(*fd);
    MR_TRY(idmap_source(plan, index, source.get(), sys)); // its errors name the entry
    return source;
}

namespace {

// Rootless, the init opens the sources the parent could not, in its own mount namespace.
// Not an idmapped one: only the host's root may idmap (mount_idmap.cpp).
Result<UniqueFd> open_late_here(const Plan& plan, size_t index, int root_fd, Syscalls& sys) {
    if (plan.mounts[index].idmap) {
        return Error(EPERM, "an idmapped mount needs the host's root (mount_setattr on the "
                            "source's mount)");
    }
    return open_source_now(plan, index, root_fd, sys);
}

// Steps 3 and 4 of prepare_rootfs(): the config's mounts, then the devices.
Status mount_entries_and_devices(const Plan& plan, int root_fd, std::vector<UniqueFd>& bind_sources,
                                 const std::vector<CgroupBind>& cgroup_binds,
                                 const LateSource& late_source, Syscalls& sys) {
    // 3. mounts[] in the order given: later entries may mount inside earlier ones
    //    (/dev, then /dev/pts). A read-only entry that has later mounts (or the default
    //    devices) to receive is mounted writable and made read-only after them, in 4b,
    //    as runc does for a read-only /dev: its mount points could not be made otherwise.
    std::vector<std::pair<size_t, UniqueFd>> deferred; // with the mount each entry made
    for (size_t i = 0; i < plan.mounts.size(); ++i) {
        const MountStep& step = plan.mounts[i];
        bool defer = (step.options.flags & MS_RDONLY) != 0 && has_mounts_inside(plan, i);
        const std::string context = cat("mounts[", i, "] on ", step.destination);
        UniqueFd source = std::move(bind_sources.at(i));
        if (!source && step.options.bind && !step.is_cgroup) {
            // Opened late (mount_sources.cpp), now that the entries before it are mounted.
            auto late = late_source ? late_source(i) : open_late_here(plan, i, root_fd, sys);
            if (late && !*late) { // the parent left it to us (rootless)
                late = open_late_here(plan, i, root_fd, sys);
            }
            if (!late) {
                return late.error().wrap(context);
            }
            source = std::move(*late);
        }
        auto mounted =
            mount_entry(plan, root_fd, step, std::move(source), defer, cgroup_binds, sys);
        if (!mounted) {
            return mounted.error().wrap(context);
        }
        if (defer) {
            deferred.emplace_back(i, std::move(*mounted));
        }
    }

    // 4. Devices after the mounts, so they land in the /dev tmpfs, not the rootfs below.
    if (plan.setup_dev) {
        MR_TRY_WRAP(create_devices(plan, root_fd, sys), "devices");
    }
    // 4b. The inner ones first: a read-only parent would not stop them, but the order is
    //     the one a reader expects.
    std::reverse(deferred.begin(), deferred.end());
    for (auto& [index, mounted] : deferred) {
        const MountStep& step = plan.mounts[index];
        MR_TRY_WRAP(finish_readonly(root_fd, step, std::move(mounted), sources_locked(plan), sys),
                    cat("mounts[", index, "] on ", step.destination));
    }
    return {};
}

} // namespace

Result<UniqueFd> prepare_rootfs(const Plan& plan, std::vector<UniqueFd>& bind_sources,
                                Syscalls& sys, const std::vector<CgroupBind>& cgroup_binds,
                                const LateSource& late_source) {
    const bool own_namespace = plan.has_own(spec::NamespaceType::mount);
    const unsigned long setup = setup_propagation(plan.root_propagation);
    // 1. Our copy of the host's mounts still propagates to and from the host where they
    //    are shared. Before anything is mounted, "/" becomes recursively private, or a
    //    slave where the config wants mounts from the host to keep arriving: either way no
    //    mount is shared any more, so nothing made below can reach the host, and
    //    pivot_root(2), which refuses shared mounts, will work. The configured propagation
    //    itself is applied to the container's own root after pivot_root (finalize_root).
    //    Without a mount namespace "/" is the host's own: it is left as it is (runc would
    //    change it), and only the rootfs bind below gets this propagation.
    if (own_namespace) {
        if (explain::enabled()) {
            explain::step(cat("mount(\"/\", ", explain::mount_flag_names(setup),
                              "): nothing mounted from here on reaches the host"));
        }
        MR_TRY_WRAP(sys.mount("", "/", "", setup, ""),
                    "linux.rootfsPropagation: set propagation of /");
    } else {
        explain::step("no mount namespace: the mounts go into the caller's mount table, "
                      "and its \"/\" stays as it is");
    }

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
    if (!own_namespace) {
        // The bind joined the peer group of the host mount that holds the rootfs, if that
        // one is shared: private (or a slave) now, before anything is mounted on it, so
        // that the container's mounts are not copied into the host's other mount
        // namespaces. Only our new mounts change; the host's stay as they were.
        if (explain::enabled()) {
            explain::step(cat("mount(", quoted(plan.rootfs), ", ", explain::mount_flag_names(setup),
                              "): the rootfs bind only, not the host's /"));
        }
        MR_TRY_WRAP(sys.mount_on("", root.get(), "", setup, ""),
                    "linux.rootfsPropagation: set propagation of the rootfs");
    }

    MR_TRY(
        mount_entries_and_devices(plan, root.get(), bind_sources, cgroup_binds, late_source, sys));

    // 5. Like runc, a missing cwd is created; while we still hold the rootfs fd it is
    //    created without following any symlink out of the rootfs.
    MR_TRY_WRAP(fs::mkdir_all_in_root(root.get(), plan.process.cwd, 0755), "process.cwd");
    return root;
}

Status enter_root(const Plan& plan, int root_fd, Syscalls& sys) {
    if (plan.has_own(spec::NamespaceType::mount)) {
        MR_TRY_WRAP(pivot_into(root_fd, sys), "pivot_root");
    } else {
        MR_TRY_WRAP(chroot_into(root_fd, sys), "chroot");
    }
    return {};
}

Status chroot_into(int root_fd, Syscalls& sys) {
    // The caller's mount namespace is the host's: pivot_root(2) would make the rootfs the
    // root of every process in it. chroot(2) changes this process's root alone, as runc
    // does without a mount namespace. It is weaker: the host's mounts stay reachable for
    // a process that may chroot again (CAP_SYS_CHROOT) or mount (CAP_SYS_ADMIN).
    MR_TRY(sys.fchdir(root_fd));
    explain::step(R"(chroot("."): the rootfs becomes / of this process only)");
    MR_TRY(sys.chroot("."));
    return sys.chdir("/");
}

Status pivot_into(int root_fd, Syscalls& sys) {
    // pivot_root(".", ".") stacks the old root on top of the new one at "/"; no
    // directory for it is needed inside the rootfs. But a plain "." then still names the
    // new root for mount(2), whose lookup does not cross into the mount stacked on the
    // working directory (umount2's does): the old root is reached through a working
    // directory on it, taken before the pivot, as runc does. Otherwise the MS_SLAVE|MS_REC
    // below would hit the container's own tree and turn its rshared binds into slaves.
    UniqueFd old_root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!old_root) {
        return Error::from_errno("open the old root");
    }
    MR_TRY(sys.fchdir(root_fd));
    explain::step(R"(pivot_root(".", "."): the rootfs becomes /, the old root lies on it)");
    MR_TRY(sys.pivot_root(".", "."));
    MR_TRY(sys.fchdir(old_root.get()));
    // The old root may be shared with the host (a joined mount namespace): made a slave,
    // its detach below cannot propagate to and unmount anything on the host.
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
    if (plan.root_readonly) {
        explain::step(R"(mount("/", MS_BIND|MS_REMOUNT|MS_RDONLY): root.readonly)");
        UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!root) {
            return Error::from_errno("root.readonly: open /");
        }
        MR_TRY_WRAP(remount_bind(root.get(), MS_RDONLY, sys), "root.readonly");
    }
    return {};
}

} // namespace minirun::runtime::mount
