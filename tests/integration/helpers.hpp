// Helpers for the integration tests: they run the real mini-run binary as root against the
// busybox bundle in rootfs-examples/busybox and look at the result from inside the
// container (what it prints) and from outside (the host's /proc).
//
// Everything a test creates is owned by an RAII object (Child, TempDir, TempBundle), so a
// failing REQUIRE still kills what the test started and removes its files.
#pragma once

#include "skips.hpp"

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace it {

using namespace std::chrono_literals;
using Millis = std::chrono::milliseconds;

// Generous: a container starts in tens of milliseconds, but CI machines can be slow.
inline constexpr Millis default_timeout = 30s;

// The mini-run under test: $MINIRUN_IT_BINARY if set (to check the tests against another
// runtime with the same `run --bundle DIR ID` interface), else the one CMake built.
std::string minirun_binary();
std::string source_dir();
std::string example_bundle(); // <source>/rootfs-examples/busybox
std::string example_rootfs(); // <source>/rootfs-examples/busybox/rootfs
nlohmann::json example_config();

// ---------------------------------------------------------------------------------------
// Tests that cannot run here, and waiting for what a test can observe

// For a test that cannot run on this machine (a kernel feature, a cgroup controller, a
// capability it lacks): skip_test(reason) records the current test's name and `reason`; the
// caller then returns. The facility is tests/common/skips.hpp, shared with the unit tests.
using minirun_tests::skip_test;

// Polls `condition` every 20 ms until it holds; false when it still does not after
// `timeout`. For waiting on something the test can see (a file, a line of output), never a
// fixed sleep.
template <typename Condition>
bool wait_until(Condition condition, Millis timeout = 10s);

// ---------------------------------------------------------------------------------------
// Running commands

struct RunResult {
    int exit_code = -1; // the exit status, or 128+N when killed by signal N
    std::string out;
    std::string err;
    bool timed_out = false;

    // Everything, for failure messages.
    [[nodiscard]] std::string describe() const;
};

// A process started with fork/exec (no shell), its stdin, stdout and stderr on pipes.
// Destroying a Child that still runs SIGKILLs it (that pid only) and reaps it.
class Child {
public:
    explicit Child(const std::vector<std::string>& argv);
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child();

    [[nodiscard]] pid_t pid() const { return pid_; }

    // Queues text for the child's stdin; it is written while output is read, so a child
    // that writes a lot before reading cannot deadlock us.
    void write_stdin(std::string_view text);
    // Closes stdin once the queued text is written.
    void close_stdin();

    // Reads output until `needle` appears on stdout. False on timeout or when the child
    // exits without printing it.
    bool wait_for_output(std::string_view needle, Millis timeout = default_timeout);

    // Sends a signal to this child (by its pid).
    void signal(int signo) const;

    // Closes stdin, reads all output and reaps the child. After `timeout` it is SIGKILLed
    // and timed_out is set.
    RunResult wait(Millis timeout = default_timeout);

    [[nodiscard]] const std::string& out() const { return out_; }
    [[nodiscard]] const std::string& err() const { return err_; }
    [[nodiscard]] bool exited() const { return status_.has_value(); }

private:
    // One round: poll the pipes for at most timeout_ms, move data, reap if exited.
    void pump(int timeout_ms);
    void reap_nonblocking();
    void close_fd(int& fd);

    pid_t pid_ = -1;
    int stdin_fd_ = -1;
    int stdout_fd_ = -1;
    int stderr_fd_ = -1;
    std::string pending_stdin_;
    bool close_stdin_when_flushed_ = false;
    std::string out_;
    std::string err_;
    std::optional<int> status_; // raw wait status once reaped
};

// Runs argv to completion, feeding it stdin_text.
RunResult run(const std::vector<std::string>& argv, std::string_view stdin_text = {},
              Millis timeout = default_timeout);

// Runs `mini-run ARGS...`.
RunResult run_minirun(const std::vector<std::string>& args, std::string_view stdin_text = {},
                      Millis timeout = default_timeout);

// ---------------------------------------------------------------------------------------
// Looking at the host

std::optional<std::string> read_file(const std::string& path);
std::vector<std::string> split_lines(std::string_view text);
std::vector<std::string> split_words(std::string_view text);
bool contains(std::string_view haystack, std::string_view needle);

// The target of /proc/<pid>/ns/<name>, e.g. "net:[4026531833]" ("self" for pid 0).
std::string ns_link(pid_t pid, std::string_view name);
// The namespaces /proc/self/ns shows on this kernel (cgroup ipc mnt net pid time user uts).
std::vector<std::string> namespace_names();

struct MountInfo {
    int id = 0;
    int parent = 0;
    std::string root;        // path inside the mounted filesystem
    std::string mount_point; // where it is mounted
    std::string fs_type;
    std::string source;
    std::string line; // the raw line
};
std::vector<MountInfo> parse_mountinfo(std::string_view text);
std::vector<MountInfo> host_mounts();
// The cgroup hierarchies mounted below /sys/fs/cgroup: their mount points (not the
// cpu/cpuacct style symlinks some hosts add).
std::vector<std::string> cgroup_hierarchies();
// The cgroup of a container with an empty linux.cgroupsPath, relative to each hierarchy's
// root: "/<id>" (crun's default, and runc's on a host without systemd).
std::string default_cgroup(std::string_view id);
// Every directory `relative` (default_cgroup(id)) in any hierarchy: what is left of a cgroup.
std::vector<std::string> cgroup_dirs(const std::string& relative);
// `argv` (an absolute path first) started with stdin from /dev/null, stdout and stderr
// into the file `log`, no other descriptor and the default signal mask: a container it
// makes may hold them as long as it likes. -1 when it could not be started. Asserts
// nothing, so threads may call it.
pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log);

