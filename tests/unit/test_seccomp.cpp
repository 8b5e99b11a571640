// seccomp::Filter, the listener socket and the default profile.
//
// Loading a filter needs no root once no_new_privs is set, but it is for good: every test
// loads its filter in a forked child, which makes its syscalls and reports through its exit
// status (0: as expected, 1..99: the step that went wrong) or the signal that killed it.
#include "security/seccomp.hpp"
#include "security/seccomp_bpf.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using minirun::UniqueFd;
using minirun::runtime::seccomp::connect_listener;
using minirun::runtime::seccomp::Filter;
using minirun::runtime::seccomp::send_to_listener;
namespace spec = minirun::spec;

namespace {

// An errno nothing here returns by itself, so seeing it proves the filter answered.
constexpr int kFilterErrno = EXDEV;
constexpr int kLoadFailed = 100;
constexpr int kNoNewPrivsFailed = 101;

spec::SeccompArg arg(uint32_t index, const char* op, uint64_t value, uint64_t value_two = 0) {
    spec::SeccompArg out;
    out.index = index;
    out.op = op;
    out.value = value;
    out.value_two = value_two;
    return out;
}

spec::SeccompSyscall rule(std::vector<std::string> names, const char* action,
                          std::optional<uint32_t> errno_ret = std::nullopt,
                          std::vector<spec::SeccompArg> args = {}) {
    spec::SeccompSyscall out;
    out.names = std::move(names);
    out.action = action;
    out.errno_ret = errno_ret;
    out.args = std::move(args);
    return out;
}

spec::Seccomp config(const char* default_action, std::vector<spec::SeccompSyscall> syscalls,
                     std::optional<uint32_t> default_errno = std::nullopt) {
    spec::Seccomp out;
    out.default_action = default_action;
    out.default_errno_ret = default_errno;
    out.syscalls = std::move(syscalls);
    return out;
}

Filter build(const spec::Seccomp& seccomp) {
    auto result = Filter::build(seccomp);
    INFO((result.ok() ? std::string() : result.error().message()));
    REQUIRE(result.ok());
    return std::move(result).value();
}

std::string build_error(const spec::Seccomp& seccomp) {
    auto result = Filter::build(seccomp);
    REQUIRE_FALSE(result.ok());
    return result.error().message();
}

// A raw syscall's result, checked in the child: failed with `expected` errno.
bool fails_with(long rc, int expected) {
    return rc == -1 && errno == expected;
}

struct Outcome {
    bool exited = false;
    int code = -1;
    int signal = 0;
};

// Forks; the child sets no_new_privs, loads `filter` and exits with body(listener fd).
template <typename Body>
Outcome run_filtered(const Filter& filter, Body body) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // SIGSYS dumps core by default; the tests that expect it want no core files.
        rlimit no_core{0, 0};
        (void)::setrlimit(RLIMIT_CORE, &no_core);
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
            ::_exit(kNoNewPrivsFailed);
        }
        auto listener = filter.load(minirun::linux_syscalls());
        if (!listener.ok()) {
            ::_exit(kLoadFailed);
        }
        ::_exit(body(listener->get()));
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    Outcome outcome;
    if (WIFEXITED(status)) {
        outcome.exited = true;
        outcome.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        outcome.signal = WTERMSIG(status);
    }
    return outcome;
}

void check_exits_0(const Outcome& outcome) {
    INFO("exited " << outcome.exited << " code " << outcome.code << " signal " << outcome.signal);
    CHECK(outcome.exited);
    CHECK(outcome.code == 0);
}

void check_killed_by_sigsys(const Outcome& outcome) {
    INFO("exited " << outcome.exited << " code " << outcome.code);
    CHECK_FALSE(outcome.exited);
    CHECK(outcome.signal == SIGSYS);
}

// One message from a socket: its bytes and every fd it carried.
struct Received {
    std::string payload;
    std::vector<UniqueFd> fds;
    bool truncated = false;
};

Received receive_message(int socket) {
    std::array<char, 8192> buffer{};
    iovec iov{buffer.data(), buffer.size()};
    // Room for several fds, to see that exactly one came.
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 4)> control{};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    ssize_t got = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    REQUIRE(got >= 0);
    Received received;
    received.payload.assign(buffer.data(), static_cast<size_t>(got));
    received.truncated = (message.msg_flags & MSG_CTRUNC) != 0;
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
         header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
            size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; ++i) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
                received.fds.emplace_back(fd);
            }
        }
    }
    return received;
}

