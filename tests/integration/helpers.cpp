#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace it {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail_errno(const std::string& what) {
    throw std::runtime_error(what + ": " + std::strerror(errno));
}

int remaining_ms(Clock::time_point deadline, int cap_ms) {
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, cap_ms));
}

std::vector<pid_t> all_pids() {
    std::vector<pid_t> pids;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) {
        return pids;
    }
    while (const dirent* entry = readdir(proc)) {
        char* end = nullptr;
        long pid = std::strtol(entry->d_name, &end, 10);
        if (end != entry->d_name && *end == '\0' && pid > 0) {
            pids.push_back(static_cast<pid_t>(pid));
        }
    }
    closedir(proc);
    return pids;
}

// The parent pid from /proc/<pid>/stat (the field after the state, after the last ')').
std::optional<pid_t> parent_of(pid_t pid) {
    auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) {
        return std::nullopt;
    }
    auto close = stat->rfind(')');
    if (close == std::string::npos) {
        return std::nullopt;
    }
    std::istringstream fields(stat->substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    if (!(fields >> state >> ppid)) {
        return std::nullopt;
    }
    return ppid;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_octal(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 3 < text.size() &&
            std::isdigit(static_cast<unsigned char>(text[i + 1])) != 0) {
            out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 3)), nullptr, 8));
            i += 3;
        } else {
            out += text[i];
        }
    }
    return out;
}

bool path_is_under(std::string_view path, std::string_view dir) {
    return path == dir || (path.size() > dir.size() && path.substr(0, dir.size()) == dir &&
                           path[dir.size()] == '/');
}

int unlink_entry(const char* path, const struct stat* /*sb*/, int type, struct FTW* /*ftw*/) {
    if (type == FTW_DP || type == FTW_D) {
        ::rmdir(path);
    } else {
        ::unlink(path);
    }
    return 0; // keep going; leftovers are reported by the tests, not here
}

// True when `text` contains `marker` not followed by a digit: "it-x-1-1" must not match
// the command line of container "it-x-1-12".
bool mentions_marker(std::string_view text, std::string_view marker) {
    for (size_t at = text.find(marker); at != std::string_view::npos;
         at = text.find(marker, at + 1)) {
        size_t end = at + marker.size();
        if (end == text.size() || std::isdigit(static_cast<unsigned char>(text[end])) == 0) {
            return true;
        }
    }
    return false;
}

int unique_counter() {
    static int counter = 0;
    return ++counter;
}

// The pids of Child objects not reaped yet: reap_orphans() leaves them to their Child.
std::set<pid_t>& live_children() {
    static std::set<pid_t> pids;
    return pids;
}

} // namespace

// ---------------------------------------------------------------------------------------
// Paths

std::string minirun_binary() {
    if (const char* override_path = std::getenv("MINIRUN_IT_BINARY");
        override_path != nullptr && *override_path != '\0') {
        return override_path;
    }
    return MINIRUN_BINARY;
}

std::string source_dir() {
    return MINIRUN_SOURCE_DIR;
}
std::string example_bundle() {
    return source_dir() + "/rootfs-examples/busybox";
}
std::string example_rootfs() {
    return example_bundle() + "/rootfs";
}

nlohmann::json example_config() {
    auto text = read_file(example_bundle() + "/config.json");
    if (!text) {
        throw std::runtime_error("cannot read " + example_bundle() + "/config.json");
    }
    return nlohmann::json::parse(*text);
}

// ---------------------------------------------------------------------------------------
// Running commands

std::string RunResult::describe() const {
    std::ostringstream text;
    text << "exit code: " << exit_code << (timed_out ? " (timed out, killed)" : "") << "\n"
         << "--- stdout ---\n"
         << out << (out.empty() || out.back() == '\n' ? "" : "\n") << "--- stderr ---\n"
         << err << (err.empty() || err.back() == '\n' ? "" : "\n") << "--------------";
    return text.str();
}

Child::Child(const std::vector<std::string>& argv) {
    if (argv.empty()) {
        throw std::invalid_argument("Child: empty argv");
    }
    std::array<int, 2> in{-1, -1};
    std::array<int, 2> out{-1, -1};
    std::array<int, 2> err{-1, -1};
    if (pipe2(in.data(), O_CLOEXEC) != 0 || pipe2(out.data(), O_CLOEXEC) != 0 ||
        pipe2(err.data(), O_CLOEXEC) != 0) {
        fail_errno("pipe2");
    }
    // Everything the child needs is prepared before fork: after it, only async-signal-safe
    // calls.
    std::vector<char*> c_argv;
    c_argv.reserve(argv.size() + 1);
    for (const auto& arg : argv) {
        c_argv.push_back(const_cast<char*>(arg.c_str()));
    }
    c_argv.push_back(nullptr);

    pid_ = fork();
    if (pid_ < 0) {
        fail_errno("fork");
    }
    if (pid_ == 0) {
        // The test process ignores SIGPIPE; ignored signals survive execve, so undo that.
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
            dup2(err[1], STDERR_FILENO) < 0) {
            _exit(126);
        }
        execv(c_argv[0], c_argv.data());
        static const char message[] = "it: execv failed\n";
        ssize_t ignored = ::write(STDERR_FILENO, message, sizeof(message) - 1);
        (void)ignored;
        _exit(127);
    }
    live_children().insert(pid_);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    stdin_fd_ = in[1];
    stdout_fd_ = out[0];
    stderr_fd_ = err[0];
    fcntl(stdin_fd_, F_SETFL, fcntl(stdin_fd_, F_GETFL) | O_NONBLOCK);
}