// Processes whose parent is `pid` (by scanning /proc/*/stat; this kernel may lack the
// /proc/<pid>/task/<tid>/children file).
std::vector<pid_t> children_of(pid_t pid);
// The NSpid line of /proc/<pid>/status: its pid in each nested pid namespace.
std::vector<pid_t> ns_pids(pid_t pid);
// A field of /proc/<pid>/status ("Uid"), split into words.
std::vector<std::string> status_field(pid_t pid, std::string_view name);
// The container's init among the descendants of `runtime_pid`: the process whose NSpid
// ends in 1 (pid 1 of a nested pid namespace). Waits up to `timeout` for it to appear.
std::optional<pid_t> find_container_init(pid_t runtime_pid, Millis timeout = 10s);
// Every process but this one whose command line contains `marker` (not followed by a digit).
std::vector<pid_t> processes_with_marker(std::string_view marker);

// ---------------------------------------------------------------------------------------
// Temporary files

// A directory /tmp/minirun-it.XXXXXX (mode 0755), removed with everything in it.
class TempDir {
public:
    explicit TempDir(std::string_view prefix = "minirun-it");
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir();
    [[nodiscard]] const std::string& path() const { return path_; }

private:
    std::string path_;
};

// Removes a tree without crossing into other mounts.
void remove_tree(const std::string& path);

// Writes `text` to `path` (created or truncated); throws when that fails.
void write_text(const std::string& path, const std::string& text);

// The host mounts whose mount point is `path` or below it.
std::vector<MountInfo> host_mounts_under(const std::string& path);

// A host directory bind-mounted onto itself and made shared (MS_SHARED): what Docker insists
// on for an rshared volume's source, and the setting where a careless runtime lets the
// container's mounts propagate back to the host. Detached, with whatever propagated into
// it, and removed at the end.
class SharedDir {
public:
    explicit SharedDir(std::string_view prefix = "minirun-it-shared");
    SharedDir(const SharedDir&) = delete;
    SharedDir& operator=(const SharedDir&) = delete;
    ~SharedDir();
    [[nodiscard]] const std::string& path() const { return dir_.path(); }
    // Detaches what appeared below the directory (propagated from a container).
    void detach_below() const;
    // The directory's own line in the host's mountinfo ("" when not mounted).
    [[nodiscard]] std::string line() const;

private:
    TempDir dir_;
    bool mounted_ = false;
};

