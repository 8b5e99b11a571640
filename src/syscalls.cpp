#include "syscalls.hpp"

#include "fs.hpp"
#include "minirun/fd.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <utility>

namespace minirun {
namespace {

const char* or_null(const std::string& text) {
    return text.empty() ? nullptr : text.c_str();
}

// N of a path fs::fd_path(N) made, exactly; -1 for any other path.
int fd_of_path(std::string_view path) {
    constexpr std::string_view kPrefix = "/proc/self/fd/";
    if (!path.starts_with(kPrefix)) {
        return -1;
    }
    path.remove_prefix(kPrefix.size());
    int fd = -1;
    auto [end, error] = std::from_chars(path.data(), path.data() + path.size(), fd);
    return error == std::errc{} && end == path.data() + path.size() && fd >= 0 ? fd : -1;
}

// mount(source, target, MS_BIND[|MS_REC]) by fds: a detached copy of the source's mount
// (open_tree(AT_EMPTY_PATH)), moved onto the target, neither looked up by path.
Status bind_fd(int source_fd, int target_fd, bool recursive) {
    unsigned int flags =
        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0U);
    UniqueFd tree(static_cast<int>(::syscall(SYS_open_tree, source_fd, "", flags)));
    if (!tree) {
        return Error::from_errno("mount: open_tree");
    }
    return check_syscall(
        static_cast<int>(::syscall(SYS_move_mount, tree.get(), "", target_fd, "",
                                   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)),
        "mount: move_mount");
}

// A remount of a bind (MS_BIND|MS_REMOUNT) or a propagation change (MS_PRIVATE, MS_SLAVE,
// MS_SHARED, MS_UNBINDABLE, with MS_REC) as mount_setattr(2) on the mount `mount_fd`
// names (AT_EMPTY_PATH, Linux 5.12), for a target mount(2) could reach only by its
// /proc/self/fd magic link (a file). -1 (errno EOPNOTSUPP) for any other mount(2).
// The attributes are replaced as MS_BIND|MS_REMOUNT replaces them (do_reconfigure_mnt):
// what `flags` does not ask for is cleared, and without an atime flag the mount gets
// relatime, path_mount's default; locked flags make both fail alike (EPERM).
int setattr_as_mount(int mount_fd, unsigned long flags) {
    constexpr unsigned long kPropagation = MS_PRIVATE | MS_SLAVE | MS_SHARED | MS_UNBINDABLE;
    mount_attr attr{};
    const bool recursive = (flags & MS_REC) != 0;
    if ((flags & (MS_BIND | MS_REMOUNT)) == (MS_BIND | MS_REMOUNT)) {
        constexpr std::array<std::pair<unsigned long, uint64_t>, 5> kFlags = {{
            {MS_RDONLY, MOUNT_ATTR_RDONLY},
            {MS_NOSUID, MOUNT_ATTR_NOSUID},
            {MS_NODEV, MOUNT_ATTR_NODEV},
            {MS_NOEXEC, MOUNT_ATTR_NOEXEC},
            {MS_NODIRATIME, MOUNT_ATTR_NODIRATIME},
        }};
        for (const auto& [mount_flag, attribute] : kFlags) {
            ((flags & mount_flag) != 0 ? attr.attr_set : attr.attr_clr) |= attribute;
        }
        attr.attr_clr |= MOUNT_ATTR__ATIME;
        attr.attr_set |= (flags & MS_NOATIME) != 0       ? MOUNT_ATTR_NOATIME
                         : (flags & MS_STRICTATIME) != 0 ? MOUNT_ATTR_STRICTATIME
                                                         : MOUNT_ATTR_RELATIME;
    } else if ((flags & ~(kPropagation | MS_REC)) == 0 &&
               std::popcount(flags & kPropagation) == 1) {
        attr.propagation = flags & kPropagation;
    } else {
        errno = EOPNOTSUPP;
        return -1;
    }
    unsigned int at_flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0U);
    return static_cast<int>(
        ::syscall(SYS_mount_setattr, mount_fd, "", at_flags, &attr, sizeof(attr)));
}

