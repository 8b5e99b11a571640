// The runtime's log: one line per message, to stderr and to the --log file.
//
// Where a line goes (write()), by level, with min_level (--debug: debug, else warning) first:
//
//                without --log                      with --log FILE (--log-format text|json)
//   error        stderr: "mini-run: message"        FILE, and stderr as without --log
//   warning      stderr: "mini-run: warning: ..."   stderr only (podman reads a failed
//                                                   call's FILE as one JSON object)
//   debug, info  stderr, in runc's text format:     FILE only (info: stderr, as without)
//                time="..." level=debug msg="..."
//
// FILE lines are in the --log-format: runc's text format, or one JSON object per line
// ({"level":"error","msg":"...","time":"<RFC 3339>"}), which podman and containerd parse.
//
// The clones of mini-run: the container's init and the process `exec` starts inherit this
// logger across clone(), and with it mini-run's stderr, which from the clone on is the
// container's own: no line of ours may land there. So the clone reroutes its stderr lines:
//
// - forward_to(), right after the clone: each line meant for stderr, formatted as above,
//   goes to `send` instead (runtime/sync.cpp: one ToParent::kLog frame on the sync socket).
//   The parent, waiting on that socket, writes it to its own stderr (write_forwarded()),
//   between the messages it waits for. FILE lines the clone writes to FILE itself: it holds
//   FILE's descriptor (close-on-exec, so until its exec) and needs it later (below).
// - file_only(), once no parent listens any more: the init after it reported created,
//   where `create` exits (in the foreground `run`, and with the exec gate, a parent
//   listens until the exec: the init forwards until then). From there (waiting for `start`,
//   startContainer hooks, a failure after start) the init's lines go to FILE, if there is
//   one, and nowhere else.
//
// Only the stderr destination is swappable; the file is fixed by configure(). The
// rerouting allocates nothing beyond the line write() formats anyway.
#pragma once

#include "minirun/error.hpp"

#include <string>
#include <string_view>

namespace minirun::log {

enum class Level { debug, info, warning, error };
enum class Format { text, json };

struct Options {
    std::string file; // empty: stderr only
    Format format = Format::text;
    Level min_level = Level::warning;
};

// Opens the log file (append, close-on-exec). Call once, early.
Status configure(const Options& options);

[[nodiscard]] bool enabled(Level level);

// The log file's fd (-1 without --log): a clone that closes inherited fds keeps it.
[[nodiscard]] int file_descriptor();
void write(Level level, std::string_view message);

// In a clone of mini-run (see above): each line write() would put on stderr (without its
// newline) goes to send(fd, line) from now on. `send` must not throw, and loses the line
// rather than block for ever or fall back to stderr.
using LineSender = void (*)(int fd, std::string_view line) noexcept;
void forward_to(int fd, LineSender send);
// From now on the lines meant for stderr are dropped; FILE gets its lines as before.
void file_only();
// In the parent: one line a clone forwarded, written to stderr as it is, with a newline.
void write_forwarded(std::string_view line);

inline void debug(std::string_view message) {
    write(Level::debug, message);
}
inline void info(std::string_view message) {
    write(Level::info, message);
}
inline void warning(std::string_view message) {
    write(Level::warning, message);
}
inline void error(std::string_view message) {
    write(Level::error, message);
}

// "2026-11-30T00:16:07.123456789Z"
std::string rfc3339_now();

// One JSON log line (without the newline), exposed for tests.
std::string json_line(Level level, std::string_view message, std::string_view time);
// One text log line, as runc's logger writes them: time="..." level=debug msg="...".
std::string text_line(Level level, std::string_view message, std::string_view time);

} // namespace minirun::log
