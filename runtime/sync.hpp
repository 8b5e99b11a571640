// The parent <-> init synchronisation protocol.
//
// One SOCK_SEQPACKET socketpair, both ends close-on-exec; every send is one frame:
// a Header, then an optional text payload (an error message).
//
//   parent (mini-run)                         init (the clone, later the container)
//   ─────────────────                         ─────────────────────────────────────
//   clone() ───────────────────────────────►  starts; joins namespaces by path
//   [new user ns] writes gid_map, uid_map
//   kParentReady ──────────────────────────►  (waits for it only if plan.wait_for_parent)
//                                             mounts, devices, pivot_root, hostname,
//                                             identity, finds the executable
//   ◄─────────────────────────── kError       on any failure, then _exit(1)
//   ◄─────────────────────────── kCreated     (only when the init waits for `start`)
//   kStart ────────────────────────────────►
//   ◄─────────────────────────── EOF          execve() succeeded: its close-on-exec
//                                             end of the socket closed with it
//
// EOF without a kError means the exec happened (or the init died: the parent learns
// which from waitpid). No exceptions cross this boundary: the init turns every failure
// into a kError frame.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"

#include <cstdint>
#include <string_view>

namespace minirun::runtime {

enum class SyncMessage : uint32_t {
    kParentReady = 1,
    kCreated = 2,
    kStart = 3,
    kError = 4,
};

// What arrived: a message, or the end of the stream (the peer exec'd or exited).
struct SyncEvent {
    bool eof = false;
    SyncMessage message = SyncMessage::kError;
    Error error; // for kError: the init's errno and message
};

class SyncSocket {
public:
    SyncSocket() = default;
    explicit SyncSocket(UniqueFd fd) : fd_(std::move(fd)) {}

    // Creates the pair: first for the parent, second for the init.
    static Result<std::pair<SyncSocket, SyncSocket>> create_pair();

    Status send(SyncMessage message);
    // Best effort: used on the way out of a failing init.
    void send_error(const Error& error);
    Result<SyncEvent> receive();
    // Receives one frame and checks it is `expected` (a kError is returned as the error).
    Status expect(SyncMessage expected);

    [[nodiscard]] int fd() const { return fd_.get(); }
    void close() { fd_.reset(); }

private:
    UniqueFd fd_;
};

} // namespace minirun::runtime