Child::~Child() {
    if (!status_ && pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
    }
    live_children().erase(pid_);
    close_fd(stdin_fd_);
    close_fd(stdout_fd_);
    close_fd(stderr_fd_);
}

void Child::close_fd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

void Child::write_stdin(std::string_view text) {
    pending_stdin_ += text;
    pump(0);
}

void Child::close_stdin() {
    close_stdin_when_flushed_ = true;
    pump(0);
}

void Child::signal(int signo) const {
    if (!status_) {
        ::kill(pid_, signo);
    }
}

void Child::reap_nonblocking() {
    if (status_) {
        return;
    }
    int status = 0;
    pid_t rc = waitpid(pid_, &status, WNOHANG);
    if (rc == pid_) {
        status_ = status;
        live_children().erase(pid_);
    }
}

void Child::pump(int timeout_ms) {
    if (stdin_fd_ >= 0 && pending_stdin_.empty() && close_stdin_when_flushed_) {
        close_fd(stdin_fd_);
    }
    std::array<pollfd, 3> fds{};
    nfds_t count = 0;
    int out_index = -1;
    int err_index = -1;
    int in_index = -1;
    if (stdout_fd_ >= 0) {
        out_index = static_cast<int>(count);
        fds[count++] = {stdout_fd_, POLLIN, 0};
    }
    if (stderr_fd_ >= 0) {
        err_index = static_cast<int>(count);
        fds[count++] = {stderr_fd_, POLLIN, 0};
    }
    if (stdin_fd_ >= 0 && !pending_stdin_.empty()) {
        in_index = static_cast<int>(count);
        fds[count++] = {stdin_fd_, POLLOUT, 0};
    }
    if (count == 0) {
        if (timeout_ms > 0) {
            std::this_thread::sleep_for(Millis(std::min(timeout_ms, 20)));
        }
        reap_nonblocking();
        return;
    }
    int ready = poll(fds.data(), count, timeout_ms);
    if (ready < 0 && errno != EINTR) {
        fail_errno("poll");
    }
    auto drain = [&](int index, int& fd, std::string& into) {
        if (index < 0 ||
            (fds[static_cast<size_t>(index)].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
            return;
        }
        std::array<char, 65536> buffer{};
        ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n > 0) {
            into.append(buffer.data(), static_cast<size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            close_fd(fd);
        }
    };
    if (ready > 0) {
        drain(out_index, stdout_fd_, out_);
        drain(err_index, stderr_fd_, err_);
        if (in_index >= 0 &&
            (fds[static_cast<size_t>(in_index)].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
            ssize_t n = ::write(stdin_fd_, pending_stdin_.data(), pending_stdin_.size());
            if (n > 0) {
                pending_stdin_.erase(0, static_cast<size_t>(n));
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                // EPIPE: the child does not read its stdin (any more); drop the rest.
                pending_stdin_.clear();
                close_fd(stdin_fd_);
            }
        }
    }
    if (stdin_fd_ >= 0 && pending_stdin_.empty() && close_stdin_when_flushed_) {
        close_fd(stdin_fd_);
    }
    reap_nonblocking();
}

bool Child::wait_for_output(std::string_view needle, Millis timeout) {
    auto deadline = Clock::now() + timeout;
    while (!contains(out_, needle)) {
        if (Clock::now() >= deadline) {
            return false;
        }
        if (status_ && stdout_fd_ < 0) {
            return false; // exited and nothing more to read
        }
        pump(remaining_ms(deadline, 50));
    }
    return true;
}

RunResult Child::wait(Millis timeout) {
    RunResult result;
    close_stdin_when_flushed_ = true;
    auto deadline = Clock::now() + timeout;
    std::optional<Clock::time_point> drain_deadline;
    while (true) {
        pump(remaining_ms(deadline, 50));
        if (status_) {
            // Read what is left; a descendant that survived could hold the pipes open, so
            // do not wait for end-of-file forever.
            if (!drain_deadline) {
                drain_deadline = Clock::now() + 2s;
            }
            if ((stdout_fd_ < 0 && stderr_fd_ < 0) || Clock::now() >= *drain_deadline) {
                break;
            }
            continue;
        }
        if (Clock::now() >= deadline) {
            result.timed_out = true;
            ::kill(pid_, SIGKILL);
            int status = 0;
            while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
            status_ = status;
            live_children().erase(pid_);
            drain_deadline = Clock::now() + 1s;
        }
    }
    close_fd(stdin_fd_);
    close_fd(stdout_fd_);
    close_fd(stderr_fd_);
    if (WIFEXITED(*status_)) {
        result.exit_code = WEXITSTATUS(*status_);
    } else if (WIFSIGNALED(*status_)) {
        result.exit_code = 128 + WTERMSIG(*status_);
    }
    result.out = out_;
    result.err = err_;
    return result;
}

RunResult run(const std::vector<std::string>& argv, std::string_view stdin_text, Millis timeout) {
    Child child(argv);
    child.write_stdin(stdin_text);
    return child.wait(timeout);
}

RunResult run_minirun(const std::vector<std::string>& args, std::string_view stdin_text,
                      Millis timeout) {
    std::vector<std::string> argv{minirun_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, stdin_text, timeout);
}

// ---------------------------------------------------------------------------------------
// Looking at the host

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        lines.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

std::vector<std::string> split_words(std::string_view text) {
    std::istringstream in{std::string(text)};
    std::vector<std::string> words;
    std::string word;
    while (in >> word) {
        words.push_back(word);
    }
    return words;
}

bool contains(std::string_view haystack, std::string_view needle) {
    return haystack.find(needle) != std::string_view::npos;
}

std::string ns_link(pid_t pid, std::string_view name) {
    std::string path = (pid == 0 ? std::string("/proc/self") : "/proc/" + std::to_string(pid)) +
                       "/ns/" + std::string(name);
    std::array<char, 256> target{};
    ssize_t n = readlink(path.c_str(), target.data(), target.size() - 1);
    if (n < 0) {
        return "<" + path + ": " + std::strerror(errno) + ">";
    }
    return std::string(target.data(), static_cast<size_t>(n));
}

std::vector<std::string> namespace_names() {
    std::vector<std::string> names;
    for (const char* name : {"cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts"}) {
        std::string path = std::string("/proc/self/ns/") + name;
        struct stat st {};
        if (lstat(path.c_str(), &st) == 0) {
            names.emplace_back(name);
        }
    }
    return names;
}

std::vector<MountInfo> parse_mountinfo(std::string_view text) {
    std::vector<MountInfo> mounts;
    for (const auto& line : split_lines(text)) {
        auto words = split_words(line);
        auto dash = std::find(words.begin(), words.end(), "-");
        if (words.size() < 7 || dash == words.end() || words.end() - dash < 3) {
            continue;
        }
        MountInfo info;
        info.id = std::stoi(words[0]);
        info.parent = std::stoi(words[1]);
        info.root = unescape_octal(words[3]);
        info.mount_point = unescape_octal(words[4]);
        info.fs_type = *(dash + 1);
        info.source = unescape_octal(*(dash + 2));
        info.line = line;
        mounts.push_back(std::move(info));
    }
    return mounts;
}

std::vector<MountInfo> host_mounts() {
    return parse_mountinfo(read_file("/proc/self/mountinfo").value_or(""));
}

std::vector<std::string> cgroup_hierarchies() {
    std::vector<std::string> out;
    for (const MountInfo& mount : host_mounts()) {
        if ((mount.fs_type == "cgroup" || mount.fs_type == "cgroup2") &&
            std::filesystem::path(mount.mount_point).parent_path() == "/sys/fs/cgroup") {
            out.push_back(mount.mount_point);
        }
    }
    return out;
}

std::string default_cgroup(std::string_view id) {
    return "/" + std::string(id);
}

std::vector<std::string> cgroup_dirs(const std::string& relative) {
    std::vector<std::string> out;
    for (const std::string& hierarchy : cgroup_hierarchies()) {
        std::error_code error;
        if (std::filesystem::is_directory(hierarchy + relative, error)) {
            out.push_back(hierarchy + relative);
        }
    }
    return out;
}

pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log) {
    int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0) {
        if (in >= 0) {
            ::close(in);
        }
        if (out >= 0) {
            ::close(out);
        }
        return -1;
    }
    std::vector<char*> c_argv;
    for (const auto& arg : argv) {
        c_argv.push_back(const_cast<char*>(arg.c_str()));
    }
    c_argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0 ||
            ::syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
            _exit(126);
        }
        ::execv(c_argv[0], c_argv.data());
        _exit(127);
    }
    ::close(in);
    ::close(out);
    return pid;
}