// A bundle directory with a config.json made from `config`, which starts as the example
// config with root.path pointing at the example rootfs (absolute). Each bundle has a
// unique container id, "it-<name>-<pid>-<n>", which is also the marker that the tests put
// into the container's command line, to find leftover processes.
//
// The destructor cleans up even after a failure: it SIGKILLs leftover processes carrying
// the marker, detaches mounts that appeared under the bundle since it was made, and
// removes the directory.
class TempBundle {
public:
    explicit TempBundle(std::string_view name);
    TempBundle(const TempBundle&) = delete;
    TempBundle& operator=(const TempBundle&) = delete;
    ~TempBundle();

    nlohmann::json config;

    [[nodiscard]] const std::string& dir() const { return dir_.path(); }
    [[nodiscard]] const std::string& id() const { return id_; }
    [[nodiscard]] std::string config_path() const { return dir() + "/config.json"; }
    // The rootfs in use: the example one, or the copy made by copy_rootfs().
    [[nodiscard]] std::string rootfs() const { return config["root"]["path"].get<std::string>(); }

    // process.args = ["sh", "-c", script, <id>]: the id becomes $0, so it shows in the
    // command line of the container's shell.
    void set_shell(std::string_view script);
    void set_args(const std::vector<std::string>& args);
    // Adds capabilities to the bounding, effective and permitted sets.
    void add_capabilities(const std::vector<std::string>& caps);
    // Removes every namespace of these types from linux.namespaces.
    void remove_namespaces(const std::vector<std::string>& types);
    void add_namespace(std::string_view type);
    // A user namespace whose ids 0..65535 are the host's 100000..165535 (uidMappings and
    // gidMappings alike); with copy_rootfs({100000, 100000}) its root owns the rootfs.
    void add_user_namespace();

    // Copies the example rootfs into the bundle (cp -a), chowns it to uid:gid when given,
    // and points root.path at the copy.
    std::string copy_rootfs(std::optional<std::pair<uint32_t, uint32_t>> owner = std::nullopt);

    void write_config() const;
    void write_raw_config(std::string_view text) const;

    // `mini-run run --bundle <dir> <id>`, after writing config.json.
    [[nodiscard]] std::vector<std::string> run_argv() const;
    RunResult run(std::string_view stdin_text = {}, Millis timeout = default_timeout) const;
    // Same, in the background, for tests that look at the running container.
    [[nodiscard]] Child start() const;

    // What this bundle's container left behind: mounts that appeared in the host's mount
    // table since the bundle was made, processes carrying the marker, and a state directory
    // /run/mini-run/<id>. Waits up to `timeout` for processes to go away. Empty when clean.
    [[nodiscard]] std::vector<std::string> leftovers(Millis timeout = 3s) const;

private:
    TempDir dir_;
    std::string id_;
    std::vector<int> mounts_before_;
};

// Fails the current test (CHECK) when the bundle left something behind.
void check_no_leftovers(const TempBundle& bundle);

// The lines of a `name value` listing printed by a container script.
std::string value_of(std::string_view output, std::string_view key);

// ---------------------------------------------------------------------------------------
// The lifecycle commands: create, start, state, kill, delete, exec, list, ps
//
// A container made with `create` or `run --detach` outlives the command that made it. The
// test process makes itself a child subreaper, so such an init is reparented to the test
// (not to the host's init) and the test can see it exit and reap it.

// Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER); idempotent.
void become_subreaper();

