#include "process/hooks.hpp"

#include "minirun/fd.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace minirun;
using minirun::runtime::hooks::run_hook;
using minirun::runtime::hooks::run_hooks;
using minirun::testing::TempDir;

namespace {

// A hook running `script` in /bin/sh; "$0" is argv[0] and "$@" the rest.
spec::Hook shell_hook(const std::string& script, std::vector<std::string> env = {}) {
    spec::Hook hook;
    hook.path = "/bin/sh";
    hook.args = {"sh", "-c", script};
    hook.env = std::move(env);
    return hook;
}

// "" for success, else the error, so that a failing check shows the message.
std::string problem(const Status& status) {
    return status.ok() ? "" : status.error().message();
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path, std::ios::binary) << text;
    ::chmod(path.c_str(), mode);
}

size_t open_fd_count() {
    size_t count = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/self/fd")) {
        ++count;
    }
    return count;
}

std::vector<int> numbers_in(const std::string& text) {
    std::vector<int> numbers;
    std::istringstream in(text);
    int number = 0;
    while (in >> number) {
        numbers.push_back(number);
    }
    return numbers;
}

// Points one of our standard fds at a file for the scope, to see what a hook writes there.
class Redirect {
public:
    Redirect(int fd, const std::string& path) : fd_(fd), saved_(::dup(fd)) {
        std::cout.flush();
        std::cerr.flush();
        UniqueFd file(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        ::dup2(file.get(), fd_);
    }
    Redirect(const Redirect&) = delete;
    Redirect& operator=(const Redirect&) = delete;
    ~Redirect() { ::dup2(saved_.get(), fd_); }

private:
    int fd_;
    UniqueFd saved_;
};

// Restores the signal mask and SIGPIPE/SIGUSR1 dispositions a test changed.
class SignalState {
public:
    SignalState() {
        ::sigprocmask(SIG_SETMASK, nullptr, &mask_);
        ::sigaction(SIGPIPE, nullptr, &pipe_);
        ::sigaction(SIGUSR1, nullptr, &usr1_);
    }
    SignalState(const SignalState&) = delete;
    SignalState& operator=(const SignalState&) = delete;
    ~SignalState() {
        ::sigprocmask(SIG_SETMASK, &mask_, nullptr);
        ::sigaction(SIGPIPE, &pipe_, nullptr);
        ::sigaction(SIGUSR1, &usr1_, nullptr);
    }

private:
    sigset_t mask_{};
    struct sigaction pipe_ {};
    struct sigaction usr1_ {};
};

} // namespace

TEST_CASE("the hook gets the state JSON on stdin, exactly, then EOF", "[hooks]") {
    TempDir dir;
    std::string out = dir.path() + "/state";
    std::string state = R"({"ociVersion":"1.0.2","id":"c1","status":"creating","pid":42,)"
                        R"("bundle":"/b","annotations":{"a":"b\nc"}})";
    REQUIRE(problem(run_hook(shell_hook("exec cat > " + out), state)).empty());
    CHECK(read_file(out) == state);

    SECTION("also through /dev/stdin, which a socket would not allow") {
        REQUIRE(problem(run_hook(shell_hook("exec cat /dev/stdin > " + out), state)).empty());
        CHECK(read_file(out) == state);
    }
    SECTION("an empty state is just EOF") {
        REQUIRE(problem(run_hook(shell_hook("exec cat > " + out), "")).empty());
        CHECK(read_file(out).empty());
    }
    SECTION("a state far larger than a pipe's buffer") {
        std::string big(1 << 20, 'x');
        for (size_t i = 0; i < big.size(); i += 4099) {
            big[i] = static_cast<char>('a' + (i % 26));
        }
        REQUIRE(problem(run_hook(shell_hook("exec cat > " + out), big)).empty());
        CHECK(read_file(out) == big);
    }
}

