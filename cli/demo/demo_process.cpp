// The demo's signals (Ctrl-C becomes an orderly cleanup) and child processes with their
// stdio on pipes (demo.hpp: Signals, Process, run_command).
#include "demo.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace minirun::cli::demo {
namespace {

using Clock = std::chrono::steady_clock;

sigset_t demo_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    return set;
}

void set_nonblocking_cloexec(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

void close_fd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

int exit_code_of(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return -1;
}

bool has_line_starting_with(std::string_view text, std::string_view marker) {
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            return false; // only complete lines count
        }
        if (text.substr(start, end - start).starts_with(marker)) {
            return true;
        }
        start = end + 1;
    }
    return false;
}

} // namespace

Error interrupted() {
    return Error(EINTR, "interrupted");
}

bool is_interrupted(const Error& error) {
    return error.errno_value() == EINTR;
}

// ---------------------------------------------------------------------------------------
// Signals

Status Signals::open() {
    sigset_t set = demo_signals();
    ::sigprocmask(SIG_BLOCK, &set, &original_);
    fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd_ < 0) {
        ::sigprocmask(SIG_SETMASK, &original_, nullptr);
        return Error(cat("signalfd: ", std::strerror(errno)));
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &original_pipe_);
    return {};
}

Signals::~Signals() {
    if (fd_ < 0) {
        return; // never opened
    }
    ::close(fd_);
    ::sigaction(SIGPIPE, &original_pipe_, nullptr);
    // Signals that arrived during the cleanup are dropped: the demo has handled them.
    sigset_t set = demo_signals();
    timespec zero{};
    while (::sigtimedwait(&set, nullptr, &zero) > 0) {
    }
    ::sigprocmask(SIG_SETMASK, &original_, nullptr);
}

Status Signals::check() const {
    signalfd_siginfo info{};
    if (::read(fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        return interrupted();
    }
    return {};
}

void Signals::restore_in_child() const {
    ::sigaction(SIGPIPE, &original_pipe_, nullptr);
    ::sigprocmask(SIG_SETMASK, &original_, nullptr);
}

// ---------------------------------------------------------------------------------------
// Process

Status Process::start(const std::vector<std::string>& argv, bool with_terminal) {
    std::array<int, 2> in{};
    std::array<int, 2> out{};
    std::array<int, 2> err{};
    if (::pipe2(in.data(), O_CLOEXEC) < 0 || ::pipe2(out.data(), O_CLOEXEC) < 0 ||
        ::pipe2(err.data(), O_CLOEXEC) < 0) {
        return Error(cat("pipe: ", std::strerror(errno)));
    }
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str())); // NOLINT(*-const-cast)
    }
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) {
        return Error(cat("fork: ", std::strerror(errno)));
    }
    if (pid_ == 0) {
        // A process group of its own: a terminal's Ctrl-C goes to the demo only, which
        // then stops what it started in order. With the terminal, Ctrl-C at a step's card
        // is a key the run reads (explain.hpp); between cards it reaches both.
        if (!with_terminal) {
            ::setpgid(0, 0);
        }
        signals_->restore_in_child();
        ::dup2(in[0], STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        ::execv(args[0], args.data());
        std::string message = cat("exec ", argv[0], ": ", std::strerror(errno), "\n");
        (void)!::write(STDERR_FILENO, message.data(), message.size());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = in[1];
    out_fd_ = out[0];
    err_fd_ = err[0];
    set_nonblocking_cloexec(out_fd_);
    set_nonblocking_cloexec(err_fd_);
    return {};
}

Process::~Process() {
    kill_and_reap();
}

void Process::kill_and_reap() {
    close_fd(in_);
    close_fd(out_fd_);
    close_fd(err_fd_);
    if (pid_ > 0 && !exited_) {
        ::kill(pid_, SIGKILL);
        reap(true);
    }
}

void Process::reap(bool block) {
    if (exited_ || pid_ <= 0) {
        return;
    }
    int status = 0;
    pid_t got = 0;
    do {
        got = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
    } while (got < 0 && errno == EINTR);
    if (got == pid_) {
        exited_ = true;
        status_ = status;
    }
}

Status Process::send(std::string_view text) const {
    while (!text.empty() && in_ >= 0) {
        ssize_t written = ::write(in_, text.data(), text.size());
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written < 0) {
            return Error(cat("write to the container's stdin: ", std::strerror(errno)));
        }
        text.remove_prefix(static_cast<size_t>(written));
    }
    return {};
}

Status Process::pump(int timeout_ms) {
    std::array<pollfd, 3> fds{
        {{signals_->fd(), POLLIN, 0}, {out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}}};
    int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
        return Error(cat("poll: ", std::strerror(errno)));
    }
    MR_TRY(signals_->check());
    std::array<char, 4096> buffer{};
    for (auto [fd, text] : {std::pair<int*, std::string*>{&out_fd_, &out_},
                            std::pair<int*, std::string*>{&err_fd_, &err_}}) {
        while (*fd >= 0) {
            ssize_t got = ::read(*fd, buffer.data(), buffer.size());
            if (got > 0) {
                text->append(buffer.data(), static_cast<size_t>(got));
                continue;
            }
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
                break;
            }
            close_fd(*fd); // end of file
        }
    }
    reap(false);
    return {};
}

Status Process::wait_for(std::string_view marker, Seconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (!has_line_starting_with(out_, marker)) {
        if (exited_ || (out_fd_ < 0 && err_fd_ < 0)) {
            return Error(cat("the container ended before it printed ", marker, " (exit code ",
                             exit_code_of(status_), "): ", trim(err_)));
        }
        if (Clock::now() > deadline) {
            return Error(
                cat("timed out waiting for the container to print ", marker, ": ", trim(err_)));
        }
        MR_TRY(pump(100));
    }
    return {};
}

Result<int> Process::wait(Seconds timeout) {
    close_fd(in_);
    auto deadline = Clock::now() + timeout;
    while (!exited_) {
        if (Clock::now() > deadline) {
            kill_and_reap();
            return Error(cat("timed out waiting for ", pid_, " to exit"));
        }
        MR_TRY(pump(100));
    }
    MR_TRY(pump(0)); // what is left in the pipes
    return exit_code_of(status_);
}

Result<CommandResult> run_command(const std::vector<std::string>& argv, const Signals& signals) {
    Process process(signals);
    MR_TRY(process.start(argv));
    CommandResult result;
    MR_ASSIGN(result.exit_code, process.wait());
    result.out = process.out();
    result.err = process.err();
    return result;
}

Result<bool> in_namespace_of(pid_t pid, std::string_view name, int nstype,
                             const std::function<bool()>& body) {
    const std::string path = cat("/proc/", pid, "/ns/", name);
    pid_t child = ::fork();
    if (child < 0) {
        return Error(cat("fork: ", std::strerror(errno)));
    }
    if (child == 0) {
        // 2: could not join; 0 or 1: what the body found.
        if (pid != 0) {
            int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (ns < 0 || ::setns(ns, nstype) < 0) {
                ::_exit(2);
            }
        }
        ::_exit(body() ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
        return Error(cat("could not join ", path));
    }
    return WEXITSTATUS(status) == 0;
}

} // namespace minirun::cli::demo
