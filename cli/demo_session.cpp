// The machinery of `mini-run demo`: signals, output, child processes, temporary bundles
// and their cleanup. The demos themselves are in demo.cpp.
#include "demo.hpp"

#include "minirun/runtime.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace minirun::cli::demo {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kMarker = "mini-run-demo-";

sigset_t demo_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    return set;
}

void set_nonblocking_cloexec(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

void close_fd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

int exit_code_of(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return -1;
}

bool has_line_starting_with(std::string_view text, std::string_view marker) {
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            return false; // only complete lines count
        }
        if (text.substr(start, end - start).starts_with(marker)) {
            return true;
        }
        start = end + 1;
    }
    return false;
}

std::string self_exe() {
    std::array<char, 4096> buffer{};
    ssize_t length = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
    return length > 0 ? std::string(buffer.data(), static_cast<size_t>(length)) : std::string();
}

bool is_source_dir(const std::string& dir) {
    struct stat info {};
    return !dir.empty() &&
           ::stat((dir + "/rootfs-examples/busybox/config.json").c_str(), &info) == 0 &&
           ::stat((dir + "/scripts/make-rootfs.sh").c_str(), &info) == 0;
}

// $MINIRUN_SOURCE_DIR, a directory above the binary (build/ inside the source tree), or
// the source directory this binary was built from.
Result<std::string> find_source_dir() {
    std::vector<std::string> tried;
    if (const char* env = std::getenv("MINIRUN_SOURCE_DIR"); env != nullptr && *env != '\0') {
        if (is_source_dir(env)) {
            return std::string(env);
        }
        return Error(cat("MINIRUN_SOURCE_DIR=", env,
                         " has no rootfs-examples/busybox/"
                         "config.json and scripts/make-rootfs.sh"));
    }
    std::string dir = self_exe();
    while (!dir.empty()) {
        dir = dir.substr(0, dir.rfind('/'));
        if (is_source_dir(dir)) {
            return dir;
        }
        tried.push_back(dir.empty() ? "/" : dir);
    }
#ifdef MINIRUN_SOURCE_DIR
    if (is_source_dir(MINIRUN_SOURCE_DIR)) {
        return std::string(MINIRUN_SOURCE_DIR);
    }
    tried.emplace_back(MINIRUN_SOURCE_DIR);
#endif
    std::string list;
    for (const auto& path : tried) {
        list += (list.empty() ? "" : ", ") + path;
    }
    return Error(cat("cannot find the example bundle rootfs-examples/busybox (looked in ", list,
                     "); set MINIRUN_SOURCE_DIR to mini-run's source directory"));
}

int remove_entry(const char* path, const struct stat* /*info*/, int type, FTW* /*ftw*/) {
    if (type == FTW_DP) {
        ::rmdir(path);
    } else {
        ::unlink(path);
    }
    return 0;
}

} // namespace

Error interrupted() {
    return Error(EINTR, "interrupted");
}

bool is_interrupted(const Error& error) {
    return error.errno_value() == EINTR;
}

// ---------------------------------------------------------------------------------------
// Signals

Status Signals::open() {
    sigset_t set = demo_signals();
    ::sigprocmask(SIG_BLOCK, &set, &original_);
    fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd_ < 0) {
        ::sigprocmask(SIG_SETMASK, &original_, nullptr);
        return Error(cat("signalfd: ", std::strerror(errno)));
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &original_pipe_);
    return {};
}

Signals::~Signals() {
    if (fd_ < 0) {
        return; // never opened
    }
    ::close(fd_);
    ::sigaction(SIGPIPE, &original_pipe_, nullptr);
    // Signals that arrived during the cleanup are dropped: the demo has handled them.
    sigset_t set = demo_signals();
    timespec zero{};
    while (::sigtimedwait(&set, nullptr, &zero) > 0) {
    }
    ::sigprocmask(SIG_SETMASK, &original_, nullptr);
}