TEST_CASE("argv is the hook's args, with args[0] as argv[0]", "[hooks]") {
    TempDir dir;
    std::string out = dir.path() + "/argv";

    spec::Hook hook;
    hook.path = "/bin/sh";
    hook.args = {"custom-name", "-c", "echo \"$0\" > " + out};
    REQUIRE(problem(run_hook(hook, "")).empty());
    CHECK(read_file(out) == "custom-name\n");

    hook.args = {"sh", "-c", R"(printf '[%s]' "$0" "$@" > )" + out, "zero", "one", "two words"};
    REQUIRE(problem(run_hook(hook, "")).empty());
    CHECK(read_file(out) == "[zero][one][two words]");
}

TEST_CASE("without args, argv is just the path", "[hooks]") {
    TempDir dir;
    std::string out = dir.path() + "/argv";
    spec::Hook hook;
    hook.path = "/bin/sh";
    // argv = {"/bin/sh"}: the shell reads its script from stdin, that is from the state.
    REQUIRE(problem(run_hook(hook, "echo \"$0\" \"$#\" > " + out + "\n")).empty());
    CHECK(read_file(out) == "/bin/sh 0\n");
}

TEST_CASE("the hook's environment is exactly the given list", "[hooks]") {
    TempDir dir;
    std::string out = dir.path() + "/env";
    REQUIRE(::setenv("MINIRUN_TEST_LEAK", "1", 1) == 0);

    SECTION("env as given") {
        // /proc/<pid>/environ is the block execve received, before the shell adds PWD.
        auto hook = shell_hook("cat /proc/$$/environ > " + out, {"A=1", "B=two words", "C="});
        REQUIRE(problem(run_hook(hook, "")).empty());
        CHECK(read_file(out) == std::string("A=1\0B=two words\0C=\0", 19));
    }
    SECTION("no env at all") {
        REQUIRE(problem(run_hook(shell_hook("cat /proc/$$/environ > " + out), "")).empty());
        CHECK(read_file(out).empty());
    }
    SECTION("/usr/bin/env run directly, writing to the stdout it inherits") {
        spec::Hook hook;
        hook.path = "/usr/bin/env";
        hook.env = {"A=1"};
        Status status;
        {
            Redirect stdout_to_file(STDOUT_FILENO, out);
            status = run_hook(hook, "");
        }
        REQUIRE(problem(status).empty());
        CHECK(read_file(out) == "A=1\n");
    }
    ::unsetenv("MINIRUN_TEST_LEAK");
}

TEST_CASE("the hook writes to the caller's stdout and stderr", "[hooks]") {
    TempDir dir;
    std::string out = dir.path() + "/out";
    std::string err = dir.path() + "/err";
    Status status;
    {
        Redirect stdout_to_file(STDOUT_FILENO, out);
        Redirect stderr_to_file(STDERR_FILENO, err);
        status = run_hook(shell_hook("echo to-out; echo to-err >&2"), "");
    }
    REQUIRE(problem(status).empty());
    CHECK(read_file(out) == "to-out\n");
    CHECK(read_file(err) == "to-err\n");
}

TEST_CASE("exit status and signals become errors", "[hooks]") {
    auto exited = run_hook(shell_hook("exit 3"), "");
    REQUIRE_FALSE(exited.ok());
    CHECK(exited.error().message() == "exit status 3");

    auto killed = run_hook(shell_hook("kill -9 $$"), "");
    REQUIRE_FALSE(killed.ok());
    CHECK(killed.error().message() == "killed by signal 9 (killed)");

    auto terminated = run_hook(shell_hook("kill -TERM $$"), "");
    REQUIRE_FALSE(terminated.ok());
    CHECK(terminated.error().message() == "killed by signal 15 (terminated)");
}

