// `run --explain=step`: mini-run stops before each step of its recipes with a card on the
// terminal and goes on at Enter. The test is the learner: it gives mini-run a pty as its
// controlling terminal (stdin and stdout stay files), reads the cards from the master,
// looks at the container from the host between two cards, and presses Enter or Ctrl-C.
#include "helpers.hpp"
#include "pty_run.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

using namespace it;

namespace {

std::vector<std::string> step_argv(const TempBundle& bundle) {
    return {minirun_binary(), "run", "--explain=step", "--bundle", bundle.dir(), bundle.id()};
}

// The init's host pid, as the cards' commands name it ("nsenter -t 1234 -u hostname").
pid_t pid_in(const std::string& card) {
    std::smatch match;
    if (std::regex_search(card, match, std::regex(R"(nsenter -t (\d+) -u hostname)"))) {
        return std::stoi(match[1]);
    }
    return -1;
}

std::string hostname_of(pid_t pid) {
    RunResult result = run({"/usr/bin/nsenter", "-t", std::to_string(pid), "-u", "hostname"});
    return result.exit_code == 0 ? split_words(result.out).at(0) : "<nsenter failed>";
}

std::vector<std::string> cgroup_dirs_named(const std::string& id) {
    RunResult found =
        run({"/usr/bin/find", "/sys/fs/cgroup", "-maxdepth", "4", "-type", "d", "-name", id});
    return split_lines(found.out);
}

} // namespace

