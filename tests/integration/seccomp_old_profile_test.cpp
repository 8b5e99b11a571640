// A deny-by-default seccomp profile written before close_range, clone3, openat2, faccessat2
// and the pidfd calls existed (issue 38). Without noNewPrivileges the filter goes on while
// mini-run is still privileged, before its last steps (the privilege drop, the exec's
// preparation, startContainer hooks, the exec gate): each of those must do without the
// calls such a profile refuses, as runc and crun do.
#include "security_helpers.hpp"

#include <catch2/catch.hpp>

using namespace security_test;

namespace {

// Docker's default profile as of 18.09 (2018), x86_64, the unconditional allow list; clone
// with its argument rule (no namespace flags) as Docker writes it. Not in it, because they
// came later: close_range, clone3, openat2, faccessat2, pidfd_open, pidfd_send_signal,
// pidfd_getfd, rseq, membarrier, io_uring_*, fsopen and the mount API. Left out too:
// execveat, which some allow lists of the time lacked, so that the exec gate (which
// mini-run enters with execveat) has to do without it.
const std::vector<std::string>& profile_2018() {
    static const std::vector<std::string> names = split_words(
        "accept accept4 access adjtimex alarm bind brk capget capset chdir chmod chown "
        "clock_getres clock_gettime clock_nanosleep close connect copy_file_range creat dup "
        "dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_pwait epoll_wait eventfd eventfd2 "
        "execve exit exit_group faccessat fadvise64 fallocate fanotify_mark fchdir fchmod "
        "fchmodat fchown fchownat fcntl fdatasync fgetxattr flistxattr flock fork fremovexattr "
        "fsetxattr fstat fstatfs fsync ftruncate futex futimesat getcpu getcwd getdents "
        "getdents64 getegid geteuid getgid getgroups getitimer getpeername getpgid getpgrp "
        "getpid getppid getpriority getrandom getresgid getresuid getrlimit get_robust_list "
        "getrusage getsid getsockname getsockopt gettid gettimeofday getuid getxattr "
        "inotify_add_watch inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl "
        "io_destroy io_getevents io_pgetevents ioprio_get ioprio_set io_setup io_submit kill "
        "lchown lgetxattr link linkat listen listxattr llistxattr lremovexattr lseek lsetxattr "
        "lstat madvise memfd_create mincore mkdir mkdirat mknod mknodat mlock mlock2 mlockall "
        "mmap mprotect mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedsend mq_unlink "
        "mremap msgctl msgget msgrcv msgsnd msync munlock munlockall munmap nanosleep "
        "newfstatat open openat pause pipe pipe2 poll ppoll prctl pread64 preadv preadv2 "
        "prlimit64 pselect6 pwrite64 pwritev pwritev2 read readahead readlink readlinkat readv "
        "recvfrom recvmmsg recvmsg remap_file_pages removexattr rename renameat renameat2 "
        "restart_syscall rmdir rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo "
        "rt_sigreturn rt_sigsuspend rt_sigtimedwait rt_tgsigqueueinfo sched_getaffinity "
        "sched_getattr sched_getparam sched_get_priority_max sched_get_priority_min "
        "sched_getscheduler sched_rr_get_interval sched_setaffinity sched_setattr "
        "sched_setparam sched_setscheduler sched_yield seccomp select semctl semget semop "
        "semtimedop sendfile sendmmsg sendmsg sendto setfsgid setfsuid setgid setgroups "
        "setitimer setpgid setpriority setregid setresgid setresuid setreuid setrlimit "
        "set_robust_list setsid setsockopt set_tid_address setuid setxattr shmat shmctl shmdt "
        "shmget shutdown sigaltstack signalfd signalfd4 socket socketpair splice stat statfs "
        "statx symlink symlinkat sync sync_file_range syncfs sysinfo tee tgkill time "
        "timer_create timer_delete timerfd_create timerfd_gettime timerfd_settime "
        "timer_getoverrun timer_gettime timer_settime times tkill truncate umask uname unlink "
        "unlinkat utime utimensat utimes vfork vmsplice wait4 waitid write writev arch_prctl "
        "modify_ldt personality");
    return names;
}

// `errno_ret`: the profile's defaultErrnoRet, 0 for none (EPERM, SCMP_ACT_ERRNO's own).
nlohmann::json old_profile(int errno_ret) {
    nlohmann::json profile = {
        {"defaultAction", "SCMP_ACT_ERRNO"},
        {"architectures", {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"}},
        {"syscalls",
         {{{"names", profile_2018()}, {"action", "SCMP_ACT_ALLOW"}},
          // CLONE_NEWNS | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWCGROUP all clear.
          {{"names", {"clone"}},
           {"action", "SCMP_ACT_ALLOW"},
           {"args", {{{"index", 0}, {"value", 2114060288}, {"op", "SCMP_CMP_MASKED_EQ"}}}}}}}};
    if (errno_ret != 0) {
        profile["defaultErrnoRet"] = errno_ret;
    }
    return profile;
}

void configure(TempBundle& bundle, int errno_ret, bool no_new_privileges, int uid) {
    writable_tmp(bundle);
    bundle.config["linux"]["seccomp"] = old_profile(errno_ret);
    bundle.config["process"]["noNewPrivileges"] = no_new_privileges;
    bundle.config["process"]["user"]["uid"] = uid;
    bundle.config["process"]["user"]["gid"] = uid;
}

// What the container's shell (pid 1) reports: its fds, listed first by an ls with no
// redirection (a redirected command or a pipe has the shell hold fds of its own, such as
// ash's saved stdout at fd 10), its ids, the filter, no_new_privs, and that a refused call
// stays refused.
constexpr const char* kReport = "echo fds; ls /proc/1/fd; echo uid $(id -u); "
                                "grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; "
                                "echo hello > /tmp/f && cat /tmp/f";

void check_report(const std::string& out, int uid, bool no_new_privileges) {
    CHECK(value_of(out, "uid") == std::to_string(uid));
    CHECK(seccomp_line(out) == "2");
    CHECK(status_value(out, "NoNewPrivs") == (no_new_privileges ? "1" : "0"));
    CHECK(contains(out, "fds\n0\n1\n2\nuid "));
    CHECK(contains(out, "\nhello\n"));
}

} // namespace

TEST_CASE("seccomp: a 2018 deny-by-default profile runs, whichever order the filter takes",
          "[security][seccomp][seccomp-old]") {
    const int errno_ret = GENERATE(0, 38); // EPERM, ENOSYS (runc's seccomp.bats)
    const bool no_new_privileges = GENERATE(false, true);
    const int uid = GENERATE(0, 1000);
    TempBundle bundle("seccomp-2018");
    configure(bundle, errno_ret, no_new_privileges, uid);
    INFO("defaultErrnoRet " << errno_ret << ", noNewPrivileges " << no_new_privileges << ", uid "
                            << uid);
    SECTION("run") {
        bundle.set_shell(kReport);
        auto result = run_ok(bundle);
        INFO(result.describe());
        check_report(result.out, uid, no_new_privileges);
    }
    SECTION("a startContainer hook runs under the filter") {
        // Forked and waited for under the filter (no pidfd_open, no close_range).
        bundle.config["hooks"]["startContainer"] = {
            {{"path", "/bin/sh"}, {"args", {"sh", "-c", "echo hook-ran > /tmp/hook"}}}};
        bundle.set_shell(std::string("cat /tmp/hook; ") + kReport);
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(contains(result.out, "hook-ran\n"));
        check_report(result.out, uid, no_new_privileges);
    }
    SECTION("the refused calls stay refused") {
        bundle.set_shell("unshare -U true 2>&1; echo unshare $?");
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "unshare") != "0");
        CHECK(contains(result.out,
                       errno_ret == 38 ? "Function not implemented" : "Operation not permitted"));
    }
    check_no_leftovers(bundle);
}

