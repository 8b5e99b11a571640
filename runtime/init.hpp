// The container's init: the clone of mini-run that becomes the container's process.
#pragma once

#include "namespaces.hpp"
#include "plan.hpp"
#include "sync.hpp"

#include <csignal>
#include <vector>

namespace minirun::runtime {

struct InitContext {
    SyncSocket sync; // the init's end
    const std::vector<OpenNamespace>* namespaces = nullptr;
    sigset_t exec_signal_mask{}; // the mask the container's process starts with
};

// Runs in the child right after clone(). Never returns: it execs the container's process
// or reports the error over the sync socket and exits.
[[noreturn]] void run_init(const Plan& plan, InitContext& context) noexcept;

} // namespace minirun::runtime
