// `mini-run demo NAME` and `--explain`: the demos print facts about namespaces, and each
// test checks those facts against what the test itself sees on the host (its hostname,
// its namespace links, its mount table, its network devices), then that the demo left
// nothing behind: no mount, veth, message queue, process or temporary directory.
#include "demo_checks.hpp"
#include "helpers.hpp"
#include "pty_run.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace it;
using namespace it::demo;

TEST_CASE("demo: without a name it lists the demos", "[demo]") {
    auto result = run_minirun({"demo"});
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    for (const char* name :
         {"uts", "ipc", "pid", "mount", "net", "user", "cgroup", "time", "all"}) {
        CHECK(contains(result.out, std::string("\n  ") + name + " "));
    }
    auto unknown = run_minirun({"demo", "nope"});
    CHECK(unknown.exit_code == 1);
    CHECK(contains(unknown.err, "mini-run: unknown demo \"nope\""));
}

TEST_CASE("demo uts: the container's hostname is its own, the host's is unchanged", "[demo]") {
    const std::string before = host_hostname();
    DemoRun demos;
    auto result = run_demo(demos, "uts", "uts");
    INFO(result.out);
    check_uts_facts(result.out, before);
}

TEST_CASE("demo ipc: a queue made on one side is invisible on the other", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "ipc", "ipc");
    INFO(result.out);
    check_ipc_facts(result.out);
}

TEST_CASE("demo pid: the shell is pid 1 inside and has another pid on the host", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "pid", "pid");
    INFO(result.out);
    check_pid_facts(result.out);
}

TEST_CASE("demo mount: a tmpfs mounted inside is not in the host's mount table", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "mount", "mnt");
    INFO(result.out);
    check_mount_facts(result.out);
}

TEST_CASE("demo net: a veth pair carries a ping across and is gone afterwards", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "net", "net");
    INFO(result.out);
    check_net_facts(result.out);
}

TEST_CASE("demo user: root inside is uid 100000 outside and cannot write the host's file",
          "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "user", "user");
    INFO(result.out);
    check_user_facts(result.out);
}

TEST_CASE("demo cgroup: every hierarchy is / inside", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "cgroup", "cgroup");
    INFO(result.out);
    check_cgroup_facts(result.out);
}

TEST_CASE("demo time: the clocks inside run ten days ahead", "[demo]") {
    if (!read_file("/proc/self/timens_offsets")) {
        skip_test("no time namespaces on this kernel (no /proc/self/timens_offsets)");
        return;
    }
    DemoRun demos;
    auto result = run_demo(demos, "time", "time");
    INFO(result.out);
    check_time_facts(result.out);
}

TEST_CASE("demo all: every namespace differs, then every demo", "[demo]") {
    DemoRun demos;
    const std::string host_name = host_hostname();
    const auto mounts_before = mount_lines();
    check_all(demos("all"), host_name);
    demos.check_clean(mounts_before);
}

TEST_CASE("demo --bundle: the demos run on the given bundle's rootfs and config", "[demo]") {
    TempDir bundle("minirun-it-demo-bundle");
    auto config = example_config();
    config["root"]["path"] = "given-rootfs";
    write_text(bundle.path() + "/config.json", config.dump());
    REQUIRE(run({"/bin/cp", "-a", example_rootfs(), bundle.path() + "/given-rootfs"}).exit_code ==
            0);
    DemoRun demos;
    const auto mounts_before = mount_lines();
    auto result = run(demos.argv({"--bundle", bundle.path(), "mount"}), {}, 120s);
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK_FALSE(contains(result.out, "UNEXPECTED"));
    check_mount_facts(result.out, "/given-rootfs");
    demos.check_clean(mounts_before);

    SECTION("a bundle without a shell is one line, and nothing is made") {
        const std::string empty = bundle.path() + "/empty-rootfs";
        REQUIRE(run({"/bin/mkdir", empty}).exit_code == 0);
        config["root"]["path"] = empty;
        write_text(bundle.path() + "/config.json", config.dump());
        auto refused = run(demos.argv({"--bundle", bundle.path(), "uts"}));
        CHECK(refused.exit_code == 1);
        CHECK(refused.err == "mini-run: demo uts: " + bundle.path() + "/config.json: root.path: " +
                                 empty + " has no /bin/sh for the demos' scripts\n");
        demos.check_clean(mounts_before);
    }
}

