// process.scheduler, process.ioPriority and process.execCPUAffinity: the init and exec'd
// processes, checked from the host (chrt, ionice, /proc/<pid>/stat and status) and from
// inside (/proc/self/stat, /proc/self/status); bad values fail with the field's path.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

// What a script prints about its own scheduling: nice and policy (fields 19 and 41 of
// /proc/self/stat; the comm field has no space here) and the cpus it may run on.
constexpr const char* report_self =
    "set -- $(cat /proc/self/stat); echo nice ${19}; echo policy ${41}; "
    "grep Cpus_allowed_list /proc/self/status | sed 's/.*:\\s*/cpus /'";

std::string host_tool(const std::vector<std::string>& argv) {
    auto result = run(argv);
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    return result.out;
}

std::string stat_field(pid_t pid, size_t number) {
    auto text = read_file("/proc/" + std::to_string(pid) + "/stat");
    REQUIRE(text.has_value());
    auto words = split_words(text->substr(text->rfind(')') + 2));
    REQUIRE(words.size() > number - 3);
    return words[number - 3]; // fields 1 and 2 (pid, comm) come before the ')'
}

std::string cpus_allowed(pid_t pid) {
    auto field = status_field(pid, "Cpus_allowed_list");
    REQUIRE(field.size() == 1);
    return field[0];
}

long online_cpus() {
    return ::sysconf(_SC_NPROCESSORS_ONLN);
}

// A running container (run --detach) with `process` fields merged into config.json's.
struct Running {
    TempBundle bundle;
    Runtime runtime;
    pid_t init = -1;
    FileRunResult ran;

    Running(std::string_view name, const nlohmann::json& process,
            const nlohmann::json& linux_section = nlohmann::json::object())
        : bundle(name) {
        bundle.set_shell(std::string("echo ready; ") + loop);
        bundle.config["process"].update(process);
        bundle.config["linux"].update(linux_section);
        ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid.has_value());
        init = *pid;
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    }

    // `exec -d --pid-file F [FLAGS...] ID sh -c LOOP MARKER`: the exec'd process's host pid.
    pid_t exec_detached(const std::vector<std::string>& flags, bool with_args = true) {
        const std::string pid_file = runtime.io_dir() + "/exec.pid";
        ::unlink(pid_file.c_str());
        std::vector<std::string> args{"exec", "-d", "--pid-file", pid_file};
        args.insert(args.end(), flags.begin(), flags.end());
        args.push_back(bundle.id());
        if (with_args) {
            for (const std::string& arg :
                 {std::string("sh"), std::string("-c"), std::string(loop), bundle.id() + "-exec"}) {
                args.push_back(arg);
            }
        }
        auto result = runtime.to_files(args);
        INFO("exec -d: " << result.describe());
        REQUIRE(result.exit_code == 0);
        auto text = read_file(pid_file);
        REQUIRE(text.has_value());
        return static_cast<pid_t>(std::stol(*text));
    }

    // `exec [FLAGS...] ID sh -c SCRIPT` in the foreground.
    RunResult exec(const std::vector<std::string>& flags, const std::string& script) const {
        std::vector<std::string> args{"exec"};
        args.insert(args.end(), flags.begin(), flags.end());
        args.push_back(bundle.id());
        for (const std::string& arg : {std::string("sh"), std::string("-c"), script}) {
            args.push_back(arg);
        }
        return runtime(args);
    }

    std::string write_process(const nlohmann::json& process) const {
        const std::string path = runtime.io_dir() + "/process.json";
        std::ofstream(path) << process.dump(2);
        return path;
    }
};

void end_process(pid_t pid) {
    ::kill(pid, SIGKILL);
    CHECK(wait_for_exit(pid));
    reap(pid);
}

// A create with these process fields fails with `message` (one line) and leaves nothing.
void check_refused(const nlohmann::json& process, const std::string& message) {
    TempBundle bundle("sched-bad");
    bundle.set_shell("echo should-not-run");
    bundle.config["process"].update(process);
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    CHECK(created.exit_code != 0);
    CHECK(created.err_now() == "mini-run: " + message + "\n");
    CHECK_FALSE(contains(created.out_now(), "should-not-run"));
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

} // namespace

