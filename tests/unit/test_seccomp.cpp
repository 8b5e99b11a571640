// seccomp::Filter: actions, conditions, architectures and flags.
//
// The shared helpers and how the tests run a filter: seccomp_fixture.hpp.
#include "capture_stderr.hpp"
#include "fake_syscalls.hpp"
#include "seccomp_fixture.hpp"

#include "minirun/log.hpp"
#include "skips.hpp"

#include <catch2/catch.hpp>

using Catch::Matchers::Contains;
using minirun::runtime::seccomp::connect_listener;
using minirun::runtime::seccomp::flag_supported;
using minirun::runtime::seccomp::send_to_listener;
using minirun::testing::capture_stderr;
using namespace seccomp_test;

TEST_CASE("seccomp: load leaves no_new_privs alone", "[seccomp]") {
    // mini-run decides no_new_privs from process.noNewPrivileges; libseccomp must not set it.
    // Without it and without CAP_SYS_ADMIN the kernel refuses the filter, and the error
    // says why (EACCES, not libseccomp's generic ECANCELED).
    Filter filter = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO")}));
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        cap_t none = cap_init();
        if (none == nullptr || cap_set_proc(none) != 0) {
            ::_exit(1);
        }
        auto loaded = filter.load(minirun::linux_syscalls());
        if (loaded.ok()) {
            ::_exit(2);
        }
        if (loaded.error().errno_value() != EACCES) {
            ::_exit(3);
        }
        if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0) {
            ::_exit(4);
        }
        // The same filter loads once no_new_privs is set.
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            !filter.load(minirun::linux_syscalls()).ok()) {
            ::_exit(5);
        }
        ::_exit(fails_with(::syscall(SYS_getppid), EPERM) ? 0 : 6);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("seccomp: SCMP_ACT_ERRNO returns errnoRet, other syscalls work", "[seccomp]") {
    Filter filter = build(
        config("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO", kFilterErrno)}));
    CHECK_FALSE(filter.empty());
    CHECK_FALSE(filter.uses_notify());
    CHECK(filter.rule_count() == 2);

    check_exits_0(run_filtered(filter, [](int listener) {
        if (listener >= 0) {
            return 1;
        }
        // Without the filter: ENOENT.
        if (!fails_with(::mkdir("/nonexistent-minirun-test/dir", 0755), kFilterErrno)) {
            return 2;
        }
        if (::syscall(SYS_getpid) != ::getpid() || ::getpid() <= 0) {
            return 3;
        }
        if (!fails_with(::rmdir("/nonexistent-minirun-test/dir"), ENOENT)) {
            return 4;
        }
        return 0;
    }));

    SECTION("without errnoRet the errno is EPERM") {
        Filter eperm = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO")}));
        check_exits_0(run_filtered(
            eperm, [](int) { return fails_with(::syscall(SYS_getppid), EPERM) ? 0 : 1; }));
    }
}

TEST_CASE("seccomp: a default SCMP_ACT_ERRNO with defaultErrnoRet", "[seccomp]") {
    // What the child still needs: exiting, and what libseccomp, the allocator and the
    // sanitizers' runtime (sigaltstack) may do after the filter is in place.
    std::vector<std::string> needed = {
        "exit_group", "exit",         "getpid",         "gettid",       "brk",
        "mmap",       "munmap",       "mprotect",       "madvise",      "futex",
        "write",      "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "sigaltstack"};
    SECTION("defaultErrnoRet") {
        Filter filter =
            build(config("SCMP_ACT_ERRNO", {rule(needed, "SCMP_ACT_ALLOW")}, kFilterErrno));
        CHECK(filter.rule_count() == needed.size());
        check_exits_0(run_filtered(filter, [](int) {
            if (!fails_with(::syscall(SYS_getppid), kFilterErrno)) {
                return 1;
            }
            if (!fails_with(::syscall(SYS_getuid), kFilterErrno)) {
                return 2;
            }
            return ::syscall(SYS_getpid) > 0 ? 0 : 3;
        }));
    }
    SECTION("EPERM without it") {
        Filter filter = build(config("SCMP_ACT_ERRNO", {rule(needed, "SCMP_ACT_ALLOW")}));
        check_exits_0(run_filtered(
            filter, [](int) { return fails_with(::syscall(SYS_getppid), EPERM) ? 0 : 1; }));
    }
}

TEST_CASE("seccomp: the kill actions and SCMP_ACT_TRAP end the process with SIGSYS", "[seccomp]") {
    for (const char* action :
         {"SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_TRAP"}) {
        INFO(action);
        Filter filter = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, action)}));
        check_killed_by_sigsys(run_filtered(filter, [](int) {
            (void)::syscall(SYS_getppid);
            return 0;
        }));
    }
}

