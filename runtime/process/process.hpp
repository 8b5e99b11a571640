// The container's process: finding its executable and handing over to it.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "syscalls.hpp"

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace minirun::runtime::process {

// The value of PATH in `env` ("KEY=value" entries; the last one wins), or the default
// search path when there is none.
std::string search_path(const std::vector<std::string>& env);

// process.env as the process gets it, as runc's prepareEnv (libcontainer/env.go): one
// entry per name, the last one's, in the order of those last ones; an empty HOME is
// dropped (missing_home supplies it). A duplicate would otherwise reach the process twice,
// and getenv(3) returns the first, where runc's users expect the last (docker's
// `-e ONE=two` over an image's ONE).
std::vector<std::string> dedup_env(const std::vector<std::string>& env);

// Resolves args[0] as execve(2) will see it, inside the container: a name with a '/' is
// used as is, any other is searched for in the process's PATH (like runc, the container's
// PATH, not ours). A missing or non-executable file is an error naming it, reported
// before the container starts.
Result<std::string> find_executable(const spec::Process& process);

// chdir() to process.cwd and check that the result is inside the container: a cwd
// that resolves through a leaked fd (/proc/self/fd/N) would land on the host
// (CVE-2024-21626).
Status enter_cwd(const spec::Process& process, Syscalls& sys);

// enter_cwd() while still privileged, as runc does: a user may start in a directory only
// root could reach. false when root was refused (EACCES, EPERM: in a user namespace, say);
// the caller then tries again as the process's user, who may own the directory.
Result<bool> try_enter_cwd(const spec::Process& process, Syscalls& sys);

// Closes every fd from 3 + `preserve_fds` up, except `keep` (mini-run's own). The init and
// exec'd processes call it first thing: a caller's leaked fd (a directory, say) must not
// stay reachable through /proc/<pid>/fd while the container waits to start
// (CVE-2024-21626 class).
Status close_inherited_fds(int preserve_fds, std::vector<int> keep, Syscalls& sys);

// close_range(first, ~0U, CLOSE_RANGE_CLOEXEC), or where the container's seccomp filter
// (or an old kernel) refuses it, fcntl(FD_CLOEXEC) on each fd of /proc/self/fd.
Status mark_inherited_cloexec(unsigned first, Syscalls& sys);

// The exec gate (exec_gate.hpp) to exec through, and what its program needs.
struct ExecGate {
    int program = -1;    // the gate's memfd; -1: execve directly
    int report_to = -1;  // the sync socket for a failure, while the parent listens
    int start_fifo = -1; // exec.fifo: the gate waits for `start`; -1: at once
};

// The final execve, made ready beforehand: argv and envp built, every inherited fd above
// stdio and the `preserve_fds` after it marked close-on-exec, the gate's fds kept open. So
// that once the container's seccomp filter is on, run() makes no system call but the exec
// itself. With no_new_privs off the filter is on already (it needs CAP_SYS_ADMIN, so it
// goes on before the privilege drop, as runc's): prepare() then falls back from calls a
// profile older than them refuses (close_range, execveat).
//
// Neither copied nor moved: argv points into the object's own strings.
// runc's prepareEnv: a process.env without HOME (or whose last HOME is empty) gets the home
// directory of process.user.uid from the container's /etc/passwd, and "/" when that uid has
// no entry or there is no passwd. Programs that read HOME (shells, getpwnam-less tools)
// otherwise meet NULL. Returns the "HOME=..." entry to add, or "" when the env has a HOME.
// Reads the container's /etc/passwd (at most 4 MiB, a regular file): call it after
// pivot_root, before the privilege drop.
std::string missing_home(const spec::Process& process);
// The home of `uid` in the text of a passwd file, or "/" (the pure half of missing_home).
std::string home_in_passwd(std::string_view passwd, uid_t uid);

class PreparedExec {
public:
    PreparedExec() = default;
    PreparedExec(const PreparedExec&) = delete;
    PreparedExec& operator=(const PreparedExec&) = delete;
    PreparedExec(PreparedExec&&) = delete;
    PreparedExec& operator=(PreparedExec&&) = delete;
    ~PreparedExec() = default;

    // `home` ("HOME=/root", from missing_home) is added to process.env when not empty.
    Status prepare(const std::string& path, const spec::Process& process, int preserve_fds,
                   std::string_view home, Syscalls& sys, const ExecGate& gate = {});
    // Returns only on failure.
    [[nodiscard]] Status run(Syscalls& sys) const;
    // The environment the process gets: process.env deduplicated, and HOME if added.
    [[nodiscard]] std::vector<std::string> environment() const;
    // The --explain line of the exec (empty without --explain), for the caller to print
    // before the seccomp filter goes on.
    [[nodiscard]] const std::string& explanation() const { return explanation_; }

private:
    std::string path_;
    std::string home_;
    std::string explanation_;
    ExecGate gate_;
    std::vector<std::string> gate_words_; // the gate's command line ahead of argv
    std::vector<std::string> env_;        // dedup_env of process.env
    std::vector<char*> argv_;             // point into the spec's strings and gate_words_
    std::vector<char*> envp_;             // point into env_ and home_
};

} // namespace minirun::runtime::process
