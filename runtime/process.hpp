// The container's process: finding its executable and handing over to it.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace minirun::runtime::process {

// The value of PATH in `env` ("KEY=value" entries; the last one wins), or the default
// search path when there is none.
std::string search_path(const std::vector<std::string>& env);

// Resolves args[0] as execve(2) will see it, inside the container: a name with a '/' is
// used as is, any other is searched for in the process's PATH (like runc, the container's
// PATH, not ours). A missing or non-executable file is an error naming it, reported
// before the container starts.
Result<std::string> find_executable(const spec::Process& process);

// chdir() to process.cwd and check that the result is inside the container: a cwd
// that resolves through a leaked fd (/proc/self/fd/N) would land on the host
// (CVE-2024-21626).
Status enter_cwd(const spec::Process& process);

// Closes every fd from 3 + `preserve_fds` up, except `keep` (mini-run's own). The init and
// exec'd processes call it first thing: a caller's leaked fd (a directory, say) must not
// stay reachable through /proc/<pid>/fd while the container waits to start
// (CVE-2024-21626 class).
Status close_inherited_fds(int preserve_fds, std::vector<int> keep);

// The exec gate (exec_gate.hpp) to exec through, and what its program needs.
struct ExecGate {
    int program = -1;    // the gate's memfd; -1: execve directly
    int report_to = -1;  // the sync socket for a failure, while the parent listens
    int start_fifo = -1; // exec.fifo: the gate waits for `start`; -1: at once
};

// Closes every inherited fd above stdio and the `preserve_fds` after it at exec, and
// execve()s, or has the gate do it. Returns only on failure.
Status exec(const std::string& path, const spec::Process& process, int preserve_fds,
            const ExecGate& gate = {});

} // namespace minirun::runtime::process
