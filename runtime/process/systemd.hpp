// What a service manager (systemd, or podman standing in for it) hands the service it
// starts, passed on to the container as runc does: socket activation's sockets
// (LISTEN_FDS, sd_listen_fds(3)) and the notify socket (NOTIFY_SOCKET, sd_notify(3)).
//
// NOTIFY_SOCKET, as runc 1.3 (notify_socket.go): the caller's socket is the host's and
// means nothing inside the container, so create makes the directory <state dir>/notify,
// the plan binds it read-only at /run/notify (the last of the mounts) and sets
// NOTIFY_SOCKET=/run/notify/notify.sock in the process's env, replacing the config's. The
// runtime binds its own datagram socket there before the container's process can run
// (`run` at create, `start` before it releases the init), and once the process is started
// waits for a datagram with a READY= line, or for the init's end (runc polls for it), and
// then sends that line, MAINPID (the init's host pid; mini-run's own in a foreground run,
// which is what a service manager watches then) and BARRIER=1 (sd_notify_barrier(3),
// whose end it waits up to 30 s for) to the caller's socket. Only then does `start` (or
// `run --detach`) return: READY=1 reaches the caller once the service is ready.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace minirun::runtime::systemd {

// Socket activation: LISTEN_FDS of our environment (sockets at fd 3 onwards, meant for the
// container's process); 0 without a valid one.
int listen_fds();

// Where the container finds the notify socket, as runc has it.
inline constexpr std::string_view kNotifyDirInContainer = "/run/notify";
inline constexpr std::string_view kNotifySocketInContainer = "/run/notify/notify.sock";

// <root>/<id>/notify as an absolute path (the plan's bind source): the state directory's
// (state.cpp) with a relative --root made absolute.
std::string notify_dir(const std::string& root, const std::string& id);

// The relay between the container's notify socket and the caller's.
class NotifyRelay {
public:
    // Connects to `host` (the caller's NOTIFY_SOCKET: a path, or "@name" for an abstract
    // socket) first, so that a wrong one fails before anything changes, then binds the
    // container's socket in `dir` (notify_dir()), mode 0777 as runc's: the container's
    // process may run as any user.
    static Result<NotifyRelay> open(const std::string& host, const std::string& dir);

    [[nodiscard]] int fd() const { return socket_.get(); }
    [[nodiscard]] bool done() const { return done_; }

    // Reads one datagram from the container (call when fd() is readable); if it has a
    // READY= line, sends it, MAINPID=main_pid and BARRIER=1 to the caller, and is done.
    Status service(pid_t main_pid);

    // Serves until done or until the process behind `pidfd` (the init) has exited.
    Status wait(int pidfd, pid_t main_pid);

private:
    UniqueFd socket_;
    UniqueFd host_;
    bool done_ = false;
};

// create's part: with the caller's NOTIFY_SOCKET (`host` not empty), makes the directory;
// `listen_now` (run, which starts the container itself) also opens the relay, so that
// nothing the container sends is missed.
Result<std::optional<NotifyRelay>> prepare_notify(const std::string& host, const std::string& root,
                                                  const std::string& id, bool listen_now);

} // namespace minirun::runtime::systemd
