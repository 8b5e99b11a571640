// The process's security settings, each read back from inside the container: the five
// capability sets, no_new_privs and seccomp (/proc/self/status), rlimits, oom_score_adj,
// sysctls, masked and read-only paths, a read-only root, the umask, supplementary groups,
// the personality, and the seccomp profile of `spec --seccomp`.
//
// Expected values come from the config and the kernel's rules; runc is the reference.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

// Capability numbers, as in <linux/capability.h>.
const std::vector<std::string>& capability_names() {
    static const std::vector<std::string> names{"CAP_CHOWN",
                                                "CAP_DAC_OVERRIDE",
                                                "CAP_DAC_READ_SEARCH",
                                                "CAP_FOWNER",
                                                "CAP_FSETID",
                                                "CAP_KILL",
                                                "CAP_SETGID",
                                                "CAP_SETUID",
                                                "CAP_SETPCAP",
                                                "CAP_LINUX_IMMUTABLE",
                                                "CAP_NET_BIND_SERVICE",
                                                "CAP_NET_BROADCAST",
                                                "CAP_NET_ADMIN",
                                                "CAP_NET_RAW",
                                                "CAP_IPC_LOCK",
                                                "CAP_IPC_OWNER",
                                                "CAP_SYS_MODULE",
                                                "CAP_SYS_RAWIO",
                                                "CAP_SYS_CHROOT",
                                                "CAP_SYS_PTRACE",
                                                "CAP_SYS_PACCT",
                                                "CAP_SYS_ADMIN",
                                                "CAP_SYS_BOOT",
                                                "CAP_SYS_NICE",
                                                "CAP_SYS_RESOURCE",
                                                "CAP_SYS_TIME",
                                                "CAP_SYS_TTY_CONFIG",
                                                "CAP_MKNOD",
                                                "CAP_LEASE",
                                                "CAP_AUDIT_WRITE",
                                                "CAP_AUDIT_CONTROL",
                                                "CAP_SETFCAP",
                                                "CAP_MAC_OVERRIDE",
                                                "CAP_MAC_ADMIN",
                                                "CAP_SYSLOG",
                                                "CAP_WAKE_ALARM",
                                                "CAP_BLOCK_SUSPEND",
                                                "CAP_AUDIT_READ",
                                                "CAP_PERFMON",
                                                "CAP_BPF",
                                                "CAP_CHECKPOINT_RESTORE"};
    return names;
}

// The test's own bounding set: a runtime cannot give what it does not have (this VM's root
// lacks CAP_SYS_RESOURCE, for one).
uint64_t own_bounding() {
    for (const auto& line : split_lines(read_file("/proc/self/status").value_or(""))) {
        if (line.rfind("CapBnd:", 0) == 0) {
            return std::stoull(split_words(line.substr(7)).front(), nullptr, 16);
        }
    }
    return 0;
}

bool have_capability(int number) {
    return ((own_bounding() >> number) & 1U) != 0;
}

// Every capability in the test's bounding set (and that this test has a name for).
std::vector<std::string> all_capabilities() {
    const auto& names = capability_names();
    const uint64_t bounding = own_bounding();
    std::vector<std::string> caps;
    for (size_t number = 0; number < names.size(); ++number) {
        if (((bounding >> number) & 1U) != 0) {
            caps.push_back(names[number]);
        }
    }
    return caps;
}

uint64_t mask_of(const std::vector<std::string>& caps) {
    uint64_t mask = 0;
    const auto& names = capability_names();
    for (const auto& cap : caps) {
        auto found = std::find(names.begin(), names.end(), cap);
        REQUIRE(found != names.end());
        mask |= uint64_t{1} << (found - names.begin());
    }
    return mask;
}

std::string hex(uint64_t value) {
    std::ostringstream text;
    text << std::setw(16) << std::setfill('0') << std::hex << value;
    return text.str();
}

// "Key:<tab>value" of a /proc/<pid>/status printed by the container; "<Key missing>" when
// it is not there.
std::string status_value(const std::string& status, const std::string& key) {
    for (const auto& line : split_lines(status)) {
        if (line.rfind(key + ":", 0) == 0) {
            auto words = split_words(line.substr(key.size() + 1));
            return words.empty() ? std::string() : words.front();
        }
    }
    return "<" + key + " missing>";
}

