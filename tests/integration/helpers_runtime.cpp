// The integration tests' helpers (helpers.hpp): running mini-run with its output in files,
// the Runtime wrapper, the console socket and ptys.
#include "helpers.hpp"
#include "helpers_detail.hpp"

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

using namespace detail;

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