Status Signals::check() const {
    signalfd_siginfo info{};
    if (::read(fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        return interrupted();
    }
    return {};
}

void Signals::restore_in_child() const {
    ::sigaction(SIGPIPE, &original_pipe_, nullptr);
    ::sigprocmask(SIG_SETMASK, &original_, nullptr);
}

// ---------------------------------------------------------------------------------------
// Output

Output::Output() {
    const char* no_colour = std::getenv("NO_COLOR");
    colour_ = ::isatty(STDOUT_FILENO) == 1 && (no_colour == nullptr || *no_colour == '\0');
}

std::string Output::paint(std::string_view code, std::string_view text) const {
    if (!colour_) {
        return std::string(text);
    }
    return cat("\033[", code, "m", text, "\033[0m");
}

void Output::heading(std::string_view title) const {
    std::cout << "\n" << paint("1;34", cat("== ", title, " ==")) << "\n" << std::flush;
}

void Output::text(std::string_view paragraph) const {
    for (const auto& line : lines_of(paragraph)) {
        std::cout << "  " << line << "\n";
    }
    std::cout << std::flush;
}

void Output::field(std::string_view label, std::string_view value) const {
    std::string padded(label);
    padded.resize(std::max<size_t>(padded.size(), 9), ' ');
    std::cout << "  " << paint("1", padded) << " " << value << "\n" << std::flush;
}

void Output::inside(std::string_view what, std::string_view value) const {
    std::cout << "  " << paint("36", "inside") << "  " << what << ": " << value << "\n"
              << std::flush;
}

void Output::host(std::string_view what, std::string_view value) const {
    std::cout << "  " << paint("33", "host  ") << "  " << what << ": " << value << "\n"
              << std::flush;
}

void Output::command(std::string_view line) const {
    std::cout << "  " << paint("33", "host  ") << "  $ " << line << "\n" << std::flush;
}

void Output::ns_compare(std::string_view name, std::string_view inside,
                        std::string_view host) const {
    bool differs = inside != host;
    std::cout << "  /proc/self/ns/" << name << "  " << paint("36", "inside") << " " << inside
              << "  " << paint("33", "host") << " " << host << "  "
              << paint(differs ? "32" : "31", differs ? "(different)" : "(the same)") << "\n"
              << std::flush;
}

void Output::good(std::string_view fact) const {
    std::cout << "  " << paint("32", "ok") << "      " << fact << "\n" << std::flush;
}

void Output::bad(std::string_view fact) const {
    std::cout << "  " << paint("1;31", "UNEXPECTED") << " " << fact << "\n" << std::flush;
}

void Output::note(std::string_view text) const {
    std::cout << "  " << paint("2", text) << "\n" << std::flush;
}

// ---------------------------------------------------------------------------------------
// Process

Status Process::start(const std::vector<std::string>& argv) {
    std::array<int, 2> in{};
    std::array<int, 2> out{};
    std::array<int, 2> err{};
    if (::pipe2(in.data(), O_CLOEXEC) < 0 || ::pipe2(out.data(), O_CLOEXEC) < 0 ||
        ::pipe2(err.data(), O_CLOEXEC) < 0) {
        return Error(cat("pipe: ", std::strerror(errno)));
    }
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str())); // NOLINT(*-const-cast)
    }
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) {
        return Error(cat("fork: ", std::strerror(errno)));
    }
    if (pid_ == 0) {
        // A process group of its own: a terminal's Ctrl-C goes to the demo only, which
        // then stops what it started in order.
        ::setpgid(0, 0);
        signals_->restore_in_child();
        ::dup2(in[0], STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        ::execv(args[0], args.data());
        std::string message = cat("exec ", argv[0], ": ", std::strerror(errno), "\n");
        (void)!::write(STDERR_FILENO, message.data(), message.size());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = in[1];
    out_fd_ = out[0];
    err_fd_ = err[0];
    set_nonblocking_cloexec(out_fd_);
    set_nonblocking_cloexec(err_fd_);
    return {};
}

Process::~Process() {
    kill_and_reap();
}

void Process::kill_and_reap() {
    close_fd(in_);
    close_fd(out_fd_);
    close_fd(err_fd_);
    if (pid_ > 0 && !exited_) {
        ::kill(pid_, SIGKILL);
        reap(true);
    }
}

void Process::reap(bool block) {
    if (exited_ || pid_ <= 0) {
        return;
    }
    int status = 0;
    pid_t got = 0;
    do {
        got = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
    } while (got < 0 && errno == EINTR);
    if (got == pid_) {
        exited_ = true;
        status_ = status;
    }
}

Status Process::send(std::string_view text) const {
    while (!text.empty() && in_ >= 0) {
        ssize_t written = ::write(in_, text.data(), text.size());
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written < 0) {
            return Error(cat("write to the container's stdin: ", std::strerror(errno)));
        }
        text.remove_prefix(static_cast<size_t>(written));
    }
    return {};
}

Status Process::pump(int timeout_ms) {
    std::array<pollfd, 3> fds{
        {{signals_->fd(), POLLIN, 0}, {out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}}};
    int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
        return Error(cat("poll: ", std::strerror(errno)));
    }
    MR_TRY(signals_->check());
    std::array<char, 4096> buffer{};
    for (auto [fd, text] : {std::pair<int*, std::string*>{&out_fd_, &out_},
                            std::pair<int*, std::string*>{&err_fd_, &err_}}) {
        while (*fd >= 0) {
            ssize_t got = ::read(*fd, buffer.data(), buffer.size());
            if (got > 0) {
                text->append(buffer.data(), static_cast<size_t>(got));
                continue;
            }
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
                break;
            }
            close_fd(*fd); // end of file
        }
    }
    reap(false);
    return {};
}