std::array<UniqueFd, 2> stream_pair() {
    std::array<int, 2> fds{};
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds.data()) == 0);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

} // namespace

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

} // namespace

TEST_CASE("seccomp: architectures cover the 32-bit entry points", "[seccomp]") {
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
    if (!without.exited && without.signal == SIGSEGV) {
        WARN("no IA32 emulation in this kernel; the i386 rule is not checked");
        return;
    }
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

TEST_CASE("seccomp: configuration errors name the JSON path", "[seccomp]") {
    CHECK(build_error(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO", 70000)})) ==
          "linux.seccomp.syscalls[0].errnoRet: must be at most 65535, got 70000");
    CHECK(build_error(config("SCMP_ACT_ERRNO", {}, 65536)) ==
          "linux.seccomp.defaultErrnoRet: must be at most 65535, got 65536");
    CHECK(build_error(config("SCMP_ACT_ALLOW", {rule({"getpid"}, "SCMP_ACT_ALLOW"),
                                                rule({"getppid"}, "SCMP_ACT_DANCE")})) ==
          R"(linux.seccomp.syscalls[1].action: unknown seccomp action "SCMP_ACT_DANCE")");
    CHECK(build_error(config("SCMP_ACT_DANCE", {})) ==
          R"(linux.seccomp.defaultAction: unknown seccomp action "SCMP_ACT_DANCE")");
    CHECK(build_error(config("SCMP_ACT_ALLOW",
                             {rule({"close"}, "SCMP_ACT_ERRNO", std::nullopt,
                                   {arg(0, "SCMP_CMP_EQ", 1), arg(1, "SCMP_CMP_LIKE", 2)})})) ==
          R"(linux.seccomp.syscalls[0].args[1].op: unknown seccomp operator "SCMP_CMP_LIKE")");
    CHECK_THAT(build_error(config("SCMP_ACT_NOTIFY", {})),
               Contains("linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default"));
    CHECK_THAT(
        build_error(config("SCMP_ACT_ALLOW", {rule({"getpid", "sendmsg"}, "SCMP_ACT_NOTIFY")})),
        Contains(R"(linux.seccomp.syscalls[0].names[1] "sendmsg": SCMP_ACT_NOTIFY cannot)"));
    // runc's suite: a notified write would deadlock the runtime, which reports errors with it.
    CHECK_THAT(build_error(config("SCMP_ACT_ALLOW", {rule({"write"}, "SCMP_ACT_NOTIFY")})),
               Contains("SCMP_ACT_NOTIFY cannot be used for the write syscall"));

    // libseccomp's own refusal, with its errno: an argument index the parser would have
    // refused (a syscall has six).
    auto refused = Filter::build(
        config("SCMP_ACT_ALLOW",
               {rule({"close"}, "SCMP_ACT_ERRNO", std::nullopt, {arg(6, "SCMP_CMP_EQ", 1)})}));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message() ==
          R"(linux.seccomp.syscalls[0].names[0] "close": add rule: Invalid argument)");
    CHECK(refused.error().errno_value() == EINVAL);
}

TEST_CASE("seccomp: moving a filter moves the context", "[seccomp]") {
    Filter first = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_NOTIFY")}));
    CHECK(first.uses_notify());
    Filter second(std::move(first));
    CHECK(first.empty()); // NOLINT(bugprone-use-after-move): the moved-from state is the point
    CHECK_FALSE(first.uses_notify());
    CHECK(first.rule_count() == 0);
    CHECK_FALSE(second.empty());
    CHECK(second.uses_notify());
    CHECK(second.rule_count() == 1);

    Filter third = build(config("SCMP_ACT_ALLOW", {}));
    third = std::move(second);
    CHECK(third.rule_count() == 1);
    CHECK(second.empty()); // NOLINT(bugprone-use-after-move)

    // An empty filter loads as nothing (no fork needed: nothing is installed).
    Filter empty;
    auto loaded = empty.load(minirun::linux_syscalls());
    REQUIRE(loaded.ok());
    CHECK_FALSE(loaded->valid());
}

TEST_CASE("seccomp: SCMP_ACT_NOTIFY yields a listener an agent can answer from", "[seccomp]") {
    Filter filter = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_NOTIFY")}));
    REQUIRE(filter.uses_notify());
    auto [agent, container] = stream_pair();
    constexpr long kAnswer = 4242;

    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        agent.reset();
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
            ::_exit(kNoNewPrivsFailed);
        }
        auto listener = filter.load(minirun::linux_syscalls());
        if (!listener.ok() || !listener->valid()) {
            ::_exit(kLoadFailed);
        }
        int flags = ::fcntl(listener->get(), F_GETFD);
        if (flags < 0 || (flags & FD_CLOEXEC) == 0) {
            ::_exit(1);
        }
        if (!send_to_listener(container.get(), listener->get(), "1.2.0", ::getpid(), "meta",
                              R"({"ociVersion":"1.2.0","id":"c1","status":"creating"})")
                 .ok()) {
            ::_exit(2);
        }
        listener->reset();
        // Handed to the agent, which answers for the kernel.
        ::_exit(::syscall(SYS_getppid) == kAnswer ? 0 : 3);
    }
    container.reset();

    Received received = receive_message(agent.get());
    REQUIRE(received.fds.size() == 1);
    auto message = nlohmann::json::parse(received.payload);
    CHECK(message["pid"] == pid);
    CHECK(message["metadata"] == "meta");

    int listener = received.fds[0].get();
    pollfd ready{listener, POLLIN, 0};
    REQUIRE(::poll(&ready, 1, 10000) == 1);
    seccomp_notif* request = nullptr;
    seccomp_notif_resp* response = nullptr;
    REQUIRE(seccomp_notify_alloc(&request, &response) == 0);
    REQUIRE(seccomp_notify_receive(listener, request) == 0);
    CHECK(request->pid == static_cast<uint32_t>(pid));
    CHECK(request->data.nr == SYS_getppid);
    response->id = request->id;
    response->val = kAnswer;
    response->error = 0;
    response->flags = 0;
    CHECK(seccomp_notify_respond(listener, response) == 0);
    seccomp_notify_free(request, response);

    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("seccomp: send_to_listener sends the container process state", "[seccomp]") {
    auto [receiver, sender] = stream_pair();
    std::array<int, 2> pipe_fds{};
    REQUIRE(::pipe2(pipe_fds.data(), O_CLOEXEC) == 0);
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);

    std::string state = R"({"ociVersion":"1.2.0","id":"c1","status":"creating","pid":42,)"
                        R"("bundle":"/b","annotations":{"k":"v"}})";
    REQUIRE(
        send_to_listener(sender.get(), read_end.get(), "1.2.0", 42, "MKNOD=/dev/null", state).ok());
    sender.reset(); // so that one read sees everything that was sent

    Received received = receive_message(receiver.get());
    CHECK_FALSE(received.truncated);
    REQUIRE(received.fds.size() == 1);
    struct stat sent_stat {};
    struct stat got_stat {};
    REQUIRE(::fstat(read_end.get(), &sent_stat) == 0);
    REQUIRE(::fstat(received.fds[0].get(), &got_stat) == 0);
    CHECK(sent_stat.st_ino == got_stat.st_ino);
    CHECK(::fcntl(received.fds[0].get(), F_GETFD) == FD_CLOEXEC);

    auto message = nlohmann::json::parse(received.payload);
    CHECK(message["ociVersion"] == "1.2.0");
    CHECK(message["fds"] == nlohmann::json::array({"seccompFd"}));
    CHECK(message["pid"] == 42);
    CHECK(message["metadata"] == "MKNOD=/dev/null");
    CHECK(message["state"] == nlohmann::json::parse(state));
    CHECK(::recv(receiver.get(), received.payload.data(), 1, 0) == 0); // nothing more

    SECTION("no metadata: the field is left out") {
        auto [r2, s2] = stream_pair();
        REQUIRE(send_to_listener(s2.get(), read_end.get(), "1.2.0", 7, "", "{}").ok());
        Received second = receive_message(r2.get());
        auto parsed = nlohmann::json::parse(second.payload);
        CHECK_FALSE(parsed.contains("metadata"));
        CHECK(parsed["state"] == nlohmann::json::object());
        CHECK(second.fds.size() == 1);
    }
    SECTION("a state that is not a JSON object") {
        auto result = send_to_listener(sender.get(), read_end.get(), "1.2.0", 7, "", "{oops");
        REQUIRE_FALSE(result.ok());
        CHECK_THAT(result.error().message(), Contains("not a JSON object"));
    }
    SECTION("a closed peer") {
        auto [r3, s3] = stream_pair();
        r3.reset();
        auto result = send_to_listener(s3.get(), read_end.get(), "1.2.0", 7, "", "{}");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().errno_value() == EPIPE);
    }
}