// The state letter from /proc/<pid>/stat ('R', 'S', 'Z', ...); nullopt when there is no
// such process.
std::optional<char> process_state(pid_t pid);
// The parent pid from /proc/<pid>/stat.
std::optional<pid_t> parent_pid(pid_t pid);
// The command line of a process, NULs shown as spaces ("" when it is gone).
std::string cmdline_of(pid_t pid);
// True while `pid` exists and is not a zombie.
bool process_alive(pid_t pid);
// Waits until `pid` is gone or a zombie; false on timeout.
bool wait_for_exit(pid_t pid, Millis timeout = 10s);
// Reaps `pid` when it is a child of the test (after waiting up to `timeout` for it to
// exit). Returns its wait status, or nullopt when it is not a child or did not exit.
std::optional<int> reap(pid_t pid, Millis timeout = 5s);
// Reaps every zombie child of the test that no Child object owns: container processes
// that were reparented to the test.
void reap_orphans();

// A result whose stdout and stderr went to files (they stay readable: a container that
// inherited them may go on writing there).
struct FileRunResult : RunResult {
    std::string out_path;
    std::string err_path;
    // Re-reads the files: what the command and its containers wrote so far.
    [[nodiscard]] std::string out_now() const;
    [[nodiscard]] std::string err_now() const;
};

// One extra descriptor for run_to_files: the child gets `source` (a descriptor of the
// test) as descriptor `target`, without FD_CLOEXEC.
struct FdMapping {
    int target;
    int source;
};

// Runs argv with stdin from /dev/null and stdout/stderr going to fresh files in `dir`,
// so that a container that inherits them (create, run --detach, exec --detach) cannot
// keep the test waiting for end-of-file. The child gets descriptors 0-2 and the `fds`
// mappings, nothing else. Waits for the command itself (not for its containers).
FileRunResult run_to_files(const std::vector<std::string>& argv, const std::string& dir,
                           const std::vector<FdMapping>& fds = {},
                           Millis timeout = default_timeout);

// How long a lifecycle command may take: state, start, kill and delete return at once, and
// a hung one should fail its test quickly rather than stall the suite.
inline constexpr Millis command_timeout = 10s;

// The lifecycle commands against a private state root: every call passes `--root <dir>`,
// so the tests never touch /run/mini-run (nor another test's containers). The destructor
// runs `delete --force` for every container it created or finds under the root, then reaps
// the container processes that were reparented to the test.
class Runtime {
public:
    // A fresh, empty root directory.
    Runtime();
    // An explicit root path (it need not exist yet); removed by the destructor.
    explicit Runtime(std::string root);
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;
    ~Runtime();

    [[nodiscard]] const std::string& root() const { return root_; }
    // Runs `binary` instead of minirun_binary() from now on (every command, the
    // destructor's `delete --force` too): e.g. a copy of it that a test may let a hostile
    // container attack.
    void use_binary(std::string binary) { binary_ = std::move(binary); }
    [[nodiscard]] std::string binary() const;
    // Where run_to_files() puts the outputs, pid files, logs.
    [[nodiscard]] const std::string& io_dir() const { return io_.path(); }

    // {binary, "--root", root, args...}
    [[nodiscard]] std::vector<std::string> argv(const std::vector<std::string>& args) const;
    // Runs `mini-run --root R ARGS...` with stdout and stderr on pipes: for commands that
    // leave no container process holding them (state, kill, delete, start, list, ps, and
    // run or exec in the foreground).
    RunResult operator()(const std::vector<std::string>& args, std::string_view stdin_text = {},
                         Millis timeout = command_timeout) const;
    // Same with stdout and stderr into files: for create, run --detach, exec --detach.
    FileRunResult to_files(const std::vector<std::string>& args,
                           const std::vector<FdMapping>& fds = {},
                           Millis timeout = 2 * command_timeout) const;

    // Remembers an id for the destructor's `delete --force`.
    void track(const std::string& id);
    // `delete --force ID`, reaping the container processes reparented to the test while it
    // runs: the init of a PID namespace exits only once every process of the namespace is
    // reaped, and one that joined it (`exec --detach`) is the test's to reap, so a delete
    // that waits for the init would otherwise wait for us. Up to `timeout`.
    RunResult force_delete(const std::string& id, Millis timeout = 20s) const;

