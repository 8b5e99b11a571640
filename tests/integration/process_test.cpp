// The container's process as mini-run's caller sees it: exit codes, signals, stdio.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace it;

TEST_CASE("exit: mini-run exits with the container's exit code", "[process][exit]") {
    const int code = GENERATE(0, 1, 3, 42, 255);
    TempBundle bundle("exit");
    bundle.set_shell("exit " + std::to_string(code));
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == code);
    CHECK(result.err.empty());
    check_no_leftovers(bundle);
}

TEST_CASE("exit: a container whose init is killed by SIGKILL makes mini-run exit 137",
          "[process][exit]") {
    TempBundle bundle("sigkill");
    bundle.set_shell("echo ready; read line");
    Child minirun = bundle.start();
    REQUIRE(minirun.wait_for_output("ready\n"));
    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    REQUIRE(::kill(*init, SIGKILL) == 0);
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 128 + SIGKILL);
    check_no_leftovers(bundle);
}

TEST_CASE("exit: a container process killed by signal N makes mini-run exit 128+N",
          "[process][exit]") {
    // pid 1 of a pid namespace cannot be killed from inside; without a pid namespace the
    // shell is an ordinary process and can kill itself.
    TempBundle bundle("selfkill");
    bundle.remove_namespaces({"pid"});
    bundle.set_shell("kill -TERM $$; sleep 5; exit 9");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 128 + SIGTERM);
    check_no_leftovers(bundle);
}

TEST_CASE("signals: mini-run forwards INT, TERM, HUP, QUIT, USR1 and USR2 to the container",
          "[process][signals]") {
    struct Case {
        int signo;
        const char* name;
        int code; // the container exits with this code when its trap runs
    };
    const Case signal_case =
        GENERATE(Case{SIGTERM, "TERM", 42}, Case{SIGINT, "INT", 43}, Case{SIGHUP, "HUP", 44},
                 Case{SIGQUIT, "QUIT", 45}, Case{SIGUSR1, "USR1", 46}, Case{SIGUSR2, "USR2", 47});
    INFO("signal " << signal_case.name);
    TempBundle bundle(std::string("signal-") + signal_case.name);
    // A trap for every forwarded signal, each with its own exit code, so the test also sees
    // that the right signal arrived.
    bundle.set_shell("trap 'exit 42' TERM; trap 'exit 43' INT; trap 'exit 44' HUP; "
                     "trap 'exit 45' QUIT; trap 'exit 46' USR1; trap 'exit 47' USR2; "
                     "echo ready; while true; do sleep 0.1; done");
    Child minirun = bundle.start();
    REQUIRE(minirun.wait_for_output("ready\n"));
    minirun.signal(signal_case.signo);
    auto result = minirun.wait(20s);
    INFO(result.describe());
    CHECK_FALSE(result.timed_out);
    CHECK(result.exit_code == signal_case.code);
    check_no_leftovers(bundle);
}

TEST_CASE("signals: mini-run survives a signal that the container's init ignores",
          "[process][signals]") {
    // pid 1 of a pid namespace gets no signal it has no handler for (SIGKILL aside), and
    // this shell installs none: the forwarded SIGTERM is dropped, and mini-run must neither
    // die of it nor return, until the container really ends.
    TempBundle bundle("signal-ignored");
    bundle.set_shell("echo ready; while true; do sleep 0.1; done");
    Child minirun = bundle.start();
    REQUIRE(minirun.wait_for_output("ready\n"));
    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    minirun.signal(SIGTERM);
    CHECK_FALSE(minirun.wait_for_output("never printed", 500ms));
    CHECK_FALSE(minirun.exited());
    CHECK(::kill(*init, 0) == 0); // the container still runs
    REQUIRE(::kill(*init, SIGKILL) == 0);
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 128 + SIGKILL);
    check_no_leftovers(bundle);
}

