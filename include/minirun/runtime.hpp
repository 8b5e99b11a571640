// mini-run's library interface: what the CLI (or any other front end) calls.
//
// Every operation takes the state root (--root) and a container id, checks the id before
// touching the file system, and returns errors as values whose messages use the words
// engines match on ("does not exist", "already exists", "container not running").
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minirun {

// The OCI runtime-spec version mini-run implements.
inline constexpr std::string_view kSpecVersion = "1.3.0";

// Container ids are used as directory and cgroup names: letters, digits and "_+.-", not
// starting with '.', at most 1024 characters. Checked before any file system access.
Status validate_container_id(std::string_view id);

struct CreateOptions {
    std::string root; // state root (--root)
    std::string id;
    std::string bundle = ".";   // directory holding config.json
    std::string config;         // --config (crun's): another file than <bundle>/config.json
    std::string pid_file;       // written atomically: decimal pid, no newline
    std::string console_socket; // receives the pty master when process.terminal is set
    std::string pidfd_socket;   // receives a pidfd of the init (runc's --pidfd-socket)
    int preserve_fds = 0;       // fds 3 .. 3+N-1 are passed to the container
    // The caller's NOTIFY_SOCKET (sd_notify(3)), as runc reads it: the container gets a
    // socket of its own at /run/notify/notify.sock, and its READY=1 is relayed here by
    // `start` (or `run`), which returns only then. Empty: none.
    std::string notify_socket;
    bool systemd_cgroup = false; // linux.cgroupsPath is "slice:prefix:name"
    bool no_cgroups = false;     // --cgroup-manager disabled: stay in the caller's cgroups
    // The command line to re-execute from a protected view of mini-run when the container
    // needs it (CVE-2019-5736, runtime/security/exec_gate.hpp); nullptr: the caller did already.
    char** reexec_argv = nullptr;
};

// Sets the container up completely; its init then waits for `start` before running the
// user's process. On error nothing is left behind: no state, process or mount.
Status create_container(const CreateOptions& options);

// Releases a created container's init, then runs poststart hooks. With `notify_socket`
// (the caller's NOTIFY_SOCKET) and a container created with one, then waits until the
// container's process sends READY=1 (or the init exits) and relays it there.
Status start_container(const std::string& root, const std::string& id,
                       const std::string& notify_socket = {});

struct RunOptions : CreateOptions {
    bool detach = false; // return once started
    bool keep = false;   // do not delete the container after it exits
};

// create + start; in the foreground, waits with stdio passed through (or a terminal
// relayed) and signals forwarded, deletes the container, and returns the exit code to
// exit with: the process's own, or 128+N if signal N killed it.
Result<int> run_container(const RunOptions& options);

// The OCI state JSON of a container.
Result<std::string> container_state(const std::string& root, const std::string& id);

// Signal names: "KILL", "SIGKILL", "9" -> 9.
Result<int> parse_signal(std::string_view text);

Status kill_container(const std::string& root, const std::string& id, int signal, bool all);

Status delete_container(const std::string& root, const std::string& id, bool force);

struct ExecOptions {
    std::string root;
    std::string id;
    // Makes the process from the container's own (its saved config's; null when it has
    // none), called once the container is open, so that config.json is read once: the CLI
    // merges its flags onto it, or takes a --process file (runc builds it the same way).
    std::function<Result<spec::Process>(const spec::Process* own)> make_process;
    bool detach = false;
    std::string pid_file;
    std::string console_socket;
    std::string pidfd_socket; // receives a pidfd of the new process (runc's --pidfd-socket)
    int preserve_fds = 0;
    // Run it in a paused container too (it stays frozen until `resume`), as runc's
    // --ignore-paused.
    bool ignore_paused = false;
    // `--cgroup [controller[,controller...]:]path`: sub-cgroups of the container's to join.
    std::vector<std::string> cgroups;
    // `--apparmor PROFILE`, `--process-label LABEL` (runc's): the process's AppArmor profile
    // and SELinux label instead of its own (the container's, or the --process file's). Empty:
    // not given. Refused, naming the option, on a host without that LSM.
    std::string apparmor_profile;
    std::string process_label;
    // As CreateOptions: re-executed from a protected view when the exec gate is ruled out.
    char** reexec_argv = nullptr;
};

// Runs a new process in the namespaces of a running container. Foreground: returns its
// exit code. Detached: returns 0 once it runs, leaving it to the caller.
Result<int> exec_in_container(const ExecOptions& options);

struct ContainerSummary {
    std::string id;
    pid_t pid = 0;
    std::string status;
    std::string bundle;
    std::string created;
    std::string owner;
};

Result<std::vector<ContainerSummary>> list_containers(const std::string& root);
// States as list --format json prints them: a JSON array of state objects.
Result<std::string> list_containers_json(const std::string& root);

// Host pids of the container's processes, the init first.
Result<std::vector<pid_t>> container_pids(const std::string& root, const std::string& id);

// `ps ID [ARGS...]` as runc has it: ps(1) with ARGS (default "-ef") on the host, its header
// and the lines whose PID column is one of the container's processes (runtime/ps.cpp).
Result<std::string> container_ps(const std::string& root, const std::string& id,
                                 const std::vector<std::string>& ps_args);
// The filtering alone: `output` is ps's table, with a PID column.
Result<std::string> filter_ps_output(std::string_view output, const std::vector<pid_t>& pids);

// The OCI features document (runtime-spec features.md).
std::string features_json();

// `update`: writes the values `resources` sets into a live container's cgroups (devices
// are left as they are).
Status update_container(const std::string& root, const std::string& id,
                        const spec::Resources& resources);

// `pause` / `resume`: freeze every process of a running container with the cgroup freezer
// (state then says "paused"), and thaw them again.
Status pause_container(const std::string& root, const std::string& id);
Status resume_container(const std::string& root, const std::string& id);

// `events --stats`: one event line as runc prints it: {"type":"stats","id":ID,"data":{...}}.
Result<std::string> container_stats(const std::string& root, const std::string& id);

// `events`: calls `emit` with one JSON event line at a time: a "stats" event every
// `interval`, an "oom" event whenever the OOM killer acts in the container's cgroup.
// Returns when the container has stopped.
Status stream_events(const std::string& root, const std::string& id,
                     std::chrono::milliseconds interval,
                     const std::function<void(const std::string&)>& emit);

} // namespace minirun
