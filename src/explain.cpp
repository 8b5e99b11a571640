#include "minirun/explain.hpp"

#include "fs.hpp"
#include "minirun/error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <new>
#include <utility>

namespace minirun::explain {
namespace {

struct Shared {
    std::atomic<unsigned> counter{0};
    // --explain=step: who talks to the terminal, the init's host pid, and whether one of
    // the two has been stopped (the other then stops at its next pause).
    pthread_mutex_t terminal_lock{};
    std::atomic<pid_t> init_pid{0};
    std::atomic<bool> stopped{false};
    // The step where the learner stopped, for whichever process reports it.
    std::array<char, 256> stopped_at{};
};

// What stepping needs, set before the clone, so the init has its own copy.
struct Stepping {
    bool on = false;
    int tty = -1; // /dev/tty, O_CLOEXEC: the container's process never gets it
    std::chrono::milliseconds delay{0};
    bool pause_after_created = false;
    bool created = false; // this process has reported the container created
    std::string id;
    std::string root;
};
Stepping stepping_state; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// The counter lives in a shared anonymous page: clone() without CLONE_VM copies ordinary
// memory, but a MAP_SHARED mapping stays one page for the runtime and its init.
Shared* shared = nullptr;   // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
unsigned local_counter = 0; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
pid_t enabling_pid = 0;     // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

unsigned next_number() {
    if (shared != nullptr) {
        return shared->counter.fetch_add(1, std::memory_order_relaxed) + 1;
    }
    return ++local_counter;
}

// Best effort: a line that cannot be written is lost, nothing more.
void write_all(std::string_view text, int fd = STDERR_FILENO) {
    (void)fs::write_all(fd, text, "explain");
}

template <size_t N>
std::string flag_names(unsigned long flags,
                       const std::array<std::pair<unsigned long, const char*>, N>& names) {
    if (flags == 0) {
        return "0";
    }
    std::string out;
    for (const auto& [bit, name] : names) {
        if ((flags & bit) == bit) {
            out += out.empty() ? "" : "|";
            out += name;
            flags &= ~bit;
        }
    }
    if (flags != 0) {
        out += out.empty() ? "" : "|";
        std::array<char, 24> hex{};
        int length = std::snprintf(hex.data(), hex.size(), "%#lx", flags);
        out.append(hex.data(), static_cast<size_t>(length));
    }
    return out;
}

} // namespace

void enable() {
    detail::on = true;
    enabling_pid = ::getpid();
    if (shared == nullptr) {
        void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page != MAP_FAILED) {
            shared = new (page) Shared(); // a fresh page is all zeros; this makes it official
            // Robust: if the init dies holding it (killed mid-pause), the runtime gets
            // EOWNERDEAD instead of waiting forever.
            pthread_mutexattr_t attributes{};
            pthread_mutexattr_init(&attributes);
            pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
            pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
            pthread_mutex_init(&shared->terminal_lock, &attributes);
            pthread_mutexattr_destroy(&attributes);
        }
    }
}

Status enable_stepping(const SteppingOptions& options) {
    // O_NOCTTY: a mini-run without a controlling terminal must not acquire this one.
    int tty = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (tty < 0 && options.delay.count() == 0) {
        return Error::from_errno(cat("--explain=step waits for Enter on a terminal, and there is "
                                     "none (add --step-delay SECONDS to go on by itself): ",
                                     "open /dev/tty"));
    }
    enable();
    if (shared == nullptr) {
        if (tty >= 0) {
            ::close(tty);
        }
        return Error(ENOMEM, "--explain=step: no shared page for the step lock");
    }
    stepping_state.on = true;
    stepping_state.tty = tty;
    stepping_state.delay = options.delay;
    stepping_state.pause_after_created = options.pause_after_created;
    return {};
}

bool stepping() noexcept {
    return stepping_state.on;
}

void describe_container(std::string_view id, std::string_view root) {
    stepping_state.id = std::string(id);
    stepping_state.root = std::string(root);
}

void set_init_pid(pid_t pid) {
    if (shared != nullptr) {
        shared->init_pid.store(pid);
    }
}

void created_reported(bool runtime_still_waits) {
    stepping_state.created = !runtime_still_waits;
}

int stepping_fd() noexcept {
    return stepping_state.on ? stepping_state.tty : -1;
}

