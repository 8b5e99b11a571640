// Terminals: process.terminal, --console-socket, and the foreground relay.
//
// With process.terminal the container's process gets a pseudo-terminal made *inside* the
// container, from its own devpts instance (/dev/ptmx -> pts/ptmx), so the slave is a
// /dev/pts/N the container can see. The slave becomes the process's controlling terminal,
// its stdio and /dev/console; the master leaves the container: over --console-socket to
// whoever manages the container (conmon, containerd's shim), or, in the foreground with
// no socket, to mini-run itself, which copies bytes between it and the user's terminal.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "minirun/spec.hpp"
#include "syscalls.hpp"

#include <termios.h>

#include <optional>
#include <string>
#include <vector>

struct pollfd;

namespace minirun::runtime::terminal {

struct Pty {
    UniqueFd master;
    UniqueFd slave; // the peer, from the master (TIOCGPTPEER): nothing names it by path
};

// Opens a new pty through /dev/ptmx of the current mount namespace, with the window size
// from process.consoleSize if any. The slave is opened from the master (TIOCGPTPEER), never
// by a path lookup that a container could redirect. With `for_relay`, for mini-run's own
// foreground relay: ONLCR cleared (clear_onlcr).
Result<Pty> open_pty(const std::optional<spec::ConsoleSize>& size, bool for_relay = false);

// The slave becomes the caller's controlling terminal (the caller leads its own session)
// and its stdin, stdout and stderr, and is given to `uid`, the process's user, as runc
// does: the user's own terminal, which it can chmod or hand on (its group stays the one
// devpts gave it, gid=5 "tty" in the default config).
Status attach_stdio(const Pty& pty, uid_t uid);

// Clears ONLCR on the pty, so that the process's "\n" reaches the master as "\n", not
// "\r\n": for mini-run's own foreground relay, which copies the master to a stdout that
// may be a file or a pipe, as runc's (tty.go: console.ClearONLCR on the received master).
// Before the process can write anything, hence in the process itself.
Status clear_onlcr(const Pty& pty);

// Binds the slave onto /dev/console by fd (open_tree of the peer fd, move_mount onto an
// O_PATH fd of /dev/console): /dev/console is created as an empty file if missing, and
// one that is a symlink, or neither a file nor a character device, is refused
// (CVE-2025-52565). Call after pivot_root, before the masked and read-only paths (runc
// 1.3.3's order). Through `sys`.
Status bind_console(const Pty& pty, Syscalls& sys);

// Connects to the unix socket at `path` and sends the master in one message. Does not wait
// for the other side to accept: containerd only accepts after `create` has returned.
Status send_to_console_socket(const std::string& path, int master);
// Connects to the unix socket at `path` and sends `fd` in one message whose payload is
// `name` (utils.SendFile's shape, which runc's receivers read with RecvFile); errors
// start with `option` ("--pidfd-socket").
Status send_to_socket(const std::string& path, int fd, std::string_view name,
                      std::string_view option);

// Copies between the user's stdin/stdout and a pty master while a container runs in the
// foreground. The user's terminal, if stdin is one, is put in raw mode (the container's
// pty does the line editing) and restored when the relay ends.
class Relay {
public:
    explicit Relay(UniqueFd master);
    Relay(const Relay&) = delete;
    Relay& operator=(const Relay&) = delete;
    Relay(Relay&&) = delete;
    Relay& operator=(Relay&&) = delete;
    ~Relay();

    // Appends the fds to wait on; `service` handles the ones that became ready.
    void add_poll_fds(std::vector<pollfd>& fds) const;
    void service(const std::vector<pollfd>& fds);
    // SIGWINCH: the user's window changed; pass its size on.
    void copy_window_size() const;
    // After the container's process exited: whatever it wrote last, to stdout.
    void drain();

private:
    void pump(int from, int to, bool& open);
    UniqueFd master_;
    bool stdin_open_ = true;
    bool master_open_ = true;
    std::optional<termios> saved_;
};

} // namespace minirun::runtime::terminal
