// The seccomp filter of the container's process, read back from inside (see
// security_test.cpp).
#include "security_helpers.hpp"

#include <catch2/catch.hpp>

using namespace security_test;

namespace {

// Every x86_64 system call busybox's shell, mkdir, touch, cat, ls and the runtime's last
// steps before execve need, for an allow-list profile.
const std::vector<std::string>& allow_list() {
    static const std::vector<std::string> names = split_words(
        "read write open openat openat2 close close_range stat fstat lstat newfstatat statx "
        "fstatfs statfs poll ppoll select pselect6 lseek mmap mprotect munmap mremap brk "
        "rt_sigaction rt_sigprocmask rt_sigreturn rt_sigsuspend sigaltstack ioctl pread64 "
        "pwrite64 readv writev access faccessat faccessat2 pipe pipe2 dup dup2 dup3 nanosleep "
        "clock_nanosleep clock_gettime clock_getres gettimeofday time getpid getppid gettid "
        "getuid geteuid getgid getegid getgroups getresuid getresgid setuid setgid setgroups "
        "setresuid setresgid setreuid setregid setfsuid setfsgid capget capset prctl arch_prctl "
        "set_tid_address set_robust_list get_robust_list rseq futex clone clone3 fork vfork "
        "execve execveat exit exit_group wait4 waitid kill tgkill tkill uname fcntl flock fsync "
        "fdatasync truncate ftruncate getdents getdents64 getcwd chdir fchdir rename renameat "
        "renameat2 rmdir creat link linkat unlink unlinkat symlink symlinkat readlink readlinkat "
        "chmod fchmod fchmodat chown fchown lchown fchownat umask getrlimit setrlimit prlimit64 "
        "getrusage sysinfo times setpgid getpgrp getpgid setsid getsid madvise getrandom "
        "sched_yield sched_getaffinity utimensat utimes mknod mknodat socket connect sendto "
        "recvfrom getsockname getpeername setsockopt getsockopt socketpair getcpu membarrier");
    return names;
}

nlohmann::json deny_mkdir(const std::string& action) {
    nlohmann::json rule = {{"names", {"mkdir", "mkdirat"}}, {"action", action}};
    return rule;
}

} // namespace