std::string format_card(const StepCard& card, std::string_view id, std::string_view root,
                        pid_t pid) {
    std::string state_dir = cat(root, "/", id);
    std::string pid_text = pid > 0 ? std::to_string(pid) : std::string("<pid>");
    auto fill = [&](std::string_view text) {
        std::string out;
        while (!text.empty()) {
            size_t open = text.find('{');
            size_t close = open == std::string_view::npos ? open : text.find('}', open);
            if (close == std::string_view::npos) {
                out += text;
                break;
            }
            out += text.substr(0, open);
            std::string_view key = text.substr(open + 1, close - open - 1);
            if (key == "pid") {
                out += pid_text;
            } else if (key == "id") {
                out += id;
            } else if (key == "root") {
                out += root;
            } else if (key == "state") {
                out += state_dir;
            } else {
                out += text.substr(open, close - open + 1);
            }
            text.remove_prefix(close + 1);
        }
        return out;
    };
    std::string out =
        cat("\n--- step ", card.number, "/", card.total, " (", card.who, "): ", card.name, "\n");
    auto line = [&](std::string_view label, std::string_view text) {
        if (!text.empty()) {
            out += cat("    ", label, fill(text), "\n");
        }
    };
    line("why:      ", card.why);
    line("calls:    ", card.calls);
    line("isolates: ", card.isolates);
    line("look:     ", card.look);
    return out;
}

namespace {

std::string stopped_message(const StepCard& card) {
    return cat("stopped before ", card.who, " step ", card.number, " \"", card.name,
               "\" (--explain=step)");
}

// The other process stopped: its step is the one to name, not ours.
Error stopped_elsewhere() {
    return Error(ECANCELED, std::string(shared->stopped_at.data()));
}

// Held while one process prints its card and waits; a dead holder's lock is taken over.
class TerminalLock {
public:
    TerminalLock() {
        if (::pthread_mutex_lock(&shared->terminal_lock) == EOWNERDEAD) {
            ::pthread_mutex_consistent(&shared->terminal_lock);
        }
    }
    ~TerminalLock() { ::pthread_mutex_unlock(&shared->terminal_lock); }
    TerminalLock(const TerminalLock&) = delete;
    TerminalLock& operator=(const TerminalLock&) = delete;
};

// Raw mode for the wait only: a key at a time, no echo, and Ctrl-C a key instead of a
// SIGINT to the whole process group (which in `create` would kill mini-run half-way).
class RawTerminal {
public:
    explicit RawTerminal(int fd) : fd_(fd) {
        if (::tcgetattr(fd_, &saved_) != 0) {
            fd_ = -1;
            return;
        }
        termios raw = saved_;
        raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        ::tcsetattr(fd_, TCSANOW, &raw);
    }
    ~RawTerminal() {
        if (fd_ >= 0) {
            ::tcsetattr(fd_, TCSANOW, &saved_);
        }
    }
    RawTerminal(const RawTerminal&) = delete;
    RawTerminal& operator=(const RawTerminal&) = delete;

private:
    int fd_;
    termios saved_{};
};

enum class Key : uint8_t { go, stop };

// Enter goes on; Ctrl-C, Ctrl-D and q stop; the delay (if any) goes on by itself.
Key wait_for_key(int tty, std::chrono::milliseconds delay) {
    const auto deadline = std::chrono::steady_clock::now() + delay;
    for (;;) {
        int timeout = -1;
        if (delay.count() > 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return Key::go;
            }
            timeout = static_cast<int>(left.count());
        }
        pollfd entry{tty, POLLIN, 0};
        int ready = ::poll(&entry, 1, timeout);
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            return ready == 0 ? Key::go : Key::stop;
        }
        char key = 0;
        ssize_t got = ::read(tty, &key, 1);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0 || key == 3 || key == 4 || key == 'q') {
            return Key::stop;
        }
        if (key == '\n' || key == '\r') {
            return Key::go;
        }
    }
}

void sleep_for(std::chrono::milliseconds delay) {
    timespec left{static_cast<time_t>(delay.count() / 1000),
                  static_cast<long>(delay.count() % 1000) * 1000000L};
    while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

} // namespace

