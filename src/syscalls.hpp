// The system calls that change a container's view of the world, behind an interface.
//
// The runtime core calls these through `Syscalls&`, handed down from the top (create, exec)
// to every step, so its logic (which mounts, in which order, with which flags; which ids,
// capabilities and filters in which order) runs unchanged in unit tests against a
// recording fake (tests/unit/fake_syscalls.hpp), without root; the fake can also make any
// call fail with any errno. Production code uses linux_syscalls().
//
// What goes through here: everything that changes the process's namespaces, identity,
// privileges, file system view or program: mounts (the /dev/console bind too), the files
// the mount steps make in the rootfs (devices, symlinks, tmpcopyup's copies' directories,
// nodes, owners and modes), setns/unshare (the parent's pid namespace join too), ids,
// capabilities, prctl, seccomp, chdir, rlimits, personality, scheduling, the NUMA memory
// policy, the writes of kernel settings under /proc (write_proc: oom_score_adj, sysctls,
// the idmap namespace's maps, timens_offsets, the LSM exec attributes), the clones of the idmap
// namespace holder and of the holder of a joined user namespace, and the exec.
//
// What stays outside, on purpose:
// - Reads: stat/statx/statfs, readlink, the /proc files read (mountinfo, ns links, status,
//   /proc/<pid>/stat), opening directories and files by O_PATH to name them. They change
//   nothing; tests give them real temporary files.
// - The sync socket between runtime and init (socketpair, sendmsg/recvmsg, SCM_RIGHTS:
//   sync.cpp, fd_passing.cpp) and the --console-socket and seccomp-agent sockets: the
//   protocol is tested end to end on real socketpairs (test_sync.cpp).
// - The cgroup file writes and cgroup directories (runtime/cgroup/): a tree of files with
//   their own tests against temporary directories (test_cgroup*.cpp).
// - The clone of the container's processes (process/child.cpp clone3) and of hooks
//   (hooks.cpp fork/execve, kill, waitpid): creating the process the fake would have to
//   run is not a call it can record; integration tests cover them.
// - The freestanding exec gate and the sealed copy of mini-run (security/exec_gate.cpp,
//   sealed_exe.cpp: memfd, fsopen/fsmount, execveat of the gate): run before or instead of
//   the runtime's own code, with no Syscalls to hand.
// - The runtime's own bookkeeping files: state.json, exec.fifo, logs, the host-mount
//   record (state.cpp, start.cpp, log.cpp, mount_host.cpp), and the detach of the
//   runtime's host mounts on delete (mount_host.cpp umount2, after the container is gone).
// - Signals to the container (signals.cpp kill) and the terminal's ioctls, fchown and
//   dup2 on the pty (process/terminal.cpp), the foreground relay's tcsetattr, and the dup3
//   of the container's /dev/null onto stdio (mount_devices.cpp), which moves fds only.
// - The seccomp probe of what the kernel supports (seccomp.cpp, a NULL filter that loads
//   nothing) and capability reads (capget, PR_CAPBSET_READ in capabilities.cpp).
// - The directories fs::mkdir_all_in_root makes for mount destinations and the rootfs
//   files tmpcopyup creates and fills (openat, write): made by path walks with
//   openat2(RESOLVE_IN_ROOT) that the unit tests run on real temporary rootfs trees.
// Not yet routed, to follow: the maps and setgroups of the container's user namespace,
// which the parent writes through its procfs handle (ns/user.cpp), the loopback's SIOCSIFFLAGS
// (ns/net.cpp), the cgroup tmpfs's directories (mount_cgroup.cpp mkdirat) and /dev/ptmx's unlinkat
// (mount_devices.cpp).
#pragma once

#include "minirun/error.hpp"
#include "procfs.hpp"

#include <linux/filter.h>
#include <sys/types.h>

#include <csignal>
#include <cstdint>

#include <string>
#include <string_view>
#include <vector>

