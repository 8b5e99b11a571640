// NOTIFY_SOCKET (sd_notify(3)), as runc relays it, which podman's --sdnotify=container
// relies on: with NOTIFY_SOCKET in its environment, create/run give the container a socket
// of its own at /run/notify/notify.sock (NOTIFY_SOCKET in its env), and start (run) returns
// only once the container's process sent READY=1 there, relayed to the caller's socket with
// MAINPID and BARRIER=1 (or once the init is gone). The container sends with
// minirun-sd-notify (tests/integration/tools/sd_notify.cpp), copied into its rootfs.
#include "helpers.hpp"
#include "lifecycle_helpers.hpp"

#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace it;
using lifecycle_test::file_exists;

namespace {

// NOTIFY_SOCKET in the test's environment, which the mini-run it starts inherits, for the
// scope of one test.
class NotifyEnv {
public:
    explicit NotifyEnv(const std::string& value) { ::setenv("NOTIFY_SOCKET", value.c_str(), 1); }
    NotifyEnv(const NotifyEnv&) = delete;
    NotifyEnv& operator=(const NotifyEnv&) = delete;
    ~NotifyEnv() { ::unsetenv("NOTIFY_SOCKET"); }
};

// The caller's side: a datagram socket bound in a temp dir, read by a thread from the
// start (the relay waits for the answer to its BARRIER=1, the end of the pipe that came
// with it, which the thread gives by closing the pipe at once, as systemd does).
class HostSocket {
public:
    HostSocket() : path_(dir_.path() + "/host.sock") {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path_.c_str(), sizeof(address.sun_path) - 1);
        REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), // NOLINT
                       sizeof(address)) == 0);
        reader_ = std::thread([this] { read_messages(); });
    }
    HostSocket(const HostSocket&) = delete;
    HostSocket& operator=(const HostSocket&) = delete;
    ~HostSocket() {
        stop_ = true;
        reader_.join();
        ::close(fd_);
    }

    [[nodiscard]] const std::string& path() const { return path_; }

    // The messages so far, each with " +fd" when a descriptor came with it.
    [[nodiscard]] std::vector<std::string> messages() const {
        std::lock_guard lock(mutex_);
        return messages_;
    }
    bool wait_for(size_t count, Millis timeout = 10s) const {
        return wait_until([&] { return messages().size() >= count; }, timeout);
    }

private:
    void read_messages() {
        while (!stop_) {
            pollfd entry{fd_, POLLIN, 0};
            if (::poll(&entry, 1, 50) <= 0) {
                continue;
            }
            char buffer[4096];
            alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
            iovec data{buffer, sizeof(buffer)};
            msghdr message{};
            message.msg_iov = &data;
            message.msg_iovlen = 1;
            message.msg_control = control;
            message.msg_controllen = sizeof(control);
            ssize_t got = ::recvmsg(fd_, &message, MSG_CMSG_CLOEXEC);
            if (got < 0) {
                continue;
            }
            std::string text(buffer, static_cast<size_t>(got));
            for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
                 header = CMSG_NXTHDR(&message, header)) {
                if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
                    size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                    for (size_t i = 0; i < count; ++i) {
                        int fd = -1;
                        std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
                        ::close(fd); // the barrier's answer
                        text += " +fd";
                    }
                }
            }
            std::lock_guard lock(mutex_);
            messages_.push_back(std::move(text));
        }
    }

    TempDir dir_{"minirun-it-notify"};
    std::string path_;
    int fd_ = -1;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<std::string> messages_;
    std::thread reader_;
};

// A bundle whose rootfs (a copy) has the sd_notify client as /bin/sd-notify.
void give_sd_notify(TempBundle& bundle) {
    std::string rootfs = bundle.copy_rootfs();
    std::filesystem::copy_file(MINIRUN_SD_NOTIFY, rootfs + "/bin/sd-notify");
}

std::vector<std::string> expected_relay(pid_t main_pid) {
    return {"READY=1\n", "MAINPID=" + std::to_string(main_pid) + "\n", "BARRIER=1 +fd"};
}

} // namespace