Status Process::wait_for(std::string_view marker, Seconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (!has_line_starting_with(out_, marker)) {
        if (exited_ || (out_fd_ < 0 && err_fd_ < 0)) {
            return Error(cat("the container ended before it printed ", marker, " (exit code ",
                             exit_code_of(status_), "): ", trim(err_)));
        }
        if (Clock::now() > deadline) {
            return Error(
                cat("timed out waiting for the container to print ", marker, ": ", trim(err_)));
        }
        MR_TRY(pump(100));
    }
    return {};
}

Result<int> Process::wait(Seconds timeout) {
    close_fd(in_);
    auto deadline = Clock::now() + timeout;
    while (!exited_) {
        if (Clock::now() > deadline) {
            kill_and_reap();
            return Error(cat("timed out waiting for ", pid_, " to exit"));
        }
        MR_TRY(pump(100));
    }
    MR_TRY(pump(0)); // what is left in the pipes
    return exit_code_of(status_);
}

Result<CommandResult> run_command(const std::vector<std::string>& argv, const Signals& signals) {
    Process process(signals);
    MR_TRY(process.start(argv));
    CommandResult result;
    MR_ASSIGN(result.exit_code, process.wait());
    result.out = process.out();
    result.err = process.err();
    return result;
}

// ---------------------------------------------------------------------------------------
// Context and session

Status prepare_context(Context& context) {
    MR_ASSIGN(context.source_dir, find_source_dir());
    context.self = self_exe();
    const std::string bundle = context.source_dir + "/rootfs-examples/busybox";
    context.rootfs = bundle + "/rootfs";
    struct stat info {};
    if (::stat((context.rootfs + "/bin/busybox").c_str(), &info) != 0) {
        context.out.note(
            cat("building the example rootfs: ", context.source_dir, "/scripts/make-rootfs.sh"));
        MR_ASSIGN(CommandResult built,
                  run_command({"/bin/sh", context.source_dir + "/scripts/make-rootfs.sh"},
                              *context.signals));
        if (built.exit_code != 0) {
            return Error(cat("scripts/make-rootfs.sh failed: ", trim(built.err)));
        }
    }
    std::ifstream file(bundle + "/config.json");
    try {
        context.base_config = nlohmann::json::parse(file);
    } catch (const nlohmann::json::exception& e) {
        return Error(cat(bundle, "/config.json: ", e.what()));
    }
    return {};
}

Status pause_here(const Context& context, std::string_view hint) {
    if (!context.step) {
        return {};
    }
    context.out.note(cat("[paused] ", hint));
    context.out.note("[paused] press Enter to go on");
    for (;;) {
        std::array<pollfd, 2> fds{{{context.signals->fd(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}}};
        if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) {
            return {};
        }
        MR_TRY(context.signals->check());
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) != 0) {
            std::array<char, 256> buffer{};
            ssize_t got = ::read(STDIN_FILENO, buffer.data(), buffer.size());
            if (got <= 0 || std::memchr(buffer.data(), '\n', static_cast<size_t>(got)) != nullptr) {
                return {};
            }
        }
    }
}

Session::Session(Context& context, std::string_view name) : context_(&context) {
    id_ = cat(kMarker, name, "-", ::getpid());
    config = context.base_config;
    config["root"]["path"] = context.rootfs;
    set_namespaces({});
}

Status Session::open() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = cat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/mini-run-demo.XXXXXX");
    if (::mkdtemp(templ.data()) == nullptr) {
        return Error(cat("mkdtemp ", templ, ": ", std::strerror(errno)));
    }
    dir_ = templ;
    // The container's root in a user namespace must reach a bind mount's source here.
    ::chmod(dir_.c_str(), 0755);
    ::mkdir(bundle().c_str(), 0755);
    return {};
}

Session::~Session() {
    cleanup();
}

void Session::set_namespaces(const std::vector<std::string>& types) {
    nlohmann::json list = nlohmann::json::array({{{"type", "mount"}}});
    auto has = [&](std::string_view type) {
        return std::find(types.begin(), types.end(), type) != types.end();
    };
    for (const auto& type : types) {
        if (type != "mount") {
            list.push_back({{"type", type}});
        }
    }
    config["linux"]["namespaces"] = list;
    if (has("uts")) {
        config["hostname"] = "mini-run-demo";
    } else {
        config.erase("hostname");
    }
    // An mqueue mount outside an ipc namespace of its own would show the host's queues.
    nlohmann::json mounts = nlohmann::json::array();
    for (const auto& mount : context_->base_config["mounts"]) {
        if (mount.value("type", "") != "mqueue" || has("ipc")) {
            mounts.push_back(mount);
        }
    }
    config["mounts"] = mounts;
}

