// A command whose controlling terminal is a fresh pty, for the tests of what mini-run does
// on a terminal (--explain=step's cards, demo --step): the test is the one at the keyboard.
#pragma once

#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace it {

// `argv` in a session of its own whose controlling terminal is a fresh pty; its stdout
// and stderr go to files in `dir`.
class PtyRun {
public:
    // Standard input is /dev/null, or the terminal too with `stdin_from_terminal`.
    PtyRun(const std::vector<std::string>& argv, const std::string& dir,
           bool stdin_from_terminal = false)
        : out_path_(dir + "/out"), err_path_(dir + "/err") {
        master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        REQUIRE(master_ >= 0);
        REQUIRE(::grantpt(master_) == 0);
        REQUIRE(::unlockpt(master_) == 0);
        slave_name_ = ::ptsname(master_);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            ::setsid();
            // The first terminal a session leader opens without O_NOCTTY becomes its
            // controlling terminal; mini-run reaches it as /dev/tty.
            int slave = ::open(slave_name_.c_str(), O_RDWR);
            int in = ::open(stdin_from_terminal ? slave_name_.c_str() : "/dev/null", O_RDONLY);
            int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (slave < 0 || in < 0 || out < 0 || err < 0) {
                ::_exit(127);
            }
            ::dup2(in, 0);
            ::dup2(out, 1);
            ::dup2(err, 2);
            std::vector<char*> args;
            for (const auto& arg : argv) {
                args.push_back(const_cast<char*>(arg.c_str()));
            }
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
    }
    PtyRun(const PtyRun&) = delete;
    PtyRun& operator=(const PtyRun&) = delete;
    ~PtyRun() {
        if (!status_) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
        ::close(master_);
    }

    // Presses Enter at every card until the card "(<who>): <name>", which it returns
    // unanswered; "" when mini-run exits or `timeout` passes first. With an empty name it
    // answers cards until mini-run exits.
    std::string advance_to(const std::string& who, const std::string& name,
                           Millis timeout = default_timeout) {
        const std::string header = "(" + who + "): " + name + "\n";
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            auto start = seen_.find("--- step", consumed_);
            auto prompt = start == std::string::npos ? start : seen_.find("[Enter", start);
            auto end = prompt == std::string::npos ? prompt : seen_.find('\n', prompt);
            if (end != std::string::npos) {
                std::string card = seen_.substr(start, end - start);
                consumed_ = end;
                if (!name.empty() && contains(card, header)) {
                    return card;
                }
                press("\r");
                ++answered_;
                continue;
            }
            if (!read_some(100) && exited()) {
                break;
            }
        }
        return {};
    }

    // Presses Enter at every card until `done()` holds (or mini-run exits); whether it held.
    template <typename Done>
    bool answer_cards_until(Done done, Millis timeout = default_timeout) {
        return wait_until(
                   [&] {
                       (void)advance_to("", "-", 100ms);
                       return done() || exited();
                   },
                   timeout) &&
               done();
    }

    void press(std::string_view keys) const {
        REQUIRE(::write(master_, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size()));
    }

    [[nodiscard]] int answered() const { return answered_; }
    [[nodiscard]] pid_t pid() const { return pid_; }

    // Waits for mini-run to exit; its exit code (128+N for signal N), -1 on timeout.
    int wait(Millis timeout = default_timeout) {
        wait_until(
            [&] {
                while (read_some(0)) {
                }
                return exited();
            },
            timeout);
        if (!status_) {
            return -1;
        }
        return WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + WTERMSIG(*status_);
    }

    [[nodiscard]] std::string err() const { return read_file(err_path_).value_or(""); }
    [[nodiscard]] std::string out() const { return read_file(out_path_).value_or(""); }
    [[nodiscard]] const std::string& terminal() const { return seen_; }
    [[nodiscard]] const std::string& slave_name() const { return slave_name_; }

    bool exited() {
        if (!status_) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                status_ = status;
            }
        }
        return status_.has_value();
    }

private:
    // Appends what the master has (within `timeout_ms`), \r removed; false when nothing.
    bool read_some(int timeout_ms) {
        pollfd entry{master_, POLLIN, 0};
        if (::poll(&entry, 1, timeout_ms) <= 0 || (entry.revents & POLLIN) == 0) {
            return false;
        }
        char buffer[4096];
        ssize_t got = ::read(master_, buffer, sizeof buffer);
        if (got <= 0) {
            return false;
        }
        for (ssize_t i = 0; i < got; ++i) {
            if (buffer[i] != '\r') {
                seen_ += buffer[i];
            }
        }
        return true;
    }

    int master_ = -1;
    std::string slave_name_;
    std::string out_path_;
    std::string err_path_;
    pid_t pid_ = -1;
    std::optional<int> status_;
    std::string seen_;
    size_t consumed_ = 0;
    int answered_ = 0;
};

} // namespace it
