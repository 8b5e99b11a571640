// The integration tests' helpers (helpers.hpp): looking at the host (files, namespaces,
// mounts, cgroups, processes) and at processes' lifetimes.
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

} // namespace it
