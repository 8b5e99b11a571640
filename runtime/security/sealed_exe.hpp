// Protecting the runtime binary from the containers it starts (CVE-2019-5736).
//
// The container's init and every exec'd process begin life as clones of mini-run, and
// /proc/<pid>/exe of such a process leads to the binary that runs it. A process in the
// container that opened that link in time could keep the fd and, once mini-run exited,
// write through it: the next `mini-run` anyone runs on the host would be the attacker's.
// So `exec`, and `create` or `run` where the cheaper exec gate is ruled out
// (exec_gate.hpp), first re-execute themselves from a view of the binary that nobody can
// write through: the binary's directory on a detached, read-only overlayfs with no upper
// layer (a few mount calls), or, where that cannot be mounted (no CAP_SYS_ADMIN), an
// in-memory copy sealed against any change. /proc/<pid>/exe then leads only there. Being
// non-dumpable while mini-run code runs in the container adds a second wall (recipe.cpp,
// exec.cpp).
#pragma once

#include "minirun/error.hpp"

namespace minirun::runtime {

// Returns at once when the process already runs from a protected view (or a read-only
// file system); otherwise execs one with the same arguments and environment (and does not
// return unless that fails).
Status ensure_sealed_binary(char** argv);

// Whether this process already runs from a protected view (a sealed memfd, a read-only
// mount): then nothing more is needed to protect the binary.
bool runs_from_protected_view();

} // namespace minirun::runtime
