// The exec gate: how `create` and `run` keep the host's mini-run binary out of the
// container without starting mini-run a second time.
//
// CVE-2019-5736: the container's init is a clone of mini-run, so until its final execve
// its /proc/self/exe is the host's binary. If the container's executable is, or leads to,
// /proc/self/exe (a symlink, a "#!/proc/self/exe" script), that execve runs the host's
// binary as the container's process, and the container can then keep it open and write
// it once nobody runs it any more. The general answer (sealed_exe.hpp) re-executes
// mini-run from a read-only view first: a whole second start, about 1 ms here.
//
// The gate closes the same route for less. Once set up (kCreated), the init executes a
// 2 KB freestanding program (exec_gate/stub.cpp) from a sealed memfd; that program waits
// for `start` on exec.fifo and execs the user's process. So from kCreated on pid 1 is the
// sealed stub, which nothing can write, and /proc/self/exe at the user's execve is the
// stub too: the host's binary never runs inside the container.
//
// Before kCreated the init still is mini-run, so nothing else may reach it then (through
// /proc/<init>/exe with CAP_SYS_PTRACE, or by running code in its namespaces):
//   - the runtime holds the state directory's lock until the init has become the gate
//     (`create` waits for that exec, `run` for the user's), so no `exec` can put a
//     process next to it;
// and unusable_because() allows the gate only when all of these hold as well:
//   - a new PID namespace: no other process can see the init (a joined or the host's
//     one may hold processes of other containers);
//   - no createContainer/startContainer hooks: they are forked from the init inside the
//     container, as copies of mini-run;
//   - no AppArmor profile or SELinux label: those apply at the next execve, which would be
//     the stub's, not the user's process's;
//   - seccomp, if any, surely allows what the gate does under the filter (execveat,
//     ppoll, read, fcntl): the filter is loaded before the init enters the gate.
// Everywhere else, and for `exec`, the protected re-exec stays.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "plan.hpp"

#include <string>

namespace minirun::runtime::exec_gate {

// Why `plan` must not use the gate (one line, for --explain), or "" when it may. Pure: it
// looks at the plan only.
std::string unusable_because(const Plan& plan);

// A sealed, executable memfd holding the gate's program (close-on-exec). An error when
// this build has no gate (not x86-64) or the kernel refuses executable memfds
// (vm.memfd_noexec=2).
Result<UniqueFd> open_gate();

} // namespace minirun::runtime::exec_gate