TEST_CASE("NOTIFY_SOCKET: run --detach returns once the container is ready, and relays it",
          "[notify][lifecycle]") {
    HostSocket host;
    TempBundle bundle("notify-run");
    give_sd_notify(bundle);
    // The config's own NOTIFY_SOCKET is replaced by the container's.
    bundle.config["process"]["env"].push_back("NOTIFY_SOCKET=/config/own.sock");
    bundle.set_shell("echo \"socket=$NOTIFY_SOCKET\"; grep -c ' /run/notify ' /proc/mounts; "
                     "sleep 0.3; sd-notify READY=1; exec sleep 1000");
    Runtime runtime;
    auto started = std::chrono::steady_clock::now();
    FileRunResult run;
    {
        NotifyEnv env(host.path());
        run = runtime.run_detached(bundle);
    }
    auto took = std::chrono::steady_clock::now() - started;
    INFO(run.describe() << run.out_now());
    REQUIRE(run.exit_code == 0);
    // It returned after the READY=1 (sent 0.3 s in), not after the 30 s a barrier
    // without an answer would take.
    CHECK(took >= 300ms);
    CHECK(took < 20s);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid);
    REQUIRE(host.wait_for(3));
    CHECK(host.messages() == expected_relay(*pid));
    CHECK(contains(run.out_now(), "socket=/run/notify/notify.sock\n1\n"));
    CHECK(file_exists(runtime.root() + "/" + bundle.id() + "/notify/notify.sock"));
    CHECK(runtime.force_delete(bundle.id()).exit_code == 0);
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("NOTIFY_SOCKET: start waits for READY=1 while the init lives, state meanwhile",
          "[notify][lifecycle]") {
    HostSocket host;
    TempBundle bundle("notify-start");
    give_sd_notify(bundle);
    // The container says it is ready once the test has made /tmp/go in its rootfs.
    std::string go = bundle.rootfs() + "/tmp/go";
    bundle.set_shell("while [ ! -e /tmp/go ]; do sleep 0.05; done; sd-notify READY=1; "
                     "exec sleep 1000");
    Runtime runtime;
    NotifyEnv env(host.path());
    auto created = runtime.create(bundle);
    INFO(created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid);
    Child start(runtime.argv({"start", bundle.id()}));
    // As runc's: no time limit while the init lives. Not done after a second...
    CHECK_FALSE(start.wait_for_output("never printed", 1s));
    CHECK_FALSE(start.exited());
    // ... and the container is not locked meanwhile.
    CHECK(runtime.status(bundle.id()) == "running");
    CHECK(host.messages().empty());
    write_text(go, "");
    auto result = start.wait(10s);
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    REQUIRE(host.wait_for(3));
    CHECK(host.messages() == expected_relay(*pid));
    CHECK(runtime.force_delete(bundle.id()).exit_code == 0);
    check_root_empty(runtime);
}

TEST_CASE("NOTIFY_SOCKET: start returns when the init exits without READY=1", "[notify]") {
    HostSocket host;
    TempBundle bundle("notify-exit");
    give_sd_notify(bundle);
    // Only a READY= line ends the wait; this is not one.
    bundle.set_shell("sd-notify STATUS=starting; sleep 0.5; exit 0");
    Runtime runtime;
    NotifyEnv env(host.path());
    auto created = runtime.create(bundle);
    INFO(created.describe());
    REQUIRE(created.exit_code == 0);
    auto result = runtime({"start", bundle.id()});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK_FALSE(result.timed_out);
    CHECK(host.messages().empty());
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
}

TEST_CASE("NOTIFY_SOCKET: a READY= line after others, in a foreground run", "[notify]") {
    HostSocket host;
    TempBundle bundle("notify-fg");
    give_sd_notify(bundle);
    bundle.set_shell("sd-notify \"$(printf 'STATUS=up\\nREADY=1')\"; sleep 0.2; exit 3");
    bundle.write_config();
    NotifyEnv env(host.path());
    Child run(bundle.run_argv());
    pid_t runtime_pid = run.pid();
    auto result = run.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 3);
    REQUIRE(host.wait_for(3));
    // In the foreground mini-run is the main process, which a service manager watches.
    CHECK(host.messages() == expected_relay(runtime_pid));
    check_no_leftovers(bundle);
}

TEST_CASE("NOTIFY_SOCKET: a caller's socket that is not there is one error, nothing left",
          "[notify]") {
    TempDir dir("minirun-it-notify");
    TempBundle bundle("notify-bad");
    bundle.set_shell("exit 0");
    Runtime runtime;
    NotifyEnv env(dir.path() + "/missing.sock");
    SECTION("run") {
        auto run = runtime.run_detached(bundle);
        INFO(run.describe());
        CHECK(run.exit_code != 0);
        auto lines = split_lines(run.err_now());
        REQUIRE(lines.size() == 1);
        CHECK(contains(lines[0], "NOTIFY_SOCKET"));
        CHECK(contains(lines[0], "missing.sock"));
        check_root_empty(runtime);
        check_no_leftovers(bundle);
    }
    SECTION("start: the container stays created") {
        auto created = runtime.create(bundle);
        REQUIRE(created.exit_code == 0);
        auto start = runtime({"start", bundle.id()});
        CHECK(start.exit_code != 0);
        CHECK(split_lines(start.err).size() == 1);
        CHECK(contains(start.err, "NOTIFY_SOCKET"));
        CHECK(runtime.status(bundle.id()) == "created");
        CHECK(runtime.force_delete(bundle.id()).exit_code == 0);
        check_root_empty(runtime);
    }
}

TEST_CASE("NOTIFY_SOCKET: without it nothing changes", "[notify]") {
    ::unsetenv("NOTIFY_SOCKET");
    TempBundle bundle("notify-none");
    bundle.set_shell("echo \"socket=[$NOTIFY_SOCKET]\"; grep -c ' /run/notify ' /proc/mounts");
    Runtime runtime;
    auto run = runtime.run_detached(bundle);
    INFO(run.describe());
    REQUIRE(run.exit_code == 0);
    CHECK(wait_until([&] { return contains(run.out_now(), "socket=[]\n0\n"); }));
    CHECK_FALSE(file_exists(runtime.root() + "/" + bundle.id() + "/notify"));
}
