// A procfs handle: the one way mini-run writes kernel settings under /proc (CVE-2025-52881).
//
// A write by path ("/proc/self/attr/exec", "/proc/sys/kernel/domainname") goes wherever the
// mounts on that path lead. Whoever shaped the mount namespace (a config's mounts, a joined
// mount namespace, the caller's own `unshare -m`) can bind another procfs file over the
// target: a check that the opened file is "on procfs" passes, and an LSM label lands in
// /proc/self/sched (silently not applied) or a sysctl in /proc/sysrq-trigger. So every such
// write opens its file below a handle, the root of a procfs nothing can have mounted on:
//
//   1. a private procfs instance: fsopen("proc"), fsconfig(CMD_CREATE), fsmount(), detached
//      and close-on-exec; nobody else holds it, so nothing can be mounted on it. Needs
//      CAP_SYS_ADMIN over the owner of the caller's PID namespace (and, in a user namespace,
//      a fully visible /proc in the caller's mount namespace: mount_too_revealing());
//   2. else a detached copy of /proc without its submounts: open_tree(OPEN_TREE_CLONE),
//      no AT_RECURSIVE (EINVAL where /proc has locked submounts, in a user namespace);
//   3. else the caller's /proc itself, an O_PATH fd, verified to be a procfs root: it must
//      be opened before any config mount (the runtime opens it before clone()); a mount
//      someone made on a file below it is then refused, never written through (below).
//
// The runtime opens it before clone() (create and exec, after the re-exec that protects the
// binary), in its own namespaces, as the host's root where it is: the init and exec'd
// processes inherit it. Its procfs is of the runtime's PID namespace, an ancestor of the
// container's, where "self" and "thread-self" still resolve to the caller (by its pid
// there); sysctls act on the writer's namespaces whatever procfs instance the file is on.
//
// Every file is opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_XDEV |
// RESOLVE_NO_MAGICLINKS) and then checked: on procfs (fstatfs PROC_SUPER_MAGIC) and on the
// handle's own mount (statx STATX_MNT_ID), so a bind of another procfs file over the target
// is refused, not only a file off procfs.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace minirun::procfs {

enum class Kind {
    private_instance, // fsopen("proc")
    detached_clone,   // open_tree("/proc", OPEN_TREE_CLONE)
    host_proc,        // the caller's /proc, opened before any config mount
};

class Handle {
public:
    Handle() = default;

    // The best of the three the kernel and the caller's privileges allow (see above); an
    // error, naming each refusal, where not even /proc is a procfs root.
    static Result<Handle> open();
    // Only the third: the caller's /proc (unit tests, which compare paths under /proc).
    static Result<Handle> host_proc();

    [[nodiscard]] bool valid() const { return root_.valid(); }
    // An error unless `handle` is one to write through (a step with a value to write).
    static Status usable(const Handle* handle);
    [[nodiscard]] int fd() const { return root_.get(); }
    [[nodiscard]] Kind kind() const { return kind_; }
    // "a private procfs instance (fsopen)", and for a fallback why the better ones were not
    // to be had: what --debug states.
    [[nodiscard]] const std::string& description() const { return description_; }

    // `path` below the root ("sys/kernel/domainname", "thread-self/attr/exec",
    // "1234/uid_map"), resolved without leaving the root, crossing a mount or following a
    // magic link, and checked to be a procfs file on the handle's own mount. `flags`: the
    // open(2) flags (O_CLOEXEC is added).
    [[nodiscard]] Result<UniqueFd> open_file(std::string_view path, int flags) const;
    // open_file(path, O_WRONLY) and one write(2) of `value`.
    [[nodiscard]] Status write(std::string_view path, std::string_view value) const;
    // Whether `fd`, opened as `path`, is a procfs file on the handle's mount.
    [[nodiscard]] Status verify(int fd, std::string_view path) const;

    // Gone for good: the last write is done (the handle must not reach the container).
    void close() { root_.reset(); }

private:
    UniqueFd root_;
    uint64_t mount_id_ = 0;
    Kind kind_ = Kind::host_proc;
    std::string description_;
};

// The id of the mount `fd` is on: statx(STATX_MNT_ID) (Linux 5.8), else "mnt_id:" of its
// fdinfo read below `proc_root`, a procfs root.
Result<uint64_t> mount_id_of(int fd, int proc_root);

// openat2(RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS) of `path` below
// `dir_fd`, then checked to be a procfs file on `dir_fd`'s mount, `dir_fd` a procfs
// directory below `proc_root` (a Handle's, for the fdinfo fallback of mount_id_of).
Result<UniqueFd> open_beneath(int dir_fd, std::string_view path, int flags, int proc_root);

} // namespace minirun::procfs
