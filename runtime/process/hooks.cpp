#include "process/hooks.hpp"

#include "fs.hpp"
#include "minirun/fd.hpp"
#include "minirun/log.hpp"
#include "process/child.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <optional>

namespace minirun::runtime::hooks {
namespace {

// Where the child was when it gave up before the hook could run.
enum class Stage : int { signals, stdin_fd, fds, exec };

// What the child writes to the report pipe instead of exec'ing; one write, well under
// PIPE_BUF, so the parent never sees half of it.
struct ChildFailure {
    Stage stage = Stage::exec;
    int error = 0;
};

struct Pipe {
    UniqueFd read;
    UniqueFd write;
};

// A runtime started with stdin, stdout or stderr closed would get one of those numbers for
// a pipe end; the child's dup2() onto stdin, or the hook writing to "stdout", would then hit
// the wrong file. So no pipe end ever lives at 0, 1 or 2.
Result<UniqueFd> above_stdio(UniqueFd fd) {
    if (fd.get() > STDERR_FILENO) {
        return fd;
    }
    int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (moved < 0) {
        return Error::from_errno("move a pipe end above the standard fds");
    }
    return UniqueFd(moved);
}

Result<Pipe> make_pipe(std::string_view purpose) {
    std::array<int, 2> ends{};
    if (::pipe2(ends.data(), O_CLOEXEC) < 0) {
        return Error::from_errno(cat("create ", purpose));
    }
    Pipe pipe{UniqueFd(ends[0]), UniqueFd(ends[1])};
    MR_ASSIGN(pipe.read, above_stdio(std::move(pipe.read)));
    MR_ASSIGN(pipe.write, above_stdio(std::move(pipe.write)));
    return pipe;
}

// Runs in the forked child: only async-signal-safe calls, no allocation (argv and envp are
// built before the fork), and _exit() so none of the runtime's destructors or atexit
// handlers run twice.
[[noreturn]] void exec_hook(const char* path, char* const* argv, char* const* envp, int stdin_fd,
                            int report_fd) {
    auto fail = [report_fd](Stage stage) {
        ChildFailure failure{stage, errno};
        // If this write fails the parent is gone or the pipe broken: nobody left to tell, and
        // the parent still sees the exit status 127.
        [[maybe_unused]] ssize_t ignored = ::write(report_fd, &failure, sizeof(failure));
        ::_exit(127);
    };

    // The runtime may ignore SIGPIPE or block what it forwards; execve keeps both, and a hook
    // must not start with our choices. glibc refuses its two internal signals (EINVAL), but
    // never ignores them, and execve resets caught signals by itself.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    for (int signal = 1; signal < NSIG; ++signal) {
        if (signal != SIGKILL && signal != SIGSTOP) {
            ::sigaction(signal, &default_action, nullptr);
        }
    }
    sigset_t none;
    sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) < 0) {
        fail(Stage::signals);
    }

    // stdin_fd is never 0 (above_stdio), so dup2 makes a fresh fd without close-on-exec.
    if (::dup2(stdin_fd, STDIN_FILENO) < 0) {
        fail(Stage::stdin_fd);
    }
    // Whatever the runtime's caller leaked into us (and any fd opened without O_CLOEXEC) must
    // not reach the hook. Marking rather than closing keeps report_fd usable until the exec.
    // startContainer hooks run under the container's seccomp filter, which may predate
    // close_range (EPERM, ENOSYS; EINVAL: a kernel before 5.11): each fd of /proc/self/fd.
    if (::syscall(SYS_close_range, STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
        if (errno != EPERM && errno != ENOSYS && errno != EINVAL) {
            fail(Stage::fds);
        }
        if (int error = fs::cloexec_fds_from(STDERR_FILENO + 1); error != 0) {
            errno = error;
            fail(Stage::fds);
        }
    }
    ::execve(path, argv, envp);
    fail(Stage::exec);
    ::_exit(127); // not reached: fail() exits, but the lambda is not [[noreturn]]
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
    std::vector<char*> pointers;
    pointers.reserve(strings.size() + 1);
    for (const std::string& text : strings) {
        // execve's prototype predates const; it does not write through these pointers.
        pointers.push_back(
            const_cast<char*>(text.c_str())); // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }
    pointers.push_back(nullptr);
    return pointers;
}

// Forks the hook. The runtime's signal handlers would run in the child if a signal arrived
// before the child resets them, so every signal stays blocked across the fork.
Result<pid_t> spawn(const spec::Hook& hook, int stdin_fd, int report_fd) {
    // The pointers point into the strings: those must outlive the fork.
    std::vector<std::string> path_only;
    if (hook.args.empty()) {
        path_only.push_back(hook.path);
    }
    std::vector<char*> argv = c_strings(hook.args.empty() ? path_only : hook.args);
    std::vector<char*> env_list = c_strings(hook.env.value_or(std::vector<std::string>{}));
    char* const* envp = hook.env ? env_list.data() : environ;

    sigset_t all;
    sigset_t original;
    sigfillset(&all);
    if (::sigprocmask(SIG_SETMASK, &all, &original) < 0) {
        return Error::from_errno("block signals");
    }
    pid_t pid = ::fork();
    if (pid == 0) {
        exec_hook(hook.path.c_str(), argv.data(), envp, stdin_fd, report_fd);
    }
    int fork_errno = errno;
    ::sigprocmask(SIG_SETMASK, &original, nullptr);
    if (pid < 0) {
        return Error::from_errno(fork_errno, "fork");
    }
    return pid;
}

// Reads the child's report: success once the exec closed the pipe (end of file), the
// child's failure otherwise.
Status read_report(int report_fd) {
    ChildFailure failure;
    ssize_t got = 0;
    do {
        got = ::read(report_fd, &failure, sizeof(failure));
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return Error::from_errno("read the hook's exec report");
    }
    if (got == 0) {
        return {};
    }
    if (static_cast<size_t>(got) != sizeof(failure)) {
        return Error(EIO, "short exec report from the hook's child");
    }
    switch (failure.stage) {
    case Stage::signals:
        return Error::from_errno(failure.error, "reset the signal mask");
    case Stage::stdin_fd:
        return Error::from_errno(failure.error, "set up stdin");
    case Stage::fds:
        return Error::from_errno(failure.error, "mark inherited fds close-on-exec");
    case Stage::exec:
        break;
    }
    // run_hooks puts the path in front already: "hooks.prestart[0] /x: No such file ...".
    return Error(failure.error, std::strerror(failure.error));
}

Status check_wait_status(int status) {
    if (WIFEXITED(status)) {
        if (WEXITSTATUS(status) == 0) {
            return {};
        }
        return Error(cat("exit status ", WEXITSTATUS(status)));
    }
    if (WIFSIGNALED(status)) {
        // "killed by signal 31 (bad system call)": runc's (Go's) lower-case name, which users
        // of runc match on.
        std::string name = ::strsignal(WTERMSIG(status));
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return Error(cat("killed by signal ", WTERMSIG(status), " (", name, ")"));
    }
    return Error(cat("unexpected wait status ", status));
}

// Feeds `state` to the hook's stdin while waiting for it to exit, up to `timeout` seconds.
// Writing and waiting share one poll() so that a hook which never reads cannot stall us on a
// full pipe: we just stop writing when it exits.
Status feed_and_wait(ScopedChild& child, UniqueFd stdin_write, std::string_view state,
                     std::optional<int> timeout) {
    using Clock = std::chrono::steady_clock;
    // A pidfd becomes readable when the process exits, whatever the caller did with SIGCHLD.
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, child.get(), 0)));
    // startContainer hooks run under the container's seccomp filter: a profile older than
    // pidfd_open (Linux 5.3) refuses it (EPERM, or ENOSYS as runc's seccomp.bats answers).
    // Then poll in short ticks and ask waitpid(WNOHANG) after each.
    bool ticking = !pidfd && (errno == EPERM || errno == ENOSYS);
    if (!pidfd && !ticking) {
        return Error::from_errno("pidfd_open the hook");
    }
    constexpr int kTickMs = 5;
    std::optional<Clock::time_point> deadline;
    if (timeout) {
        deadline = Clock::now() + std::chrono::seconds(*timeout);
    }
    if (state.empty()) {
        stdin_write.reset();
    }
    size_t written = 0;
    for (;;) {
        int wait_ms = -1;
        if (deadline) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
            if (left.count() <= 0) {
                child.kill_and_reap();
                return Error(ETIMEDOUT, cat("timed out after ", *timeout, " s"));
            }
            wait_ms = static_cast<int>(std::min<Clock::rep>(left.count(), INT_MAX));
        }
        if (ticking) {
            MR_ASSIGN(std::optional<int> status, child.try_reap());
            if (status) {
                return check_wait_status(*status);
            }
            wait_ms = wait_ms < 0 ? kTickMs : std::min(wait_ms, kTickMs);
        }
        std::array<pollfd, 2> fds{{{pidfd.get(), POLLIN, 0}, {stdin_write.get(), POLLOUT, 0}}};
        nfds_t count = stdin_write ? 2 : 1;
        if (::poll(fds.data(), count, wait_ms) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno("wait for the hook");
        }
        if (fds[0].revents != 0) {
            MR_ASSIGN(int status, child.reap());
            return check_wait_status(status);
        }
        if (count == 2 && fds[1].revents != 0) {
            ssize_t sent =
                ::write(stdin_write.get(), state.data() + written, state.size() - written);
            if (sent < 0 && errno != EAGAIN && errno != EINTR) {
                return Error::from_errno("write the state to the hook's stdin");
            }
            written += sent > 0 ? static_cast<size_t>(sent) : 0;
            if (written == state.size()) {
                stdin_write.reset(); // the hook's EOF
            }
        }
    }
}

} // namespace