struct CapSets {
    std::string inh, prm, eff, bnd, amb; // 16 hex digits each, as the kernel prints them
};

CapSets caps_in(const std::string& status) {
    return {status_value(status, "CapInh"), status_value(status, "CapPrm"),
            status_value(status, "CapEff"), status_value(status, "CapBnd"),
            status_value(status, "CapAmb")};
}

void check_caps(const CapSets& got, uint64_t inh, uint64_t prm, uint64_t eff, uint64_t bnd,
                uint64_t amb) {
    CHECK(got.inh == hex(inh));
    CHECK(got.prm == hex(prm));
    CHECK(got.eff == hex(eff));
    CHECK(got.bnd == hex(bnd));
    CHECK(got.amb == hex(amb));
}

// A tmpfs on /tmp, so that the container can write with the read-only example root.
void writable_tmp(TempBundle& bundle) {
    bundle.config["mounts"].push_back({{"destination", "/tmp"},
                                       {"type", "tmpfs"},
                                       {"source", "tmpfs"},
                                       {"options", {"nosuid", "nodev", "mode=1777"}}});
}

// Runs the bundle in the foreground and requires exit code 0.
RunResult run_ok(TempBundle& bundle) {
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    return result;
}

// Runs the bundle and expects it to fail before the process runs: a non-zero exit, the
// marker never printed, stderr naming each of `words`, nothing left behind.
void check_refused(TempBundle& bundle, std::initializer_list<std::string_view> words) {
    bundle.set_shell("echo it-process-ran");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK_FALSE(result.timed_out);
    CHECK_FALSE(contains(result.out, "it-process-ran"));
    for (auto word : words) {
        INFO("expected in stderr: " << word);
        CHECK(contains(result.err, word));
    }
    check_no_leftovers(bundle);
}

std::string seccomp_line(const std::string& status) {
    return status_value(status, "Seccomp");
}

// A running container (run --detach) to exec into; deleted by the Runtime.
struct Running {
    TempBundle bundle;
    Runtime runtime;
    pid_t init = -1;

    explicit Running(std::string_view name, void (*configure)(TempBundle&) = nullptr)
        : bundle(name) {
        if (configure != nullptr) {
            configure(bundle);
        }
        bundle.set_shell(loop);
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid.has_value());
        init = *pid;
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    }

    RunResult exec(const std::vector<std::string>& flags,
                   const std::vector<std::string>& args) const {
        std::vector<std::string> full{"exec"};
        full.insert(full.end(), flags.begin(), flags.end());
        full.push_back(bundle.id());
        full.insert(full.end(), args.begin(), args.end());
        return runtime(full);
    }
};

} // namespace

// ---------------------------------------------------------------------------------------
// Capabilities

