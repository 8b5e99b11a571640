// create's result and its variants, shared by `create` (create.cpp), `start` (start.cpp)
// and `run` (run.cpp).
#pragma once

#include "lifecycle.hpp"
#include "minirun/runtime.hpp"
#include "plan.hpp"
#include "process/systemd.hpp"
#include "state.hpp"
#include "sync.hpp"
#include "syscalls.hpp"

#include <csignal>
#include <optional>

namespace minirun::runtime {

// A container whose init waits at the start gate.
struct Created {
    state::StateDir dir; // locked
    state::Record record;
    spec::Spec spec; // the config, for the runtime's own steps (hooks, cgroups, state)
    Plan plan;       // what the init does (plan.hpp)
    pid_t pid = -1;
    ParentEnd sync;
    UniqueFd console_master; // when the foreground relays the terminal itself
    // `run`'s end of the start socket (CreateMode::start_through_socket): one byte sent
    // there is the start.
    UniqueFd start_socket;
    // `run`'s relay of the container's READY=1 to the caller's NOTIFY_SOCKET.
    std::optional<systemd::NotifyRelay> notify;
};

struct CreateMode {
    sigset_t exec_mask{};               // the mask the container's process starts with
    bool relay_terminal = false;        // run in the foreground without --console-socket
    bool parent_waits_for_exec = false; // run in the foreground
    // `run`, which starts the container itself: the start goes through a socket pair it
    // keeps, not through exec.fifo, which `create` makes for a `start` of another process.
    // A file fewer to make, open and remove per container; its state between create and
    // start (a few microseconds, in this process) then reads "running".
    bool start_through_socket = false;
};

// The parent's recipe (create.cpp, kCreateRecipe): a created container, or nothing.
Result<Created> create_internal(const CreateOptions& options, const CreateMode& mode,
                                Syscalls& sys);

// `start` (start.cpp): releases a created container's init through exec.fifo, or through
// run's `start_socket`, then runs the poststart hooks.
Status start_created(Opened& container, const spec::Spec& spec, UniqueFd start_socket = {});

// The init's side (recipe.cpp): blocks until `start` writes its byte to exec.fifo, `fifo`
// the init's non-blocking read end.
Status wait_for_start(int fifo);

} // namespace minirun::runtime