TEST_CASE("stdio: stdin reaches the container, stdout and stderr stay apart", "[process][stdio]") {
    SECTION("stdin to cat") {
        TempBundle bundle("stdin");
        bundle.set_args({"cat"});
        auto result = bundle.run("hello from the test\nsecond line\n");
        INFO(result.describe());
        CHECK(result.exit_code == 0);
        CHECK(result.out == "hello from the test\nsecond line\n");
        CHECK(result.err.empty());
        check_no_leftovers(bundle);
    }
    SECTION("a megabyte through cat") {
        TempBundle bundle("stdin-big");
        bundle.set_args({"cat"});
        std::string big;
        for (int i = 0; big.size() < (1U << 20U); ++i) {
            big += "line " + std::to_string(i) + "\n";
        }
        auto result = bundle.run(big);
        INFO("exit code " << result.exit_code << ", " << result.out.size()
                          << " bytes out, stderr: " << result.err);
        CHECK(result.exit_code == 0);
        CHECK(result.out == big);
        check_no_leftovers(bundle);
    }
    SECTION("stdout and stderr") {
        TempBundle bundle("stdout-stderr");
        bundle.set_shell("echo to-out; echo to-err >&2; echo more-out");
        auto result = bundle.run();
        INFO(result.describe());
        CHECK(result.exit_code == 0);
        CHECK(result.out == "to-out\nmore-out\n");
        CHECK(result.err == "to-err\n");
        check_no_leftovers(bundle);
    }
    SECTION("a shell reading its commands from stdin") {
        TempBundle bundle("stdin-sh");
        bundle.set_args({"sh"});
        auto result = bundle.run("echo one\necho two >&2\nexit 7\n");
        INFO(result.describe());
        CHECK(result.exit_code == 7);
        CHECK(result.out == "one\n");
        CHECK(result.err == "two\n");
        check_no_leftovers(bundle);
    }
}

TEST_CASE("process: cwd, env and user from the config apply", "[process]") {
    TempBundle bundle("process");
    bundle.config["process"]["cwd"] = "/tmp";
    bundle.config["process"]["env"].push_back("IT_GREETING=hello world");
    bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    bundle.set_shell("echo cwd $(pwd); echo greeting $IT_GREETING; echo uid $(id -u); "
                     "echo gid $(id -g); echo groups $(id -G); echo path $PATH");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(value_of(result.out, "cwd") == "/tmp");
    CHECK(value_of(result.out, "greeting") == "hello world");
    CHECK(value_of(result.out, "uid") == "1000");
    CHECK(value_of(result.out, "gid") == "1000");
    CHECK(value_of(result.out, "groups") == "1000"); // none of the host's groups
    CHECK(value_of(result.out, "path") ==
          "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    check_no_leftovers(bundle);
}

// runc's prepareEnv: one entry per name, the last one's; a last HOME that is empty is
// replaced by the passwd's. Seen from inside with `env`, which lists duplicates too.
TEST_CASE("process: a name given twice in process.env keeps the last value", "[process]") {
    TempBundle bundle("process-env-dup");
    bundle.config["process"]["env"] = {"ONE=two", "HOME=/override", "PATH=/usr/bin:/bin",
                                       "ONE=three", "HOME="};
    bundle.set_args({"env"});
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    std::vector<std::string> lines = split_lines(result.out);
    std::sort(lines.begin(), lines.end());
    CHECK(lines == std::vector<std::string>{"HOME=/root", "ONE=three", "PATH=/usr/bin:/bin"});
    check_no_leftovers(bundle);

    // exec takes the saved config's env the same way.
    Runtime runtime;
    bundle.set_shell("while true; do sleep 0.1; done");
    auto ran = runtime.run_detached(bundle);
    INFO("run -d: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    auto exec = runtime({"exec", "--env", "TWO=a", bundle.id(), "sh", "-c", "echo $ONE $TWO"});
    INFO("exec: " << exec.describe());
    CHECK(exec.exit_code == 0);
    CHECK(exec.out == "three a\n");
}

TEST_CASE("the example bundle runs as it is, with its relative root.path", "[process]") {
    const std::string id = "it-example-" + std::to_string(getpid());
    std::vector<int> mounts_before;
    for (const auto& mount : host_mounts()) {
        mounts_before.push_back(mount.id);
    }
    auto result = run_minirun({"run", "--bundle", example_bundle(), id},
                              "hostname\necho pid $$\nid\nexit 5\n");
    INFO(result.describe());
    CHECK(result.exit_code == 5);
    CHECK(result.out == "mini-run\npid 1\nuid=0(root) gid=0(root)\n");
    CHECK(result.err.empty());
    for (const auto& mount : host_mounts()) {
        INFO("host mount " << mount.line);
        CHECK(std::find(mounts_before.begin(), mounts_before.end(), mount.id) !=
              mounts_before.end());
    }
    CHECK(processes_with_marker(id).empty());
}

TEST_CASE("run accepts -b as well as --bundle", "[process][cli]") {
    TempBundle bundle("short-flag");
    bundle.set_shell("echo short");
    bundle.write_config();
    auto result = run_minirun({"run", "-b", bundle.dir(), bundle.id()});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(result.out == "short\n");
    check_no_leftovers(bundle);
}