Status run_hook(const spec::Hook& hook, std::string_view state_json) {
    // A pipe rather than a socket: hooks that open /dev/stdin (`jq . /dev/stdin`) get ENXIO
    // on a socket.
    MR_ASSIGN(Pipe stdin_pipe, make_pipe("the hook's stdin"));
    MR_ASSIGN(Pipe report, make_pipe("the hook's exec report pipe"));
    // Non-blocking so a hook that reads slowly or not at all leaves the poll loop in charge.
    // The flag belongs to our end's open file only; the hook's read end stays blocking.
    if (::fcntl(stdin_pipe.write.get(), F_SETFL, O_NONBLOCK) < 0) {
        return Error::from_errno("make the hook's stdin non-blocking");
    }

    MR_ASSIGN(pid_t pid, spawn(hook, stdin_pipe.read.get(), report.write.get()));
    // The forked hook until it is reaped: every early return kills it, so a failure of
    // ours can neither leave a hook running unsupervised nor a zombie behind.
    ScopedChild child(pid);
    // Only the child may hold the report's write end, or its EOF would never come. Our copy
    // of the stdin read end stays open on purpose: the pipe then always has a reader, so no
    // write can raise SIGPIPE (which the caller may not ignore) even after the hook closed
    // its stdin; a hook that stops reading just leaves us waiting for its exit.
    report.write.reset();
    MR_TRY(read_report(report.read.get()));
    return feed_and_wait(child, std::move(stdin_pipe.write), state_json, hook.timeout);
}

