// The fault sweep of `create`: each system call mini-run makes while creating a container is
// made to fail in turn (strace's fault injection, -e inject=NAME:error=EIO:when=N), and
// whatever the outcome nothing may be left behind: no state directory, no cgroup, no mount,
// no process. It checks the promise of runtime/create.cpp's CreateRun (what a step made
// is undone when a later one fails) with the real kernel, call by call.
#include "helpers.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <map>
#include <unistd.h>

using namespace it;

namespace {

// The calls not to fail: a process's start and its memory, which are not create's to undo
// (a failing brk or mmap ends in an allocation failure, not in a rollback); and close(),
// because strace's injection skips the call while the kernel releases the fd even when
// close fails (close(2)): an fd still open after a failed close is a state no kernel makes.
bool not_creates_own(const std::string& name) {
    static const std::vector<std::string> kStartup = {
        "execve",          "exit_group", "brk",        "mmap",      "munmap",
        "mprotect",        "mremap",     "arch_prctl", "rseq",      "set_tid_address",
        "set_robust_list", "futex",      "getrandom",  "prlimit64", "close"};
    return std::find(kStartup.begin(), kStartup.end(), name) != kStartup.end();
}

// The system calls of a traced run, by name, counted ("openat" -> 57).
std::map<std::string, int> calls_in(const std::string& strace_log) {
    std::map<std::string, int> counts;
    for (const std::string& line : split_lines(read_file(strace_log).value_or(""))) {
        size_t paren = line.find('(');
        if (paren == std::string::npos || paren == 0) {
            continue;
        }
        std::string name = line.substr(0, paren);
        if (name.find(' ') == std::string::npos && !name.starts_with("+++") &&
            !name.starts_with("---")) {
            ++counts[name];
        }
    }
    return counts;
}

// Debian's strace (scripts/bootstrap.sh installs it); Child execs without a PATH search.
const std::string kStrace = "/usr/bin/strace";

bool have_strace() {
    return ::access(kStrace.c_str(), X_OK) == 0 && run({kStrace, "-V"}).exit_code == 0;
}

} // namespace

TEST_CASE("create: whichever of its system calls fails, nothing is left behind", "[fault]") {
    REQUIRE(have_strace()); // scripts/bootstrap.sh installs it
    become_subreaper();
    // With NOTIFY_SOCKET create also makes the notify directory, and the init binds it:
    // swept too (create only makes the directory; run and start connect to the socket).
    struct NotifyEnv {
        bool set = false;
        ~NotifyEnv() {
            if (set) {
                ::unsetenv("NOTIFY_SOCKET");
            }
        }
    } notify_env;
    SECTION("as configured") {}
    SECTION("with NOTIFY_SOCKET") {
        notify_env.set = ::setenv("NOTIFY_SOCKET", "/nonexistent/notify.sock", 1) == 0;
        REQUIRE(notify_env.set);
    }
    TempBundle bundle("fault");
    bundle.set_shell("exit 0");
    const std::string cgroups_path = "/minirun-fault-" + bundle.id();
    bundle.config["linux"]["cgroupsPath"] = cgroups_path;
    bundle.write_config();
    TempDir logs("minirun-it-fault");
    const std::vector<std::string> create = {minirun_binary(), "create", "--bundle", bundle.dir(),
                                             bundle.id()};

    // The calls of a create that succeeds, the parent's only (no -f: the init is not traced).
    std::vector<std::string> traced = {kStrace, "-qq", "-o", logs.path() + "/clean.log"};
    traced.insert(traced.end(), create.begin(), create.end());
    auto clean = run(traced);
    REQUIRE(clean.exit_code == 0);
    REQUIRE(run_minirun({"delete", "--force", bundle.id()}).exit_code == 0);
    reap_orphans();
    REQUIRE(bundle.leftovers().empty());
    auto counts = calls_in(logs.path() + "/clean.log");
    REQUIRE(counts.size() > 10);

    int failed_creates = 0;
    int survived = 0;
    std::map<std::string, int> survivors; // which calls a create survives, for the report
    for (const auto& [name, count] : counts) {
        if (not_creates_own(name)) {
            continue;
        }
        for (int when = 1; when <= count; ++when) {
            std::string injection = name + ":error=EIO:when=" + std::to_string(when);
            INFO("create with the " << when << ". " << name << " failing (EIO)");
            std::vector<std::string> argv = {kStrace,     "-qq", "-o",
                                             "/dev/null", "-e",  "inject=" + injection};
            argv.insert(argv.end(), create.begin(), create.end());
            auto result = run(argv, {}, 10s);
            INFO(result.describe());
            // An error exit, never a crash: a signal would skip the undoing.
            CHECK((result.exit_code == 0 || result.exit_code == 1));
            if (result.exit_code == 0) {
                // Survived (a failed log write, a retried call): the container exists, and
                // is deleted like any other.
                ++survived;
                ++survivors[name];
                CHECK(run_minirun({"delete", "--force", bundle.id()}).exit_code == 0);
            } else {
                ++failed_creates;
                CHECK_FALSE(result.err.empty()); // a failure says what failed
            }
            reap_orphans();
            std::vector<std::string> left = bundle.leftovers();
            for (const auto& dir : cgroup_dirs(cgroups_path)) {
                left.push_back("cgroup " + dir);
            }
            for (const auto& problem : left) {
                FAIL_CHECK("left behind: " << problem);
            }
            if (!left.empty()) {
                // Cleaned up, so that the next round starts from nothing again: the
                // processes this round started (by pid), then the container.
                for (pid_t pid : processes_with_marker(bundle.id())) {
                    ::kill(pid, SIGKILL);
                }
                reap_orphans();
                (void)run_minirun({"delete", "--force", bundle.id()});
                for (const auto& dir : cgroup_dirs(cgroups_path)) {
                    ::rmdir(dir.c_str());
                }
                reap_orphans();
            }
        }
    }
    // Most failures end the create; some are survivable by design (a retried or optional
    // call, a log line that cannot be written).
    CHECK(failed_creates >= 50);
    std::string survived_by;
    for (const auto& [call, times] : survivors) {
        survived_by += " " + call + "x" + std::to_string(times);
    }
    WARN("fault sweep: " << failed_creates << " failed creates, " << survived << " survived, over "
                         << counts.size() << " kinds of system call; survived:" << survived_by);
}
