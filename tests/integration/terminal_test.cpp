// process.terminal: the container's pty master reaches the caller over --console-socket.
// The test is the receiver: it binds a listening unix socket and accepts only after
// create (or exec --detach) has exited, so a runtime that waits for the accept fails.
// Then it checks the message (exactly one descriptor, a non-empty payload), that the
// descriptor is a pty master, and talks to the container through it.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

using namespace it;

namespace {

// Owns the received descriptors.
struct Master {
    ConsoleSocket::Received received;
    ~Master() {
        for (int fd : received.fds) {
            ::close(fd);
        }
    }
    [[nodiscard]] int fd() const { return received.fds.empty() ? -1 : received.fds.front(); }
};

// Receives the master and checks the message: one fd, a non-empty payload, a pty master.
void receive_master(ConsoleSocket& socket, Master& master) {
    master.received = socket.receive();
    INFO("receive: " << master.received.error);
    REQUIRE(master.received.error.empty());
    CHECK(master.received.fds.size() == 1);
    CHECK_FALSE(master.received.payload.empty());
    REQUIRE(master.fd() >= 0);
    CHECK(isatty(master.fd()) == 1);
    unsigned int pty_number = 0;
    CHECK(ioctl(master.fd(), TIOCGPTN, &pty_number) == 0); // only a master answers this
}

std::string without_cr(std::string text) {
    text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
    return text;
}

void use_terminal(TempBundle& bundle) {
    bundle.config["process"]["terminal"] = true;
}

} // namespace

TEST_CASE("terminal: create --console-socket sends the pty master; the process has the slave",
          "[terminal]") {
    TempBundle bundle("tty");
    use_terminal(bundle);
    bundle.set_shell("tty; echo hello-tty; stty size 2>&1; echo stty-done; "
                     "for fd in 0 1 2; do [ -t $fd ] && echo tty-fd-$fd; done; "
                     "set -- $(cat /proc/$$/stat); echo tty_nr $7; "
                     "echo console $(stat -c %t:%T /dev/console) tty $(stat -L -c %t:%T $(tty))");
    Runtime runtime;
    ConsoleSocket socket;
    auto created = runtime.create(bundle, {"--console-socket", socket.path()});
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    CHECK(runtime.status(bundle.id()) == "created");

    Master master;
    receive_master(socket, master); // accepted only now: create did not wait for it

    auto started = runtime({"start", bundle.id()});
    INFO("start: " << started.describe());
    REQUIRE(started.exit_code == 0);
    const std::string output = without_cr(read_pty(master.fd()));
    INFO("terminal output:\n" << output);
    CHECK(contains(output, "/dev/pts/"));
    CHECK(contains(output, "hello-tty"));
    CHECK(contains(output, "stty-done")); // stty size ran (its answer depends on the size)
    CHECK(contains(output, "tty-fd-0"));
    CHECK(contains(output, "tty-fd-1"));
    CHECK(contains(output, "tty-fd-2"));
    // A controlling terminal: tty_nr (field 7 of stat) is not 0.
    const std::string tty_nr = value_of(output, "tty_nr");
    CHECK(std::regex_match(tty_nr, std::regex("[1-9][0-9]*")));
    // /dev/console is the same device as the process's terminal.
    auto words = split_words(value_of(output, "console"));
    REQUIRE(words.size() == 3);
    CHECK(words[0] == words[2]);
    // Nothing of the container's terminal output went to create's own stdout.
    CHECK_FALSE(contains(created.out_now(), "hello-tty"));

    CHECK(wait_for_exit(*pid));
    auto status = reap(*pid);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("terminal: an interactive shell through the master", "[terminal]") {
    TempBundle bundle("tty-sh");
    use_terminal(bundle);
    bundle.set_args({"sh"});
    Runtime runtime;
    ConsoleSocket socket;
    auto created = runtime.create(bundle, {"--console-socket", socket.path()});
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    Master master;
    receive_master(socket, master);
    REQUIRE(runtime({"start", bundle.id()}).exit_code == 0);

    // The command's output says "round2trip"; the terminal's echo of what was typed does
    // not, so this shows the shell ran it.
    REQUIRE(write_all(master.fd(), "echo round$((1+1))trip\n"));
    std::string output = read_pty(master.fd(), "round2trip");
    INFO("terminal output:\n" << output);
    CHECK(contains(output, "round2trip"));
    CHECK(contains(output, "echo round$((1+1))trip")); // echoed by the terminal

    REQUIRE(write_all(master.fd(), "exit 5\n"));
    output += read_pty(master.fd());
    CHECK(wait_for_exit(*pid));
    auto status = reap(*pid);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 5);
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
}