TEST_CASE("seccomp: a default kill action", "[seccomp]") {
    // The child dies at its first syscall after the load that is not allowed.
    Filter filter = build(config(
        "SCMP_ACT_KILL_PROCESS",
        {rule({"exit_group", "brk", "mmap", "munmap", "madvise", "futex"}, "SCMP_ACT_ALLOW")}));
    check_killed_by_sigsys(run_filtered(filter, [](int) {
        (void)::syscall(SYS_getppid);
        return 0;
    }));
}

TEST_CASE("seccomp: SCMP_ACT_TRACE without a tracer fails with ENOSYS", "[seccomp]") {
    // errnoRet is the message a tracer would get; with none attached the kernel answers
    // ENOSYS.
    Filter filter = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_TRACE", 7)}));
    CHECK(filter.rule_count() == 1);
    check_exits_0(run_filtered(
        filter, [](int) { return fails_with(::syscall(SYS_getppid), ENOSYS) ? 0 : 1; }));
}

TEST_CASE("seccomp: SCMP_ACT_LOG and SCMP_ACT_ALLOW let the syscall through", "[seccomp]") {
    Filter filter = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_LOG")}));
    CHECK(filter.rule_count() == 1);
    pid_t parent = ::getpid();
    check_exits_0(
        run_filtered(filter, [parent](int) { return ::syscall(SYS_getppid) == parent ? 0 : 1; }));

    Filter allow = build(config("SCMP_ACT_LOG", {rule({"getppid"}, "SCMP_ACT_ALLOW")}));
    check_exits_0(
        run_filtered(allow, [parent](int) { return ::syscall(SYS_getppid) == parent ? 0 : 1; }));
}

TEST_CASE("seccomp: conditions on arguments", "[seccomp]") {
    // close, dup and fcntl on fds that do not exist: EBADF, unless the filter answers.
    Filter filter = build(
        config("SCMP_ACT_ALLOW",
               {
                   rule({"close"}, "SCMP_ACT_ERRNO", kFilterErrno, {arg(0, "SCMP_CMP_EQ", 9999)}),
                   rule({"dup"}, "SCMP_ACT_ERRNO", kFilterErrno, {arg(0, "SCMP_CMP_GE", 20000)}),
                   // Different arguments: one rule, all conditions must hold.
                   rule({"fcntl"}, "SCMP_ACT_ERRNO", kFilterErrno,
                        {arg(0, "SCMP_CMP_EQ", 10001), arg(1, "SCMP_CMP_EQ", F_GETFD)}),
               }));
    CHECK(filter.rule_count() == 3);
    check_exits_0(run_filtered(filter, [](int) {
        if (!fails_with(::syscall(SYS_close, 9999), kFilterErrno)) {
            return 1;
        }
        if (!fails_with(::syscall(SYS_close, 9998), EBADF)) {
            return 2;
        }
        if (!fails_with(::syscall(SYS_dup, 20000), kFilterErrno) ||
            !fails_with(::syscall(SYS_dup, 30000), kFilterErrno)) {
            return 3;
        }
        if (!fails_with(::syscall(SYS_dup, 19999), EBADF)) {
            return 4;
        }
        if (!fails_with(::syscall(SYS_fcntl, 10001, F_GETFD), kFilterErrno)) {
            return 5;
        }
        if (!fails_with(::syscall(SYS_fcntl, 10001, F_GETFL), EBADF) ||
            !fails_with(::syscall(SYS_fcntl, 10002, F_GETFD), EBADF)) {
            return 6;
        }
        return 0;
    }));
}

TEST_CASE("seccomp: conditions on the same argument are alternatives (as runc)", "[seccomp]") {
    Filter filter = build(config(
        "SCMP_ACT_ALLOW", {rule({"close"}, "SCMP_ACT_ERRNO", kFilterErrno,
                                {arg(0, "SCMP_CMP_EQ", 10001), arg(0, "SCMP_CMP_EQ", 10002)})}));
    // One rule per condition.
    CHECK(filter.rule_count() == 2);
    check_exits_0(run_filtered(filter, [](int) {
        if (!fails_with(::syscall(SYS_close, 10001), kFilterErrno) ||
            !fails_with(::syscall(SYS_close, 10002), kFilterErrno)) {
            return 1;
        }
        return fails_with(::syscall(SYS_close, 10003), EBADF) ? 0 : 2;
    }));
}