Status pause(const StepCard& card) {
    Stepping& s = stepping_state;
    if (!s.on || shared == nullptr || (s.created && !s.pause_after_created)) {
        return {};
    }
    if (shared->stopped.load()) {
        return stopped_elsewhere();
    }
    // The init's first cards name its pid, which the runtime stores right after the clone.
    pid_t pid = shared->init_pid.load();
    for (int tries = 0; pid == 0 && card.who == "init" && tries < 1000; ++tries) {
        sleep_for(std::chrono::milliseconds(1));
        pid = shared->init_pid.load();
    }
    TerminalLock lock;
    if (shared->stopped.load()) {
        return stopped_elsewhere();
    }
    std::string text = format_card(card, s.id, s.root, pid);
    if (s.tty < 0) {
        write_all(text);
        sleep_for(s.delay);
        return {};
    }
    text += s.delay.count() > 0 ? cat("    [Enter: go on now, or wait ", s.delay.count(),
                                      " ms; Ctrl-C: stop and clean up]\n")
                                : std::string("    [Enter: go on; Ctrl-C: stop and clean up]\n");
    // Raw before the card shows: a key pressed as soon as it appears must not reach the
    // terminal's line discipline as a SIGINT.
    RawTerminal raw(s.tty);
    write_all(text, s.tty);
    if (wait_for_key(s.tty, s.delay) == Key::stop) {
        std::string message = stopped_message(card);
        message.resize(std::min(message.size(), shared->stopped_at.size() - 1));
        std::copy(message.begin(), message.end(), shared->stopped_at.begin());
        shared->stopped.store(true);
        write_all("    stopping: mini-run removes what it has made\n", s.tty);
        return Error(ECANCELED, message);
    }
    return {};
}

bool is_stepping_stopped(const Error& error) {
    return error.errno_value() == ECANCELED &&
           error.message().find("(--explain=step)") != std::string::npos;
}

std::string format_line(unsigned number, std::string_view who, std::string_view what) {
    return cat("[explain] ", number, ". ", who, ": ", what, "\n");
}

void step(std::string_view what) {
    if (!enabled()) {
        return;
    }
    // The init is a clone: another pid (1 in a new pid namespace).
    std::string_view who = ::getpid() == enabling_pid ? "runtime" : "init";
    write_all(format_line(next_number(), who, what));
}

std::string clone_flag_names(unsigned long flags) {
    static constexpr std::array<std::pair<unsigned long, const char*>, 8> kNames = {{
        {CLONE_NEWNS, "CLONE_NEWNS"},
        {CLONE_NEWUTS, "CLONE_NEWUTS"},
        {CLONE_NEWIPC, "CLONE_NEWIPC"},
        {CLONE_NEWPID, "CLONE_NEWPID"},
        {CLONE_NEWNET, "CLONE_NEWNET"},
        {CLONE_NEWUSER, "CLONE_NEWUSER"},
        {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
        {CLONE_NEWTIME, "CLONE_NEWTIME"},
    }};
    return flag_names(flags, kNames);
}

std::string mount_flag_names(unsigned long flags) {
    static constexpr std::array<std::pair<unsigned long, const char*>, 21> kNames = {{
        {MS_RDONLY, "MS_RDONLY"},
        {MS_NOSUID, "MS_NOSUID"},
        {MS_NODEV, "MS_NODEV"},
        {MS_NOEXEC, "MS_NOEXEC"},
        {MS_SYNCHRONOUS, "MS_SYNCHRONOUS"},
        {MS_REMOUNT, "MS_REMOUNT"},
        {MS_MANDLOCK, "MS_MANDLOCK"},
        {MS_DIRSYNC, "MS_DIRSYNC"},
        {MS_NOATIME, "MS_NOATIME"},
        {MS_NODIRATIME, "MS_NODIRATIME"},
        {MS_BIND, "MS_BIND"},
        {MS_MOVE, "MS_MOVE"},
        {MS_REC, "MS_REC"},
        {MS_SILENT, "MS_SILENT"},
        {MS_UNBINDABLE, "MS_UNBINDABLE"},
        {MS_PRIVATE, "MS_PRIVATE"},
        {MS_SLAVE, "MS_SLAVE"},
        {MS_SHARED, "MS_SHARED"},
        {MS_RELATIME, "MS_RELATIME"},
        {MS_STRICTATIME, "MS_STRICTATIME"},
        {MS_LAZYTIME, "MS_LAZYTIME"},
    }};
    return flag_names(flags, kNames);
}

} // namespace minirun::explain
