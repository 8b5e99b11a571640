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

} // namespace minirun::explain