TEST_CASE("demo: Ctrl-C while the container runs removes everything", "[demo]") {
    DemoRun demos;
    const auto mounts_before = mount_lines();
    TempDir files;
    // --step: the run stops at each step's card on the terminal (Enter there), then the
    // demo pauses while the container runs (its "press Enter" on stdout).
    PtyRun demo(demos.argv({"net", "--step"}), files.path(), true);
    const bool paused =
        demo.answer_cards_until([&] { return contains(demo.out(), "press Enter"); }, 60s);
    INFO(demo.out() << demo.err());
    REQUIRE(paused);
    CHECK(demo.answered() > 40);
    // Paused with the veth pair up and the container running.
    const std::string host_end = "mrd" + std::to_string(demo.pid()) + "h";
    CHECK(run({"/usr/sbin/ip", "link", "show", host_end}).exit_code == 0);
    CHECK_FALSE(processes_with_marker("mini-run-demo-net-" + std::to_string(demo.pid())).empty());
    ::kill(demo.pid(), SIGINT);
    CHECK(demo.wait() == 130);
    CHECK(contains(demo.out(), "interrupted"));
    CHECK(contains(demo.out(), "removed the veth pair"));
    CHECK(run({"/usr/sbin/ip", "link", "show", host_end}).exit_code != 0);
    demos.check_clean(mounts_before);
}

TEST_CASE("demo --step: Ctrl-C at a step's card removes everything; no terminal is refused",
          "[demo]") {
    DemoRun demos;
    const auto mounts_before = mount_lines();
    {
        TempDir files;
        PtyRun demo(demos.argv({"uts", "--step"}), files.path(), true);
        REQUIRE_FALSE(demo.advance_to("init", "hostname", 60s).empty());
        demo.press("\x03");
        CHECK(demo.wait() == 130);
        INFO(demo.out() << demo.err());
        CHECK(contains(demo.out(), "interrupted"));
    }
    demos.check_clean(mounts_before);

    // setsid(1): a session without a controlling terminal, where no Enter can come.
    std::vector<std::string> argv = demos.argv({"uts", "--step"});
    argv.insert(argv.begin(), "/usr/bin/setsid");
    auto refused = run(argv);
    INFO(refused.describe());
    CHECK(refused.exit_code == 1);
    CHECK(refused.err.starts_with("mini-run: demo --step waits for Enter on a terminal"));
    CHECK(split_lines(refused.err).size() == 1);
    demos.check_clean(mounts_before);
}

// ---------------------------------------------------------------------------------------
// --explain

namespace {

// The example with every namespace, id maps, time offsets and a seccomp filter, so that
// every kind of step shows.
void every_namespace(TempBundle& bundle) {
    bundle.add_user_namespace();
    bundle.add_namespace("cgroup");
    bundle.add_namespace("time");
    bundle.config["linux"]["timeOffsets"] = {{"monotonic", {{"secs", 3600}, {"nanosecs", 0}}}};
    bundle.config["linux"]["seccomp"] = {
        {"defaultAction", "SCMP_ACT_ALLOW"},
        {"syscalls", {{{"names", {"syslog"}}, {"action", "SCMP_ACT_ERRNO"}}}}};
}

struct Step {
    int number = 0;
    std::string who;
    std::string text;
};

std::vector<Step> explain_steps(const std::string& err) {
    std::vector<Step> steps;
    const std::regex pattern(R"(^\[explain\] (\d+)\. (runtime|init): (.*)$)");
    for (const auto& line : split_lines(err)) {
        std::smatch match;
        if (std::regex_match(line, match, pattern)) {
            steps.push_back({std::stoi(match[1]), match[2], match[3]});
        }
    }
    return steps;
}

// The index of the first step whose text starts with `start` (and contains `part`).
long index_of(const std::vector<Step>& steps, const std::string& start,
              const std::string& part = "") {
    for (size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].text.rfind(start, 0) == 0 && contains(steps[i].text, part)) {
            return static_cast<long>(i);
        }
    }
    FAIL_CHECK("no explain step starting with " << start << " " << part);
    return -1;
}

} // namespace