namespace minirun {

// sched_setattr(2)'s struct sched_attr, its first version (SCHED_ATTR_SIZE_VER0): the
// fields runtime-spec's process.scheduler has.
struct SchedAttr {
    uint32_t policy = 0;
    uint64_t flags = 0;
    int32_t nice = 0;
    uint32_t priority = 0;
    uint64_t runtime = 0; // ns, SCHED_DEADLINE
    uint64_t deadline = 0;
    uint64_t period = 0;
};

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
    // mount(2) onto the directory or file that `target_fd` (an O_PATH fd) names; the same
    // mount as onto "/proc/self/fd/N", for less. That magic link costs a walk through
    // /proc, the pid and its fd directory on every call (some 2-3 us here, with dozens of
    // mounts per container); a working directory on the target makes the target ".", a
    // lookup of nothing. A directory target is therefore left as the working directory:
    // the init's recipe sets its own (pivot_root, chroot and the process's cwd go by fd or
    // absolute path). A file, or a directory the caller may not search (fchdir needs that,
    // mount(2) does not), is still named by its magic link.
    // A bind (MS_BIND without MS_REMOUNT) whose `source` is fs::fd_path(N) is made by that fd
    // (open_tree(N, "", OPEN_TREE_CLONE) and move_mount onto `target_fd`): after pivot_root
    // the magic link would be looked up through the container's /proc.
    // Like that link, "." does not cross a mount stacked on the directory; mount(2) itself
    // then goes to the top of the stack for a new mount, and a remount or a propagation
    // change needs the root of a mount, as with the link.
    virtual Status mount_on(const std::string& source, int target_fd, const std::string& fstype,
                            unsigned long flags, const std::string& data) = 0;
    virtual Status umount2(const std::string& target, int flags) = 0;
    virtual Status pivot_root(const std::string& new_root, const std::string& put_old) = 0;
    virtual Status chroot(const std::string& path) = 0;
    virtual Status mknodat(int dir_fd, const std::string& name, mode_t mode, dev_t device) = 0;
    virtual Status symlinkat(const std::string& target, int dir_fd, const std::string& name) = 0;
    virtual Status fchownat(int dir_fd, const std::string& name, uid_t uid, gid_t gid,
                            int flags) = 0;
    virtual Status mkdirat(int dir_fd, const std::string& name, mode_t mode) = 0;
    virtual Status fchmodat(int dir_fd, const std::string& name, mode_t mode) = 0;
    // mount_setattr(2): sets and clears MOUNT_ATTR_* on the mount whose root `mount_fd`
    // names (AT_EMPTY_PATH: no path is looked up, so a racer who swaps a component of the
    // destination cannot aim it at another mount), and with `recursive` on every mount
    // below it too (AT_RECURSIVE).
    virtual Status mount_setattr(int mount_fd, bool recursive, uint64_t attr_set,
                                 uint64_t attr_clr) = 0;
    // mount_setattr(2) with MOUNT_ATTR_IDMAP on the detached tree `tree_fd` (an
    // open_tree(OPEN_TREE_CLONE) fd): its ids are seen through the user namespace
    // `userns_fd`; with `recursive` on every mount of the tree (AT_RECURSIVE).
    virtual Status mount_setattr_idmap(int tree_fd, bool recursive, int userns_fd) = 0;
    // open_tree(2) with OPEN_TREE_CLONE: a detached copy of the mount at `path` (with
    // `recursive`, of the mounts below it too), close-on-exec.
    virtual Result<int> open_tree_clone(const std::string& path, bool recursive) = 0;
    // open_tree(fd, "", OPEN_TREE_CLONE | AT_EMPTY_PATH): a detached bind of the very file
    // `fd` is open on (the pty's peer), close-on-exec. No path is looked up: not a
    // /proc/self/fd link through a /proc the container may have made.
    virtual Result<int> open_tree_clone_fd(int fd) = 0;
    // move_mount(2) of a detached tree (an open_tree(OPEN_TREE_CLONE) fd) onto the directory
    // or file `target_fd` (an O_PATH fd) names. By fd, not by a /proc/self/fd path: without
    // MOVE_MOUNT_T_SYMLINKS move_mount would take that magic link itself for the target.
    virtual Status move_mount(int from_fd, int target_fd) = 0;
    // The ST_* flags of the mount holding the file `fd` names (fstatvfs f_flag).
    virtual Result<unsigned long> mount_flags_of(int fd) = 0;
    virtual Status sethostname(const std::string& name) = 0;
    virtual Status setdomainname(const std::string& name) = 0;
    virtual Status setgroups(const std::vector<gid_t>& groups) = 0;
    virtual Status setresgid(gid_t gid) = 0;
    virtual Status setresuid(uid_t uid) = 0;
    virtual void umask(mode_t mask) = 0;
    virtual Status chdir(const std::string& path) = 0;
    virtual Status fchdir(int fd) = 0;

