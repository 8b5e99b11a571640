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
//
// `exec` puts a copy of mini-run into a container whose other processes already run, so
// there the lock proves nothing: the process is non-dumpable from its clone on (the parent
// is, before the clone), and a non-dumpable process's memory and /proc/<pid>/exe are out of
// reach of anyone without CAP_SYS_PTRACE in the user namespace mini-run was exec'd in
// (ptrace_may_access() judges by mm->user_ns since Linux 4.10, commit bfedb589252c0).
// runc judged its runc-dmz the same way (isDmzBinarySafe). So exec takes the gate only when
// no process that can see it may hold that capability (unusable_for_exec_because()):
//   - the container made a PID namespace of its own (other containers' processes in the
//     host's or a shared one are out of its hands), and
//   - it has a user namespace that is not mini-run's (no process in it holds a capability
//     in mini-run's), or CAP_SYS_PTRACE is in no capability set of its init's process, of
//     this process, of any process exec'd into it earlier (each such exec leaves a mark in
//     the state directory, kPtraceMark), nor of a container that mini-run made in its PID
//     namespace (the same mark, left by that container's create);
//   - fs.suid_dumpable is not 1: taking the user's uid would make the process dumpable again;
//   - the container is not paused: the lock that orders the marks is held until the gate's
//     exec, which a frozen process would never reach;
//   - and, as for the init, no LSM label and a seccomp filter that lets the gate through.
// Everywhere else the protected re-exec stays.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "plan.hpp"

#include <csignal>
#include <string>
#include <string_view>

namespace minirun::runtime::exec_gate {

// Why `plan` must not use the gate (one line, for --explain), or "" when it may. Pure: it
// looks at the plan only.
std::string unusable_because(const spec::Spec& spec);

// What exec.cpp finds out about the container and the host for the rule above.
struct ExecFacts {
    bool own_pid_namespace = false;  // the container made it (a pid entry without a path)
    bool own_user_namespace = false; // the init's user namespace is not mini-run's
    bool ptrace_marked = false;      // kPtraceMark is in the state directory
    bool suid_dumpable_user = false; // /proc/sys/fs/suid_dumpable reads 1
    bool paused = false;
};

// The state directory's mark: some process in the container's PID namespace may hold
// CAP_SYS_PTRACE (left by such an exec, or by the create of such a container joining it).
inline constexpr const char* kPtraceMark = "ptrace-capable";

// Whether a process with these capabilities may hold CAP_SYS_PTRACE: in any of its sets (no
// `capabilities` at all means none, security.hpp).
bool may_hold_ptrace(const spec::Process& process);

// Why `exec` of `process` into a container made from `spec` must not use the gate (one
// line), or "" when it may. Pure.
std::string unusable_for_exec_because(const spec::Spec& spec, const spec::Process& process,
                                      const ExecFacts& facts);

// The create side of the mark: a container that joins a PID namespace by path and may
// hold CAP_SYS_PTRACE in mini-run's user namespace leaves kPtraceMark in the state
// directory of every container under `root` whose init lives in that namespace (taking its
// lock, so that no exec of it is between its choice and its exec). Containers of other
// roots or runtimes are not seen: docs/security.md.
Status mark_joined_pid_namespace(const spec::Spec& spec, const std::string& root);

// How create, run and exec keep the runtime binary out of the container, once each knows
// why the gate is ruled out for it ("": it is not).
struct Protection {
    std::string ruled_out;
    std::string_view gate_text;            // what `say` tells of the gate
    void (*say)(std::string_view);         // --explain for create and run, --debug for exec
    char** reexec_argv = nullptr;          // nullptr: the caller protected itself
    const sigset_t* reexec_mask = nullptr; // the mask to re-exec with; nullptr: as it is
};

// The gate's memfd; an invalid fd when mini-run already runs from a protected view (or
// cannot restart); otherwise the protected re-exec (sealed_exe.hpp), which starts the
// process over and returns only on failure. The choice is told once, after any re-exec.
Result<UniqueFd> protect_runtime_binary(const Protection& protection);

// A sealed, executable memfd holding the gate's program (close-on-exec). An error when
// this build has no gate (not x86-64) or the kernel refuses executable memfds
// (vm.memfd_noexec=2).
Result<UniqueFd> open_gate();

} // namespace minirun::runtime::exec_gate
