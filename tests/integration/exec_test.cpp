// `exec`: a new process in every namespace of a running container, in the foreground (its
// exit code and output are exec's) or detached (pid file). Checked from inside (what the
// process prints) and from outside (its /proc entries on the host).
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

// A running container (run --detach) that exec can join; deleted by the Runtime.
struct Running {
    TempBundle bundle{"exec"};
    Runtime runtime;
    pid_t init = -1;

    Running() {
        bundle.set_shell(std::string("echo ready; ") + loop);
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid.has_value());
        init = *pid;
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    }

    // `exec [FLAGS...] ID ARGS...` in the foreground.
    RunResult exec(const std::vector<std::string>& flags, const std::vector<std::string>& args,
                   std::string_view stdin_text = {}) const {
        std::vector<std::string> full{"exec"};
        full.insert(full.end(), flags.begin(), flags.end());
        full.push_back(bundle.id());
        full.insert(full.end(), args.begin(), args.end());
        return runtime(full, stdin_text);
    }
};

} // namespace

TEST_CASE("exec: the process joins every namespace of the container's init", "[exec]") {
    Running container;
    std::string script = "for n in";
    for (const auto& name : namespace_names()) {
        script += " " + name;
    }
    script += "; do echo \"$n $(readlink /proc/self/ns/$n)\"; done; echo mypid $$";
    auto result = container.exec({}, {"sh", "-c", script});
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    for (const auto& name : namespace_names()) {
        const std::string inside = value_of(result.out, name);
        const std::string init = ns_link(container.init, name);
        INFO("namespace " << name << ": exec'd " << inside << ", init " << init << ", host "
                          << ns_link(0, name));
        CHECK(inside == init);
        CHECK(inside.rfind(name + ":[", 0) == 0);
    }
    // The container's namespaces are its own, not the host's.
    for (const char* name : {"mnt", "pid", "net", "ipc", "uts"}) {
        CHECK(value_of(result.out, name) != ns_link(0, name));
    }
    // A pid of the container's pid namespace, not 1 (that is the init).
    const std::string pid = value_of(result.out, "mypid");
    CHECK(std::regex_match(pid, std::regex("[0-9]+")));
    CHECK(pid != "1");
    // The container is still running afterwards.
    CHECK(container.runtime.status(container.bundle.id()) == "running");
    CHECK(process_alive(container.init));
}