TEST_CASE("seccomp: SCMP_CMP_MASKED_EQ from a parsed config.json", "[seccomp]") {
    // "value" is the mask, "valueTwo" what the masked argument must equal.
    nlohmann::json document = nlohmann::json::parse(spec::default_spec_json(false, 0, 0));
    document["linux"]["seccomp"] = {
        {"defaultAction", "SCMP_ACT_ALLOW"},
        {"syscalls",
         {{{"names", {"close"}},
           {"action", "SCMP_ACT_ERRNO"},
           {"errnoRet", kFilterErrno},
           {"args",
            {{{"index", 0},
              {"op", "SCMP_CMP_MASKED_EQ"},
              {"value", 0xff00},
              {"valueTwo", 0x2700}}}}}}},
    };
    auto parsed = spec::parse_spec(document.dump());
    INFO((parsed.ok() ? std::string() : parsed.error().message()));
    REQUIRE(parsed.ok());
    REQUIRE(parsed->linux.seccomp);
    Filter filter = build(*parsed->linux.seccomp);
    CHECK(filter.rule_count() == 1);
    check_exits_0(run_filtered(filter, [](int) {
        if (!fails_with(::syscall(SYS_close, 0x2712), kFilterErrno) ||
            !fails_with(::syscall(SYS_close, 0x2700), kFilterErrno)) {
            return 1;
        }
        if (!fails_with(::syscall(SYS_close, 0x2812), EBADF) ||
            !fails_with(::syscall(SYS_close, 0x27), EBADF)) {
            return 2;
        }
        return 0;
    }));
}

TEST_CASE("seccomp: unknown syscall names are skipped", "[seccomp]") {
    Filter filter =
        build(config("SCMP_ACT_ALLOW", {rule({"no_such_syscall", "getppid", "also_not_one"},
                                             "SCMP_ACT_ERRNO", kFilterErrno)}));
    CHECK(filter.rule_count() == 1);
    check_exits_0(run_filtered(
        filter, [](int) { return fails_with(::syscall(SYS_getppid), kFilterErrno) ? 0 : 1; }));

    Filter none = build(config("SCMP_ACT_ALLOW", {rule({"no_such_syscall"}, "SCMP_ACT_KILL")}));
    CHECK(none.rule_count() == 0);
    CHECK_FALSE(none.empty());
}

TEST_CASE("seccomp: rules with the default action are skipped", "[seccomp]") {
    Filter allow = build(config("SCMP_ACT_ALLOW", {rule({"getpid"}, "SCMP_ACT_ALLOW"),
                                                   rule({"getppid"}, "SCMP_ACT_ERRNO")}));
    CHECK(allow.rule_count() == 1);

    // The errno is part of the action: EPERM by default equals errnoRet 1, not 2.
    Filter errno_rules =
        build(config("SCMP_ACT_ERRNO", {rule({"getpid"}, "SCMP_ACT_ERRNO", EPERM),
                                        rule({"getppid"}, "SCMP_ACT_ERRNO", ENOENT),
                                        rule({"exit_group"}, "SCMP_ACT_ALLOW")}));
    CHECK(errno_rules.rule_count() == 2);
}