    // Namespaces: setns(2) into the namespace `fd` names (`nstype` a CLONE_NEW* flag or 0),
    // unshare(2) of CLONE_NEW* `flags`.
    virtual Status setns(int fd, int nstype) = 0;
    virtual Status unshare(unsigned long flags) = 0;
    virtual Status setsid() = 0;
    // prctl(2) with up to two arguments; its non-negative result (PR_CAPBSET_READ's 0/1).
    virtual Result<int> prctl(int option, unsigned long arg2 = 0, unsigned long arg3 = 0) = 0;
    // capset(2) of this thread's three sets, as 64-bit masks (bit N: capability N).
    virtual Status capset(uint64_t effective, uint64_t permitted, uint64_t inheritable) = 0;
    // seccomp(SECCOMP_SET_MODE_FILTER, flags, program): the listener fd with
    // SECCOMP_FILTER_FLAG_NEW_LISTENER, otherwise 0.
    virtual Result<int> seccomp_set_filter(unsigned int flags, const sock_fprog& program) = 0;
    // close_range(2).
    virtual Status close_range(unsigned int first, unsigned int last, unsigned int flags) = 0;
    // fcntl(F_SETFD, FD_CLOEXEC) on each fd >= `first` listed in /proc/self/fd
    // (fs::cloexec_fds_from): where close_range is refused.
    virtual Status cloexec_fds_from(unsigned int first) = 0;
    virtual void set_signal_mask(const sigset_t& mask) = 0;
    // Scheduling of the calling process: sched_setattr(0, attr, 0); ioprio_set(
    // IOPRIO_WHO_PROCESS, 0, value), value = class << 13 | level; sched_setaffinity(0) to
    // `cpus` (sorted cpu numbers; empty: every cpu, which the kernel narrows to the cpuset's).
    virtual Status sched_setattr(const SchedAttr& attr) = 0;
    virtual Status ioprio_set(int value) = 0;
    virtual Status sched_setaffinity(const std::vector<uint32_t>& cpus) = 0;
    // execve(2) of `path`, or with `fd` >= 0 execveat(fd, "", AT_EMPTY_PATH). They return
    // only on failure (the fake: when it was told to fail, or a recorded success).
    virtual Status execve(int fd, const std::string& path, char* const argv[],
                          char* const envp[]) = 0;
    // set_mempolicy(2): `mode` with its MPOL_F_* flags, the node mask (bit N: node N; empty
    // is NULL) and maxnode as the kernel takes it (one more than the mask's bits).
    virtual Status set_mempolicy(int mode, const std::vector<unsigned long>& nodes,
                                 unsigned long max_node) = 0;
    // setrlimit(2) of `resource` (an RLIMIT_*).
    virtual Status setrlimit(int resource, uint64_t soft, uint64_t hard) = 0;
    // personality(2): the execution domain (PER_LINUX, PER_LINUX32); survives execve.
    virtual Status personality(unsigned long domain) = 0;
    // One write(2) of `value` to `path` below the procfs handle `proc` ("self/oom_score_adj",
    // "sys/kernel/domainname", "<pid>/uid_map", "thread-self/attr/exec"): opened with
    // openat2(RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS) and checked to be a
    // procfs file on the handle's own mount (procfs.hpp), so neither a link nor a bind
    // mount planted by the container (CVE-2025-52881) can send it elsewhere.
    virtual Status write_proc(const procfs::Handle& proc, const std::string& path,
                              std::string_view value) = 0;
    // clone(CLONE_NEWUSER) of a child that only holds its new user namespace: it waits to
    // be killed and dies with the caller (PR_SET_PDEATHSIG). The caller owns it (a
    // ScopedChild) and writes its maps. The fake forks a child that waits, in no new
    // namespace.
    virtual Result<pid_t> clone_userns_holder() = 0;
    // A child (a plain clone, like fork()) that setns()es into the user namespace
    // `userns_fd` and waits to be killed, dying with the caller: its /proc/<pid>/uid_map and
    // gid_map show that namespace's maps. Returned once it is in; a failed setns is the
    // error (the child is gone then). The caller owns it (a ScopedChild). The fake forks a
    // child that waits, in no other namespace.
    virtual Result<pid_t> clone_namespace_holder(int userns_fd) = 0;
};

// The real system calls.
Syscalls& linux_syscalls();

// A seam call's failure in the caller's words, "<context>: <strerror>", its errno kept:
// the text the caller's own check_syscall() would have made.
template <typename T>
Status checked(const Result<T>& result, std::string_view context) {
    if (result) {
        return {};
    }
    return Error::from_errno(result.error().errno_value(), context);
}

} // namespace minirun
