// A Syscalls that records what the runtime asks for instead of doing it, so the order and
// flags of mounts, devices, id changes, capabilities and the exec are checked without root.
//
// Any call can be made to fail: fail("setresuid", EPERM) fails the next setresuid,
// fail_call(7, EIO) the 7th call of any kind (counted from 1, in `calls` order). A failed
// call is recorded too, with " -> failed" after it.
#pragma once

#include "fs.hpp"
#include "syscalls.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace minirun::testing {

struct MountCall {
    std::string source; // an fd path is recorded as the path it points to, as the target
    std::string target; // an fd path is recorded as the path it points to
    std::string fs_type;
    unsigned long flags = 0;
    std::string data;
};

class FakeSyscalls : public Syscalls {
public:
    std::vector<MountCall> mounts;
    std::vector<std::string> calls;    // "setresuid 0", "mknod /dev/null", ...
    std::vector<std::string> exec_env; // the last execve's envp
    unsigned long statvfs_flags = 0;
    // prctl(PR_CAPBSET_READ) answers 1 (present) for every capability.
    int capbset_read_answer = 1;

    void fail(const std::string& name, int error) { fail_by_name_[name] = error; }
    void fail_call(size_t number, int error) {
        fail_number_ = number;
        fail_number_errno_ = error;
    }
    // The calls' names only ("setresuid", "prctl PR_SET_KEEPCAPS"), in order.
    [[nodiscard]] std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const std::string& call : calls) {
            std::string name = call.substr(0, call.find(' '));
            if (name == "prctl") {
                size_t end = call.find(' ', 6);
                name = call.substr(0, end);
            }
            out.push_back(name);
        }
        return out;
    }

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
        mounts.push_back({resolve(source), resolve(target), fstype, flags, data});
        return record("mount " + resolve(target));
    }
    // Recorded as the mount onto the fd's path that it stands for.
    Status mount_on(const std::string& source, int target_fd, const std::string& fstype,
                    unsigned long flags, const std::string& data) override {
        return mount(source, fs::fd_path(target_fd), fstype, flags, data);
    }
    Status umount2(const std::string& target, int /*flags*/) override {
        return record("umount " + target);
    }
    Status pivot_root(const std::string& new_root, const std::string& put_old) override {
        return record("pivot_root " + new_root + " " + put_old);
    }
    Status chroot(const std::string& path) override { return record("chroot " + path); }
    Status mknodat(int dir_fd, const std::string& name, mode_t mode, dev_t /*device*/) override {
        MR_TRY(record("mknod " + resolve(fs::fd_path(dir_fd)) + "/" + name));
        // A real file, so that later steps see it exist.
        int fd = ::openat(dir_fd, name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, mode & 0777);
        if (fd >= 0) {
            ::close(fd);
        }
        return {};
    }
    Status symlinkat(const std::string& target, int dir_fd, const std::string& name) override {
        MR_TRY(record("symlink " + resolve(fs::fd_path(dir_fd)) + "/" + name + " -> " + target));
        return check_syscall(::symlinkat(target.c_str(), dir_fd, name.c_str()), "symlink");
    }
    Status fchownat(int dir_fd, const std::string& name, uid_t uid, gid_t gid,
                    int /*flags*/) override {
        return record(cat("chown ", resolve(fs::fd_path(dir_fd)), "/", name, " ", uid, ":", gid));
    }
    Status mkdirat(int dir_fd, const std::string& name, mode_t mode) override {
        MR_TRY(record(cat("mkdir ", resolve(fs::fd_path(dir_fd)), "/", name, " ", mode)));
        // A real directory, so that later steps can open it; one there already is fine (the
        // fake mounts nothing: tmpcopyup's copy lands on its source).
        if (::mkdirat(dir_fd, name.c_str(), mode) < 0 && errno != EEXIST) {
            return Error::from_errno("mkdir");
        }
        return {};
    }
    Status fchmodat(int dir_fd, const std::string& name, mode_t mode) override {
        return record(cat("chmod ", resolve(fs::fd_path(dir_fd)), "/", name, " ", mode));
    }
    Status mount_setattr(int mount_fd, bool recursive, uint64_t attr_set,
                         uint64_t attr_clr) override {
        return record(cat("mount_setattr ", resolve(fs::fd_path(mount_fd)),
                          recursive ? " recursive" : "", " set ", attr_set, " clear ", attr_clr));
    }
    Status mount_setattr_idmap(int tree_fd, bool recursive, int /*userns_fd*/) override {
        return record(cat("mount_setattr_idmap ", resolve(fs::fd_path(tree_fd)),
                          recursive ? " recursive" : ""));
    }
    // Without root there is no detached mount to make: an O_PATH fd of the source stands in.
    Result<int> open_tree_clone(const std::string& path, bool recursive) override {
        MR_TRY(record(cat("open_tree ", path, recursive ? " recursive" : "")));
        int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
        if (fd < 0) {
            return Error::from_errno("open_tree");
        }
        return fd;
    }
    // A duplicate of the fd stands in for the detached bind of its file.
    Result<int> open_tree_clone_fd(int fd) override {
        MR_TRY(record(cat("open_tree fd ", resolve(fs::fd_path(fd)))));
        int tree = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (tree < 0) {
            return Error::from_errno("open_tree");
        }
        return tree;
    }
    Status move_mount(int from_fd, int target_fd) override {
        std::string target = resolve(fs::fd_path(target_fd));
        MR_TRY(record(cat("move_mount ", resolve(fs::fd_path(from_fd)), " ", target)));
        mounts.push_back({resolve(fs::fd_path(from_fd)), target, "", 0, ""});
        // The tree fd now names the attached mount, at the destination: so it does here.
        if (::dup3(target_fd, from_fd, O_CLOEXEC) < 0) {
            return Error::from_errno("move_mount");
        }
        return {};
    }
    Result<unsigned long> mount_flags_of(int /*fd*/) override { return statvfs_flags; }
    Status sethostname(const std::string& name) override { return record("sethostname " + name); }
    Status setdomainname(const std::string& name) override {
        return record("setdomainname " + name);
    }
    Status setgroups(const std::vector<gid_t>& groups) override {
        std::string line = "setgroups";
        for (gid_t gid : groups) {
            line += cat(" ", gid);
        }
        return record(line);
    }
    Status setresgid(gid_t gid) override { return record(cat("setresgid ", gid)); }
    Status setresuid(uid_t uid) override { return record(cat("setresuid ", uid)); }
    void umask(mode_t mask) override { calls.push_back(cat("umask ", mask)); }
    Status chdir(const std::string& path) override { return record("chdir " + path); }
    Status fchdir(int fd) override { return record("fchdir " + resolve(fs::fd_path(fd))); }

    Status setns(int fd, int nstype) override { return record(cat("setns ", fd, " ", nstype)); }
    Status unshare(unsigned long flags) override { return record(cat("unshare ", flags)); }
    Status setsid() override { return record("setsid"); }
    Result<int> prctl(int option, unsigned long arg2, unsigned long arg3) override {
        MR_TRY(record(cat("prctl ", prctl_name(option), " ", arg2, " ", arg3)));
        if (option == PR_CAPBSET_READ) {
            return capbset_read_answer;
        }
        return 0;
    }
    Status capset(uint64_t effective, uint64_t permitted, uint64_t inheritable) override {
        return record(cat("capset ", effective, " ", permitted, " ", inheritable));
    }
    Result<int> seccomp_set_filter(unsigned int flags, const sock_fprog& program) override {
        MR_TRY(record(cat("seccomp ", flags, " ", program.len)));
        return 0;
    }
    Status close_range(unsigned int first, unsigned int last, unsigned int flags) override {
        return record(cat("close_range ", first, " ", last, " ", flags));
    }
    Status cloexec_fds_from(unsigned int first) override {
        return record(cat("cloexec_fds_from ", first));
    }
    void set_signal_mask(const sigset_t& /*mask*/) override { calls.push_back("sigprocmask"); }
    Status sched_setattr(const SchedAttr& attr) override {
        return record(cat("sched_setattr ", attr.policy, " flags ", attr.flags, " nice ", attr.nice,
                          " priority ", attr.priority, " dl ", attr.runtime, "/", attr.deadline,
                          "/", attr.period));
    }
    Status ioprio_set(int value) override {
        return record(cat("ioprio_set ", value >> 13, " ", value & 0x1fff));
    }
    Status sched_setaffinity(const std::vector<uint32_t>& cpus) override {
        std::string line = "sched_setaffinity";
        for (uint32_t cpu : cpus) {
            line += cat(" ", cpu);
        }
        return record(cpus.empty() ? line + " all" : line);
    }
    Status execve(int fd, const std::string& path, char* const argv[],
                  char* const envp[]) override {
        exec_env.clear();
        for (size_t i = 0; envp[i] != nullptr; ++i) {
            exec_env.emplace_back(envp[i]);
        }
        std::string line = fd >= 0 ? "execve (fd)" : "execve " + path;
        for (size_t i = 0; argv[i] != nullptr; ++i) {
            line += cat(" ", argv[i]);
        }
        return record(line);
    }
    // "set_mempolicy <mode with flags> <mask words, hex, lowest first> <maxnode>".
    Status set_mempolicy(int mode, const std::vector<unsigned long>& nodes,
                         unsigned long max_node) override {
        std::string line = cat("set_mempolicy ", mode);
        if (nodes.empty()) {
            line += " NULL";
        }
        for (unsigned long word : nodes) {
            char hex[32];
            std::snprintf(hex, sizeof hex, " %lx", word);
            line += hex;
        }
        return record(cat(line, " ", max_node));
    }
    Status setrlimit(int resource, uint64_t soft, uint64_t hard) override {
        return record(cat("setrlimit ", resource, " ", soft, " ", hard));
    }
    Status personality(unsigned long domain) override {
        return record(cat("personality ", domain));
    }
    // "write_proc /proc/<path> <value>" (a handle is a procfs root, whichever kind), the
    // value's trailing newlines dropped.
    Status write_proc(const procfs::Handle& proc, const std::string& path,
                      std::string_view value) override {
        while (!value.empty() && value.back() == '\n') {
            value.remove_suffix(1);
        }
        (void)proc;
        return record(cat("write_proc /proc/", path, " ", value));
    }
    // A real child that waits to be killed (in no new namespace), so that the caller's
    // /proc/<pid>/ and its kill and reap work as with the real one.
    Result<pid_t> clone_userns_holder() override {
        MR_TRY(record("clone_userns_holder"));
        pid_t pid = ::fork();
        if (pid < 0) {
            return Error::from_errno("fork");
        }
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (;;) {
                ::pause();
            }
        }
        return pid;
    }
    // The same for the holder of a joined user namespace: it joins nothing.
    Result<pid_t> clone_namespace_holder(int userns_fd) override {
        MR_TRY(record(cat("clone_namespace_holder ", userns_fd)));
        pid_t pid = ::fork();
        if (pid < 0) {
            return Error::from_errno("fork");
        }
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (;;) {
                ::pause();
            }
        }
        return pid;
    }

    static std::string prctl_name(int option) {
        static const std::map<int, std::string> kNames = {
            {PR_SET_PDEATHSIG, "PR_SET_PDEATHSIG"},      {PR_SET_DUMPABLE, "PR_SET_DUMPABLE"},
            {PR_CAPBSET_READ, "PR_CAPBSET_READ"},        {PR_CAPBSET_DROP, "PR_CAPBSET_DROP"},
            {PR_SET_KEEPCAPS, "PR_SET_KEEPCAPS"},        {PR_CAP_AMBIENT, "PR_CAP_AMBIENT"},
            {PR_SET_NO_NEW_PRIVS, "PR_SET_NO_NEW_PRIVS"}};
        auto found = kNames.find(option);
        return found != kNames.end() ? found->second : std::to_string(option);
    }

private:
    // Records `line`, and fails it if told to.
    Status record(const std::string& line) {
        calls.push_back(line);
        std::string name = line.substr(0, line.find(' '));
        int error = 0;
        if (auto found = fail_by_name_.find(name); found != fail_by_name_.end()) {
            error = found->second;
            fail_by_name_.erase(found);
        } else if (fail_number_ != 0 && calls.size() == fail_number_) {
            error = fail_number_errno_;
        }
        if (error == 0) {
            return {};
        }
        calls.back() += " -> failed";
        return Error(error, cat(name, ": injected failure"));
    }

    std::map<std::string, int> fail_by_name_;
    size_t fail_number_ = 0;
    int fail_number_errno_ = 0;
};

} // namespace minirun::testing