TEST_CASE("seccomp: an errno rule fails one system call, the others work", "[security][seccomp]") {
    TempBundle bundle("seccomp-errno");
    writable_tmp(bundle);
    bundle.config["linux"]["seccomp"] = {
        {"defaultAction", "SCMP_ACT_ALLOW"},
        {"architectures", {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"}},
        {"syscalls", {deny_mkdir("SCMP_ACT_ERRNO")}}};
    const std::string script =
        "grep Seccomp: /proc/self/status; mkdir /tmp/d 2>&1; echo mkdir $?; touch /tmp/f; "
        "echo touch $?; ls /tmp";
    SECTION("errnoRet absent: EPERM") {
        bundle.set_shell(script);
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(seccomp_line(result.out) == "2");
        CHECK(value_of(result.out, "mkdir") == "1");
        CHECK(contains(result.out, "Operation not permitted"));
        CHECK(value_of(result.out, "touch") == "0");
        CHECK(contains(result.out, "\nf\n"));
    }
    SECTION("errnoRet 13: EACCES") {
        bundle.config["linux"]["seccomp"]["syscalls"][0]["errnoRet"] = 13;
        bundle.set_shell(script);
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(seccomp_line(result.out) == "2");
        CHECK(value_of(result.out, "mkdir") == "1");
        CHECK(contains(result.out, "Permission denied"));
        CHECK(value_of(result.out, "touch") == "0");
    }
    SECTION("with noNewPrivileges false the filter is loaded too") {
        bundle.config["process"]["noNewPrivileges"] = false;
        bundle.set_shell(script + "; grep NoNewPrivs /proc/self/status");
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(seccomp_line(result.out) == "2");
        CHECK(status_value(result.out, "NoNewPrivs") == "0");
        CHECK(contains(result.out, "Operation not permitted"));
        CHECK(value_of(result.out, "touch") == "0");
    }
    check_no_leftovers(bundle);
}

TEST_CASE("seccomp: no linux.seccomp, no filter", "[security][seccomp]") {
    TempBundle bundle("seccomp-none");
    bundle.config["linux"].erase("seccomp");
    bundle.set_shell("grep Seccomp: /proc/self/status");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(seccomp_line(result.out) == "0");
    check_no_leftovers(bundle);
}

TEST_CASE("seccomp: an allow list with defaultAction errno and defaultErrnoRet",
          "[security][seccomp]") {
    TempBundle bundle("seccomp-allow");
    writable_tmp(bundle);
    bundle.config["linux"]["seccomp"] = {
        {"defaultAction", "SCMP_ACT_ERRNO"},
        {"defaultErrnoRet", 38}, // ENOSYS: "Function not implemented"
        {"architectures", {"SCMP_ARCH_X86_64"}},
        {"syscalls", {{{"names", allow_list()}, {"action", "SCMP_ACT_ALLOW"}}}}};
    // mkdir and mkdirat are not on the list.
    bundle.set_shell("grep Seccomp: /proc/self/status; mkdir /tmp/d 2>&1; echo mkdir $?; "
                     "touch /tmp/f; echo touch $?; ls /tmp");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(seccomp_line(result.out) == "2");
    CHECK(value_of(result.out, "mkdir") == "1");
    CHECK(contains(result.out, "Function not implemented"));
    CHECK(value_of(result.out, "touch") == "0");
    CHECK(contains(result.out, "\nf\n"));
    check_no_leftovers(bundle);
}

TEST_CASE("seccomp: argument conditions", "[security][seccomp]") {
    TempBundle bundle("seccomp-args");
    writable_tmp(bundle);
    // chmod(path, 0700) and fchmodat(dirfd, path, 0700) fail with EACCES; other modes work.
    bundle.config["linux"]["seccomp"] = {
        {"defaultAction", "SCMP_ACT_ALLOW"},
        {"syscalls",
         {{{"names", {"chmod"}},
           {"action", "SCMP_ACT_ERRNO"},
           {"errnoRet", 13},
           {"args", {{{"index", 1}, {"value", 0700}, {"op", "SCMP_CMP_EQ"}}}}},
          {{"names", {"fchmodat"}},
           {"action", "SCMP_ACT_ERRNO"},
           {"errnoRet", 13},
           {"args", {{{"index", 2}, {"value", 0700}, {"op", "SCMP_CMP_EQ"}}}}}}}};
    bundle.set_shell("touch /tmp/f; chmod 700 /tmp/f 2>&1; echo c700 $?; chmod 750 /tmp/f; "
                     "echo c750 $?; stat -c 'mode %a' /tmp/f");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(value_of(result.out, "c700") == "1");
    CHECK(contains(result.out, "Permission denied"));
    CHECK(value_of(result.out, "c750") == "0");
    CHECK(value_of(result.out, "mode") == "750");
    check_no_leftovers(bundle);
}

TEST_CASE("seccomp: SCMP_ACT_KILL kills the process with SIGSYS", "[security][seccomp]") {
    TempBundle bundle("seccomp-kill");
    writable_tmp(bundle);
    bundle.config["linux"]["seccomp"] = {{"defaultAction", "SCMP_ACT_ALLOW"},
                                         {"syscalls", {deny_mkdir("SCMP_ACT_KILL")}}};
    bundle.set_shell("echo before; exec mkdir /tmp/d");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 128 + 31); // SIGSYS
    CHECK(result.out == "before\n");
    check_no_leftovers(bundle);
}

TEST_CASE("seccomp: exec'd processes get the filter too", "[security][seccomp][exec]") {
    Running container("seccomp-exec", [](TempBundle& bundle) {
        writable_tmp(bundle);
        bundle.config["linux"]["seccomp"] = {{"defaultAction", "SCMP_ACT_ALLOW"},
                                             {"syscalls", {deny_mkdir("SCMP_ACT_ERRNO")}}};
    });
    auto result = container.exec(
        {}, {"sh", "-c",
             "grep Seccomp: /proc/self/status; mkdir /tmp/d 2>&1; echo mkdir $?; touch /tmp/f; "
             "echo touch $?"});
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(seccomp_line(result.out) == "2");
    CHECK(value_of(result.out, "mkdir") == "1");
    CHECK(contains(result.out, "Operation not permitted"));
    CHECK(value_of(result.out, "touch") == "0");

    SECTION("--cap CAP_SYS_ADMIN does not lift it") {
        auto admin = container.exec({"--cap", "CAP_SYS_ADMIN"},
                                    {"sh", "-c",
                                     "grep Seccomp: /proc/self/status; mkdir /tmp/e; "
                                     "echo mkdir $?"});
        INFO(admin.describe());
        CHECK(seccomp_line(admin.out) == "2");
        CHECK(value_of(admin.out, "mkdir") == "1");
    }
    auto init_status = read_file("/proc/" + std::to_string(container.init) + "/status");
    CHECK(status_value(init_status.value_or(""), "Seccomp") == "2");
}

TEST_CASE("seccomp: flags and unknown syscall names", "[security][seccomp]") {
    TempBundle bundle("seccomp-flags");
    writable_tmp(bundle);
    bundle.config["linux"]["seccomp"] = {{"defaultAction", "SCMP_ACT_ALLOW"},
                                         {"syscalls", {deny_mkdir("SCMP_ACT_ERRNO")}}};
    bundle.set_shell("grep Seccomp: /proc/self/status; mkdir /tmp/d 2>&1; echo mkdir $?");
    SECTION("SECCOMP_FILTER_FLAG_LOG and SECCOMP_FILTER_FLAG_SPEC_ALLOW") {
        bundle.config["linux"]["seccomp"]["flags"] = {"SECCOMP_FILTER_FLAG_LOG",
                                                      "SECCOMP_FILTER_FLAG_SPEC_ALLOW"};
    }
    SECTION("a syscall name nobody knows is skipped") {
        bundle.config["linux"]["seccomp"]["syscalls"].push_back(
            {{"names", {"it_no_such_syscall"}}, {"action", "SCMP_ACT_ERRNO"}});
    }
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(seccomp_line(result.out) == "2");
    CHECK(value_of(result.out, "mkdir") == "1");
    check_no_leftovers(bundle);
}

TEST_CASE("seccomp: invalid profiles fail before the process runs", "[security][seccomp]") {
    TempBundle bundle("seccomp-bad");
    bundle.config["linux"]["seccomp"] = {{"defaultAction", "SCMP_ACT_ALLOW"},
                                         {"syscalls", {deny_mkdir("SCMP_ACT_ERRNO")}}};
    SECTION("an unknown rule action") {
        bundle.config["linux"]["seccomp"]["syscalls"][0]["action"] = "SCMP_ACT_IT_BOGUS";
        check_refused(bundle, {"SCMP_ACT_IT_BOGUS"});
    }
    SECTION("an unknown default action") {
        bundle.config["linux"]["seccomp"]["defaultAction"] = "SCMP_ACT_IT_BOGUS";
        check_refused(bundle, {"SCMP_ACT_IT_BOGUS"});
    }
    SECTION("an unknown flag") {
        bundle.config["linux"]["seccomp"]["flags"] = {"SECCOMP_FILTER_FLAG_IT_BOGUS"};
        check_refused(bundle, {"SECCOMP_FILTER_FLAG_IT_BOGUS"});
    }
    SECTION("an unknown architecture") {
        bundle.config["linux"]["seccomp"]["architectures"] = {"SCMP_ARCH_IT_BOGUS"};
        check_refused(bundle, {"SCMP_ARCH_IT_BOGUS"});
    }
    SECTION("an unknown comparison operator") {
        bundle.config["linux"]["seccomp"]["syscalls"][0]["args"] = {
            {{"index", 1}, {"value", 1}, {"op", "SCMP_CMP_IT_BOGUS"}}};
        check_refused(bundle, {"SCMP_CMP_IT_BOGUS"});
    }
}

// ---------------------------------------------------------------------------------------
// rlimits, oom_score_adj, sysctl
