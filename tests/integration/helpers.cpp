// The integration tests' helpers (helpers.hpp): paths and running commands. Looking at the
// host in helpers_host.cpp, temporary files and bundles in helpers_files.cpp, the runtime
// and its console socket in helpers_runtime.cpp.
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

} // namespace it
