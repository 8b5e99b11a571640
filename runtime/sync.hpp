// The parent <-> init synchronisation protocol.
//
// One SOCK_SEQPACKET socketpair, both ends close-on-exec; every send is one frame: a
// Header, then an optional payload (text), and at most one fd (SCM_RIGHTS).
//
//   parent (mini-run)                         init (the clone, later the container)
//   ─────────────────                         ─────────────────────────────────────
//   clone() ───────────────────────────────►  starts; joins its cgroups, namespaces by path
//   ◄──────────────────────────── kForked{pid} [new pid ns in a joined user ns] the second
//   reaps the first stage                      stage, pid 1, takes over; the first exits
//   [new user ns] writes gid_map, uid_map
//   kParentReady{host pid} ────────────────►  (waits for it if plan.wait_for_parent)
//                                             mounts, devices (environment exists)
//   ◄─────────────────────── kMountSource{i}  a bind source inside the rootfs, opened now,
//   kMountSource{fd} ──────────────────────►  or one past the fds held ahead (mount.hpp:
//                                             BindSources; mount/mount_sources.cpp)
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
//   ◄─────────────────────────── kLog         any time, while the parent listens: a log
//                                             line for mini-run's stderr (log.hpp)
//
// The messages of each direction are their own type (sync_wire.hpp: ToInit, ToParent), and
// each end may only send its own (SyncEnd).
//
// EOF without a kError means the exec happened (or the init died: waitpid tells). No
// exceptions cross this boundary: the init turns every failure into a kError frame.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"

#include "sync_wire.hpp"

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace minirun::runtime {

// What arrived: a message, or the end of the stream (the peer exec'd or exited).
template <typename Message>
struct SyncEvent {
    bool eof = false;
    Message message{};
    std::string payload;
    UniqueFd fd; // the frame's fd, if it carried one (close-on-exec)
    Error error; // for ToParent::kError: the sender's errno and message
};

// The untyped frames, for the typed ends below.
class SyncChannel {
public:
    SyncChannel() = default;
    explicit SyncChannel(UniqueFd fd) : fd_(std::move(fd)) {}

    Status send(uint32_t message, std::string_view payload, int fd);
    void send_error(const Error& error);
    // A frame, or eof; a message number outside `accepted` is an EPROTO error.
    Result<SyncEvent<uint32_t>> receive(std::initializer_list<uint32_t> accepted);

    [[nodiscard]] int fd() const { return fd_.get(); }
    void close() { fd_.reset(); }

private:
    UniqueFd fd_;
};

// One end of the socket: sends `Send`, receives `Receive`. So the parent cannot send what
// only the init may, and a message of the wrong direction does not compile.
template <typename Send, typename Receive>
class SyncEnd {
public:
    SyncEnd() = default;
    explicit SyncEnd(UniqueFd fd) : channel_(std::move(fd)) {}

    Status send(Send message, std::string_view payload = {}, int fd = -1) {
        return channel_.send(static_cast<uint32_t>(message), payload, fd);
    }
    // Best effort, on the way out of a failing child: only the child's end has it.
    void send_error(const Error& error) requires std::is_same_v<Send, ToParent> {
        channel_.send_error(error);
    }
    // The parent's end writes each kLog line to its stderr as it comes (log::write_forwarded)
    // and goes on reading: a kLog is never returned.
    Result<SyncEvent<Receive>> receive();
    // The same, for a frame that comes within `timeout`: nothing when none did (a kLog line
    // is no such frame: a peer that logged, then waits for us, is no reason to wait longer).
    Result<std::optional<SyncEvent<Receive>>> receive_within(std::chrono::milliseconds timeout);
    // Receives one frame and checks it is `expected` (a kError is returned as the error).
    Result<SyncEvent<Receive>> expect(Receive expected);

    [[nodiscard]] int fd() const { return channel_.fd(); }
    void close() { channel_.close(); }

private:
    SyncChannel channel_;
};

using ParentEnd = SyncEnd<ToInit, ToParent>; // mini-run's
using InitEnd = SyncEnd<ToParent, ToInit>;   // the child's

// The pair: first for the parent, second for the child.
Result<std::pair<ParentEnd, InitEnd>> create_sync_pair();

// The log of a clone of mini-run (the init, the process `exec` starts), which must not write
// to its stderr, the container's (log.hpp):
//
// Right after the clone: each line for stderr becomes a kLog frame on `end`, read by the
// parent that waits on the socket. A blocking send: the parent reads between its steps, and
// the socket holds far more than the lines of a setup. Under the container's seccomp filter
// (the last steps, which log under --debug only) a frame the filter refuses is lost, and a
// filter that kills on sendmsg(2) kills the process, as one that kills on write(2) did.
void forward_log(const InitEnd& end);
// After kCreated: from here on nobody reads the socket, unless `a_parent_listens` (`run` in
// the foreground, or `create` waiting for the exec gate's exec): forward on then, else
// only the --log file gets the init's lines (log::file_only).
void log_after_created(bool a_parent_listens);
// One kLog frame, the line truncated to what a frame holds; lost if it cannot be sent.
void send_log_line(int socket, std::string_view line) noexcept;

// One sendmsg(2) carrying exactly one fd and a non-empty payload: the shape engines expect
// on a --console-socket (conmon checks the control length, go-runc wants exactly one fd).
Status send_fd(int socket, int fd, std::string_view payload);

} // namespace minirun::runtime
