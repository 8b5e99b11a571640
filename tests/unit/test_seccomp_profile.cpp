// The default seccomp profile and its -ENOSYS stub for syscalls newer than the profile.
//
// The shared helpers and how the tests run a filter: seccomp_fixture.hpp.
#include "seccomp_fixture.hpp"

#include <catch2/catch.hpp>

using Catch::Matchers::Contains;
using minirun::runtime::seccomp::connect_listener;
using minirun::runtime::seccomp::send_to_listener;
using namespace seccomp_test;

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