std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> children;
    for (pid_t candidate : all_pids()) {
        if (parent_of(candidate) == pid) {
            children.push_back(candidate);
        }
    }
    return children;
}

std::vector<std::string> status_field(pid_t pid, std::string_view name) {
    auto status = read_file("/proc/" + std::to_string(pid) + "/status");
    if (!status) {
        return {};
    }
    std::string prefix = std::string(name) + ":";
    for (const auto& line : split_lines(*status)) {
        if (line.rfind(prefix, 0) == 0) {
            return split_words(line.substr(prefix.size()));
        }
    }
    return {};
}

std::vector<pid_t> ns_pids(pid_t pid) {
    std::vector<pid_t> pids;
    for (const auto& word : status_field(pid, "NSpid")) {
        pids.push_back(static_cast<pid_t>(std::stol(word)));
    }
    return pids;
}

std::optional<pid_t> find_container_init(pid_t runtime_pid, Millis timeout) {
    auto deadline = Clock::now() + timeout;
    while (true) {
        std::vector<pid_t> queue{runtime_pid};
        for (size_t i = 0; i < queue.size(); ++i) {
            for (pid_t child : children_of(queue[i])) {
                auto nspids = ns_pids(child);
                if (nspids.size() >= 2 && nspids.back() == 1) {
                    return child;
                }
                queue.push_back(child);
            }
        }
        if (Clock::now() >= deadline) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(20ms);
    }
}

