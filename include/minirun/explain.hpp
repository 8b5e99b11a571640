// --explain: each step the runtime takes, as it takes it, one numbered line on stderr.
//
// `mini-run run --explain ID` (and `create --explain`) print the clone flags, the id map
// writes, every mount with its flags, pivot_root, the hostname, the capability sets, the
// rlimits, the seccomp filter and the final execve, in the order they happen:
//
//   [explain] 1. runtime: clone3(CLONE_NEWNS|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWPID|...)
//   [explain] 2. init: setrlimit(RLIMIT_NOFILE, soft 1024, hard 1024)
//
// Steps are taken by two processes, the runtime and the container's init (a clone of it
// that inherits the setting), and share one counter in a MAP_SHARED page, so the numbers
// follow the real order across both. Each line is one write(2) to fd 2, which in the init
// is the container's stderr: in the foreground that is the runtime's own.
//
// Off, a step costs one load of a bool: callers that build text first guard it with
// `if (explain::enabled())`.
#pragma once

#include <sys/types.h>

#include "minirun/error.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace minirun::explain {

namespace detail {
inline bool on = false; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
} // namespace detail

[[nodiscard]] inline bool enabled() noexcept {
    return detail::on;
}

// Turns explaining on for this process and every process cloned from it afterwards.
void enable();

// Prints "[explain] N. runtime: <what>" (or "init: " in a cloned child); nothing when off.
void step(std::string_view what);

// The line step() prints, for tests: "[explain] 3. init: <what>\n".
std::string format_line(unsigned number, std::string_view who, std::string_view what);

// Flag words for the texts: "CLONE_NEWNS|CLONE_NEWPID", "MS_NOSUID|MS_NODEV|MS_RDONLY".
// Unknown bits are shown in hex; no flags at all as "0".
std::string clone_flag_names(unsigned long flags);
std::string mount_flag_names(unsigned long flags);

// --explain=step: before each step of the recipes (runtime/runner.hpp) the taker prints a
// card (what the step does, its system calls, what it isolates, a command to look at it
// from another terminal) and waits for Enter on the controlling terminal, or for
// --step-delay, or both. The wait puts /dev/tty in raw mode for its duration only, so
// that Ctrl-C arrives as a key: the step then fails with stepping_stopped(), and the
// failure path that removes a half-made container does the cleanup, in the runtime and
// in the init alike. Runtime and init share one lock (a robust, process-shared mutex in
// the page above), so only one of them talks to the terminal at a time.
struct SteppingOptions {
    std::chrono::milliseconds delay{0}; // 0: until Enter; else at most this long
    // `run`: mini-run lives until the exec, so the init pauses up to its filter. `create`
    // returns to the shell once the container is created: the init stops pausing there.
    bool pause_after_created = false;
};

// Opens /dev/tty (unless there is none and a delay is set) and turns stepping on; also
// turns on the step lines (enable()). With neither a terminal nor a delay it fails: a
// wait nobody can end would block forever.
Status enable_stepping(const SteppingOptions& options);
[[nodiscard]] bool stepping() noexcept;

// Fills the cards' commands: {id}, {root} (the state root), {state} (root/id), {pid} (the
// init's pid on the host, known once it is cloned).
void describe_container(std::string_view id, std::string_view root);
void set_init_pid(pid_t pid);
// The init calls it once it has reported itself created. Under `create` no pause follows
// unless the runtime still waits for the init (for the exec gate): once `create` has
// returned, the terminal is the shell's again.
void created_reported(bool runtime_still_waits);
// The terminal's fd, which the init keeps open across "close inherited fds"; -1 if none.
[[nodiscard]] int stepping_fd() noexcept;

struct StepCard {
    std::string_view who; // "runtime" or "init"
    size_t number = 0;
    size_t total = 0;
    std::string_view name;
    std::string_view why;
    std::string_view calls;    // the system calls it makes
    std::string_view isolates; // what it isolates (or sets up), for the learner
    std::string_view look;     // a command to see it from another terminal; may be empty
};

// The card as printed, placeholders filled ("<pid>" while the init's pid is unknown).
std::string format_card(const StepCard& card, std::string_view id, std::string_view root,
                        pid_t pid);
// Prints the card and waits; fails with stepping_stopped() on Ctrl-C (or Ctrl-D, q), or
// once the other process has stopped.
Status pause(const StepCard& card);
[[nodiscard]] bool is_stepping_stopped(const Error& error);

} // namespace minirun::explain