TEST_CASE("--explain: run lists every step in order on stderr, and nothing without it",
          "[demo][explain]") {
    TempBundle bundle("explain");
    every_namespace(bundle);
    bundle.set_shell("echo out");
    bundle.write_config();
    auto argv = bundle.run_argv();
    argv.insert(argv.begin() + 2, "--explain"); // mini-run run --explain --bundle ...
    auto result = run(argv);
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(result.out == "out\n"); // nothing of it on stdout
    auto steps = explain_steps(result.err);
    REQUIRE(steps.size() > 20);

    // Numbered 1..N across the runtime and its init, each number once.
    std::vector<int> numbers;
    numbers.reserve(steps.size());
    for (const auto& step : steps) {
        numbers.push_back(step.number);
    }
    std::sort(numbers.begin(), numbers.end());
    for (size_t i = 0; i < numbers.size(); ++i) {
        CHECK(numbers[i] == static_cast<int>(i + 1));
    }
    for (const auto& step : steps) {
        const bool by_runtime = step.text.starts_with("clone3(") || contains(step.text, "_map:") ||
                                step.text.starts_with("exec gate:") ||
                                step.text.starts_with("procfs:");
        CHECK(step.who == (by_runtime ? "runtime" : "init"));
    }

    const long clone = index_of(steps, "clone3(", "CLONE_NEWUSER");
    for (const char* flag :
         {"CLONE_NEWNS", "CLONE_NEWUTS", "CLONE_NEWIPC", "CLONE_NEWPID", "CLONE_NEWNET"}) {
        CHECK(contains(steps[static_cast<size_t>(clone)].text, flag));
    }
    // The cgroup namespace comes from clone3 or, once the init is in its cgroup, unshare.
    long cgroup = -1;
    for (size_t i = 0; i < steps.size() && cgroup < 0; ++i) {
        if ((steps[i].text.starts_with("clone3(") || steps[i].text.starts_with("unshare(")) &&
            contains(steps[i].text, "CLONE_NEWCGROUP")) {
            cgroup = static_cast<long>(i);
        }
    }
    CHECK(cgroup >= 0);
    const long gid_map = index_of(steps, "write /proc/", "gid_map: \"0 100000 65536");
    const long uid_map = index_of(steps, "write /proc/", "uid_map: \"0 100000 65536");
    const long rlimit = index_of(steps, "setrlimit(RLIMIT_NOFILE, soft 1024, hard 1024)");
    const long time = index_of(steps, "unshare(CLONE_NEWTIME)", "monotonic 3600 0");
    const long hostname = index_of(steps, "sethostname(\"mini-run\")");
    const long private_root = index_of(steps, "mount(\"/\", MS_REC|MS_PRIVATE)");
    const long bind_root = index_of(steps, "mount(\"" + bundle.rootfs() + "\" onto itself");
    const long proc = index_of(steps, "mount(\"proc\" on /proc");
    const long dev = index_of(steps, "mount(\"tmpfs\" on /dev, MS_NOSUID|MS_STRICTATIME, mode=755");
    const long pts = index_of(steps, "mount(\"devpts\" on /dev/pts, MS_NOSUID|MS_NOEXEC");
    const long sys = index_of(steps, "mount(\"sysfs\" on /sys, MS_RDONLY|MS_NOSUID");
    const long devices = index_of(steps, "mount(host node, MS_BIND) for 6 devices");
    const long pivot = index_of(steps, R"(pivot_root(".", "."))");
    const long detach = index_of(steps, "umount2(old root, MNT_DETACH)");
    const long readonly = index_of(steps, "mount(\"/\", MS_BIND|MS_REMOUNT|MS_RDONLY)");
    const long masked = index_of(steps, "mount(\"/dev/null\" on /proc/keys, MS_BIND): masked");
    const long bounding = index_of(steps, "prctl(PR_CAPBSET_DROP)", "CAP_KILL");
    const long identity = index_of(steps, "setgroups(0 groups), setresgid(0), setresuid(0)");
    const long capset = index_of(steps, "capset(effective CAP_AUDIT_WRITE,CAP_KILL");
    const long no_new_privs = index_of(steps, "prctl(PR_SET_NO_NEW_PRIVS, 1)");
    const long seccomp = index_of(steps, "seccomp(SECCOMP_SET_MODE_FILTER)", "1 rule");
    // `run` of this container takes the exec gate, decided before anything is made.
    const long gate = index_of(steps, "exec gate:");
    // The procfs handle the writes under /proc go through, before any namespace exists.
    const long procfs = index_of(steps, "procfs:", "private procfs instance");
    const long execve = index_of(steps, "execveat(exec gate)", "execve(\"/bin/sh\"");

    CHECK(gate == 0);
    CHECK(procfs == 1);
    CHECK(clone == 2);
    CHECK(clone < gid_map);
    CHECK(gid_map < uid_map);
    CHECK(clone < rlimit);
    // The init waits for the maps before it goes on.
    CHECK(uid_map < time);
    CHECK(time < hostname);
    CHECK(hostname < private_root);
    CHECK(private_root < bind_root);
    CHECK(bind_root < proc);
    CHECK(proc < dev);
    CHECK(dev < pts);
    CHECK(pts < sys);
    CHECK(sys < devices);
    CHECK(devices < pivot);
    CHECK(pivot < detach);
    CHECK(detach < readonly);
    CHECK(readonly < masked);
    CHECK(masked < bounding);
    CHECK(bounding < identity);
    CHECK(identity < capset);
    CHECK(capset < no_new_privs);
    CHECK(no_new_privs < seccomp);
    CHECK(seccomp < execve);
    CHECK(execve == static_cast<long>(steps.size()) - 1);
    check_no_leftovers(bundle);

    SECTION("without --explain, not a word of it") {
        TempBundle plain("explain-off");
        every_namespace(plain);
        plain.set_shell("echo out");
        auto quiet = plain.run();
        INFO(quiet.describe());
        REQUIRE(quiet.exit_code == 0);
        CHECK(quiet.out == "out\n");
        CHECK_FALSE(contains(quiet.err, "[explain]"));
        CHECK(quiet.err.empty());
        check_no_leftovers(plain);
    }
}

