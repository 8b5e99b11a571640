// Helpers for the integration tests: they run the real mini-run binary as root against the
// busybox bundle in rootfs-examples/busybox and look at the result from inside the
// container (what it prints) and from outside (the host's /proc).
//
// Everything a test creates is owned by an RAII object (Child, TempDir, TempBundle), so a
// failing REQUIRE still kills what the test started and removes its files.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

} // namespace it