TEST_CASE("scheduler: SCHED_BATCH nice 5 for the init and for exec'd processes", "[sched]") {
    Running container("sched-batch", {{"scheduler", {{"policy", "SCHED_BATCH"}, {"nice", 5}}}});
    // From the host.
    CHECK(contains(host_tool({"/usr/bin/chrt", "-p", std::to_string(container.init)}),
                   "scheduling policy: SCHED_BATCH"));
    CHECK(stat_field(container.init, 19) == "5");
    CHECK(stat_field(container.init, 41) == "3");
    // From inside: pid 1, and a plain exec, which takes the container's settings (runc).
    auto inside = container.exec({}, "set -- $(cat /proc/1/stat); echo nice ${19}; echo policy "
                                     "${41}");
    INFO(inside.describe());
    REQUIRE(inside.exit_code == 0);
    CHECK(value_of(inside.out, "nice") == "5");
    CHECK(value_of(inside.out, "policy") == "3");
    auto self = container.exec({}, report_self);
    INFO(self.describe());
    REQUIRE(self.exit_code == 0);
    CHECK(value_of(self.out, "nice") == "5");
    CHECK(value_of(self.out, "policy") == "3");
}

// With cgroup v1 real-time group scheduling a new cpu cgroup has no real-time runtime
// (cpu.rt_runtime_us 0), and its children cannot get any: a cgroup right below the root,
// given some.
static nlohmann::json realtime_linux(const std::string& name) {
    return {{"cgroupsPath", "/" + name}, {"resources", {{"cpu", {{"realtimeRuntime", 10000}}}}}};
}

TEST_CASE("scheduler: SCHED_FIFO priority 10 as root", "[sched]") {
    Running container("sched-fifo", {{"scheduler", {{"policy", "SCHED_FIFO"}, {"priority", 10}}}},
                      realtime_linux("it-sched-fifo-" + std::to_string(::getpid())));
    auto chrt = host_tool({"/usr/bin/chrt", "-p", std::to_string(container.init)});
    CHECK(contains(chrt, "scheduling policy: SCHED_FIFO"));
    CHECK(contains(chrt, "scheduling priority: 10"));
    CHECK(stat_field(container.init, 41) == "1");
    CHECK(stat_field(container.init, 40) == "10"); // rt_priority
}

