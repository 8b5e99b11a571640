// `mini-run demo <namespace>`: one namespace at a time, in a real container.
//
// Each demo writes a temporary bundle (the example busybox config.json with only a mount
// namespace and the one being shown), runs it with this very binary (`mini-run run`) under
// a temporary --root, and prints what the container sees next to what the host sees. What
// a demo makes (container, state, bundle, veth pair, message queue) is removed at the end,
// also when it fails or is interrupted: SIGINT, SIGTERM and SIGHUP are blocked for the
// demo's lifetime and read from a signalfd, so Ctrl-C turns into an orderly cleanup.
//
// demo.cpp has the command and what the demos share, demo_<name>.cpp each demo;
// demo_session.cpp (context, sessions, helpers), demo_process.cpp (signals, child
// processes) and demo_output.cpp (the output) the machinery below.
#pragma once

#include "commands.hpp"
#include "minirun/error.hpp"

#include <nlohmann/json.hpp>

#include <csignal>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::cli {

CommandRunner add_demo_command(CLI::App& app, GlobalOptions& global);

namespace demo {

using Seconds = std::chrono::seconds;

// A demo fails with an Error (errno 0) whose message says what it needed and did not
// happen, or with interrupted(): Ctrl-C (or SIGTERM, SIGHUP) while it ran. Either way it
// returns through the cleanup of what it made.
Error interrupted();
[[nodiscard]] bool is_interrupted(const Error& error);

// Once open, blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT (and ignores SIGPIPE) while it
// lives; the blocked signals are read from a signalfd. Children get the original mask back.
class Signals {
public:
    Signals() = default;
    Signals(const Signals&) = delete;
    Signals& operator=(const Signals&) = delete;
    ~Signals();

    // Blocks the signals and opens the signalfd; on failure nothing stays blocked.
    Status open();
    [[nodiscard]] int fd() const { return fd_; }
    // Fails with interrupted() when one of the signals has arrived.
    [[nodiscard]] Status check() const;
    // For a forked child, before exec: the original mask and dispositions.
    void restore_in_child() const;

private:
    int fd_ = -1;
    sigset_t original_{};
    struct sigaction original_pipe_ {};
};

// Headings and facts on stdout, with colour when it is a terminal (and NO_COLOR unset).
class Output {
public:
    Output();
    void heading(std::string_view title) const;
    void text(std::string_view paragraph) const; // narration, indented
    void field(std::string_view label, std::string_view value) const;
    void inside(std::string_view what, std::string_view value) const;
    void host(std::string_view what, std::string_view value) const;
    void command(std::string_view line) const; // "host    $ ip link add ..."
    // "/proc/self/ns/uts  inside uts:[...]  host uts:[...]  (different)"
    void ns_compare(std::string_view name, std::string_view inside, std::string_view host) const;
    void good(std::string_view fact) const; // a fact that held
    void bad(std::string_view fact) const;  // one that did not
    void note(std::string_view text) const; // dimmed

private:
    [[nodiscard]] std::string paint(std::string_view code, std::string_view text) const;
    bool colour_ = false;
};

// A child process (fork/exec, its own process group so a terminal's Ctrl-C reaches only
// the demo), its stdin, stdout and stderr on pipes. Destroying one that still runs
// SIGKILLs that pid and reaps it.
class Process {
public:
    explicit Process(const Signals& signals) : signals_(&signals) {}
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    ~Process();

    [[nodiscard]] pid_t pid() const { return pid_; }
    [[nodiscard]] bool exited() const { return exited_; }
    [[nodiscard]] const std::string& out() const { return out_; }
    [[nodiscard]] const std::string& err() const { return err_; }

    // Forks and execs `argv` (once per Process), in a process group of its own unless
    // `with_terminal`: a `run --explain=step` reads the terminal, which only the
    // foreground group may (a background one is stopped by SIGTTIN and SIGTTOU).
    Status start(const std::vector<std::string>& argv, bool with_terminal = false);
    Status send(std::string_view text) const;
    // Reads until a line starting with `marker` is on stdout. Fails on timeout or when the
    // process ends first, with interrupted() on a signal.
    Status wait_for(std::string_view marker, Seconds timeout = Seconds(30));
    // Closes stdin, reads everything, reaps. The exit code (128+N for signal N); fails
    // after `timeout` (the process is killed).
    Result<int> wait(Seconds timeout = Seconds(30));
    // SIGKILL (this pid) and reap, without reading.
    void kill_and_reap();

private:
    Status pump(int timeout_ms);
    void reap(bool block);

    const Signals* signals_;
    pid_t pid_ = -1;
    int in_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    bool exited_ = false;
    int status_ = 0;
    std::string out_;
    std::string err_;
};

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};
// Runs a host command to completion.
Result<CommandResult> run_command(const std::vector<std::string>& argv, const Signals& signals);

// Runs `body` in a forked child that has joined the `type` namespace of process `pid`
// (setns(2) on /proc/PID/ns/NAME, `nstype` a CLONE_NEW* flag; pid 0: the child stays in
// the host's). Whether the body returned true; fails when the child could not join.
Result<bool> in_namespace_of(pid_t pid, std::string_view name, int nstype,
                             const std::function<bool()>& body);

// A directory tree removed when this goes (remove_tree); empty: nothing.
struct TempTree {
    TempTree() = default;
    TempTree(const TempTree&) = delete;
    TempTree& operator=(const TempTree&) = delete;
    ~TempTree();
    std::string path;
};