TEST_CASE("terminal: run --detach --console-socket", "[terminal]") {
    TempBundle bundle("tty-run");
    use_terminal(bundle);
    bundle.set_shell("tty; read line; echo got-$line");
    Runtime runtime;
    ConsoleSocket socket;
    auto ran = runtime.run_detached(bundle, {"--console-socket", socket.path()});
    INFO("run -d: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    Master master;
    receive_master(socket, master);
    REQUIRE(write_all(master.fd(), "typed\n"));
    const std::string output = without_cr(read_pty(master.fd(), "got-typed"));
    INFO("terminal output:\n" << output);
    CHECK(contains(output, "/dev/pts/"));
    CHECK(contains(output, "got-typed"));
    CHECK(wait_for_exit(*pid));
    reap(*pid);
}

TEST_CASE("terminal: exec --tty --console-socket --detach", "[terminal][exec]") {
    TempBundle bundle("tty-exec");
    bundle.set_shell("while true; do sleep 0.1; done");
    Runtime runtime;
    auto ran = runtime.run_detached(bundle);
    INFO("run -d: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    auto init = runtime.pid_from_file(bundle.id());
    REQUIRE(init.has_value());

    const std::string flag = GENERATE(std::string("--tty"), std::string("-t"));
    INFO("flag " << flag);
    ConsoleSocket socket;
    const std::string pid_file = runtime.io_dir() + "/exec.pid";
    auto exec = runtime.to_files({"exec", flag, "--console-socket", socket.path(), "--detach",
                                  "--pid-file", pid_file, bundle.id(), "sh", "-c",
                                  "tty; echo exec-tty; read line; echo got-$line; exit 3"},
                                 {}, 15s);
    INFO("exec: " << exec.describe());
    REQUIRE(exec.exit_code == 0);
    auto text = read_file(pid_file);
    REQUIRE(text.has_value());
    REQUIRE(std::regex_match(*text, std::regex("[1-9][0-9]*")));
    const auto pid = static_cast<pid_t>(std::stol(*text));
    CHECK(ns_link(pid, "pid") == ns_link(*init, "pid"));
    CHECK(ns_link(pid, "mnt") == ns_link(*init, "mnt"));

    Master master;
    receive_master(socket, master);
    std::string output = read_pty(master.fd(), "exec-tty");
    REQUIRE(write_all(master.fd(), "back\n"));
    output = without_cr(output + read_pty(master.fd(), "got-back"));
    INFO("terminal output:\n" << output);
    CHECK(contains(output, "/dev/pts/"));
    CHECK(contains(output, "exec-tty"));
    CHECK(contains(output, "got-back"));
    CHECK(wait_for_exit(pid));
    auto status = reap(pid);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 3);
    CHECK(runtime.status(bundle.id()) == "running");
}

TEST_CASE("terminal: create without --console-socket fails for a terminal process", "[terminal]") {
    TempBundle bundle("tty-nosock");
    use_terminal(bundle);
    bundle.set_shell("echo should-not-run");
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    CHECK(created.exit_code != 0);
    CHECK_FALSE(contains(created.out_now(), "should-not-run"));
    check_root_empty(runtime);
    CHECK(live_orphans().empty());
}

// runc's foreground relay clears ONLCR on the pty (tty.go, console.ClearONLCR), so what the
// process writes reaches run's stdout byte for byte: runc's own suite compares it with
// plain "\n" lines. Checked with `run`, whose stdout here is a pipe, not a terminal.
TEST_CASE("terminal: run in the foreground relays the process's \\n as \\n", "[terminal]") {
    TempBundle bundle("tty-fg-run");
    use_terminal(bundle);
    bundle.set_shell("printf 'one\\ntwo\\n'");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(result.out == "one\ntwo\n");
    check_no_leftovers(bundle);
}

TEST_CASE("terminal: exec --tty in the foreground relays \\n as \\n", "[terminal][exec]") {
    TempBundle bundle("tty-fg-exec");
    bundle.set_shell("while true; do sleep 0.1; done");
    Runtime runtime;
    auto ran = runtime.run_detached(bundle);
    INFO("run -d: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    auto exec = runtime({"exec", "--tty", bundle.id(), "sh", "-c", "printf 'one\\ntwo\\n'"});
    INFO("exec: " << exec.describe());
    CHECK(exec.exit_code == 0);
    CHECK(exec.out == "one\ntwo\n");
}

// --console-socket's receiver chooses its terminal's modes (runc leaves ONLCR set there,
// as the kernel makes a pty): only mini-run's own relay clears it.
TEST_CASE("terminal: the master sent to --console-socket keeps ONLCR", "[terminal]") {
    TempBundle bundle("tty-onlcr");
    use_terminal(bundle);
    bundle.set_shell("echo ready; read line");
    Runtime runtime;
    ConsoleSocket socket;
    auto ran = runtime.run_detached(bundle, {"--console-socket", socket.path()});
    INFO("run -d: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    Master master;
    receive_master(socket, master);
    const std::string output = read_pty(master.fd(), "ready");
    CHECK(contains(output, "ready\r\n"));
    termios modes{};
    REQUIRE(::tcgetattr(master.fd(), &modes) == 0);
    CHECK((modes.c_oflag & ONLCR) != 0);
    REQUIRE(write_all(master.fd(), "done\n"));
    CHECK(wait_for_exit(*pid));
    reap(*pid);
}