TEST_CASE("seccomp: connect_listener", "[seccomp]") {
    minirun::testing::TempDir dir;
    std::string path = dir.path() + "/agent.sock";

    SECTION("a listening socket") {
        UniqueFd server(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        REQUIRE(server);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(static_cast<char*>(address.sun_path), path.c_str(),
                     sizeof(address.sun_path) - 1);
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
        REQUIRE(::bind(server.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
        REQUIRE(::listen(server.get(), 1) == 0);

        auto client = connect_listener(path);
        INFO((client.ok() ? std::string() : client.error().message()));
        REQUIRE(client.ok());
        CHECK(::fcntl(client->get(), F_GETFD) == FD_CLOEXEC);
        UniqueFd accepted(::accept4(server.get(), nullptr, nullptr, SOCK_CLOEXEC));
        CHECK(accepted);
    }
    SECTION("nothing there") {
        auto client = connect_listener(path);
        REQUIRE_FALSE(client.ok());
        CHECK(client.error().errno_value() == ENOENT);
        CHECK(client.error().message() ==
              "linux.seccomp.listenerPath " + minirun::quoted(path) +
                  ": failed to connect with seccomp agent: No such file or "
                  "directory");
    }
    SECTION("a path too long for a socket address") {
        std::string long_path = "/" + std::string(200, 'x');
        auto client = connect_listener(long_path);
        REQUIRE_FALSE(client.ok());
        CHECK(client.error().errno_value() == ENAMETOOLONG);
        CHECK_THAT(client.error().message(), Contains("linux.seccomp.listenerPath"));
    }
}

TEST_CASE("seccomp: the default profile blocks host-kernel syscalls only", "[seccomp]") {
    auto parsed = spec::parse_spec(spec::default_spec_json(false, 0, 0, true));
    INFO((parsed.ok() ? std::string() : parsed.error().message()));
    REQUIRE(parsed.ok());
    REQUIRE(parsed->linux.seccomp);
    Filter filter = build(*parsed->linux.seccomp);
    CHECK(filter.rule_count() > 20);
    CHECK_FALSE(filter.uses_notify());

    minirun::testing::TempDir dir;
    std::string made = dir.path() + "/made";
    check_exits_0(run_filtered(filter, [&made](int) {
        if (!fails_with(::syscall(SYS_kexec_load, 0, 0, 0, 0), EPERM)) {
            return 1;
        }
        if (!fails_with(::syscall(SYS_bpf, 0, 0, 0), EPERM)) {
            return 2;
        }
        if (!fails_with(::syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM)) {
            return 3;
        }
        if (!fails_with(::syscall(SYS_open_by_handle_at, -1, 0, 0), EPERM)) {
            return 4;
        }
        if (!fails_with(::syscall(SYS_init_module, 0, 0, 0), EPERM)) {
            return 5;
        }
        // Ordinary work goes on.
        if (::syscall(SYS_getpid) <= 0 || ::mkdir(made.c_str(), 0700) != 0) {
            return 6;
        }
        // Left alone: fails for its bad arguments, not with the filter's EPERM.
        errno = 0;
        if (::syscall(SYS_name_to_handle_at, -1, "", 0, 0, 0) != -1 || errno == EPERM) {
            return 7;
        }
        return 0;
    }));
    struct stat made_stat {};
    CHECK(::stat(made.c_str(), &made_stat) == 0);
}

namespace {

// The few BPF instructions the -ENOSYS stub uses, run for one (arch, nr): the stub's own
// return value, or kReachesFilter when it falls through to the filter behind it.
constexpr uint32_t kReachesFilter = 0xFFFFFFFFU;

uint32_t run_stub(const std::vector<sock_filter>& stub, uint32_t arch, uint32_t nr) {
    uint32_t accumulator = 0;
    size_t pc = 0;
    while (pc < stub.size()) {
        const sock_filter& insn = stub[pc];
        switch (insn.code) {
        case BPF_LD | BPF_W | BPF_ABS:
            accumulator = insn.k == offsetof(seccomp_data, arch) ? arch : nr;
            ++pc;
            break;
        case BPF_JMP | BPF_JA:
            pc += 1 + insn.k;
            break;
        case BPF_JMP | BPF_JEQ | BPF_K:
            pc += 1 + (accumulator == insn.k ? insn.jt : insn.jf);
            break;
        case BPF_JMP | BPF_JGT | BPF_K:
            pc += 1 + (accumulator > insn.k ? insn.jt : insn.jf);
            break;
        case BPF_JMP | BPF_JSET | BPF_K:
            pc += 1 + ((accumulator & insn.k) != 0 ? insn.jt : insn.jf);
            break;
        case BPF_RET | BPF_K:
            return insn.k;
        default:
            FAIL("unexpected BPF instruction " << insn.code);
        }
    }
    REQUIRE(pc == stub.size()); // a jump past the end would leave the program
    return kReachesFilter;
}

} // namespace

TEST_CASE("seccomp: the -ENOSYS stub answers syscalls above a profile's last, per ABI",
          "[seccomp]") {
    using minirun::runtime::seccomp::enosys_stub;
    using minirun::runtime::seccomp::last_syscalls;
    const uint32_t enosys = SECCOMP_RET_ERRNO | ENOSYS;
    spec::Seccomp profile =
        config("SCMP_ACT_ERRNO", {rule({"read", "getppid", "openat"}, "SCMP_ACT_ALLOW")});
    auto last = last_syscalls(profile, {SCMP_ARCH_X86_64, SCMP_ARCH_X86, SCMP_ARCH_X32});
    REQUIRE(last.count(SCMP_ARCH_X86_64) == 1);
    CHECK(last.at(SCMP_ARCH_X86_64) == SYS_openat); // 257 on x86_64
    REQUIRE(last.count(SCMP_ARCH_X32) == 1);
    CHECK(last.at(SCMP_ARCH_X32) > 0x40000000);
    auto stub = enosys_stub(last);
    REQUIRE_FALSE(stub.empty());

    // x86_64: above openat is "no such syscall", at or below it the filter decides.
    CHECK(run_stub(stub, AUDIT_ARCH_X86_64, 1000) == enosys);
    CHECK(run_stub(stub, AUDIT_ARCH_X86_64, SYS_openat + 1) == enosys);
    CHECK(run_stub(stub, AUDIT_ARCH_X86_64, SYS_openat) == kReachesFilter);
    CHECK(run_stub(stub, AUDIT_ARCH_X86_64, SYS_mount) == kReachesFilter); // known, not listed
    // x32 numbers carry their bit and are compared with x32's own last.
    auto x32_last = static_cast<uint32_t>(last.at(SCMP_ARCH_X32));
    CHECK(run_stub(stub, AUDIT_ARCH_X86_64, x32_last) == kReachesFilter);
    CHECK(run_stub(stub, AUDIT_ARCH_X86_64, x32_last + 1) == enosys);
    // i386 has its own numbers (openat is 295 there).
    CHECK(run_stub(stub, AUDIT_ARCH_I386, 294) == kReachesFilter);
    CHECK(run_stub(stub, AUDIT_ARCH_I386, 1000) == enosys);
    // An architecture the profile does not list: the filter's bad-architecture action.
    CHECK(run_stub(stub, AUDIT_ARCH_AARCH64, 1000) == kReachesFilter);

    SECTION("without x32 in the profile, x32 syscalls go to the filter") {
        auto no_x32 = enosys_stub(last_syscalls(profile, {SCMP_ARCH_X86_64}));
        CHECK(run_stub(no_x32, AUDIT_ARCH_X86_64, 0x40000000U + 1000) == kReachesFilter);
        CHECK(run_stub(no_x32, AUDIT_ARCH_X86_64, 1000) == enosys);
    }
}

TEST_CASE("seccomp: a syscall newer than the profile gets ENOSYS, not the default errno",
          "[seccomp]") {
    // runc's seccomp_syscall_test1: a C library tries a new syscall first and falls back on
    // ENOSYS only; the profile's default errno would break that.
    std::vector<std::string> needed = {
        "exit_group", "exit",         "getpid",         "gettid",       "brk",
        "mmap",       "munmap",       "mprotect",       "madvise",      "futex",
        "write",      "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "sigaltstack"};
    Filter filter = build(config("SCMP_ACT_ERRNO", {rule(needed, "SCMP_ACT_ALLOW")}));
    check_exits_0(run_filtered(filter, [](int) {
        if (!fails_with(::syscall(1000, 0, 0, 0), ENOSYS)) {
            return 1;
        }
        // getppid (110) is below exit_group (231): the profile's default action, EPERM.
        if (!fails_with(::syscall(SYS_getppid), EPERM)) {
            return 2;
        }
        return 0;
    }));

    SECTION("a default that allows lets the kernel answer, as without a filter") {
        Filter allow = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO")}));
        check_exits_0(run_filtered(
            allow, [](int) { return fails_with(::syscall(1000, 0, 0, 0), ENOSYS) ? 0 : 1; }));
    }
}