std::vector<pid_t> processes_with_marker(std::string_view marker) {
    std::vector<pid_t> found;
    const pid_t self = getpid();
    for (pid_t pid : all_pids()) {
        if (pid == self) {
            continue;
        }
        auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
        if (cmdline && mentions_marker(*cmdline, marker)) {
            found.push_back(pid);
        }
    }
    return found;
}

// ---------------------------------------------------------------------------------------
// Temporary files

TempDir::TempDir(std::string_view prefix) {
    std::string pattern = "/tmp/" + std::string(prefix) + ".XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
        fail_errno("mkdtemp " + pattern);
    }
    path_ = pattern;
    // Traversable by other users: a container in a user namespace runs as another uid.
    chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
    remove_tree(path_);
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

std::vector<MountInfo> host_mounts_under(const std::string& path) {
    std::vector<MountInfo> found;
    for (const auto& mount : host_mounts()) {
        if (mount.mount_point == path || mount.mount_point.rfind(path + "/", 0) == 0) {
            found.push_back(mount);
        }
    }
    return found;
}

SharedDir::SharedDir(std::string_view prefix) : dir_(prefix) {
    if (::mount(dir_.path().c_str(), dir_.path().c_str(), nullptr, MS_BIND, nullptr) != 0) {
        throw std::runtime_error("bind mount " + dir_.path() + " failed");
    }
    mounted_ = true;
    if (::mount(nullptr, dir_.path().c_str(), nullptr, MS_SHARED, nullptr) != 0) {
        throw std::runtime_error("make-shared " + dir_.path() + " failed");
    }
}

SharedDir::~SharedDir() {
    detach_below();
    if (mounted_) {
        ::umount2(dir_.path().c_str(), MNT_DETACH);
    }
}

void SharedDir::detach_below() const {
    auto below = host_mounts_under(path());
    std::sort(below.begin(), below.end(), [](const MountInfo& a, const MountInfo& b) {
        return a.mount_point.size() > b.mount_point.size();
    });
    for (const auto& mount : below) {
        if (mount.mount_point != path()) {
            ::umount2(mount.mount_point.c_str(), MNT_DETACH);
        }
    }
}

std::string SharedDir::line() const {
    for (const auto& mount : host_mounts()) {
        if (mount.mount_point == path()) {
            return mount.line;
        }
    }
    return "";
}

