// Logging with a swappable sink.
//
// Errors and warnings go to stderr as one line ("mini-run: message"), --debug lines in
// runc's text format (time="..." level=debug msg="..."); with `--log FILE --log-format json` every
// message is also appended to FILE as one JSON object per line
// ({"level":"error","msg":"...","time":"<RFC 3339>"}), which is what podman and containerd
// parse. The container's init inherits the sink across clone(), so it logs the same way
// until it execs (the log fd is close-on-exec).
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
