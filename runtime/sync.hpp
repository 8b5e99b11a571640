// The parent <-> init synchronisation protocol.
//
// One SOCK_SEQPACKET socketpair, both ends close-on-exec; every send is one frame: a
// Header, then an optional payload (text), and at most one fd (SCM_RIGHTS).
//
//   parent (mini-run)                         init (the clone, later the container)
//   ─────────────────                         ─────────────────────────────────────
//   clone() ───────────────────────────────►  starts; joins its cgroups, namespaces by path
//   [new user ns] writes gid_map, uid_map
//   kParentReady{host pid} ────────────────►  (waits for it if plan.wait_for_parent)
//                                             mounts, devices (environment exists)
//   ◄─────────────────────────── kRunHooks    (if prestart/createRuntime hooks exist)
//   runs prestart, createRuntime
//   kHooksDone ────────────────────────────►  createContainer hooks, pivot_root, ...
//   ◄─────────────────────────── kConsole{fd} (process.terminal: the pty master)
//   ◄─────────────────────────── kCreated     identity, cwd and executable checked
//   writes state and pid file;                waits on exec.fifo until `start`, then
//   `create` exits here                       startContainer hooks, execve()
//   ◄─────────────────────────── EOF          (only `run` still listens): the exec
//                                             closed the init's close-on-exec end
//   ◄─────────────────────────── kError       on any failure, then _exit(1)
//
// EOF without a kError means the exec happened (or the init died: waitpid tells). No
// exceptions cross this boundary: the init turns every failure into a kError frame.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"

#include "sync_wire.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace minirun::runtime {

// What arrived: a message, or the end of the stream (the peer exec'd or exited).
struct SyncEvent {
    bool eof = false;
    SyncMessage message = SyncMessage::kError;
    std::string payload;
    UniqueFd fd; // the frame's fd, if it carried one (close-on-exec)
    Error error; // for kError: the init's errno and message
};

class SyncSocket {
public:
    SyncSocket() = default;
    explicit SyncSocket(UniqueFd fd) : fd_(std::move(fd)) {}

    // Creates the pair: first for the parent, second for the init.
    static Result<std::pair<SyncSocket, SyncSocket>> create_pair();

    Status send(SyncMessage message, std::string_view payload = {}, int fd = -1);
    // Best effort: used on the way out of a failing init.
    void send_error(const Error& error);
    Result<SyncEvent> receive();
    // Receives one frame and checks it is `expected` (a kError is returned as the error).
    Result<SyncEvent> expect(SyncMessage expected);

    [[nodiscard]] int fd() const { return fd_.get(); }
    void close() { fd_.reset(); }

private:
    UniqueFd fd_;
};

// One sendmsg(2) carrying exactly one fd and a non-empty payload: the shape engines expect
// on a --console-socket (conmon checks the control length, go-runc wants exactly one fd).
Status send_fd(int socket, int fd, std::string_view payload);

} // namespace minirun::runtime
