// Signals in the foreground: mini-run stands in for the container towards its caller.
//
// A shell or supervisor signals mini-run (Ctrl-C, `kill`), not the container it cannot
// see; mini-run passes each signal on to the container's init and, when the init exits,
// exits with its status. The signals are blocked before clone() so none is lost in
// between, and consumed synchronously with sigwaitinfo(): no handler runs at an arbitrary
// point of the runtime.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"

#include <csignal>
#include <sys/types.h>

namespace minirun::runtime {

namespace terminal {
class Relay;
} // namespace terminal
namespace systemd {
class NotifyRelay;
} // namespace systemd

class SignalForwarder {
public:
    SignalForwarder();  // blocks the forwarded signals and SIGCHLD
    ~SignalForwarder(); // restores the caller's mask
    SignalForwarder(const SignalForwarder&) = delete;
    SignalForwarder& operator=(const SignalForwarder&) = delete;
    SignalForwarder(SignalForwarder&&) = delete;
    SignalForwarder& operator=(SignalForwarder&&) = delete;

    // The mask the container's process must start with (the caller's).
    [[nodiscard]] const sigset_t& original_mask() const { return original_; }

    // Forwards signals to `pid`, our child, until it exits; returns its exit code, 128+N
    // for a death by signal N, as shells report it. With a relay, also copies terminal
    // I/O meanwhile, and window changes go to the pty instead of being forwarded. With
    // `notify`, also relays the container's READY=1 to the caller's NOTIFY_SOCKET, with
    // our own pid as MAINPID (a failure there is a warning: the container runs on).
    Result<int> forward_until_exit(pid_t pid, terminal::Relay* relay = nullptr,
                                   systemd::NotifyRelay* notify = nullptr);

private:
    sigset_t blocked_{};
    sigset_t original_{};
    UniqueFd signal_fd_;
};

// The exit code a shell would report for a wait status.
int exit_code_of(int wait_status);

} // namespace minirun::runtime