#if defined(__x86_64__)
namespace {

// getppid through the i386 entry point (its number there is 64).
long getppid_i386() {
    long result = 64;
    // The kernel clears r8-r15 on a compat syscall.
    asm volatile("int $0x80"
                 : "+a"(result)
                 :
                 : "memory", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15");
    return result;
}

// Whether this kernel runs i386 syscalls (IA32 emulation): a forked child makes one.
// Without the emulation `int 0x80` is a general protection fault, SIGSEGV. The child
// restores SIGSEGV's default action first: a sanitizer's handler would turn the signal into
// an error report and an exit status of its own.
bool has_ia32_emulation() {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        rlimit no_core{0, 0};
        (void)::setrlimit(RLIMIT_CORE, &no_core);
        (void)::signal(SIGSEGV, SIG_DFL);
        (void)getppid_i386();
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    INFO("i386 probe: wait status " << status);
    if (WIFSIGNALED(status)) {
        CHECK(WTERMSIG(status) == SIGSEGV);
        return false;
    }
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return true;
}

} // namespace

TEST_CASE("seccomp: architectures cover the 32-bit entry points", "[seccomp]") {
    if (!has_ia32_emulation()) {
        minirun_tests::skip_test("no IA32 emulation in this kernel (int 0x80 gives SIGSEGV); the "
                                 "i386 rule is not checked");
        return;
    }
    spec::Seccomp with_x86 =
        config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO", kFilterErrno)});
    // The native architecture is in every filter; naming it is no error.
    with_x86.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
    Filter filter = build(with_x86);
    CHECK(filter.rule_count() == 1);

    // Without x86 in the filter, an i386 syscall is a bad architecture: killed.
    Filter native_only =
        build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO", kFilterErrno)}));
    Outcome without = run_filtered(native_only, [](int) {
        (void)getppid_i386();
        return 0;
    });
    check_killed_by_sigsys(without);
    check_exits_0(
        run_filtered(filter, [](int) { return getppid_i386() == -kFilterErrno ? 0 : 1; }));
}
#endif

TEST_CASE("seccomp: unknown architectures are an error naming the field", "[seccomp]") {
    spec::Seccomp bad = config("SCMP_ACT_ALLOW", {});
    bad.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_VAX"};
    CHECK(build_error(bad) ==
          R"(linux.seccomp.architectures[1]: unknown architecture "SCMP_ARCH_VAX")");
    bad.architectures = {"x86_64"};
    CHECK(build_error(bad) == R"(linux.seccomp.architectures[0]: unknown architecture "x86_64")");
}

TEST_CASE("seccomp: flags", "[seccomp]") {
    spec::Seccomp with_flags =
        config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO", kFilterErrno)});
    with_flags.flags = {"SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                        "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"};
    Filter filter = build(with_flags);
    check_exits_0(run_filtered(
        filter, [](int) { return fails_with(::syscall(SYS_getppid), kFilterErrno) ? 0 : 1; }));

    with_flags.flags = {"SECCOMP_FILTER_FLAG_NEW_LISTENER"};
    CHECK(build_error(with_flags) ==
          R"(linux.seccomp.flags[0]: unknown seccomp flag "SECCOMP_FILTER_FLAG_NEW_LISTENER")");
}

TEST_CASE("seccomp: the flags the kernel gets, as runc gives them", "[seccomp]") {
    // runc 1.3's seccomp.bats: TSYNC is accepted and ignored (a single-threaded init has no
    // thread to sync), LOG is 2, SPEC_ALLOW 4, and without any "flags" SPEC_ALLOW is set
    // where the kernel has it; an empty list is no flag. The value is said at --debug.
    auto loaded_flags = [](const spec::Seccomp& seccomp) {
        minirun::testing::FakeSyscalls sys;
        Filter filter = build(seccomp);
        REQUIRE(filter.load(sys).ok());
        REQUIRE(sys.calls.size() == 1);
        std::string call = sys.calls[0]; // "seccomp FLAGS LEN"
        return call.substr(0, call.rfind(' '));
    };
    spec::Seccomp seccomp = config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO", 1)});
    seccomp.flags_given = true;
    seccomp.flags = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG"};
    CHECK(loaded_flags(seccomp) == "seccomp 2");
    seccomp.flags = {};
    CHECK(loaded_flags(seccomp) == "seccomp 0");
    seccomp.flags = {"SECCOMP_FILTER_FLAG_TSYNC"};
    CHECK(loaded_flags(seccomp) == "seccomp 0");
    seccomp.flags_given = false;
    const bool spec_allow = flag_supported("SECCOMP_FILTER_FLAG_SPEC_ALLOW");
    CHECK(loaded_flags(seccomp) == (spec_allow ? "seccomp 4" : "seccomp 0"));

    minirun::log::Options debug;
    debug.min_level = minirun::log::Level::debug;
    REQUIRE(minirun::log::configure(debug).ok());
    seccomp.flags_given = true;
    seccomp.flags = {"SECCOMP_FILTER_FLAG_LOG"};
    std::string said = capture_stderr([&] { (void)build(seccomp); });
    REQUIRE(minirun::log::configure(minirun::log::Options{}).ok());
    CHECK_THAT(said, Contains("msg=\"seccomp filter flags: 2\""));
}