    // Writes the bundle's config.json, then `create --bundle DIR --pid-file PIDFILE
    // EXTRA... ID`; PIDFILE is pid_file(id).
    FileRunResult create(const TempBundle& bundle, const std::vector<std::string>& extra = {},
                         const std::vector<FdMapping>& fds = {});
    // Writes config.json, then `run --detach --bundle DIR --pid-file PIDFILE EXTRA... ID`.
    FileRunResult run_detached(const TempBundle& bundle,
                               const std::vector<std::string>& extra = {});
    [[nodiscard]] std::string pid_file(const std::string& id) const;
    // The pid in pid_file(id); nullopt when missing or not a plain decimal number.
    [[nodiscard]] std::optional<pid_t> pid_from_file(const std::string& id) const;

    // `state ID`, parsed; nullopt when the command fails or prints no JSON object.
    [[nodiscard]] std::optional<nlohmann::json> state(const std::string& id) const;
    // The status from `state ID`, or "<state failed: ...>".
    [[nodiscard]] std::string status(const std::string& id) const;
    // Polls `state ID` until the status is `wanted`; false on timeout.
    bool wait_for_status(const std::string& id, std::string_view wanted,
                         Millis timeout = 10s) const;

    // The names in the root directory (none when it does not exist).
    [[nodiscard]] std::vector<std::string> root_entries() const;

private:
    std::optional<TempDir> owned_root_;
    TempDir io_;
    std::string root_;
    std::vector<std::string> ids_;
    std::string binary_; // empty: minirun_binary()
};

// Fails the current test (CHECK) when the root has entries left.
void check_root_empty(const Runtime& runtime);

// Creates and starts the bundle's container (REQUIREs both) and returns its init's pid;
// with `created_out`, also create's result (the container's output goes there).
pid_t create_and_start(Runtime& runtime, const TempBundle& bundle,
                       FileRunResult* created_out = nullptr);

// Creates and starts the bundle's container, whose process exits by itself, then waits
// until that init has exited (it is reaped) and `state` says stopped. REQUIREs each step.
void create_start_until_stopped(Runtime& runtime, const TempBundle& bundle);

// A unix socket listening for a console master: bound (SOCK_STREAM) in a fresh temp dir.
// receive() accepts one connection and reads one message with SCM_RIGHTS.
class ConsoleSocket {
public:
    ConsoleSocket();
    ConsoleSocket(const ConsoleSocket&) = delete;
    ConsoleSocket& operator=(const ConsoleSocket&) = delete;
    ~ConsoleSocket();

    [[nodiscard]] const std::string& path() const { return path_; }

    struct Received {
        std::vector<int> fds; // every descriptor that came with the message (owned)
        std::string payload;  // the bytes of the message
        std::string error;    // why nothing was received, if so
    };
    // Accepts one connection (waits up to `timeout`) and receives one message.
    Received receive(Millis timeout = 10s);

private:
    TempDir dir_;
    std::string path_;
    int listen_fd_ = -1;
};

// Reads from a pty master until `needle` shows up, end-of-file or EIO (the slave side
// is closed everywhere), or timeout. Returns everything read.
std::string read_pty(int master, std::string_view needle = {}, Millis timeout = 10s);
// Writes all of `text` to fd.
bool write_all(int fd, std::string_view text);

// The live (non-zombie) processes whose pid namespace link is `ns` ("pid:[4026532...]").
std::vector<pid_t> processes_in_pid_namespace(const std::string& ns);
// The live children of the test that no Child object owns: container processes that were
// reparented to it (it is a subreaper).
std::vector<pid_t> live_orphans();
// True for an RFC 3339 date-time: 2024-01-31T12:34:56Z, with optional fraction and offset.
bool is_rfc3339(const std::string& text);

template <typename Condition>
bool wait_until(Condition condition, Millis timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

} // namespace it