TEST_CASE("run_hooks: in order, and the first failure names kind, index and path", "[hooks]") {
    TempDir dir;
    std::string log = dir.path() + "/log";
    std::string marker = dir.path() + "/marker";
    std::vector<spec::Hook> hooks = {
        shell_hook("echo first >> " + log),
        shell_hook("echo second >> " + log + "; exit 3"),
        shell_hook("touch " + marker),
    };
    auto status = run_hooks("prestart", hooks, "{}");
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message() ==
          "hooks.prestart[1] /bin/sh: error running prestart hook #1: error running hook: exit "
          "status 3");
    CHECK(read_file(log) == "first\nsecond\n");
    CHECK_FALSE(std::filesystem::exists(marker));

    hooks.erase(hooks.begin() + 1);
    REQUIRE(problem(run_hooks("poststart", hooks, "{}")).empty());
    CHECK(std::filesystem::exists(marker));
    CHECK(problem(run_hooks("poststop", {}, "{}")).empty());
}

TEST_CASE("a hook that cannot be exec'd reports the exec's errno", "[hooks]") {
    TempDir dir;
    size_t fds_before = open_fd_count();

    spec::Hook missing;
    missing.path = dir.path() + "/no-such-hook";
    auto status = run_hooks("createRuntime", {missing}, "{}");
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message() ==
          "hooks.createRuntime[0] " + missing.path +
              ": error running createRuntime hook #0: error running hook: No such file or "
              "directory");
    CHECK(status.error().errno_value() == ENOENT);

    spec::Hook not_executable;
    not_executable.path = dir.path() + "/not-executable";
    write_file(not_executable.path, "#!/bin/sh\nexit 0\n", 0644);
    auto denied = run_hook(not_executable, "{}");
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.error().message() == "Permission denied");
    CHECK(denied.error().errno_value() == EACCES);

    CHECK(open_fd_count() == fds_before);
}

TEST_CASE("a script file as the hook", "[hooks]") {
    TempDir dir;
    std::string out = dir.path() + "/out";
    spec::Hook hook;
    hook.path = dir.path() + "/hook.sh";
    hook.args = {"ignored-by-the-kernel", "arg1"};
    write_file(hook.path, "#!/bin/sh\nread -r state\necho \"$1 $state\" > " + out + "\n", 0755);
    REQUIRE(problem(run_hook(hook, "{\"id\":\"c\"}\n")).empty());
    CHECK(read_file(out) == "arg1 {\"id\":\"c\"}\n");
}

TEST_CASE("a hook past its timeout is killed and reaped", "[hooks]") {
    TempDir dir;
    std::string pid_file = dir.path() + "/pid";
    size_t fds_before = open_fd_count();

    auto hook = shell_hook("echo $$ > " + pid_file + "; exec sleep 10");
    hook.timeout = 1;
    auto started = std::chrono::steady_clock::now();
    auto status = run_hook(hook, "{}");
    auto took = std::chrono::steady_clock::now() - started;

    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message() == "timed out after 1 s");
    CHECK(took < std::chrono::seconds(9));
    auto pids = numbers_in(read_file(pid_file));
    REQUIRE(pids.size() == 1);
    errno = 0;
    CHECK(::kill(pids[0], 0) == -1);
    CHECK(errno == ESRCH); // reaped, not a zombie
    CHECK(open_fd_count() == fds_before);

    // A hook that finishes in time is not affected.
    auto quick = shell_hook("exit 0");
    quick.timeout = 5;
    CHECK(problem(run_hook(quick, "{}")).empty());
}

