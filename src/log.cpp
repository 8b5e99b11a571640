#include "minirun/log.hpp"

#include "fs.hpp"
#include "minirun/fd.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

namespace minirun::log {
namespace {

struct Sink {
    Options options;
    UniqueFd file;
    // Where the lines meant for stderr go (log.hpp): stderr, send(forward_fd, line), or
    // nowhere (file_only()).
    enum class Stderr { own, forwarded, dropped } stderr_lines = Stderr::own;
    int forward_fd = -1;
    LineSender send = nullptr;
};

Sink& sink() {
    static Sink instance;
    return instance;
}

std::string_view level_name(Level level) {
    switch (level) {
    case Level::debug:
        return "debug";
    case Level::info:
        return "info";
    case Level::warning:
        return "warning";
    case Level::error:
        return "error";
    }
    return "error";
}

// One write() per line, so concurrent writers (the init and the parent) never interleave
// inside a line.
void write_all(int fd, std::string_view text) {
    (void)fs::write_all(fd, text, "log");
}

// A line meant for stderr, without its newline (write_all adds none).
void to_stderr(const Sink& s, std::string line) {
    switch (s.stderr_lines) {
    case Sink::Stderr::own:
        line.push_back('\n');
        write_all(STDERR_FILENO, line);
        return;
    case Sink::Stderr::forwarded:
        s.send(s.forward_fd, line);
        return;
    case Sink::Stderr::dropped:
        return;
    }
}

} // namespace

void forward_to(int fd, LineSender send) {
    Sink& s = sink();
    s.stderr_lines = Sink::Stderr::forwarded;
    s.forward_fd = fd;
    s.send = send;
}

void file_only() {
    Sink& s = sink();
    s.stderr_lines = Sink::Stderr::dropped;
    s.forward_fd = -1;
    s.send = nullptr;
}

void write_forwarded(std::string_view line) {
    // One writev(), so that the line and its newline are not split by another writer.
    std::array<iovec, 2> parts{{{const_cast<char*>(line.data()), line.size()}, // NOLINT
                                {const_cast<char*>("\n"), 1}}};                // NOLINT
    ssize_t written = 0;
    do {
        written = ::writev(STDERR_FILENO, parts.data(), static_cast<int>(parts.size()));
    } while (written < 0 && errno == EINTR);
}

Status configure(const Options& options) {
    Sink& s = sink();
    s.options = options;
    // configure() starts afresh: stderr lines to this process's stderr again (a unit test
    // that ran a clone's steps in-process may have left them forwarded or dropped).
    s.stderr_lines = Sink::Stderr::own;
    s.forward_fd = -1;
    s.send = nullptr;
    s.file.reset();
    if (!options.file.empty()) {
        int fd = ::open(options.file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            return Error::from_errno(cat("open log file ", quoted(options.file)));
        }
        s.file.reset(fd);
    }
    return {};
}

bool enabled(Level level) {
    return level >= sink().options.min_level;
}

int file_descriptor() {
    return sink().file ? sink().file.get() : -1;
}

std::string rfc3339_now() {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    // The calendar by arithmetic (<chrono>): gmtime_r() and strftime() load the time zone
    // first (tzset(): /etc/localtime, six system calls per start) for a time that is UTC.
    using namespace std::chrono;
    const sys_seconds at{seconds{now.tv_sec}};
    const sys_days day = floor<days>(at);
    const year_month_day date{day};
    const hh_mm_ss time{at - day};
    std::array<char, 128> buffer{}; // room for any value of each field (-Wformat-truncation)
    (void)std::snprintf(buffer.data(), buffer.size(), "%04d-%02u-%02uT%02ld:%02ld:%02lld.%09ldZ",
                        static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                        static_cast<unsigned>(date.day()), static_cast<long>(time.hours().count()),
                        static_cast<long>(time.minutes().count()),
                        static_cast<long long>(time.seconds().count()), now.tv_nsec);
    return buffer.data();
}

std::string json_line(Level level, std::string_view message, std::string_view time) {
    nlohmann::json line = {{"level", level_name(level)}, {"msg", message}, {"time", time}};
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string text_line(Level level, std::string_view message, std::string_view time) {
    // The message quoted as JSON quotes a string, which is how logrus (runc's logger)
    // quotes it too, near enough for every reader of such lines.
    std::string quoted_message =
        nlohmann::json(message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return cat("time=\"", time, "\" level=", level_name(level), " msg=", quoted_message);
}

void write(Level level, std::string_view message) {
    Sink& s = sink();
    if (!enabled(level)) {
        return;
    }
    // podman reads a failed call's log file as one JSON object: warnings would break that,
    // so only errors (and debug output, when asked for) go to the file.
    if (s.file && (level == Level::error || level == Level::debug)) {
        std::string line = s.options.format == Format::json
                               ? json_line(level, message, rfc3339_now())
                               : text_line(level, message, rfc3339_now());
        line.push_back('\n');
        write_all(s.file.get(), line);
        // With a log file, only errors also reach stderr: a caller that reads stderr
        // (conmon falls back to it) still sees why we failed.
        if (level != Level::error) {
            return;
        }
    }
    // Errors and warnings are one plain line each; --debug output is in runc's text format
    // (time="..." level=debug msg="..."), which tools that read runc's debug output parse.
    if (s.stderr_lines == Sink::Stderr::dropped) {
        return; // nothing to format
    }
    to_stderr(s, level == Level::error || level == Level::warning
                     ? cat("mini-run: ", level == Level::warning ? "warning: " : "", message)
                     : text_line(level, message, rfc3339_now()));
}

} // namespace minirun::log