TEST_CASE("--explain: create explains the setup and the gate, start lets the process run",
          "[demo][explain]") {
    Runtime runtime;
    TempBundle bundle("explain-create");
    bundle.set_shell("echo started");
    auto created = runtime.create(bundle, {"--explain"});
    INFO(created.describe());
    REQUIRE(created.exit_code == 0);
    auto steps = explain_steps(created.err_now());
    // How the binary is protected is decided first: this container takes the exec gate.
    CHECK(index_of(steps, "exec gate:") == 0);
    CHECK(index_of(steps, "clone3(") == 1);
    CHECK(index_of(steps, "pivot_root(") > 1);
    // create ends with the init entering the gate, which waits for start: no execve yet.
    const long gate =
        index_of(steps, "execveat(exec gate), which waits for start", "execve(\"/bin/sh\"");
    CHECK(gate == static_cast<long>(steps.size()) - 1);
    for (const auto& step : steps) {
        CHECK_FALSE(step.text.starts_with("execve("));
    }
    CHECK_FALSE(contains(created.out_now(), "started"));
    auto started = runtime({"start", bundle.id()});
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    // Only start lets the process run (its stdout is the create's).
    bool ran = false;
    for (int i = 0; i < 100 && !ran; ++i) {
        ran = contains(created.out_now(), "started");
        if (!ran) {
            usleep(20000);
        }
    }
    CHECK(ran);
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
}
