// Pieces the lifecycle commands share (create.cpp, lifecycle.cpp, exec.cpp).
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "minirun/runtime.hpp"
#include "minirun/spec.hpp"
#include "state.hpp"
#include "syscalls.hpp"

#include <sys/types.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
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
// The same for a caller that uses only the members named `keys` (start: "poststart";
// delete: "poststop" and "intelRdt"): when the text names none of them, a default Spec,
// and the config is not parsed (the larger part of such a command's own work). A JSON
// member's name is in the text as written unless it is spelled with \u escapes, so a text
// with neither the name nor "\u" has no such member. A config that cannot be read, or is
// cut short, is parsed and reported as by saved_spec().
Result<spec::Spec> saved_spec_for(const state::StateDir& dir,
                                  std::initializer_list<std::string_view> keys);

// Writes the pid file engines read: the decimal pid with no newline (containerd parses it
// with Atoi), atomically (a temp file renamed into place), so a reader never sees it half
// written.
Status write_pid_file(const std::string& path, pid_t pid);

// A process named in a way the kernel does not reuse: its pid together with its start
// time (field 22 of /proc/<pid>/stat). A pid alone may name another process by the time it
// is used.
struct ProcessRef {
    pid_t pid = 0;
    uint64_t start_time = 0;
};

// A pidfd for `process`, taken before its start time is checked: when the check passes,
// the pidfd means that very process for good. ESRCH when it exited or its pid was reused.
Result<UniqueFd> open_process(const ProcessRef& process);
// `signal` through open_process(): it never reaches a process that got the pid later.
Status signal_process(const ProcessRef& process, int signal);

// The container's processes (host pids), the init first: the init only while its pid
// still has the recorded start time; then everything in the container's cgroups, or
// without cgroups every process in the init's PID namespace when it has its own,
// otherwise the init's descendants. With the init gone and no cgroups: none, since
// whatever now has its pid, and that process's children, are strangers.
std::vector<ProcessRef> processes_of(const state::Record& record);

// Sends `signal` to the init through a pidfd taken after checking the recorded start
// time, so a recycled pid is never signalled.
Status signal_init(const state::Record& record, int signal);

// SIGKILLs every process of the container and waits until the init is gone.
Status kill_all_and_wait(const state::Record& record);

// The end of `delete`: the container must be stopped (or `force` stops it), poststop
// hooks run (failures only warn), and the state directory goes. With `spec_unread` (why
// the saved config could not be read: `spec` is then empty), a warning says, at that
// point, that the poststop hooks cannot run.
Status destroy(Opened& container, const spec::Spec& spec, bool force,
               const Error* spec_unread = nullptr);

// `delete --force` of a container whose state.json is damaged (`damage` says how): the
// record comes from recovery.json, or, without a usable one, from the id and the saved
// config; then destroy(). Whatever a damaged file names outside the cgroup hierarchies is
// left alone.
Status destroy_damaged(state::StateDir& dir, const Error& damage);

// `exec` (exec.cpp) with the system calls given: its recipe's privilege-relevant calls go
// through `sys` (the process's own, in the child, too).
Result<int> exec_in_container(const ExecOptions& options, Syscalls& sys);

} // namespace minirun::runtime