void Session::add_capabilities(const std::vector<std::string>& caps) {
    for (const char* set : {"bounding", "effective", "permitted"}) {
        auto& list = config["process"]["capabilities"][set];
        for (const auto& cap : caps) {
            list.push_back(cap);
        }
    }
}

void Session::set_script(const std::string& script) {
    config["process"]["args"] = {"sh", "-c", script, id_};
}

Status Session::start(std::string_view marker) {
    std::ofstream(bundle() + "/config.json") << config.dump(4) << "\n";
    auto run = std::make_unique<Process>(*context_->signals);
    MR_TRY(run->start({context_->self, "--root", root(), "run", "--bundle", bundle(), id_}));
    run_ = std::move(run);
    if (!marker.empty()) {
        MR_TRY(run_->wait_for(marker));
    }
    return {};
}

Result<pid_t> Session::init_pid() const {
    auto state = container_state(root(), id_);
    if (!state) {
        return Error(cat("mini-run state ", id_, ": ", state.error().message()));
    }
    auto pid = nlohmann::json::parse(*state).value("pid", 0);
    if (pid <= 0) {
        return Error(cat("mini-run state ", id_, ": no pid"));
    }
    return pid;
}

Status Session::resume(std::string_view marker) {
    MR_TRY(run_->send("go\n"));
    if (!marker.empty()) {
        MR_TRY(run_->wait_for(marker));
    }
    return {};
}

Status Session::finish() {
    MR_ASSIGN(int code, run_->wait());
    if (code != 0) {
        return Error(cat("the container exited with ", code, ": ", trim(run_->err())));
    }
    return {};
}

void Session::on_cleanup(std::string what, std::function<Status()> action) {
    cleanups_.emplace_back(std::move(what), std::move(action));
}

std::string Session::value(std::string_view key) const {
    std::string prefix = cat("@", key, " ");
    for (const auto& line : lines_of(run_ ? run_->out() : "")) {
        if (line.starts_with(prefix)) {
            return line.substr(prefix.size());
        }
    }
    return {};
}

std::vector<std::string> Session::block(std::string_view key) const {
    std::vector<std::string> out;
    bool in_block = false;
    for (const auto& line : lines_of(run_ ? run_->out() : "")) {
        if (in_block && line == "@end") {
            break;
        }
        if (in_block) {
            out.push_back(line);
        }
        in_block = in_block || line == cat("@", key);
    }
    return out;
}

void Session::cleanup() noexcept {
    if (dir_.empty()) {
        return; // never opened: nothing was made
    }
    try {
        std::vector<std::string> done;
        if (run_ && !run_->exited()) {
            // The container first (every process in it), then `run` itself, which deletes
            // the container once its process is gone.
            (void)kill_container(root(), id_, SIGKILL, true);
            if (!run_->wait(Seconds(10))) {
                run_->kill_and_reap();
            }
            done.emplace_back("stopped the container");
        }
        run_.reset();
        if (auto state = container_state(root(), id_); state) {
            (void)delete_container(root(), id_, true);
            done.emplace_back("deleted its state");
        }
        std::reverse(cleanups_.begin(), cleanups_.end()); // newest first
        for (auto& [what, action] : cleanups_) {
            if (Status status = action(); status) {
                done.push_back(what);
            } else {
                context_->out.bad(cat("cleanup: ", what, ": ", status.error().message()));
            }
        }
        remove_tree(dir_);
        done.push_back(cat("removed ", dir_));
        std::string list;
        for (const auto& item : done) {
            list += (list.empty() ? "" : "; ") + item;
        }
        context_->out.note(cat("cleanup: ", list));
    } catch (...) {
        // A destructor must not throw (std::bad_alloc, say); what was left is reported
        // above where possible.
    }
}

// ---------------------------------------------------------------------------------------
// Helpers

std::string host_ns(std::string_view name) {
    std::array<char, 256> buffer{};
    std::string path = cat("/proc/self/ns/", name);
    ssize_t length = ::readlink(path.c_str(), buffer.data(), buffer.size() - 1);
    return length > 0 ? std::string(buffer.data(), static_cast<size_t>(length)) : "(none)";
}

std::string read_text(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> lines;
    while (!text.empty()) {
        size_t end = text.find('\n');
        lines.emplace_back(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    return lines;
}

std::string trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
        text.remove_suffix(1);
    }
    return std::string(text);
}

std::string shell_quote(std::string_view text) {
    std::string out = "'";
    for (char c : text) {
        out += c == '\'' ? std::string(R"('\'')") : std::string(1, c);
    }
    return out + "'";
}

void remove_tree(const std::string& path) {
    if (!path.empty()) {
        ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    }
}

} // namespace minirun::cli::demo
