#include "signals.hpp"

#include <sys/wait.h>

#include <array>

namespace minirun::runtime {
namespace {

// Everything a user or supervisor sends to stop, reload or poke a process. SIGCHLD is
// ours; synchronous faults (SEGV, BUS, ...) must stay deliverable to mini-run itself.
constexpr std::array kForwarded = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,  SIGUSR1,
                                   SIGUSR2, SIGALRM, SIGCONT, SIGWINCH, SIGPWR};

} // namespace

SignalForwarder::SignalForwarder() {
    sigemptyset(&blocked_);
    for (int signal : kForwarded) {
        sigaddset(&blocked_, signal);
    }
    sigaddset(&blocked_, SIGCHLD);
    sigprocmask(SIG_BLOCK, &blocked_, &original_);
}

SignalForwarder::~SignalForwarder() {
    sigprocmask(SIG_SETMASK, &original_, nullptr);
}

int exit_code_of(int wait_status) {
    if (WIFEXITED(wait_status)) {
        return WEXITSTATUS(wait_status);
    }
    if (WIFSIGNALED(wait_status)) {
        return 128 + WTERMSIG(wait_status);
    }
    return 1;
}

Result<int> SignalForwarder::forward_until_exit(pid_t pid) {
    for (;;) {
        int status = 0;
        pid_t reaped = ::waitpid(pid, &status, WNOHANG);
        if (reaped == pid) {
            return exit_code_of(status);
        }
        if (reaped < 0 && errno != EINTR) {
            return Error::from_errno("wait for the container");
        }
        siginfo_t info{};
        int signal = ::sigwaitinfo(&blocked_, &info);
        if (signal < 0 || signal == SIGCHLD) {
            continue;
        }
        // The init stays our unreaped child until waitpid above, so its pid cannot have
        // been reused by another process.
        ::kill(pid, signal);
    }
}

} // namespace minirun::runtime