void remove_tree(const std::string& path) {
    // FTW_MOUNT: stay on this filesystem, so a mount left under the tree is never emptied.
    nftw(path.c_str(), unlink_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

TempBundle::TempBundle(std::string_view name) : dir_("minirun-it") {
    id_ = "it-" + std::string(name) + "-" + std::to_string(getpid()) + "-" +
          std::to_string(unique_counter());
    config = example_config();
    config["root"]["path"] = example_rootfs();
    for (const auto& mount : host_mounts()) {
        mounts_before_.push_back(mount.id);
    }
}

TempBundle::~TempBundle() {
    // Processes first: they may hold mounts.
    for (int round = 0; round < 50; ++round) {
        auto pids = processes_with_marker(id_);
        if (pids.empty()) {
            break;
        }
        for (pid_t pid : pids) {
            ::kill(pid, SIGKILL);
        }
        std::this_thread::sleep_for(20ms);
    }
    // Then mounts that appeared under the bundle (deepest first).
    std::vector<std::string> leaked;
    for (const auto& mount : host_mounts()) {
        bool is_new = std::find(mounts_before_.begin(), mounts_before_.end(), mount.id) ==
                      mounts_before_.end();
        if (is_new && path_is_under(mount.mount_point, dir())) {
            leaked.push_back(mount.mount_point);
        }
    }
    std::sort(leaked.begin(), leaked.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const auto& mount_point : leaked) {
        umount2(mount_point.c_str(), MNT_DETACH);
    }
}

void TempBundle::set_shell(std::string_view script) {
    config["process"]["args"] = {"sh", "-c", std::string(script), id_};
}

void TempBundle::set_args(const std::vector<std::string>& args) {
    config["process"]["args"] = args;
}

void TempBundle::add_capabilities(const std::vector<std::string>& caps) {
    auto& capabilities = config["process"]["capabilities"];
    for (const char* set : {"bounding", "effective", "permitted"}) {
        for (const auto& cap : caps) {
            auto& list = capabilities[set];
            if (std::find(list.begin(), list.end(), cap) == list.end()) {
                list.push_back(cap);
            }
        }
    }
}

void TempBundle::remove_namespaces(const std::vector<std::string>& types) {
    auto& namespaces = config["linux"]["namespaces"];
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& ns : namespaces) {
        if (std::find(types.begin(), types.end(), ns["type"].get<std::string>()) == types.end()) {
            kept.push_back(ns);
        }
    }
    namespaces = kept;
}

void TempBundle::add_namespace(std::string_view type) {
    config["linux"]["namespaces"].push_back({{"type", std::string(type)}});
}

void TempBundle::add_user_namespace() {
    add_namespace("user");
    const nlohmann::json mapping = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    config["linux"]["uidMappings"] = mapping;
    config["linux"]["gidMappings"] = mapping;
}

std::string TempBundle::copy_rootfs(std::optional<std::pair<uint32_t, uint32_t>> owner) {
    std::string copy = dir() + "/rootfs";
    auto copied = it::run({"/bin/cp", "-a", example_rootfs(), copy});
    if (copied.exit_code != 0) {
        throw std::runtime_error("cp -a failed: " + copied.describe());
    }
    if (owner) {
        // -h: change the links themselves, never what they point to.
        auto chowned =
            it::run({"/bin/chown", "-hR",
                     std::to_string(owner->first) + ":" + std::to_string(owner->second), copy});
        if (chowned.exit_code != 0) {
            throw std::runtime_error("chown failed: " + chowned.describe());
        }
    }
    config["root"]["path"] = copy;
    return copy;
}

void TempBundle::write_config() const {
    write_raw_config(config.dump(4) + "\n");
}

void TempBundle::write_raw_config(std::string_view text) const {
    std::ofstream out(config_path(), std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw std::runtime_error("cannot write " + config_path());
    }
}

std::vector<std::string> TempBundle::run_argv() const {
    return {minirun_binary(), "run", "--bundle", dir(), id_};
}

RunResult TempBundle::run(std::string_view stdin_text, Millis timeout) const {
    write_config();
    return it::run(run_argv(), stdin_text, timeout);
}

Child TempBundle::start() const {
    write_config();
    return Child(run_argv());
}

std::vector<std::string> TempBundle::leftovers(Millis timeout) const {
    std::vector<std::string> problems;
    auto deadline = Clock::now() + timeout;
    std::vector<pid_t> pids;
    while (true) {
        pids = processes_with_marker(id_);
        if (pids.empty() || Clock::now() >= deadline) {
            break;
        }
        std::this_thread::sleep_for(20ms);
    }
    for (pid_t pid : pids) {
        auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline").value_or("");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        problems.push_back("process " + std::to_string(pid) + " still runs: " + cmdline);
    }
    for (const auto& mount : host_mounts()) {
        if (std::find(mounts_before_.begin(), mounts_before_.end(), mount.id) ==
            mounts_before_.end()) {
            problems.push_back("new mount in the host's mount table: " + mount.line);
        }
    }
    // `run` deletes its container when it ends: no state may stay under the state root.
    const std::string state = "/run/mini-run/" + id_;
    struct stat st {};
    if (lstat(state.c_str(), &st) == 0) {
        problems.push_back("state left behind: " + state);
    }
    return problems;
}

void check_no_leftovers(const TempBundle& bundle) {
    for (const auto& problem : bundle.leftovers()) {
        FAIL_CHECK("left behind by container " << bundle.id() << ": " << problem);
    }
}

std::string value_of(std::string_view output, std::string_view key) {
    std::string prefix = std::string(key) + " ";
    for (const auto& line : split_lines(output)) {
        if (line.rfind(prefix, 0) == 0) {
            return line.substr(prefix.size());
        }
    }
    return "<" + std::string(key) + " not printed>";
}

// ---------------------------------------------------------------------------------------
// The lifecycle commands

void become_subreaper() {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        fail_errno("prctl(PR_SET_CHILD_SUBREAPER)");
    }
}