TEST_CASE("capabilities: the example config's three, in bounding, effective and permitted",
          "[security][capabilities]") {
    TempBundle bundle("caps-example");
    bundle.set_shell("cat /proc/self/status; echo ready; read line");
    Child minirun = bundle.start();
    bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    // CAP_AUDIT_WRITE (29), CAP_KILL (5), CAP_NET_BIND_SERVICE (10).
    const uint64_t three = 0x20000420;
    REQUIRE(mask_of({"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"}) == three);
    check_caps(caps_in(minirun.out()), 0, three, three, three, 0);

    // The same from the host, for the init itself.
    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    auto host_view = read_file("/proc/" + std::to_string(*init) + "/status").value_or("");
    check_caps(caps_in(host_view), 0, three, three, three, 0);

    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: five different sets, as root with no_new_privs",
          "[security][capabilities]") {
    // As root, execve recomputes permitted = (bounding | inheritable | ambient), capped by the
    // old permitted set under no_new_privs, and effective = permitted: so what shows is
    // bounding, inheritable, ambient exactly, and permitted (= effective) exactly.
    TempBundle bundle("caps-five");
    const std::vector<std::string> bounding{
        "CAP_CHOWN",   "CAP_KILL",        "CAP_NET_BIND_SERVICE",
        "CAP_NET_RAW", "CAP_AUDIT_WRITE", "CAP_SETUID"};
    const std::vector<std::string> permitted{"CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
                                             "CAP_SETUID"};
    const std::vector<std::string> effective{"CAP_KILL", "CAP_NET_BIND_SERVICE"};
    const std::vector<std::string> inheritable{"CAP_NET_BIND_SERVICE", "CAP_NET_RAW"};
    const std::vector<std::string> ambient{"CAP_NET_BIND_SERVICE"};
    bundle.config["process"]["capabilities"] = {{"bounding", bounding},
                                                {"permitted", permitted},
                                                {"effective", effective},
                                                {"inheritable", inheritable},
                                                {"ambient", ambient}};
    bundle.config["process"]["noNewPrivileges"] = true;
    bundle.set_shell("cat /proc/self/status");
    auto result = run_ok(bundle);
    INFO(result.describe());
    check_caps(caps_in(result.out), mask_of(inheritable), mask_of(permitted), mask_of(permitted),
               mask_of(bounding), mask_of(ambient));
    CHECK(status_value(result.out, "NoNewPrivs") == "1");
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: a non-root user keeps the ambient set across execve",
          "[security][capabilities]") {
    // uid 1000 runs a file without file capabilities: permitted = effective = ambient.
    TempBundle bundle("caps-ambient");
    const std::vector<std::string> bounding{"CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
                                            "CAP_AUDIT_WRITE"};
    const std::vector<std::string> some{"CAP_NET_BIND_SERVICE", "CAP_NET_RAW"};
    const std::vector<std::string> ambient{"CAP_NET_BIND_SERVICE"};
    bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    bundle.set_shell("echo uid $(id -u); cat /proc/self/status");
    SECTION("with ambient capabilities") {
        bundle.config["process"]["capabilities"] = {{"bounding", bounding},
                                                    {"permitted", some},
                                                    {"effective", some},
                                                    {"inheritable", some},
                                                    {"ambient", ambient}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "uid") == "1000");
        check_caps(caps_in(result.out), mask_of(some), mask_of(ambient), mask_of(ambient),
                   mask_of(bounding), mask_of(ambient));
    }
    SECTION("without ambient capabilities, none but the bounding set") {
        bundle.config["process"]["capabilities"] = {
            {"bounding", bounding}, {"permitted", some}, {"effective", some}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "uid") == "1000");
        check_caps(caps_in(result.out), 0, 0, 0, mask_of(bounding), 0);
    }
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: empty sets leave root with none at all", "[security][capabilities]") {
    TempBundle bundle("caps-none");
    bundle.config["process"]["capabilities"] = {{"bounding", nlohmann::json::array()},
                                                {"permitted", nlohmann::json::array()},
                                                {"effective", nlohmann::json::array()},
                                                {"inheritable", nlohmann::json::array()},
                                                {"ambient", nlohmann::json::array()}};
    // Without CAP_KILL, root cannot signal a process of another uid; without CAP_CHOWN it
    // cannot give a file away.
    writable_tmp(bundle);
    bundle.set_shell("cat /proc/self/status; touch /tmp/f; chown 1000 /tmp/f 2>&1; "
                     "echo chown $?");
    auto result = run_ok(bundle);
    INFO(result.describe());
    check_caps(caps_in(result.out), 0, 0, 0, 0, 0);
    CHECK(value_of(result.out, "chown") != "0");
    CHECK(contains(result.out, "Operation not permitted"));
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: without process.capabilities, none at all, as runc and crun",
          "[security][capabilities]") {
    // The spec leaves it open; runc (its init starts from an empty set) and crun both run
    // such a process with every set empty, and so does an exec into it.
    TempBundle bundle("caps-absent");
    bundle.config["process"].erase("capabilities");
    bundle.set_shell("cat /proc/self/status");
    bundle.write_config();
    auto result = run_ok(bundle);
    INFO(result.describe());
    check_caps(caps_in(result.out), 0, 0, 0, 0, 0);
    CHECK(status_value(result.out, "NoNewPrivs") == "1");

    bundle.set_shell("sleep 30");
    bundle.write_config();
    Runtime runtime;
    auto started = runtime.run_detached(bundle);
    INFO("run --detach: " << started.describe());
    REQUIRE(started.exit_code == 0);
    auto exec = runtime({"exec", bundle.id(), "cat", "/proc/self/status"});
    INFO("exec: " << exec.describe());
    CHECK(exec.exit_code == 0);
    check_caps(caps_in(exec.out), 0, 0, 0, 0, 0);
    auto deleted = runtime({"delete", "--force", bundle.id()});
    CHECK(deleted.exit_code == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: every capability the caller has", "[security][capabilities]") {
    TempBundle bundle("caps-all");
    const auto all = all_capabilities();
    bundle.config["process"]["capabilities"] = {
        {"bounding", all}, {"permitted", all}, {"effective", all}};
    bundle.set_shell("cat /proc/self/status");
    auto result = run_ok(bundle);
    INFO(result.describe());
    const uint64_t full = own_bounding();
    CHECK(mask_of(all) == full);
    check_caps(caps_in(result.out), 0, full, full, full, 0);
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: an unknown name is a warning naming it, and the container runs",
          "[security][capabilities]") {
    // runtime-spec 1.1 and later (config.md): a capability that cannot be granted is logged
    // as a warning; runc too ("ignoring unknown or unavailable capabilities") goes on.
    const std::string set =
        GENERATE(std::string("bounding"), std::string("effective"), std::string("permitted"),
                 std::string("inheritable"), std::string("ambient"));
    INFO("set " << set);
    TempBundle bundle("caps-unknown");
    auto& list = bundle.config["process"]["capabilities"][set];
    if (list.is_null()) {
        list = nlohmann::json::array();
    }
    list.push_back("CAP_IT_BOGUS");
    const size_t index = list.size() - 1;
    bundle.set_shell("echo it-process-ran; grep CapBnd /proc/self/status");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "it-process-ran"));
    CHECK(contains(result.err, "mini-run: warning: process.capabilities." + set + "[" +
                                   std::to_string(index) +
                                   "]: unknown capability \"CAP_IT_BOGUS\"; skipped"));
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: `runc spec`'s ambient set without an inheritable one runs, quietly",
          "[security][capabilities]") {
    // `runc spec` and `crun spec` list CAP_AUDIT_WRITE, CAP_KILL and CAP_NET_BIND_SERVICE as
    // ambient but not inheritable: the kernel cannot raise them, and runc skips them without
    // a word (this once failed with "raise ambient capability CAP_AUDIT_WRITE").
    TempBundle bundle("caps-runc-spec");
    const nlohmann::json caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
    bundle.config["process"]["capabilities"] = {
        {"bounding", caps}, {"effective", caps}, {"permitted", caps}, {"ambient", caps}};
    bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    bundle.set_shell("grep -E '^Cap(Amb|Prm)' /proc/self/status");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(result.err.empty());
    // Not raised, so a non-root process keeps none across its execve.
    CHECK(contains(result.out, "CapAmb:\t0000000000000000"));
    CHECK(contains(result.out, "CapPrm:\t0000000000000000"));
    check_no_leftovers(bundle);
}

