// The sync socket's frames as bytes: shared by mini-run (sync.cpp) and the freestanding
// exec gate (exec_gate/stub.cpp), which reports a failed execve in the same frame. So
// nothing here may need a library: fixed-size integers only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace minirun::runtime {

enum class SyncMessage : uint32_t {
    kParentReady = 1,
    kRunHooks = 2,
    kHooksDone = 3,
    kConsole = 4,
    kCreated = 5,
    kError = 6,
};

// A frame is this header, then up to kMaxSyncFrame - 8 bytes of payload (for kError: the
// message), in one SOCK_SEQPACKET record.
struct SyncFrameHeader {
    uint32_t message;     // SyncMessage
    int32_t error_number; // kError: the errno
};

constexpr size_t kMaxSyncFrame = 4096;

} // namespace minirun::runtime