TEST_CASE("a hook that does not read a large state neither hangs nor kills us", "[hooks]") {
    // SIGPIPE at its default: if we got one, the test binary would die here.
    std::string big(1 << 20, '{');
    size_t fds_before = open_fd_count();

    SECTION("exits at once") {
        CHECK(problem(run_hook(shell_hook("exit 0"), big)).empty());
    }
    SECTION("closes stdin, then exits a little later") {
        CHECK(problem(run_hook(shell_hook("exec 0<&-; sleep 0.3"), big)).empty());
    }
    SECTION("reads a little and fails") {
        auto status = run_hook(shell_hook("head -c 10 > /dev/null; exit 4"), big);
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().message() == "exit status 4");
    }
    SECTION("never reads and never exits: the timeout ends it") {
        auto hook = shell_hook("exec sleep 10");
        hook.timeout = 1;
        auto status = run_hook(hook, big);
        REQUIRE_FALSE(status.ok());
        CHECK(status.error().message() == "timed out after 1 s");
    }
    CHECK(open_fd_count() == fds_before);
}

TEST_CASE("the hook starts with no blocked and no ignored signals", "[hooks]") {
    TempDir dir;
    std::string out = dir.path() + "/signals";
    SignalState restore;

    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGCHLD);
    REQUIRE(::sigprocmask(SIG_BLOCK, &blocked, nullptr) == 0);
    REQUIRE(::signal(SIGPIPE, SIG_IGN) != SIG_ERR);
    REQUIRE(::signal(SIGUSR1, SIG_IGN) != SIG_ERR);

    // The shell execs grep, which inherits whatever the shell was given.
    auto hook = shell_hook("exec grep -E '^Sig(Blk|Ign)' /proc/self/status > " + out);
    REQUIRE(problem(run_hook(hook, "")).empty());
    CHECK(read_file(out) == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");

    // And ours are untouched.
    sigset_t now;
    REQUIRE(::sigprocmask(SIG_SETMASK, nullptr, &now) == 0);
    CHECK(sigismember(&now, SIGTERM) == 1);
    CHECK(sigismember(&now, SIGCHLD) == 1);
}

TEST_CASE("no fd of ours reaches the hook, and none is left behind", "[hooks]") {
    TempDir dir;
    std::string out = dir.path() + "/fds";
    // Without close-on-exec, as a careless caller might leave one; high, so that it cannot
    // coincide with the fd ls opens for the directory.
    UniqueFd leaky;
    {
        UniqueFd low(::open("/dev/null", O_RDONLY)); // NOLINT(android-cloexec-open)
        REQUIRE(low.valid());
        leaky.reset(::fcntl(low.get(), F_DUPFD, 50));
    }
    REQUIRE(leaky.get() >= 50);
    size_t fds_before = open_fd_count();

    REQUIRE(problem(run_hook(shell_hook("exec ls /proc/self/fd > " + out), "{}")).empty());
    auto listed = numbers_in(read_file(out));
    CHECK(std::find(listed.begin(), listed.end(), leaky.get()) == listed.end());
    // 0, 1, 2 and the directory ls reads.
    CHECK(listed.size() <= 4);
    for (int fd : listed) {
        CHECK(fd <= 3);
    }
    CHECK(open_fd_count() == fds_before);

    CHECK_FALSE(run_hook(shell_hook("exit 1"), "{}").ok());
    CHECK(open_fd_count() == fds_before);
}

// runc's startContainer hooks (standard_init_linux.go, SetDefaultEnv; hooks.bats "should
// inherit process environment"): a hook without env of its own gets the process's.
TEST_CASE("run_hooks: a default env for hooks without one", "[hooks]") {
    TempDir dir;
    const std::string out = dir.path() + "/out";
    spec::Hook without = shell_hook("cat /proc/$$/environ >> " + out);
    without.env.reset();
    spec::Hook empty = shell_hook("cat /proc/$$/environ >> " + out);
    spec::Hook own = shell_hook("cat /proc/$$/environ >> " + out, {"OWN=1"});
    const std::vector<std::string> process_env = {"ONE=two", "HOME=/root"};
    REQUIRE(problem(run_hooks("startContainer", {without, empty, own}, "", process_env)).empty());
    CHECK(read_file(out) == std::string("ONE=two\0HOME=/root\0ONE=two\0HOME=/root\0OWN=1\0", 44));
}