Status run_hooks(std::string_view kind, const std::vector<spec::Hook>& list,
                 std::string_view state_json,
                 const std::optional<std::vector<std::string>>& default_env) {
    for (size_t i = 0; i < list.size(); ++i) {
        spec::Hook hook = list[i];
        if (default_env && (!hook.env || hook.env->empty())) {
            hook.env = *default_env;
        }
        // "error running <kind> hook #<i>: error running hook: ...": runc 1.3's words (its
        // RunHooks, then its Command.Run), which scripts and runc's suites look for (1.3's
        // hooks.bats the first, 1.1's seccomp.bats the second); the JSON path before them
        // names the entry.
        MR_TRY_WRAP(run_hook(hook, state_json),
                    cat("hooks.", kind, "[", i, "] ", hook.path, ": error running ", kind,
                        " hook #", i, ": error running hook"));
    }
    return {};
}

size_t run_hooks_warning(std::string_view kind, const std::vector<spec::Hook>& list,
                         std::string_view state_json) {
    size_t failed = 0;
    for (size_t i = 0; i < list.size(); ++i) {
        if (Status ran = run_hook(list[i], state_json); !ran) {
            log::warning(cat("hooks.", kind, "[", i, "] ", list[i].path, ": error running ", kind,
                             " hook #", i, ": error running hook: ", ran.error().message()));
            ++failed;
        }
    }
    return failed;
}

} // namespace minirun::runtime::hooks
