#include "process/signals.hpp"

#include "minirun/log.hpp"
#include "process/systemd.hpp"
#include "process/terminal.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <vector>

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

Result<int> SignalForwarder::forward_until_exit(pid_t pid, terminal::Relay* relay,
                                                systemd::NotifyRelay* notify) {
    if (!signal_fd_) {
        signal_fd_.reset(::signalfd(-1, &blocked_, SFD_CLOEXEC | SFD_NONBLOCK));
        if (!signal_fd_) {
            return Error::from_errno("signalfd");
        }
    }
    std::vector<pollfd> fds;
    for (;;) {
        int status = 0;
        pid_t reaped = ::waitpid(pid, &status, WNOHANG);
        if (reaped == pid) {
            if (relay != nullptr) {
                relay->drain();
            }
            return exit_code_of(status);
        }
        if (reaped < 0 && errno != EINTR) {
            return Error::from_errno("wait for the container");
        }
        fds.clear();
        fds.push_back({signal_fd_.get(), POLLIN, 0});
        bool notifying = notify != nullptr && !notify->done();
        if (notifying) {
            fds.push_back({notify->fd(), POLLIN, 0});
        }
        if (relay != nullptr) {
            relay->add_poll_fds(fds);
        }
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno("poll");
        }
        if (relay != nullptr) {
            relay->service(fds);
        }
        if (notifying && fds[1].revents != 0) {
            if (auto relayed = notify->service(::getpid()); !relayed) {
                log::warning(relayed.error().message());
                notify = nullptr;
            }
        }
        signalfd_siginfo info{};
        while (::read(signal_fd_.get(), &info, sizeof(info)) == sizeof(info)) {
            auto signal = static_cast<int>(info.ssi_signo);
            if (signal == SIGCHLD) {
                continue;
            }
            // The pty tells the container's foreground processes itself.
            if (signal == SIGWINCH && relay != nullptr) {
                relay->copy_window_size();
                continue;
            }
            // The init stays our unreaped child until waitpid above, so its pid cannot
            // have been reused by another process.
            ::kill(pid, signal);
        }
    }
}

} // namespace minirun::runtime