TEST_CASE("scheduler: SCHED_FIFO without CAP_SYS_NICE is a clear error", "[sched]") {
    if (run({"/usr/bin/setpriv", "--version"}).exit_code != 0) {
        skip_test("no setpriv (util-linux) to drop CAP_SYS_NICE");
        return;
    }
    TempBundle bundle("sched-noperm");
    bundle.set_shell("echo should-not-run");
    bundle.config["process"]["scheduler"] = {{"policy", "SCHED_FIFO"}, {"priority", 10}};
    bundle.config["linux"].update(realtime_linux("it-sched-noperm-" + std::to_string(::getpid())));
    Runtime runtime;
    bundle.write_config();
    std::vector<std::string> argv{"/usr/bin/setpriv", "--bounding-set", "-sys_nice", "--"};
    for (const std::string& arg : runtime.argv({"run", "--bundle", bundle.dir(), bundle.id()})) {
        argv.push_back(arg);
    }
    auto result = run(argv);
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(split_lines(result.err).size() == 1);
    CHECK(contains(result.err, "mini-run: process.scheduler: sched_setattr(SCHED_FIFO, nice 0, "
                               "priority 10): Operation not permitted"));
    CHECK_FALSE(contains(result.out, "should-not-run"));
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("ioPriority: the init's and an exec'd process's class and level", "[sched]") {
    Running container("sched-io",
                      {{"ioPriority", {{"class", "IOPRIO_CLASS_BE"}, {"priority", 5}}}});
    CHECK(host_tool({"/usr/bin/ionice", "-p", std::to_string(container.init)}) ==
          "best-effort: prio 5\n");
    pid_t exec = container.exec_detached({});
    CHECK(host_tool({"/usr/bin/ionice", "-p", std::to_string(exec)}) == "best-effort: prio 5\n");
    end_process(exec);
}

TEST_CASE("ioPriority: IOPRIO_CLASS_IDLE", "[sched]") {
    Running container("sched-idle", {{"ioPriority", {{"class", "IOPRIO_CLASS_IDLE"}}}});
    CHECK(host_tool({"/usr/bin/ionice", "-p", std::to_string(container.init)}) == "idle\n");
}

TEST_CASE("execCPUAffinity: final for exec'd processes, never the init", "[sched]") {
    if (online_cpus() < 2) {
        skip_test("needs two online cpus");
        return;
    }
    const std::string all = cpus_allowed(::getpid());
    Running container("sched-cpus", {{"execCPUAffinity", {{"initial", "0"}, {"final", "1"}}}});
    // The init: not the spec's business; it keeps the cpus it was started with.
    CHECK(cpus_allowed(container.init) == all);
    // An exec'd process: `final`, seen from the host and from inside.
    pid_t exec = container.exec_detached({});
    CHECK(cpus_allowed(exec) == "1");
    end_process(exec);
    auto inside = container.exec({}, report_self);
    INFO(inside.describe());
    REQUIRE(inside.exit_code == 0);
    CHECK(value_of(inside.out, "cpus") == "1");
    // mini-run itself got its own cpus back after the clone: exec in the foreground is
    // still there while its process runs.
    Child foreground(container.runtime.argv(
        {"exec", container.bundle.id(), "sh", "-c", "echo ready; read line; exit 0"}));
    REQUIRE(foreground.wait_for_output("ready\n"));
    CHECK(cpus_allowed(foreground.pid()) == all);
    // The process ends by itself (end of its stdin), so nothing is left for the delete.
    auto ended = foreground.wait();
    INFO(ended.describe());
    CHECK(ended.exit_code == 0);
}

TEST_CASE("execCPUAffinity: only initial, and the process ends on the cgroup's cpus", "[sched]") {
    if (online_cpus() < 2) {
        skip_test("needs two online cpus");
        return;
    }
    const std::string all = cpus_allowed(::getpid());
    Running container("sched-initial", {{"execCPUAffinity", {{"initial", "1"}}}});
    pid_t exec = container.exec_detached({});
    CHECK(cpus_allowed(exec) == all);
    end_process(exec);
}

TEST_CASE("exec --process: its own scheduler, ioPriority and execCPUAffinity", "[sched][exec]") {
    if (online_cpus() < 2) {
        skip_test("needs two online cpus");
        return;
    }
    Running container("sched-process",
                      {{"scheduler", {{"policy", "SCHED_BATCH"}, {"nice", 5}}},
                       {"ioPriority", {{"class", "IOPRIO_CLASS_BE"}, {"priority", 5}}},
                       {"execCPUAffinity", {{"final", "1"}}}});
    nlohmann::json process = {
        {"args", {"sh", "-c", loop, container.bundle.id() + "-exec"}},
        {"cwd", "/"},
        {"env", {"PATH=/bin:/usr/bin"}},
        {"scheduler", {{"policy", "SCHED_IDLE"}}},
        {"ioPriority", {{"class", "IOPRIO_CLASS_BE"}, {"priority", 2}}},
        {"execCPUAffinity", {{"initial", "1"}, {"final", "0"}}},
    };
    pid_t own = container.exec_detached({"--process", container.write_process(process)}, false);
    CHECK(contains(host_tool({"/usr/bin/chrt", "-p", std::to_string(own)}),
                   "scheduling policy: SCHED_IDLE"));
    CHECK(host_tool({"/usr/bin/ionice", "-p", std::to_string(own)}) == "best-effort: prio 2\n");
    CHECK(cpus_allowed(own) == "0");
    end_process(own);

    // A --process without them: the container's apply (runc: the file's override them).
    process.erase("scheduler");
    process.erase("ioPriority");
    process.erase("execCPUAffinity");
    pid_t inherited =
        container.exec_detached({"--process", container.write_process(process)}, false);
    CHECK(contains(host_tool({"/usr/bin/chrt", "-p", std::to_string(inherited)}),
                   "scheduling policy: SCHED_BATCH"));
    CHECK(stat_field(inherited, 19) == "5");
    CHECK(host_tool({"/usr/bin/ionice", "-p", std::to_string(inherited)}) ==
          "best-effort: prio 5\n");
    CHECK(cpus_allowed(inherited) == "1");
    end_process(inherited);
}

TEST_CASE("scheduling: bad values fail with the field's path and leave nothing", "[sched]") {
    check_refused({{"scheduler", {{"policy", "SCHED_FOO"}}}},
                  R"(process.scheduler.policy: unknown policy "SCHED_FOO")");
    check_refused({{"scheduler", {{"policy", "SCHED_OTHER"}, {"nice", 40}}}},
                  "process.scheduler.nice: must be between -20 and 19, got 40");
    check_refused({{"ioPriority", {{"class", "IOPRIO_CLASS_BE"}, {"priority", 9}}}},
                  "process.ioPriority.priority: must be between 0 (highest) and 7 (lowest), got 9");
    check_refused({{"execCPUAffinity", {{"initial", "0-"}}}},
                  R"(process.execCPUAffinity.initial: bad cpu list "0-": expected a cpu number )"
                  R"(after '-')");
}

TEST_CASE("exec --process: a bad value is refused before anything starts", "[sched][exec]") {
    Running container("sched-badexec", nlohmann::json::object());
    nlohmann::json process = {{"args", {"sh", "-c", "echo should-not-run"}},
                              {"cwd", "/"},
                              {"execCPUAffinity", {{"final", "1-0"}}}};
    auto result = container.runtime(
        {"exec", "--process", container.write_process(process), container.bundle.id()});
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(contains(result.err, R"(process.execCPUAffinity.final: bad cpu list "1-0")"));
    CHECK(split_lines(result.err).size() == 1);
    CHECK_FALSE(contains(result.out, "should-not-run"));
    CHECK(container.runtime.status(container.bundle.id()) == "running");
}
