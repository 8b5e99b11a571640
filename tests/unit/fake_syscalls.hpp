// A Syscalls that records what the runtime asks for instead of doing it, so the order and
// flags of mounts, devices and id changes are checked without root.
#pragma once

#include "fs.hpp"
#include "syscalls.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace minirun::testing {

struct MountCall {
    std::string source;
    std::string target; // an fd path is recorded as the path it points to
    std::string fs_type;
    unsigned long flags = 0;
    std::string data;
};

class FakeSyscalls : public Syscalls {
public:
    std::vector<MountCall> mounts;
    std::vector<std::string> calls; // "setresuid 0", "mknod /dev/null", ...
    unsigned long statvfs_flags = 0;

    // `/proc/self/fd/N` → the real path, so tests can compare against the temp rootfs.
    static std::string resolve(const std::string& path) {
        if (path.starts_with("/proc/self/fd/")) {
            int fd = std::stoi(path.substr(14));
            auto target = fs::fd_target(fd);
            return target ? *target : path;
        }
        return path;
    }

    Status mount(const std::string& source, const std::string& target, const std::string& fstype,
                 unsigned long flags, const std::string& data) override {
        mounts.push_back({source, resolve(target), fstype, flags, data});
        calls.push_back("mount " + resolve(target));
        return {};
    }
    Status umount2(const std::string& target, int /*flags*/) override {
        calls.push_back("umount " + target);
        return {};
    }
    Status pivot_root(const std::string& new_root, const std::string& put_old) override {
        calls.push_back("pivot_root " + new_root + " " + put_old);
        return {};
    }
    Status chroot(const std::string& path) override {
        calls.push_back("chroot " + path);
        return {};
    }
    Status mknodat(int dir_fd, const std::string& name, mode_t mode, dev_t /*device*/) override {
        calls.push_back("mknod " + resolve(fs::fd_path(dir_fd)) + "/" + name);
        // A real file, so that later steps see it exist.
        int fd = ::openat(dir_fd, name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, mode & 0777);
        if (fd >= 0) {
            ::close(fd);
        }
        return {};
    }
    Status symlinkat(const std::string& target, int dir_fd, const std::string& name) override {
        calls.push_back("symlink " + resolve(fs::fd_path(dir_fd)) + "/" + name + " -> " + target);
        return check_syscall(::symlinkat(target.c_str(), dir_fd, name.c_str()), "symlink");
    }
    Status fchownat(int dir_fd, const std::string& name, uid_t uid, gid_t gid,
                    int /*flags*/) override {
        calls.push_back(cat("chown ", resolve(fs::fd_path(dir_fd)), "/", name, " ", uid, ":", gid));
        return {};
    }
    Status mount_setattr(const std::string& path, bool recursive, uint64_t attr_set,
                         uint64_t attr_clr) override {
        calls.push_back(cat("mount_setattr ", resolve(path), recursive ? " recursive" : "", " set ",
                            attr_set, " clear ", attr_clr));
        return {};
    }
    // Without root there is no detached mount to make: an O_PATH fd of the source stands in.
    Result<int> open_tree_clone(const std::string& path, bool recursive) override {
        calls.push_back(cat("open_tree ", path, recursive ? " recursive" : ""));
        int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
        if (fd < 0) {
            return Error::from_errno("open_tree");
        }
        return fd;
    }
    Status move_mount(int from_fd, int target_fd) override {
        std::string target = resolve(fs::fd_path(target_fd));
        calls.push_back(cat("move_mount ", resolve(fs::fd_path(from_fd)), " ", target));
        mounts.push_back({resolve(fs::fd_path(from_fd)), target, "", 0, ""});
        return {};
    }
    Result<unsigned long> mount_flags_of(const std::string& /*path*/) override {
        return statvfs_flags;
    }
    Status sethostname(const std::string& name) override {
        calls.push_back("sethostname " + name);
        return {};
    }
    Status setdomainname(const std::string& name) override {
        calls.push_back("setdomainname " + name);
        return {};
    }
    Status setgroups(const std::vector<gid_t>& groups) override {
        std::string line = "setgroups";
        for (gid_t gid : groups) {
            line += cat(" ", gid);
        }
        calls.push_back(line);
        return {};
    }
    Status setresgid(gid_t gid) override {
        calls.push_back(cat("setresgid ", gid));
        return {};
    }
    Status setresuid(uid_t uid) override {
        calls.push_back(cat("setresuid ", uid));
        return {};
    }
    void umask(mode_t mask) override { calls.push_back(cat("umask ", mask)); }
    Status chdir(const std::string& path) override {
        calls.push_back("chdir " + path);
        return {};
    }
    Status fchdir(int fd) override {
        calls.push_back("fchdir " + resolve(fs::fd_path(fd)));
        return {};
    }
};

} // namespace minirun::testing