// What every demo needs: where the example lives, the output, the signals.
struct Context {
    Output out;
    Signals* signals = nullptr;
    std::string bundle;         // --bundle DIR: the bundle to take instead of the example
    std::string source_dir;     // mini-run's source tree, when the example came from there
    std::string rootfs;         // the rootfs, absolute
    std::string rootfs_origin;  // what a rootfs the demo made is made from (demo_rootfs.cpp)
    nlohmann::json base_config; // the bundle's config.json (or `mini-run spec`'s)
    std::string self;           // this binary
    bool step = false;          // --step: wait for Enter while the container runs
    TempTree scratch;           // a rootfs the demo made, removed when the demo ends
};

// With --step: says what there is to look at and waits for Enter on stdin (or its end).
Status pause_here(const Context& context, std::string_view hint);

// Fills the context: the rootfs and config of --bundle, else of the example bundle in the
// source tree (building its rootfs when missing), else a rootfs the demo makes in a
// temporary directory (make_rootfs) with the config `mini-run spec` writes.
Status prepare_context(Context& context);

// Makes a small rootfs in $TMPDIR/mini-run-demo-rootfs.XXXXXX (context.scratch, removed
// with the context): the host's busybox, else the host's own binaries with their shared
// libraries and loader; the commands the demos' scripts run. Returns its path.
Result<std::string> make_rootfs(Context& context);

// One container: a temporary directory with bundle/config.json and state/ (the --root),
// a container id that carries the marker "mini-run-demo-", and the cleanup of everything.
class Session {
public:
    Session(Context& context, std::string_view name);
    // Makes the temporary directory: first, before anything else is done with the session.
    Status open();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session();

    nlohmann::json config;
    [[nodiscard]] const std::string& dir() const { return dir_; }
    [[nodiscard]] const std::string& id() const { return id_; }
    [[nodiscard]] std::string root() const { return dir_ + "/state"; }
    [[nodiscard]] std::string bundle() const { return dir_ + "/bundle"; }

    // linux.namespaces = mount + these; hostname and the mqueue mount only with their
    // namespaces.
    void set_namespaces(const std::vector<std::string>& types);
    void add_capabilities(const std::vector<std::string>& caps);
    // process.args = sh -c SCRIPT ID (the id shows in the shell's command line).
    void set_script(const std::string& script);

    // Writes config.json and starts `mini-run --root STATE run --bundle BUNDLE ID`; with a
    // `marker`, waits until the container prints it.
    Status start(std::string_view marker = {});
    // The container's init as the host sees it (from `state`).
    [[nodiscard]] Result<pid_t> init_pid() const;
    // Lets the container's script go on (one line on its stdin) and waits for `marker`.
    Status resume(std::string_view marker = {});
    // Waits for the container to exit; fails unless it exits 0.
    Status finish();

    // Runs at cleanup, newest first, after the container is gone; a failure is reported.
    void on_cleanup(std::string what, std::function<Status()> action);

    // "@key value" lines of the container's output: the value after "@key ".
    [[nodiscard]] std::string value(std::string_view key) const;
    // The lines between "@key" and "@end".
    [[nodiscard]] std::vector<std::string> block(std::string_view key) const;

private:
    void cleanup() noexcept;

    Context* context_;
    std::string dir_;
    std::string id_;
    std::unique_ptr<Process> run_;
    std::vector<std::pair<std::string, std::function<Status()>>> cleanups_;
};

// Small helpers.
std::string host_ns(std::string_view name); // readlink /proc/self/ns/NAME
std::string read_text(const std::string& path);
std::vector<std::string> lines_of(std::string_view text);
std::string trim(std::string_view text);
// Single quotes for a shell script.
std::string shell_quote(std::string_view text);
// Removes a directory tree without crossing into other mounts.
void remove_tree(const std::string& path);

// ---- What the demos share (demo.cpp) ----

// Collects the facts a demo checks: each is printed as "ok" or "UNEXPECTED".
class Check {
public:
    explicit Check(const Output& out) : out_(&out) {}
    void operator()(bool holds, std::string_view fact) {
        if (holds) {
            out_->good(fact);
        } else {
            out_->bad(fact);
        }
        ok_ = ok_ && holds;
    }
    [[nodiscard]] bool ok() const { return ok_; }

private:
    const Output* out_;
    bool ok_ = true;
};

// The start of every container script: "@ns <link>" for the namespace shown.
std::string ns_line(std::string_view name);
// Stops the script until the demo has looked from the host: prints "@<marker>", then
// waits for the line Session::resume sends.
std::string pause(std::string_view marker = "ready");
// With --step: says how to look at the running container, and waits for Enter.
Status pause_while_running(const Context& context, const Session& session);
std::vector<std::string> words_of(std::string_view text);
std::string join(const std::vector<std::string>& items, std::string_view separator);
// A line of /proc/PID/status ("NSpid", "Uid"): its words after the name, one space apart.
std::string status_field(pid_t pid, std::string_view name);
// The heading and what the demo is about: the clone flag, the syscalls, the code.
void intro(const Context& context, std::string_view title, std::string_view text,
           std::string_view flag, std::string_view syscall, std::string_view code);

// The demos, one file each (demo_uts.cpp, ...): whether every fact they check held.
Result<bool> demo_uts(Context& c);
Result<bool> demo_ipc(Context& c);
Result<bool> demo_pid(Context& c);
Result<bool> demo_mount(Context& c);
Result<bool> demo_net(Context& c);
Result<bool> demo_user(Context& c);
Result<bool> demo_cgroup(Context& c);
Result<bool> demo_time(Context& c);

// The time namespace's clock offsets, in the time demo and in the overview.
inline constexpr long kTimeOffset = 10L * 24 * 3600; // ten days

} // namespace demo
} // namespace minirun::cli