TEST_CASE("run --explain=step stops before every step until Enter, and the host can look",
          "[step]") {
    TempBundle bundle("step");
    bundle.config["hostname"] = "stepped";
    bundle.set_shell("echo done");
    bundle.write_config();
    TempDir files;
    PtyRun run(step_argv(bundle), files.path());

    // The first card, before anything exists.
    std::string first = run.advance_to("runtime", "check the id");
    INFO(run.terminal() << run.err());
    REQUIRE_FALSE(first.empty());
    // "1/N": N is the create recipe's length, which changes with it.
    CHECK(contains(first, "--- step 1/"));
    CHECK(contains(first, " (runtime): check the id"));
    CHECK(contains(first, "why:"));
    CHECK(contains(first, "calls:"));
    CHECK(contains(first, "isolates:"));
    CHECK_FALSE(read_file("/run/mini-run/" + bundle.id() + "/state.json").has_value());
    run.press("\r");

    // Stopped before the cgroups are made: none exists yet; at the next card they do.
    std::string make = run.advance_to("runtime", "make the cgroups");
    REQUIRE_FALSE(make.empty());
    CHECK(contains(make, "find /sys/fs/cgroup -maxdepth 4 -type d -name '" + bundle.id() + "'"));
    CHECK(cgroup_dirs_named(bundle.id()).empty());
    run.press("\r");
    REQUIRE_FALSE(run.advance_to("runtime", "limit the cgroups").empty());
    CHECK_FALSE(cgroup_dirs_named(bundle.id()).empty());
    run.press("\r");

    // The init's hostname card names its pid: before Enter the UTS namespace still has the
    // host's name, after it (at the next card) the container's.
    std::string hostname = run.advance_to("init", "hostname");
    REQUIRE_FALSE(hostname.empty());
    pid_t init = pid_in(hostname);
    REQUIRE(init > 0);
    CHECK(ns_link(init, "uts") != ns_link(0, "uts"));
    std::array<char, 256> host{};
    ::gethostname(host.data(), host.size() - 1);
    CHECK(hostname_of(init) == std::string(host.data()));
    run.press("\r");
    REQUIRE_FALSE(run.advance_to("init", "sysctls").empty());
    CHECK(hostname_of(init) == "stepped");
    run.press("\r");

    // The last card is the seccomp filter's: after it mini-run makes no call but the exec.
    CHECK(run.advance_to("", "").empty());
    CHECK(run.answered() > 40);
    CHECK(contains(run.terminal(), "(init): seccomp filter\n"));
    CHECK_FALSE(contains(run.terminal(), "(init): exec\n"));
    CHECK(run.wait() == 0);
    CHECK(contains(run.out(), "done"));
    // Raw mode was for the waits only: the terminal is as it was.
    int slave = ::open(run.slave_name().c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    REQUIRE(slave >= 0);
    termios mode{};
    CHECK(::tcgetattr(slave, &mode) == 0);
    ::close(slave);
    CHECK((mode.c_lflag & ICANON) != 0);
    CHECK((mode.c_lflag & ISIG) != 0);
    CHECK((mode.c_lflag & ECHO) != 0);
    check_no_leftovers(bundle);
}

TEST_CASE("Ctrl-C at a step of the runtime or of the init removes everything", "[step]") {
    struct Stop {
        const char* who;
        const char* name;
    };
    auto stop = GENERATE(Stop{"runtime", "limit the cgroups"}, Stop{"runtime", "write the id maps"},
                         Stop{"init", "prepare the rootfs"}, Stop{"init", "enter the root"},
                         Stop{"init", "seccomp filter"});
    DYNAMIC_SECTION(stop.who << " " << stop.name) {
        TempBundle bundle("stepstop");
        bundle.add_namespace("user");
        bundle.config["linux"]["uidMappings"] = {
            {{"containerID", 0}, {"hostID", 0}, {"size", 65536}}};
        bundle.config["linux"]["gidMappings"] = {
            {{"containerID", 0}, {"hostID", 0}, {"size", 65536}}};
        bundle.set_shell("echo done");
        bundle.write_config();
        TempDir files;
        PtyRun run(step_argv(bundle), files.path());
        REQUIRE_FALSE(run.advance_to(stop.who, stop.name).empty());
        run.press("\x03");
        CHECK(run.wait() == 1);
        std::string err = run.err();
        INFO(err);
        CHECK(contains(err, std::string("stopped before ") + stop.who));
        CHECK(contains(err, std::string("\"") + stop.name + "\""));
        CHECK_FALSE(contains(run.out(), "done"));
        CHECK(cgroup_dirs_named(bundle.id()).empty());
        check_no_leftovers(bundle);
    }
}

TEST_CASE("--explain=step without a terminal: an error, or --step-delay goes on by itself",
          "[step]") {
    TempBundle bundle("stepnotty");
    bundle.set_shell("echo done");
    bundle.write_config();
    // setsid(1): a session of its own, without a controlling terminal.
    RunResult refused = run({"/usr/bin/setsid", minirun_binary(), "run", "--explain=step",
                             "--bundle", bundle.dir(), bundle.id()});
    INFO(refused.describe());
    CHECK(refused.exit_code == 1);
    CHECK(split_lines(refused.err).size() == 1);
    CHECK(contains(refused.err, "--explain=step waits for Enter on a terminal"));
    CHECK(contains(refused.err, "--step-delay"));
    check_no_leftovers(bundle);

    RunResult delayed = run({"/usr/bin/setsid", minirun_binary(), "run", "--explain=step",
                             "--step-delay", "0.001", "--bundle", bundle.dir(), bundle.id()});
    INFO(delayed.describe());
    CHECK(delayed.exit_code == 0);
    CHECK(contains(delayed.out, "done"));
    CHECK(contains(delayed.err, "--- step 1/"));
    CHECK(contains(delayed.err, " (runtime): check the id"));
    CHECK(contains(delayed.err, "(init): seccomp filter"));
    CHECK(contains(delayed.err, "[explain] "));
    check_no_leftovers(bundle);

    RunResult stray =
        run_minirun({"run", "--step-delay", "1", "--bundle", bundle.dir(), bundle.id()});
    CHECK(stray.exit_code == 1);
    CHECK(contains(stray.err, "--step-delay needs --explain=step"));
    RunResult bad = run_minirun({"run", "--explain=steps", "--bundle", bundle.dir(), bundle.id()});
    CHECK(bad.exit_code == 1);
    CHECK(split_lines(bad.err).size() == 1);
    check_no_leftovers(bundle);
}