TEST_CASE("exec --cap adds to bounding, effective and permitted only",
          "[security][capabilities][exec]") {
    Running container("caps-exec");
    const uint64_t three = 0x20000420;
    const uint64_t admin = mask_of({"CAP_SYS_ADMIN"});
    const uint64_t net_admin = mask_of({"CAP_NET_ADMIN"});

    SECTION("one capability") {
        auto result = container.exec({"--cap", "CAP_SYS_ADMIN"}, {"cat", "/proc/self/status"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        check_caps(caps_in(result.out), 0, three | admin, three | admin, three | admin, 0);
    }
    SECTION("two capabilities") {
        auto result = container.exec({"--cap", "CAP_SYS_ADMIN", "--cap", "CAP_NET_ADMIN"},
                                     {"cat", "/proc/self/status"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        const uint64_t all = three | admin | net_admin;
        check_caps(caps_in(result.out), 0, all, all, all, 0);
    }
    SECTION("without --cap, the config's sets") {
        auto result = container.exec({}, {"cat", "/proc/self/status"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        check_caps(caps_in(result.out), 0, three, three, three, 0);
    }
    // The init keeps its own sets.
    auto init_status = read_file("/proc/" + std::to_string(container.init) + "/status");
    REQUIRE(init_status.has_value());
    check_caps(caps_in(*init_status), 0, three, three, three, 0);
}

// ---------------------------------------------------------------------------------------
// no_new_privs

TEST_CASE("noNewPrivileges: NoNewPrivs in /proc/self/status", "[security][nnp]") {
    TempBundle bundle("nnp");
    bundle.set_shell("cat /proc/self/status");
    SECTION("true") {
        bundle.config["process"]["noNewPrivileges"] = true;
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(status_value(result.out, "NoNewPrivs") == "1");
    }
    SECTION("false") {
        bundle.config["process"]["noNewPrivileges"] = false;
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(status_value(result.out, "NoNewPrivs") == "0");
    }
    SECTION("absent") {
        bundle.config["process"].erase("noNewPrivileges");
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(status_value(result.out, "NoNewPrivs") == "0");
    }
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// seccomp

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

TEST_CASE("rlimits: soft and hard limits inside", "[security][rlimits]") {
    TempBundle bundle("rlimits");
    bundle.config["process"]["rlimits"] = {
        {{"type", "RLIMIT_NOFILE"}, {"soft", 512}, {"hard", 1000}},
        {{"type", "RLIMIT_CORE"}, {"soft", 4096}, {"hard", 8192}},
        {{"type", "RLIMIT_NPROC"}, {"soft", 4000}, {"hard", 5000}}};
    bundle.set_shell("echo soft $(ulimit -n); echo hard $(ulimit -Hn); cat /proc/self/limits");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(value_of(result.out, "soft") == "512");
    CHECK(value_of(result.out, "hard") == "1000");
    auto limit_words = [&](const std::string& name) {
        for (const auto& line : split_lines(result.out)) {
            if (line.rfind(name, 0) == 0) {
                return split_words(line.substr(name.size()));
            }
        }
        return std::vector<std::string>{};
    };
    CHECK(limit_words("Max open files") == std::vector<std::string>{"512", "1000", "files"});
    CHECK(limit_words("Max core file size") == std::vector<std::string>{"4096", "8192", "bytes"});
    CHECK(limit_words("Max processes") == std::vector<std::string>{"4000", "5000", "processes"});
    check_no_leftovers(bundle);
}

TEST_CASE("rlimits: an unknown type fails", "[security][rlimits]") {
    TempBundle bundle("rlimits-bad");
    bundle.config["process"]["rlimits"] = {{{"type", "RLIMIT_IT_BOGUS"}, {"soft", 1}, {"hard", 1}}};
    check_refused(bundle, {"RLIMIT_IT_BOGUS"});
}

TEST_CASE("oomScoreAdj: /proc/self/oom_score_adj inside, the caller's unchanged",
          "[security][oom]") {
    const std::string before = read_file("/proc/self/oom_score_adj").value_or("?");
    // Below the caller's value needs CAP_SYS_RESOURCE, which this VM's root may lack.
    const int value = GENERATE(500, 1000, -100);
    if (value < 0 && !have_capability(24)) {
        skip_test("oomScoreAdj " + std::to_string(value) +
                  ": no CAP_SYS_RESOURCE, so oom_score_adj cannot be lowered");
        return;
    }
    INFO("oomScoreAdj " << value);
    TempBundle bundle("oom");
    bundle.config["process"]["oomScoreAdj"] = value;
    bundle.set_shell("cat /proc/self/oom_score_adj");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(result.out == std::to_string(value) + "\n");
    CHECK(read_file("/proc/self/oom_score_adj").value_or("?") == before);
    check_no_leftovers(bundle);
}

namespace {

// Puts host sysctls back as they were, should a broken runtime have written them.
class SysctlGuard {
public:
    explicit SysctlGuard(std::vector<std::string> paths) : paths_(std::move(paths)) {
        for (const auto& path : paths_) {
            values_.push_back(read_file(path));
        }
    }
    SysctlGuard(const SysctlGuard&) = delete;
    SysctlGuard& operator=(const SysctlGuard&) = delete;
    ~SysctlGuard() {
        for (size_t i = 0; i < paths_.size(); ++i) {
            if (values_[i] && read_file(paths_[i]) != values_[i]) {
                std::ofstream(paths_[i]) << *values_[i];
            }
        }
    }

private:
    std::vector<std::string> paths_;
    std::vector<std::optional<std::string>> values_;
};

const std::vector<std::string> guarded_sysctls{
    "/proc/sys/net/ipv4/ip_forward", "/proc/sys/kernel/shmmax", "/proc/sys/vm/swappiness"};

} // namespace

TEST_CASE("sysctl: namespaced sysctls are set inside, the host's stay", "[security][sysctl]") {
    SysctlGuard guard(guarded_sysctls);
    const auto host_forward = read_file("/proc/sys/net/ipv4/ip_forward");
    const auto host_shmmax = read_file("/proc/sys/kernel/shmmax");
    REQUIRE(host_forward.has_value());
    REQUIRE(host_shmmax.has_value());
    const std::string forward = *host_forward == "1\n" ? "0" : "1";
    const std::string shmmax = "123456789";
    REQUIRE(*host_shmmax != shmmax + "\n");

    TempBundle bundle("sysctl");
    bundle.config["linux"]["sysctl"] = {{"net.ipv4.ip_forward", forward},
                                        {"kernel.shmmax", shmmax}};
    bundle.set_shell("echo forward $(cat /proc/sys/net/ipv4/ip_forward); "
                     "echo shmmax $(cat /proc/sys/kernel/shmmax)");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(value_of(result.out, "forward") == forward);
    CHECK(value_of(result.out, "shmmax") == shmmax);
    CHECK(read_file("/proc/sys/net/ipv4/ip_forward") == host_forward);
    CHECK(read_file("/proc/sys/kernel/shmmax") == host_shmmax);
    check_no_leftovers(bundle);
}

TEST_CASE("sysctl: a sysctl of a namespace the container does not have fails",
          "[security][sysctl]") {
    SysctlGuard guard(guarded_sysctls);
    const auto host_forward = read_file("/proc/sys/net/ipv4/ip_forward");
    const auto host_shmmax = read_file("/proc/sys/kernel/shmmax");
    const auto host_swappiness = read_file("/proc/sys/vm/swappiness");
    TempBundle bundle("sysctl-bad");
    SECTION("vm.swappiness is not namespaced") {
        const std::string other =
            host_swappiness == std::optional<std::string>("10\n") ? "11" : "10";
        bundle.config["linux"]["sysctl"] = {{"vm.swappiness", other}};
        check_refused(bundle, {"vm.swappiness"});
    }
    SECTION("net.* without a network namespace") {
        bundle.remove_namespaces({"network"});
        bundle.config["linux"]["sysctl"] = {
            {"net.ipv4.ip_forward", host_forward == std::optional<std::string>("1\n") ? "0" : "1"}};
        check_refused(bundle, {"net.ipv4.ip_forward"});
    }
    SECTION("kernel.shm* without an ipc namespace") {
        bundle.remove_namespaces({"ipc"});
        bundle.config["linux"]["sysctl"] = {{"kernel.shmmax", "123456789"}};
        check_refused(bundle, {"kernel.shmmax"});
    }
    CHECK(read_file("/proc/sys/net/ipv4/ip_forward") == host_forward);
    CHECK(read_file("/proc/sys/kernel/shmmax") == host_shmmax);
    CHECK(read_file("/proc/sys/vm/swappiness") == host_swappiness);
}

// ---------------------------------------------------------------------------------------
// Masked and read-only paths, a read-only root

TEST_CASE("maskedPaths: files read empty, directories show empty", "[security][masked]") {
    const auto hosts_before = read_file(example_rootfs() + "/etc/hosts");
    REQUIRE(hosts_before.has_value());
    REQUIRE_FALSE(hosts_before->empty());
    TempBundle bundle("masked");
    auto& masked = bundle.config["linux"]["maskedPaths"];
    masked.push_back("/proc/cmdline");      // a proc file every kernel has
    masked.push_back("/etc/hosts");         // a file of the rootfs
    masked.push_back("/home");              // a directory of the rootfs (it has user/)
    masked.push_back("/it-does-not-exist"); // skipped
    bundle.set_shell(
        "echo cmdline $(stat -c '%F %t:%T' /proc/cmdline); "
        "echo cmdline-size $(cat /proc/cmdline | wc -c); "
        "echo hosts $(stat -c '%F %t:%T' /etc/hosts); echo hosts-size $(cat /etc/hosts | wc -c); "
        "echo home [$(ls -A /home)]; echo firmware [$(ls -A /sys/firmware)]; "
        "touch /home/x 2>&1; echo touch-home $?; echo x > /etc/hosts; echo write-hosts $?");
    auto result = run_ok(bundle);
    INFO(result.describe());
    // /dev/null: a character device 1:3.
    CHECK(value_of(result.out, "cmdline") == "character special file 1:3");
    CHECK(value_of(result.out, "cmdline-size") == "0");
    CHECK(value_of(result.out, "hosts") == "character special file 1:3");
    CHECK(value_of(result.out, "hosts-size") == "0");
    CHECK(value_of(result.out, "home") == "[]");
    CHECK(value_of(result.out, "firmware") == "[]");
    CHECK(value_of(result.out, "touch-home") != "0");
    CHECK(contains(result.out, "Read-only file system"));
    // Writing the masked file writes /dev/null: the file underneath stays as it was.
    CHECK(read_file(example_rootfs() + "/etc/hosts") == hosts_before);
    struct stat st {};
    CHECK(stat((example_rootfs() + "/home/user").c_str(), &st) == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("readonlyPaths: writes fail with EROFS", "[security][readonly]") {
    TempDir data("minirun-it-data");
    REQUIRE(::mkdir((data.path() + "/ro").c_str(), 0777) == 0);
    REQUIRE(::mkdir((data.path() + "/rw").c_str(), 0777) == 0);
    TempBundle bundle("readonly-paths");
    bundle.config["mounts"].push_back({{"destination", "/data"},
                                       {"type", "bind"},
                                       {"source", data.path()},
                                       {"options", {"rbind", "rw"}}});
    bundle.config["linux"]["readonlyPaths"].push_back("/data/ro");
    bundle.config["linux"]["readonlyPaths"].push_back("/it-does-not-exist");
    bundle.set_shell("touch /data/ro/x 2>&1; echo ro $?; touch /data/rw/x; echo rw $?; "
                     "echo 1 > /proc/sys/kernel/domainname; echo sys $?");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(value_of(result.out, "ro") == "1");
    CHECK(value_of(result.out, "rw") == "0");
    CHECK(value_of(result.out, "sys") != "0");
    CHECK(contains(result.out, "touch: /data/ro/x: Read-only file system"));
    CHECK(contains(result.err, "Read-only file system")); // the shell's redirection
    struct stat st {};
    CHECK(stat((data.path() + "/rw/x").c_str(), &st) == 0);
    CHECK(stat((data.path() + "/ro/x").c_str(), &st) != 0);
    check_no_leftovers(bundle);
}

TEST_CASE("root.readonly: the root filesystem is read-only, mounts on it are not",
          "[security][readonly]") {
    SECTION("readonly true") {
        TempBundle bundle("root-ro");
        bundle.config["root"]["readonly"] = true;
        bundle.set_shell("touch /it-x 2>&1; echo root $?; touch /dev/it-x; echo dev $?; "
                         "awk '$5 == \"/\" { print \"options\", $6 }' /proc/self/mountinfo");
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "root") == "1");
        CHECK(contains(result.out, "Read-only file system"));
        CHECK(value_of(result.out, "dev") == "0");
        const auto options = value_of(result.out, "options");
        CHECK((options == "ro" || options.rfind("ro,", 0) == 0));
        struct stat st {};
        CHECK(lstat((example_rootfs() + "/it-x").c_str(), &st) != 0);
        check_no_leftovers(bundle);
    }
    SECTION("readonly false") {
        TempBundle bundle("root-rw");
        const std::string rootfs = bundle.copy_rootfs();
        bundle.config["root"]["readonly"] = false;
        bundle.set_shell("touch /it-x; echo root $?");
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "root") == "0");
        struct stat st {};
        CHECK(lstat((rootfs + "/it-x").c_str(), &st) == 0);
        check_no_leftovers(bundle);
    }
}

// ---------------------------------------------------------------------------------------
// umask, additionalGids, personality

TEST_CASE("process.user.umask", "[security][user]") {
    TempBundle bundle("umask");
    bundle.set_shell("umask; touch /dev/f; mkdir /dev/d; stat -c '%n %a' /dev/f /dev/d");
    SECTION("077") {
        bundle.config["process"]["user"]["umask"] = 077;
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(split_lines(result.out).front() == "0077");
        CHECK(value_of(result.out, "/dev/f") == "600");
        CHECK(value_of(result.out, "/dev/d") == "700");
    }
    SECTION("absent: 022") {
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(split_lines(result.out).front() == "0022");
        CHECK(value_of(result.out, "/dev/f") == "644");
        CHECK(value_of(result.out, "/dev/d") == "755");
    }
    check_no_leftovers(bundle);
}

TEST_CASE("process.user.additionalGids", "[security][user]") {
    TempBundle bundle("gids");
    bundle.set_shell("echo groups $(id -G); grep Groups: /proc/self/status");
    SECTION("root") {
        bundle.config["process"]["user"]["additionalGids"] = {5, 10, 1234};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "groups") == "0 5 10 1234");
        CHECK(status_value(result.out, "Groups") == "5");
        CHECK(contains(result.out, "Groups:\t5 10 1234"));
    }
    SECTION("uid 1000") {
        bundle.config["process"]["user"] = {
            {"uid", 1000}, {"gid", 1000}, {"additionalGids", {5, 10}}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "groups") == "1000 5 10");
    }
    SECTION("none: no supplementary groups") {
        bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "groups") == "1000");
    }
    check_no_leftovers(bundle);
}

