// Pieces the lifecycle commands share (container.cpp, manage.cpp, exec.cpp).
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "minirun/state.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace minirun::runtime {

// Opens a container's state directory, locks it unless only reading, and loads its record.
struct Opened {
    state::StateDir dir;
    state::Record record;
    state::Status status = state::Status::stopped;
};
enum class Access { read, change };
Result<Opened> open_container(const std::string& root, const std::string& id,
                              Access access = Access::change);

// The config saved at create: what the container was made from, whatever the bundle says
// now.
Result<spec::Spec> saved_spec(const state::StateDir& dir);

// Writes the pid file engines read: the decimal pid with no newline (containerd parses it
// with Atoi), atomically (a temp file renamed into place), so a reader never sees it half
// written.
Status write_pid_file(const std::string& path, pid_t pid);

// Host pids of the container's processes, the init first: every process in the init's
// PID namespace when it has its own, otherwise the init and its descendants.
std::vector<pid_t> processes_of(const state::Record& record);

// Sends `signal` to the init through a pidfd taken after checking the recorded start
// time, so a recycled pid is never signalled.
Status signal_init(const state::Record& record, int signal);

// SIGKILLs every process of the container and waits until the init is gone.
Status kill_all_and_wait(const state::Record& record);

// The end of `delete`: the container must be stopped (or `force` stops it), poststop
// hooks run (failures only warn), and the state directory goes.
Status destroy(Opened& container, const spec::Spec& spec, bool force);

} // namespace minirun::runtime
