// The sync socket's frames as bytes: shared by mini-run (sync.cpp) and the freestanding
// exec gate (exec_gate/stub.cpp), which reports a failed execve in the same frame. So
// nothing here may need a library: fixed-size integers only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace minirun::runtime {

// The messages of each direction, with their numbers on the wire. No number is used in
// both directions, so a frame read on the wrong end is refused, not misread.
//
// parent -> init
enum class ToInit : uint32_t {
    kParentReady = 1, // payload: the init's host pid, as text
    kHooksDone = 3,   // prestart and createRuntime hooks ran
    kMountSource = 9, // the fd: the bind source asked for (mount/mount_sources.cpp)
};
// init (or an exec'd process, or the exec gate) -> parent
enum class ToParent : uint32_t {
    kRunHooks = 2, // the environment exists: run prestart and createRuntime now
    kConsole = 4,  // the fd: the pty's master
    kCreated = 5,  // set up; waiting for start
    kError = 6,    // header.error_number: the errno; payload: the message. Then _exit(1)
    kLog = 7,      // payload: one log line for mini-run's stderr (log.hpp), without newline
    // payload: the index of a mounts[] bind whose source the parent opens now (the helper
    // that opened it, too: with the fd)
    kMountSource = 8,
    // payload: the pid of the init's second stage, in the pid namespace made or joined
    // after a joined user namespace (pid.hpp), which takes over
    kForked = 9,
};

// A frame is this header, then up to kMaxSyncFrame - 8 bytes of payload (for kError: the
// message), in one SOCK_SEQPACKET record.
struct SyncFrameHeader {
    uint32_t message;     // a ToInit or ToParent value
    int32_t error_number; // kError: the errno
};

constexpr size_t kMaxSyncFrame = 4096;

} // namespace minirun::runtime