namespace {

template <int ErrnoRet, bool NoNewPrivileges, int Uid>
void configure_running(TempBundle& bundle) {
    configure(bundle, ErrnoRet, NoNewPrivileges, Uid);
}

void check_exec(const Running& container, int uid, bool no_new_privileges) {
    auto result = container.exec({}, {"sh", "-c", kReport});
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    check_report(result.out, uid, no_new_privileges);
    auto detached = container.exec({"--detach"}, {"sh", "-c", "true"});
    INFO(detached.describe());
    CHECK(detached.exit_code == 0);
}

} // namespace

TEST_CASE("seccomp: exec into a container with a 2018 deny-by-default profile",
          "[security][seccomp][seccomp-old][exec]") {
    SECTION("EPERM, noNewPrivileges false, uid 1000") {
        Running container("seccomp-2018-exec", configure_running<0, false, 1000>);
        check_exec(container, 1000, false);
    }
    SECTION("ENOSYS, noNewPrivileges false, root") {
        Running container("seccomp-2018-exec", configure_running<38, false, 0>);
        check_exec(container, 0, false);
    }
    SECTION("ENOSYS, noNewPrivileges true, uid 1000") {
        Running container("seccomp-2018-exec", configure_running<38, true, 1000>);
        check_exec(container, 1000, true);
    }
}