std::optional<char> process_state(pid_t pid) {
    auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) {
        return std::nullopt;
    }
    auto close = stat->rfind(')');
    if (close == std::string::npos || close + 2 >= stat->size()) {
        return std::nullopt;
    }
    return (*stat)[close + 2];
}

std::optional<pid_t> parent_pid(pid_t pid) {
    return parent_of(pid);
}

std::string cmdline_of(pid_t pid) {
    auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline").value_or("");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    while (!cmdline.empty() && cmdline.back() == ' ') {
        cmdline.pop_back();
    }
    return cmdline;
}

bool process_alive(pid_t pid) {
    auto state = process_state(pid);
    return state.has_value() && *state != 'Z' && *state != 'X';
}

bool wait_for_exit(pid_t pid, Millis timeout) {
    auto deadline = Clock::now() + timeout;
    while (process_alive(pid)) {
        if (Clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

std::optional<int> reap(pid_t pid, Millis timeout) {
    if (pid <= 0 || parent_of(pid) != getpid()) {
        return std::nullopt;
    }
    wait_for_exit(pid, timeout);
    int status = 0;
    pid_t rc = 0;
    while ((rc = waitpid(pid, &status, WNOHANG | __WALL)) < 0 && errno == EINTR) {
    }
    if (rc == pid) {
        return status;
    }
    return std::nullopt;
}

void reap_orphans() {
    const pid_t self = getpid();
    for (pid_t child : children_of(self)) {
        if (live_children().count(child) != 0 || process_state(child) != 'Z') {
            continue;
        }
        int status = 0;
        while (waitpid(child, &status, WNOHANG | __WALL) < 0 && errno == EINTR) {
        }
    }
}

std::string FileRunResult::out_now() const {
    return read_file(out_path).value_or("");
}

std::string FileRunResult::err_now() const {
    return read_file(err_path).value_or("");
}

FileRunResult run_to_files(const std::vector<std::string>& argv, const std::string& dir,
                           const std::vector<FdMapping>& fds, Millis timeout) {
    if (argv.empty()) {
        throw std::invalid_argument("run_to_files: empty argv");
    }
    FileRunResult result;
    const std::string stem = dir + "/cmd-" + std::to_string(unique_counter());
    result.out_path = stem + ".out";
    result.err_path = stem + ".err";
    int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = ::open(result.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = ::open(result.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || err < 0) {
        fail_errno("run_to_files: open");
    }
    std::vector<char*> c_argv;
    c_argv.reserve(argv.size() + 1);
    for (const auto& arg : argv) {
        c_argv.push_back(const_cast<char*>(arg.c_str()));
    }
    c_argv.push_back(nullptr);
    int highest = STDERR_FILENO;
    for (const auto& mapping : fds) {
        highest = std::max(highest, mapping.target);
    }

    pid_t pid = fork();
    if (pid < 0) {
        fail_errno("fork");
    }
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        // Move every source out of the way first, so that a target never overwrites a
        // source still to be used.
        std::array<int, 64> moved{};
        const size_t count = std::min(fds.size(), moved.size());
        for (size_t i = 0; i < count; ++i) {
            moved[i] = fcntl(fds[i].source, F_DUPFD_CLOEXEC, 1000);
            if (moved[i] < 0) {
                _exit(126);
            }
        }
        if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
            dup2(err, STDERR_FILENO) < 0) {
            _exit(126);
        }
        for (size_t i = 0; i < count; ++i) {
            if (dup2(moved[i], fds[i].target) < 0) { // dup2 clears FD_CLOEXEC
                _exit(126);
            }
        }
        // Nothing else: the command sees exactly 0-2 and the mappings.
        if (::syscall(SYS_close_range, static_cast<unsigned>(highest) + 1U, ~0U, 0U) != 0) {
            for (int fd = highest + 1; fd < 4096; ++fd) {
                ::close(fd);
            }
        }
        execv(c_argv[0], c_argv.data());
        static const char message[] = "it: execv failed\n";
        ssize_t ignored = ::write(STDERR_FILENO, message, sizeof(message) - 1);
        (void)ignored;
        _exit(127);
    }
    ::close(in);
    ::close(out);
    ::close(err);
    auto deadline = Clock::now() + timeout;
    int status = 0;
    while (true) {
        pid_t rc = waitpid(pid, &status, WNOHANG);
        if (rc == pid) {
            break;
        }
        if (rc < 0 && errno != EINTR) {
            fail_errno("waitpid");
        }
        if (Clock::now() >= deadline) {
            result.timed_out = true;
            ::kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        std::this_thread::sleep_for(5ms);
    }
    if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.exit_code = 128 + WTERMSIG(status);
    }
    result.out = result.out_now();
    result.err = result.err_now();
    return result;
}

Runtime::Runtime() : owned_root_(std::in_place, "minirun-root"), io_("minirun-io") {
    root_ = owned_root_->path();
    become_subreaper();
}

Runtime::Runtime(std::string root) : io_("minirun-io"), root_(std::move(root)) {
    become_subreaper();
}

Runtime::~Runtime() {
    std::vector<std::string> ids = ids_;
    for (const auto& entry : root_entries()) {
        if (std::find(ids.begin(), ids.end(), entry) == ids.end()) {
            ids.push_back(entry);
        }
    }
    std::vector<pid_t> pids;
    for (const auto& id : ids) {
        if (id.empty()) {
            continue;
        }
        try {
            if (auto state = this->state(id); state && (*state)["pid"].is_number_integer()) {
                pids.push_back((*state)["pid"].get<pid_t>());
            }
        } catch (...) { // NOLINT(bugprone-empty-catch): cleanup goes on regardless
        }
        if (auto from_file = pid_from_file(id)) {
            pids.push_back(*from_file);
        }
        try {
            (void)force_delete(id);
        } catch (...) { // NOLINT(bugprone-empty-catch)
        }
    }
    for (pid_t pid : pids) {
        if (pid > 0 && parent_of(pid) == getpid()) {
            if (!wait_for_exit(pid, 2s)) {
                ::kill(pid, SIGKILL); // our own child: a container process the runtime left
            }
            reap(pid, 2s);
        }
    }
    reap_orphans();
    if (!owned_root_) {
        remove_tree(root_);
    }
}

RunResult Runtime::force_delete(const std::string& id, Millis timeout) const {
    Child child(argv({"delete", "--force", id}));
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!child.exited() && std::chrono::steady_clock::now() < deadline) {
        child.wait_for_output("\x01never printed", 50ms);
        reap_orphans();
    }
    auto result = child.wait(1s);
    reap_orphans();
    return result;
}

std::string Runtime::binary() const {
    return binary_.empty() ? minirun_binary() : binary_;
}

std::vector<std::string> Runtime::argv(const std::vector<std::string>& args) const {
    std::vector<std::string> full{binary(), "--root", root_};
    full.insert(full.end(), args.begin(), args.end());
    return full;
}

RunResult Runtime::operator()(const std::vector<std::string>& args, std::string_view stdin_text,
                              Millis timeout) const {
    return it::run(argv(args), stdin_text, timeout);
}

FileRunResult Runtime::to_files(const std::vector<std::string>& args,
                                const std::vector<FdMapping>& fds, Millis timeout) const {
    return run_to_files(argv(args), io_.path(), fds, timeout);
}

void Runtime::track(const std::string& id) {
    if (std::find(ids_.begin(), ids_.end(), id) == ids_.end()) {
        ids_.push_back(id);
    }
}

std::string Runtime::pid_file(const std::string& id) const {
    return io_.path() + "/" + id + ".pid";
}

std::optional<pid_t> Runtime::pid_from_file(const std::string& id) const {
    auto text = read_file(pid_file(id));
    if (!text || text->empty() || text->size() > 10 ||
        !std::all_of(text->begin(), text->end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
        return std::nullopt;
    }
    return static_cast<pid_t>(std::stol(*text));
}

FileRunResult Runtime::create(const TempBundle& bundle, const std::vector<std::string>& extra,
                              const std::vector<FdMapping>& fds) {
    bundle.write_config();
    track(bundle.id());
    std::vector<std::string> args{"create", "--bundle", bundle.dir(), "--pid-file",
                                  pid_file(bundle.id())};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(bundle.id());
    return to_files(args, fds);
}

FileRunResult Runtime::run_detached(const TempBundle& bundle,
                                    const std::vector<std::string>& extra) {
    bundle.write_config();
    track(bundle.id());
    std::vector<std::string> args{"run",        "--detach",   "--bundle",
                                  bundle.dir(), "--pid-file", pid_file(bundle.id())};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(bundle.id());
    return to_files(args);
}

std::optional<nlohmann::json> Runtime::state(const std::string& id) const {
    auto result = (*this)({"state", id});
    if (result.exit_code != 0) {
        return std::nullopt;
    }
    auto parsed = nlohmann::json::parse(result.out, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
        return std::nullopt;
    }
    return parsed;
}

std::string Runtime::status(const std::string& id) const {
    auto result = (*this)({"state", id});
    if (result.exit_code != 0) {
        return "<state failed: " + result.describe() + ">";
    }
    auto parsed = nlohmann::json::parse(result.out, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object() || !parsed["status"].is_string()) {
        return "<state printed no status: " + result.describe() + ">";
    }
    return parsed["status"].get<std::string>();
}

bool Runtime::wait_for_status(const std::string& id, std::string_view wanted,
                              Millis timeout) const {
    auto deadline = Clock::now() + timeout;
    while (status(id) != wanted) {
        if (Clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(50ms);
    }
    return true;
}

std::vector<std::string> Runtime::root_entries() const {
    std::vector<std::string> names;
    DIR* dir = opendir(root_.c_str());
    if (dir == nullptr) {
        return names;
    }
    while (const dirent* entry = readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..") {
            names.push_back(name);
        }
    }
    closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

pid_t create_and_start(Runtime& runtime, const TempBundle& bundle, FileRunResult* created_out) {
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    auto started = runtime({"start", bundle.id()});
    INFO("start: " << started.describe());
    REQUIRE(started.exit_code == 0);
    if (created_out != nullptr) {
        *created_out = created;
    }
    return *pid;
}

void create_start_until_stopped(Runtime& runtime, const TempBundle& bundle) {
    pid_t pid = create_and_start(runtime, bundle);
    REQUIRE(wait_for_exit(pid));
    reap(pid);
    REQUIRE(runtime.wait_for_status(bundle.id(), "stopped"));
}

void check_root_empty(const Runtime& runtime) {
    for (const auto& entry : runtime.root_entries()) {
        FAIL_CHECK("left behind under --root " << runtime.root() << ": " << entry);
    }
}

ConsoleSocket::ConsoleSocket() : dir_("minirun-console") {
    path_ = dir_.path() + "/console.sock";
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) {
        fail_errno("socket");
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(address.sun_path)) {
        throw std::runtime_error("socket path too long: " + path_);
    }
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
        fail_errno("bind " + path_);
    }
    if (::listen(listen_fd_, 4) != 0) {
        fail_errno("listen");
    }
}

ConsoleSocket::~ConsoleSocket() {
    if (listen_fd_ >= 0) {
        ::close(listen_fd_);
    }
}

ConsoleSocket::Received ConsoleSocket::receive(Millis timeout) {
    Received received;
    pollfd pfd{listen_fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
    if (ready <= 0) {
        received.error = "nobody connected to " + path_;
        return received;
    }
    int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
        received.error = std::string("accept: ") + std::strerror(errno);
        return received;
    }
    pollfd cfd{conn, POLLIN, 0};
    if (::poll(&cfd, 1, static_cast<int>(timeout.count())) <= 0) {
        received.error = "no message on the console socket";
        ::close(conn);
        return received;
    }
    std::array<char, 4096> buffer{};
    iovec iov{buffer.data(), buffer.size()};
    // Room for several descriptors, to see when more than one is sent.
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 16)> control{};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    ssize_t n = ::recvmsg(conn, &message, MSG_CMSG_CLOEXEC);
    if (n < 0) {
        received.error = std::string("recvmsg: ") + std::strerror(errno);
        ::close(conn);
        return received;
    }
    received.payload.assign(buffer.data(), static_cast<size_t>(n));
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
         header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
            size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; ++i) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
                received.fds.push_back(fd);
            }
        }
    }
    if ((message.msg_flags & MSG_CTRUNC) != 0) {
        received.error = "control data truncated (too many descriptors)";
    }
    ::close(conn);
    return received;
}

