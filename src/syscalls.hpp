// The system calls that change a container's view of the world, behind an interface.
//
// The runtime core calls these through `Syscalls&`, so its logic (which mounts, in which
// order, with which flags; which ids in which order) runs unchanged in unit tests against
// a recording fake, without root. Production code uses linux_syscalls().
#pragma once

#include "minirun/error.hpp"

#include <sys/types.h>

#include <cstdint>

#include <string>
#include <vector>

namespace minirun {

class Syscalls {
public:
    Syscalls() = default;
    Syscalls(const Syscalls&) = delete;
    Syscalls& operator=(const Syscalls&) = delete;
    Syscalls(Syscalls&&) = delete;
    Syscalls& operator=(Syscalls&&) = delete;
    virtual ~Syscalls() = default;

    // Empty source, fstype or data are passed to the kernel as NULL.
    virtual Status mount(const std::string& source, const std::string& target,
                         const std::string& fstype, unsigned long flags,
                         const std::string& data) = 0;
    virtual Status umount2(const std::string& target, int flags) = 0;
    virtual Status pivot_root(const std::string& new_root, const std::string& put_old) = 0;
    virtual Status chroot(const std::string& path) = 0;
    virtual Status mknodat(int dir_fd, const std::string& name, mode_t mode, dev_t device) = 0;
    virtual Status symlinkat(const std::string& target, int dir_fd, const std::string& name) = 0;
    virtual Status fchownat(int dir_fd, const std::string& name, uid_t uid, gid_t gid,
                            int flags) = 0;
    // mount_setattr(2): sets and clears MOUNT_ATTR_* on the mount at `path`, and with
    // `recursive` on every mount below it too (AT_RECURSIVE).
    virtual Status mount_setattr(const std::string& path, bool recursive, uint64_t attr_set,
                                 uint64_t attr_clr) = 0;
    // open_tree(2) with OPEN_TREE_CLONE: a detached copy of the mount at `path` (with
    // `recursive`, of the mounts below it too), close-on-exec.
    virtual Result<int> open_tree_clone(const std::string& path, bool recursive) = 0;
    // move_mount(2) of a detached tree (an open_tree(OPEN_TREE_CLONE) fd) onto the directory
    // or file `target_fd` (an O_PATH fd) names. By fd, not by a /proc/self/fd path: without
    // MOVE_MOUNT_T_SYMLINKS move_mount would take that magic link itself for the target.
    virtual Status move_mount(int from_fd, int target_fd) = 0;
    // The ST_* flags of the mount holding `path` (statvfs f_flag).
    virtual Result<unsigned long> mount_flags_of(const std::string& path) = 0;
    virtual Status sethostname(const std::string& name) = 0;
    virtual Status setdomainname(const std::string& name) = 0;
    virtual Status setgroups(const std::vector<gid_t>& groups) = 0;
    virtual Status setresgid(gid_t gid) = 0;
    virtual Status setresuid(uid_t uid) = 0;
    virtual void umask(mode_t mask) = 0;
    virtual Status chdir(const std::string& path) = 0;
    virtual Status fchdir(int fd) = 0;
};

// The real system calls.
Syscalls& linux_syscalls();

} // namespace minirun