TEST_CASE("exec: --cwd, --env and --user apply", "[exec]") {
    Running container;
    const std::string script =
        "echo cwd $(pwd); echo \"x [$IT_X]\"; echo \"y [$IT_Y]\"; echo uid $(id -u); "
        "echo gid $(id -g); echo path $PATH";
    SECTION("long flags") {
        auto result = container.exec({"--cwd", "/tmp", "--env", "IT_X=hello world", "--env",
                                      "IT_Y=second", "--user", "1000:1000"},
                                     {"sh", "-c", script});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(value_of(result.out, "cwd") == "/tmp");
        CHECK(value_of(result.out, "x") == "[hello world]");
        CHECK(value_of(result.out, "y") == "[second]");
        CHECK(value_of(result.out, "uid") == "1000");
        CHECK(value_of(result.out, "gid") == "1000");
        // The config's environment stays.
        CHECK(value_of(result.out, "path") ==
              "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    }
    SECTION("short flags") {
        auto result = container.exec({"--cwd", "/proc", "-e", "IT_X=short", "-u", "1234"},
                                     {"sh", "-c", script});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(value_of(result.out, "cwd") == "/proc");
        CHECK(value_of(result.out, "x") == "[short]");
        CHECK(value_of(result.out, "uid") == "1234");
        CHECK(value_of(result.out, "gid") == "0");
    }
    SECTION("defaults: the config's cwd and user") {
        auto result = container.exec({}, {"sh", "-c", script});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(value_of(result.out, "cwd") == "/");
        CHECK(value_of(result.out, "x") == "[]");
        CHECK(value_of(result.out, "uid") == "0");
    }
}

TEST_CASE("exec: the process's exit code and stdio are exec's", "[exec]") {
    Running container;
    SECTION("exit 7") {
        auto result = container.exec({}, {"sh", "-c", "exit 7"});
        INFO(result.describe());
        CHECK(result.exit_code == 7);
    }
    SECTION("exit 0") {
        auto result = container.exec({}, {"true"});
        INFO(result.describe());
        CHECK(result.exit_code == 0);
    }
    SECTION("stdin, stdout and stderr") {
        auto result = container.exec({}, {"sh", "-c", "cat; echo to-err >&2"}, "piped in\n");
        INFO(result.describe());
        CHECK(result.exit_code == 0);
        CHECK(result.out == "piped in\n");
        CHECK(result.err == "to-err\n");
    }
    SECTION("a missing executable") {
        auto result = container.exec({}, {"it-no-such-binary"});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(contains(result.err, "it-no-such-binary"));
    }
    CHECK(container.runtime.status(container.bundle.id()) == "running");
}

TEST_CASE("exec --detach: a pid file with a process of the container", "[exec]") {
    Running container;
    const std::string pid_file = container.runtime.io_dir() + "/exec.pid";
    const std::string marker = container.bundle.id() + "-exec";
    for (const char* detach : {"--detach", "-d"}) {
        INFO("flag " << detach);
        auto result = container.runtime.to_files({"exec", detach, "--pid-file", pid_file,
                                                  container.bundle.id(), "sh", "-c",
                                                  std::string("echo exec-ready; ") + loop, marker});
        INFO("exec: " << result.describe());
        REQUIRE(result.exit_code == 0);
        auto text = read_file(pid_file);
        REQUIRE(text.has_value());
        INFO("pid file '" << *text << "'");
        REQUIRE(std::regex_match(*text, std::regex("[1-9][0-9]*")));
        const auto pid = static_cast<pid_t>(std::stol(*text));
        CHECK(process_alive(pid));
        CHECK(contains(cmdline_of(pid), marker));
        for (const auto& name : namespace_names()) {
            INFO("namespace " << name);
            CHECK(ns_link(pid, name) == ns_link(container.init, name));
        }
        auto nspids = ns_pids(pid);
        CHECK(nspids.size() == 2);
        CHECK((nspids.size() == 2 && nspids.back() != 1));
        // No helper stays: the process was reparented to the test (a subreaper).
        auto parent = parent_pid(pid);
        INFO("parent " << parent.value_or(-1) << ": " << cmdline_of(parent.value_or(0)));
        CHECK(parent == getpid());
        auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!contains(result.out_now(), "exec-ready") &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(20ms);
        }
        CHECK(contains(result.out_now(), "exec-ready"));
        ::kill(pid, SIGKILL);
        CHECK(wait_for_exit(pid));
        reap(pid);
        ::unlink(pid_file.c_str());
    }
    CHECK(container.runtime.status(container.bundle.id()) == "running");
}

TEST_CASE("exec --process: the process from a JSON file", "[exec]") {
    Running container;
    nlohmann::json process = {
        {"terminal", false},
        {"user", {{"uid", 1000}, {"gid", 1000}}},
        {"args",
         {"sh", "-c", "echo cwd $(pwd); echo v $IT_V; echo uid $(id -u); echo gid $(id -g)"}},
        {"env", {"PATH=/bin:/usr/bin", "IT_V=from-json"}},
        {"cwd", "/tmp"},
    };
    const std::string path = container.runtime.io_dir() + "/process.json";
    std::ofstream(path) << process.dump(2);
    for (const char* flag : {"--process", "-p"}) {
        auto result = container.runtime({"exec", flag, path, container.bundle.id()});
        INFO(flag << ": " << result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(value_of(result.out, "cwd") == "/tmp");
        CHECK(value_of(result.out, "v") == "from-json");
        CHECK(value_of(result.out, "uid") == "1000");
        CHECK(value_of(result.out, "gid") == "1000");
    }
}

TEST_CASE("exec --process: from a pipe too, also when mini-run starts over from its "
          "protected view; without capabilities, the container's apply",
          "[exec]") {
    Running container;
    auto bounding_of = [](const std::string& status) {
        std::smatch match;
        std::regex line("CapBnd:\\s*([0-9a-f]+)");
        return std::regex_search(status, match, line) ? match[1].str() : std::string("none");
    };
    nlohmann::json process = {
        {"terminal", false},
        {"args", {"sh", "-c", "grep CapBnd /proc/self/status"}},
        {"env", {"PATH=/bin:/usr/bin"}},
        {"cwd", "/"},
    };
    SECTION("CAP_SYS_PTRACE: the re-exec, which reads the text the pipe gave the first start") {
        const nlohmann::json set = {"CAP_KILL", "CAP_SYS_PTRACE"};
        process["capabilities"] = {{"bounding", set}, {"effective", set}, {"permitted", set}};
        auto result = container.runtime(
            {"--debug", "exec", "-p", "/dev/stdin", container.bundle.id()}, process.dump());
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(contains(result.err, "no exec gate (this process may hold CAP_SYS_PTRACE)"));
        CHECK(bounding_of(result.out) == "0000000000080020"); // CAP_SYS_PTRACE (19), CAP_KILL (5)
    }
    SECTION("no capabilities in the file: the container's process's, as runc") {
        auto init_status = read_file("/proc/" + std::to_string(container.init) + "/status");
        REQUIRE(init_status);
        auto result =
            container.runtime({"exec", "-p", "/dev/stdin", container.bundle.id()}, process.dump());
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(bounding_of(result.out) == bounding_of(*init_status));
        CHECK(bounding_of(result.out) != "000001ffffffffff");
    }
}

TEST_CASE("exec: a stopped or unknown container fails", "[exec]") {
    TempBundle bundle("exec-stopped");
    bundle.set_shell("exit 0");
    Runtime runtime;
    create_start_until_stopped(runtime, bundle);

    auto result = runtime({"exec", bundle.id(), "sh", "-c", "echo should-not-run"}, {}, 10s);
    INFO("exec: " << result.describe());
    CHECK(result.exit_code != 0);
    CHECK_FALSE(result.timed_out);
    CHECK_FALSE(contains(result.out, "should-not-run"));
    CHECK(live_orphans().empty());

    auto unknown = runtime({"exec", "it-no-such-container", "true"});
    INFO("exec unknown: " << unknown.describe());
    CHECK(unknown.exit_code != 0);
    CHECK(contains(unknown.err, "does not exist"));

    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("exec --apparmor, --process-label: refused on a host without the LSM, nothing made",
          "[exec][lsm]") {
    // As the config's labels (ecosystem_test.cpp): a label the host cannot apply is an
    // error, never a process run unconfined. This project's machines have neither LSM.
    struct Case {
        std::string option;
        std::string sysfs; // the LSM's mark, as runtime/security/security.cpp checks it
        std::string line;
    };
    for (const Case& c :
         {Case{"--apparmor", "/sys/module/apparmor/parameters/enabled",
               "mini-run: exec --apparmor: AppArmor is not enabled on this host\n"},
          Case{"--process-label", "/sys/fs/selinux/enforce",
               "mini-run: exec --process-label: SELinux is not enabled on this host\n"}}) {
        INFO(c.option);
        if (c.option == "--apparmor" ? contains(read_file(c.sysfs).value_or(""), "Y")
                                     : read_file(c.sysfs).has_value()) {
            skip_test(c.option + ": this host has the LSM (" + c.sysfs +
                      "), so the option is not refused here");
            continue;
        }
        Running container;
        const std::string dir = container.runtime.root() + "/" + container.bundle.id();
        auto listing = [&dir] {
            std::vector<std::string> names;
            for (const auto& entry : std::filesystem::directory_iterator(dir)) {
                names.push_back(entry.path().filename().string());
            }
            std::sort(names.begin(), names.end());
            return names;
        };
        const std::vector<std::string> before = listing();
        const std::string pid_file = container.runtime.io_dir() + "/lsm-exec.pid";
        auto result =
            container.exec({c.option, "mini-run-it-no-such-label", "--pid-file", pid_file},
                           {"sh", "-c", "echo ran-unconfined"});
        INFO(result.describe());
        CHECK(result.exit_code == 255);
        CHECK(result.err == c.line); // one line, naming the option
        CHECK_FALSE(contains(result.out, "ran-unconfined"));
        CHECK_FALSE(std::filesystem::exists(pid_file));
        CHECK(listing() == before);
        // The container is untouched, and a plain exec still works.
        CHECK(container.runtime.status(container.bundle.id()) == "running");
        CHECK(process_alive(container.init));
        auto plain = container.exec({}, {"sh", "-c", "echo still-fine"});
        INFO(plain.describe());
        CHECK(plain.exit_code == 0);
        CHECK(contains(plain.out, "still-fine"));
    }
}