std::string read_pty(int master, std::string_view needle, Millis timeout) {
    std::string text;
    auto deadline = Clock::now() + timeout;
    while (needle.empty() || !contains(text, needle)) {
        int wait_ms = remaining_ms(deadline, 100);
        if (wait_ms <= 0) {
            break;
        }
        pollfd pfd{master, POLLIN, 0};
        int ready = ::poll(&pfd, 1, wait_ms);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (ready <= 0) {
            continue;
        }
        std::array<char, 4096> buffer{};
        ssize_t n = ::read(master, buffer.data(), buffer.size());
        if (n > 0) {
            text.append(buffer.data(), static_cast<size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            break; // EIO: no slave open any more
        }
    }
    return text;
}

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        text.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

std::vector<pid_t> processes_in_pid_namespace(const std::string& ns) {
    std::vector<pid_t> found;
    for (pid_t pid : all_pids()) {
        if (ns_link(pid, "pid") == ns && process_alive(pid)) {
            found.push_back(pid);
        }
    }
    return found;
}

std::vector<pid_t> live_orphans() {
    std::vector<pid_t> found;
    for (pid_t child : children_of(getpid())) {
        if (live_children().count(child) == 0 && process_alive(child)) {
            found.push_back(child);
        }
    }
    return found;
}

bool is_rfc3339(const std::string& text) {
    static const std::regex pattern(
        R"(^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$)");
    return std::regex_match(text, pattern);
}

} // namespace it