TEST_CASE("linux.personality: LINUX32 makes uname -m show i686", "[security][personality]") {
    // runc 1.1 ignores linux.personality (it came with runc 1.2).
    TempBundle bundle("personality");
    bundle.set_shell("uname -m");
    SECTION("LINUX32") {
        bundle.config["linux"]["personality"] = {{"domain", "LINUX32"}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(result.out == "i686\n");
    }
    SECTION("LINUX") {
        bundle.config["linux"]["personality"] = {{"domain", "LINUX"}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(result.out == "x86_64\n");
    }
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// spec --seccomp

TEST_CASE("spec --seccomp: a default deny-list profile that containers run with",
          "[security][seccomp][spec]") {
    // runc's `spec` has no --seccomp.
    TempBundle bundle("spec-seccomp");
    auto made = run_minirun({"spec", "--seccomp", "--bundle", bundle.dir()});
    INFO(made.describe());
    REQUIRE(made.exit_code == 0);
    auto text = read_file(bundle.config_path());
    REQUIRE(text.has_value());
    auto config = nlohmann::json::parse(*text, nullptr, false);
    REQUIRE_FALSE(config.is_discarded());
    REQUIRE(config["linux"]["seccomp"].is_object());
    const auto& seccomp = config["linux"]["seccomp"];
    INFO("seccomp: " << seccomp.dump(2));
    CHECK(seccomp["defaultAction"] == "SCMP_ACT_ALLOW");
    REQUIRE(seccomp["syscalls"].is_array());
    for (const char* name : {"kexec_load", "init_module", "bpf", "keyctl"}) {
        INFO("syscall " << name);
        bool denied = false;
        for (const auto& rule : seccomp["syscalls"]) {
            const auto& names = rule["names"];
            if (std::find(names.begin(), names.end(), name) != names.end()) {
                denied = rule["action"] == "SCMP_ACT_ERRNO" &&
                         (!rule.contains("errnoRet") || rule["errnoRet"] == 1);
            }
        }
        CHECK(denied);
    }
    // Without --seccomp: no profile.
    TempBundle plain("spec-plain");
    auto plain_made = run_minirun({"spec", "--bundle", plain.dir()});
    INFO(plain_made.describe());
    REQUIRE(plain_made.exit_code == 0);
    auto plain_config =
        nlohmann::json::parse(read_file(plain.config_path()).value_or(""), nullptr, false);
    REQUIRE_FALSE(plain_config.is_discarded());
    CHECK_FALSE(plain_config["linux"].contains("seccomp"));

    // A container runs with it, under the filter.
    bundle.config = config;
    bundle.config["root"]["path"] = example_rootfs();
    bundle.config["process"]["terminal"] = false;
    bundle.set_shell("grep Seccomp: /proc/self/status; echo ok");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(seccomp_line(result.out) == "2");
    CHECK(contains(result.out, "ok\n"));
    check_no_leftovers(bundle);
}
