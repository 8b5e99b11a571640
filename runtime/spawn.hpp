// What create and exec do alike on the runtime's side of a new container process: the
// steps of kCreateRecipe (create.cpp) and kExecRecipe (exec.cpp) that do the same work call
// these, so each piece exists once.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "process/child.hpp"
#include "procfs.hpp"
#include "sync.hpp"

#include <csignal>
#include <string>
#include <string_view>

namespace minirun::runtime {

struct Plan;

// --console-socket and a terminal must agree: a terminal needs a socket to go to, unless
// mini-run relays it itself in the foreground (`run`, `exec` without --detach); a socket
// without a terminal is a mistake. `terminal_option` names what asked for the terminal
// ("process.terminal", "--tty").
Status check_terminal_options(bool terminal, const std::string& console_socket, bool relayed_here,
                              std::string_view terminal_option);

// CVE-2019-5736 (exec_gate.hpp): the exec gate unless `ruled_out` says why not, the
// protected re-exec of mini-run otherwise (sealed_exe.hpp), which starts this process over
// with `reexec_argv` and the signal mask `reexec_mask` (nullptr: as it is). Returns the
// gate's fd, or an invalid fd when the process is to exec itself. The choice is told once:
// under --explain as a step, otherwise under --debug.
Result<UniqueFd> protect_runtime_binary(std::string ruled_out, std::string_view gate_text,
                                        char** reexec_argv, const sigset_t* reexec_mask);

// The procfs handle a container process writes under /proc through (procfs.hpp), opened by
// the runtime before the clone and before any namespace is entered; an empty one unless
// `needed`. Which of the three kinds it is, and why not a better one, is said under --debug
// (and --explain). A private instance costs its teardown at the last close (some 0.1-0.5 ms:
// an RCU grace period), so only a container with something to write gets one.
Result<procfs::Handle> open_procfs_handle(bool needed);
// Whether the init, or create for it, writes under /proc: the id maps of a new user
// namespace, oom_score_adj, sysctls, a new time namespace, an LSM label.
bool needs_procfs_handle(const Plan& plan);

// Under --debug, the cpu affinity a cloned process is born with (mini-run's own, or
// execCPUAffinity.initial), as runc's nsexec logs it: "nsexec: affinity: 0x3".
void log_clone_affinity();

// Clones a container process with the namespace `flags`, born straight into the cgroup2
// directory `cgroup_fd` where there is one (*born_in_v2 says whether the kernel did). The
// child drops its copy of the parent's end of the sync socket (or it would never see end of
// stream from a parent that died) and runs `child(born_in_v2)`, which never returns.
template <typename Child>
Result<pid_t> clone_process(unsigned long flags, int cgroup_fd, ParentEnd& parent_end,
                            bool* born_in_v2, Child&& child) {
    log_clone_affinity();
    MR_ASSIGN(pid_t pid, clone_with(flags, cgroup_fd, born_in_v2));
    if (pid == 0) {
        parent_end.close();
        child(*born_in_v2);
    }
    return pid;
}

// After a failed send or step, the child has usually died with an error frame waiting for
// us: that message says what went wrong, the broken pipe does not. A child that is alive
// and waiting for us (the failure was ours) sends nothing: a short wait, never a hang.
Error child_error_or(ParentEnd& sync, const Error& fallback);

// Hands the pty's master to --console-socket (when there is one) and closes ours.
Status hand_over_terminal(const std::string& console_socket, UniqueFd& master);

// --pidfd-socket (runc 1.2+): a pidfd of `pid` (the init for create and run, the new
// process for exec), sent over the unix socket at `pidfd_socket` as SCM_RIGHTS, so that
// the caller can signal and wait for exactly that process, whatever reuses its pid later.
// Nothing without a socket.
Status hand_over_pidfd(const std::string& pidfd_socket, pid_t pid);

} // namespace minirun::runtime
