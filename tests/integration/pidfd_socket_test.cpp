// --pidfd-socket (runc 1.2+, runc's pidfd-socket.bats): create, run and exec send a pidfd of
// the container's init (create, run) or of the new process (exec) over the named unix
// socket; whoever receives it can signal exactly that process.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

// The pid a pidfd refers to: the "Pid:" line of its fdinfo (-1: not a pidfd).
pid_t pid_of_pidfd(int fd) {
    auto info = read_file("/proc/self/fdinfo/" + std::to_string(fd));
    for (const auto& line : split_lines(info.value_or(""))) {
        if (line.rfind("Pid:", 0) == 0) {
            return static_cast<pid_t>(std::stol(line.substr(4)));
        }
    }
    return -1;
}

// One pidfd from the socket, checked to refer to `pid`; -1 when it did not come.
int receive_pidfd(ConsoleSocket& socket, pid_t pid) {
    auto received = socket.receive();
    INFO("received: " << received.error << " payload " << received.payload);
    REQUIRE(received.error.empty());
    REQUIRE(received.fds.size() == 1);
    CHECK(received.payload == "pidfd");
    CHECK(pid_of_pidfd(received.fds[0]) == pid);
    return received.fds[0];
}

void kill_through(int pidfd, int signal) {
    CHECK(::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0) == 0);
    ::close(pidfd);
}

} // namespace

TEST_CASE("--pidfd-socket: create and run send a pidfd of the init", "[lifecycle][pidfd]") {
    TempBundle bundle("pidfd");
    bundle.set_shell(loop);
    Runtime runtime;
    ConsoleSocket socket;
    SECTION("create") {
        auto created = runtime.create(bundle, {"--pidfd-socket", socket.path()});
        INFO(created.describe());
        REQUIRE(created.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid);
        int pidfd = receive_pidfd(socket, *pid);
        CHECK(runtime.status(bundle.id()) == "created");
        kill_through(pidfd, SIGKILL);
    }
    SECTION("run --detach") {
        auto ran = runtime.run_detached(bundle, {"--pidfd-socket", socket.path()});
        INFO(ran.describe());
        REQUIRE(ran.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid);
        int pidfd = receive_pidfd(socket, *pid);
        CHECK(runtime.status(bundle.id()) == "running");
        kill_through(pidfd, SIGKILL);
    }
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
    CHECK(runtime({"delete", bundle.id()}).exit_code == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("--pidfd-socket: exec sends a pidfd of the new process", "[exec][pidfd]") {
    TempBundle bundle("pidfd-exec");
    bundle.set_shell(loop);
    Runtime runtime;
    auto ran = runtime.run_detached(bundle);
    INFO(ran.describe());
    REQUIRE(ran.exit_code == 0);
    ConsoleSocket socket;
    const std::string pid_file = runtime.io_dir() + "/exec.pid";
    auto exec = runtime.to_files({"exec", "--detach", "--pid-file", pid_file, "--pidfd-socket",
                                  socket.path(), bundle.id(), "sleep", "1000"});
    INFO(exec.describe());
    REQUIRE(exec.exit_code == 0);
    auto text = read_file(pid_file);
    REQUIRE(text);
    pid_t exec_pid = static_cast<pid_t>(std::stol(*text));
    int pidfd = receive_pidfd(socket, exec_pid);
    kill_through(pidfd, SIGKILL);
    // The exec'd process is gone (reaped by whoever adopted it), the container is not.
    reap_orphans();
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (::kill(exec_pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
        reap_orphans();
        std::this_thread::sleep_for(20ms);
    }
    CHECK(::kill(exec_pid, 0) != 0);
    CHECK(runtime.status(bundle.id()) == "running");
}

TEST_CASE("--pidfd-socket: a socket nobody listens on fails the create, nothing left",
          "[lifecycle][pidfd]") {
    TempBundle bundle("pidfd-bad");
    bundle.set_shell(loop);
    Runtime runtime;
    TempDir dir("minirun-pidfd");
    auto refused = runtime.create(bundle, {"--pidfd-socket", dir.path() + "/nobody.sock"});
    INFO(refused.describe());
    CHECK(refused.exit_code != 0);
    CHECK(contains(refused.err_now(), "--pidfd-socket"));
    CHECK(runtime.root_entries().empty());
    CHECK(cgroup_dirs(default_cgroup(bundle.id())).empty());
}