class LinuxSyscalls final : public Syscalls {
public:
    Status mount(const std::string& source, const std::string& target, const std::string& fstype,
                 unsigned long flags, const std::string& data) override {
        if (::mount(or_null(source), target.c_str(), or_null(fstype), flags, or_null(data)) < 0) {
            return Error::from_errno(fstype.empty() ? "mount" : cat("mount ", fstype));
        }
        return {};
    }
    Status mount_on(const std::string& source, int target_fd, const std::string& fstype,
                    unsigned long flags, const std::string& data) override {
        // A bind whose source is an fd (fs::fd_path's magic link): by the fd itself, not by
        // a lookup of /proc/self/fd/N, which after pivot_root is the container's /proc.
        if ((flags & (MS_BIND | MS_REMOUNT)) == MS_BIND) {
            if (int source_fd = fd_of_path(source); source_fd >= 0) {
                return bind_fd(source_fd, target_fd, (flags & MS_REC) != 0);
            }
        }
        if (::fchdir(target_fd) == 0) {
            return mount(source, ".", fstype, flags, data);
        }
        // A file (ENOTDIR), or a directory we may not search (EACCES: its mode, or an owner
        // the user namespace does not map), which mount(2) does not ask for. A remount or a
        // propagation change by the fd itself: the magic link is looked up through /proc.
        if (setattr_as_mount(target_fd, flags) == 0) {
            return {};
        }
        if (errno != EOPNOTSUPP && errno != ENOSYS) {
            return Error::from_errno(fstype.empty() ? "mount" : cat("mount ", fstype));
        }
        return mount(source, fs::fd_path(target_fd), fstype, flags, data);
    }
    Status umount2(const std::string& target, int flags) override {
        return check_syscall(::umount2(target.c_str(), flags), cat("umount ", target));
    }
    Status pivot_root(const std::string& new_root, const std::string& put_old) override {
        return check_syscall(
            static_cast<int>(::syscall(SYS_pivot_root, new_root.c_str(), put_old.c_str())),
            "pivot_root");
    }
    Status chroot(const std::string& path) override {
        return check_syscall(::chroot(path.c_str()), "chroot");
    }
    Status mknodat(int dir_fd, const std::string& name, mode_t mode, dev_t device) override {
        return check_syscall(::mknodat(dir_fd, name.c_str(), mode, device), cat("mknod ", name));
    }
    Status symlinkat(const std::string& target, int dir_fd, const std::string& name) override {
        return check_syscall(::symlinkat(target.c_str(), dir_fd, name.c_str()),
                             cat("symlink ", name));
    }
    Status fchownat(int dir_fd, const std::string& name, uid_t uid, gid_t gid, int flags) override {
        return check_syscall(::fchownat(dir_fd, name.c_str(), uid, gid, flags),
                             cat("chown ", name));
    }
    Status mkdirat(int dir_fd, const std::string& name, mode_t mode) override {
        return check_syscall(::mkdirat(dir_fd, name.c_str(), mode), cat("mkdir ", name));
    }
    Status fchmodat(int dir_fd, const std::string& name, mode_t mode) override {
        return check_syscall(::fchmodat(dir_fd, name.c_str(), mode, 0), cat("chmod ", name));
    }
    Status mount_setattr(int mount_fd, bool recursive, uint64_t attr_set,
                         uint64_t attr_clr) override {
        mount_attr attr{};
        attr.attr_set = attr_set;
        attr.attr_clr = attr_clr;
        unsigned int flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0U);
        return check_syscall(static_cast<int>(::syscall(SYS_mount_setattr, mount_fd, "", flags,
                                                        &attr, sizeof(attr))),
                             "mount_setattr");
    }
    Status mount_setattr_idmap(int tree_fd, bool recursive, int userns_fd) override {
        mount_attr attr{};
        attr.attr_set = MOUNT_ATTR_IDMAP;
        attr.userns_fd = static_cast<uint64_t>(userns_fd);
        unsigned int flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0U);
        return check_syscall(
            static_cast<int>(::syscall(SYS_mount_setattr, tree_fd, "", flags, &attr, sizeof(attr))),
            "mount_setattr(MOUNT_ATTR_IDMAP)");
    }
    Result<int> open_tree_clone(const std::string& path, bool recursive) override {
        unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0U);
        int fd = static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, path.c_str(), flags));
        if (fd < 0) {
            return Error::from_errno("open_tree");
        }
        return fd;
    }
    Result<int> open_tree_clone_fd(int fd) override {
        unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH;
        int tree = static_cast<int>(::syscall(SYS_open_tree, fd, "", flags));
        if (tree < 0) {
            return Error::from_errno("open_tree");
        }
        return tree;
    }
    Status move_mount(int from_fd, int target_fd) override {
        return check_syscall(
            static_cast<int>(::syscall(SYS_move_mount, from_fd, "", target_fd, "",
                                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)),
            "move_mount");
    }
    Result<unsigned long> mount_flags_of(int fd) override {
        struct statvfs info {};
        if (::fstatvfs(fd, &info) < 0) {
            return Error::from_errno("statvfs");
        }
        return info.f_flag;
    }
    Status sethostname(const std::string& name) override {
        return check_syscall(::sethostname(name.data(), name.size()), "sethostname");
    }
    Status setdomainname(const std::string& name) override {
        return check_syscall(::setdomainname(name.data(), name.size()), "setdomainname");
    }
    Status setgroups(const std::vector<gid_t>& groups) override {
        return check_syscall(::setgroups(groups.size(), groups.data()), "setgroups");
    }
    Status setresgid(gid_t gid) override {
        return check_syscall(::setresgid(gid, gid, gid), cat("setresgid ", gid));
    }
    Status setresuid(uid_t uid) override {
        return check_syscall(::setresuid(uid, uid, uid), cat("setresuid ", uid));
    }
    void umask(mode_t mask) override { ::umask(mask); }
    Status chdir(const std::string& path) override {
        return check_syscall(::chdir(path.c_str()), cat("chdir ", path));
    }
    Status fchdir(int fd) override { return check_syscall(::fchdir(fd), "fchdir"); }
    Status setns(int fd, int nstype) override {
        return check_syscall(::setns(fd, nstype), "setns");
    }
    Status unshare(unsigned long flags) override {
        return check_syscall(::unshare(static_cast<int>(flags)), "unshare");
    }
    Status setsid() override { return check_syscall(::setsid() < 0 ? -1 : 0, "setsid"); }
    Result<int> prctl(int option, unsigned long arg2, unsigned long arg3) override {
        int result = ::prctl(option, arg2, arg3, 0UL, 0UL);
        if (result < 0) {
            return Error::from_errno(cat("prctl(", option, ")"));
        }
        return result;
    }
    Status capset(uint64_t effective, uint64_t permitted, uint64_t inheritable) override {
        // The raw system call rather than libcap's cap_set_proc(): no allocations, and only
        // this thread is meant (the init is single-threaded).
        __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
        std::array<__user_cap_data_struct, 2> data{};
        for (size_t i = 0; i < data.size(); ++i) {
            data[i].effective = static_cast<uint32_t>(effective >> (32 * i));
            data[i].permitted = static_cast<uint32_t>(permitted >> (32 * i));
            data[i].inheritable = static_cast<uint32_t>(inheritable >> (32 * i));
        }
        return check_syscall(static_cast<int>(::syscall(SYS_capset, &header, data.data())),
                             "capset");
    }
    Result<int> seccomp_set_filter(unsigned int flags, const sock_fprog& program) override {
        long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &program);
        if (rc < 0) {
            return Error::from_errno("load the seccomp filter");
        }
        return static_cast<int>(rc);
    }
    Status close_range(unsigned int first, unsigned int last, unsigned int flags) override {
        return check_syscall(static_cast<int>(::syscall(SYS_close_range, first, last, flags)),
                             "close_range");
    }
    Status cloexec_fds_from(unsigned int first) override {
        if (int error = fs::cloexec_fds_from(static_cast<int>(first)); error != 0) {
            return Error::from_errno(error, "mark each fd in /proc/self/fd close-on-exec");
        }
        return {};
    }
    void set_signal_mask(const sigset_t& mask) override {
        ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    }
    Status sched_setattr(const SchedAttr& attr) override {
        // The kernel's layout (include/uapi/linux/sched/types.h), which glibc 2.36 lacks.
        struct {
            uint32_t size;
            uint32_t sched_policy;
            uint64_t sched_flags;
            int32_t sched_nice;
            uint32_t sched_priority;
            uint64_t sched_runtime;
            uint64_t sched_deadline;
            uint64_t sched_period;
        } kernel_attr{};
        static_assert(sizeof(kernel_attr) == 48); // SCHED_ATTR_SIZE_VER0
        kernel_attr.size = sizeof(kernel_attr);
        kernel_attr.sched_policy = attr.policy;
        kernel_attr.sched_flags = attr.flags;
        kernel_attr.sched_nice = attr.nice;
        kernel_attr.sched_priority = attr.priority;
        kernel_attr.sched_runtime = attr.runtime;
        kernel_attr.sched_deadline = attr.deadline;
        kernel_attr.sched_period = attr.period;
        return check_syscall(static_cast<int>(::syscall(SYS_sched_setattr, 0, &kernel_attr, 0)),
                             "sched_setattr");
    }
    Status ioprio_set(int value) override {
        constexpr int kWhoProcess = 1; // IOPRIO_WHO_PROCESS
        return check_syscall(static_cast<int>(::syscall(SYS_ioprio_set, kWhoProcess, 0, value)),
                             "ioprio_set");
    }
    Status sched_setaffinity(const std::vector<uint32_t>& cpus) override {
        // Sized for the highest cpu asked for, or for every cpu Linux can have.
        const uint32_t count = cpus.empty() ? 8192 : cpus.back() + 1;
        cpu_set_t* set = CPU_ALLOC(count);
        if (set == nullptr) {
            return Error(ENOMEM, "sched_setaffinity: out of memory");
        }
        const size_t size = CPU_ALLOC_SIZE(count);
        CPU_ZERO_S(size, set);
        if (cpus.empty()) {
            for (uint32_t cpu = 0; cpu < count; ++cpu) {
                CPU_SET_S(cpu, size, set);
            }
        }
        for (uint32_t cpu : cpus) {
            CPU_SET_S(cpu, size, set);
        }
        int result = ::sched_setaffinity(0, size, set);
        int saved = errno;
        CPU_FREE(set);
        errno = saved;
        return check_syscall(result, "sched_setaffinity");
    }
    Status execve(int fd, const std::string& path, char* const argv[],
                  char* const envp[]) override {
        if (fd >= 0) {
            ::execveat(fd, "", argv, envp, AT_EMPTY_PATH);
        } else {
            ::execve(path.c_str(), argv, envp);
        }
        return Error::from_errno("execve");
    }
    Status set_mempolicy(int mode, const std::vector<unsigned long>& nodes,
                         unsigned long max_node) override {
        // No glibc wrapper (libnuma has one): the raw system call.
        return check_syscall(static_cast<int>(::syscall(SYS_set_mempolicy, mode,
                                                        nodes.empty() ? nullptr : nodes.data(),
                                                        nodes.empty() ? 0UL : max_node)),
                             "set_mempolicy");
    }
    Status setrlimit(int resource, uint64_t soft, uint64_t hard) override {
        rlimit value{soft, hard};
        return check_syscall(::setrlimit(static_cast<__rlimit_resource>(resource), &value),
                             cat("setrlimit(", resource, ")"));
    }
    Status personality(unsigned long domain) override {
        return check_syscall(::personality(domain) < 0 ? -1 : 0, "personality");
    }
    Status write_proc(const procfs::Handle& proc, const std::string& path,
                      std::string_view value) override {
        return proc.write(path, value);
    }
    Result<pid_t> clone_userns_holder() override {
        // Without a new stack: like fork(), 0 in the child.
        const pid_t parent = ::getpid();
        long pid = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, 0);
        if (pid < 0) {
            return Error::from_errno("clone(CLONE_NEWUSER)");
        }
        if (pid == 0) {
            // Only async-signal-safe calls here; it dies with us should we die first.
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) {
                ::_exit(0);
            }
            for (;;) {
                ::pause();
            }
        }
        return static_cast<pid_t>(pid);
    }
    Result<pid_t> clone_namespace_holder(int userns_fd) override {
        std::array<int, 2> ends{};
        if (::pipe2(ends.data(), O_CLOEXEC) < 0) {
            return Error::from_errno("pipe2");
        }
        UniqueFd read_end(ends[0]);
        UniqueFd write_end(ends[1]);
        const pid_t parent = ::getpid();
        long pid = ::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, 0);
        if (pid < 0) {
            return Error::from_errno("clone");
        }
        if (pid == 0) {
            // Only async-signal-safe calls here. The report: whether setns failed (1) and
            // its errno.
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            std::array<int, 2> report{};
            if (::getppid() != parent) {
                ::_exit(0);
            }
            if (::setns(userns_fd, CLONE_NEWUSER) < 0) {
                report = {1, errno};
            }
            (void)!::write(write_end.get(), report.data(), sizeof(report));
            for (;;) {
                ::pause();
            }
        }
        write_end.reset();
        std::array<int, 2> report{};
        ssize_t got = 0;
        while ((got = ::read(read_end.get(), report.data(), sizeof(report))) < 0 &&
               errno == EINTR) {
        }
        if (got == static_cast<ssize_t>(sizeof(report)) && report[0] == 0) {
            return static_cast<pid_t>(pid);
        }
        ::kill(static_cast<pid_t>(pid), SIGKILL);
        while (::waitpid(static_cast<pid_t>(pid), nullptr, 0) < 0 && errno == EINTR) {
        }
        if (got != static_cast<ssize_t>(sizeof(report))) {
            return Error(EPIPE, "the namespace holder exited before it reported");
        }
        return Error(report[1], "join the user namespace (setns)");
    }
};

} // namespace

Syscalls& linux_syscalls() {
    static LinuxSyscalls instance;
    return instance;
}

} // namespace minirun
