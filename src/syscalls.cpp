#include "syscalls.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace minirun {
namespace {

const char* or_null(const std::string& text) {
    return text.empty() ? nullptr : text.c_str();
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
    Status mount_setattr(const std::string& path, bool recursive, uint64_t attr_set,
                         uint64_t attr_clr) override {
        mount_attr attr{};
        attr.attr_set = attr_set;
        attr.attr_clr = attr_clr;
        unsigned int flags = AT_NO_AUTOMOUNT | (recursive ? AT_RECURSIVE : 0U);
        return check_syscall(static_cast<int>(::syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(),
                                                        flags, &attr, sizeof(attr))),
                             "mount_setattr");
    }
    Result<int> open_tree_clone(const std::string& path, bool recursive) override {
        unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0U);
        int fd = static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, path.c_str(), flags));
        if (fd < 0) {
            return Error::from_errno("open_tree");
        }
        return fd;
    }
    Status move_mount(int from_fd, int target_fd) override {
        return check_syscall(
            static_cast<int>(::syscall(SYS_move_mount, from_fd, "", target_fd, "",
                                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)),
            "move_mount");
    }
    Result<unsigned long> mount_flags_of(const std::string& path) override {
        struct statvfs info {};
        if (::statvfs(path.c_str(), &info) < 0) {
            return Error::from_errno(cat("statvfs ", path));
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
};

} // namespace

Syscalls& linux_syscalls() {
    static LinuxSyscalls instance;
    return instance;
}

} // namespace minirun
