// `mini-run demo NAME` and `--explain`: the demos print facts about namespaces, and each
// test checks those facts against what the test itself sees on the host (its hostname,
// its namespace links, its mount table, its network devices), then that the demo left
// nothing behind: no mount, veth, message queue, process or temporary directory.
#include "helpers.hpp"

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

namespace {

std::string host_hostname() {
    std::array<char, 256> name{};
    gethostname(name.data(), name.size() - 1);
    return name.data();
}

// The value after "<who>  <what>: " in a demo's output ("inside  echo $$: 1").
std::string fact(const std::string& out, const std::string& who, const std::string& what) {
    const std::string prefix = who + "  " + what + ": ";
    for (const auto& line : split_lines(out)) {
        auto at = line.find(prefix);
        if (at != std::string::npos) {
            return line.substr(at + prefix.size());
        }
    }
    return "<no line " + prefix + ">";
}

struct NsLine {
    std::string inside;
    std::string host;
};

// "/proc/self/ns/uts  inside uts:[1]  host uts:[2]  (different)"
NsLine ns_line(const std::string& out, const std::string& name) {
    const std::regex pattern("/proc/self/ns/" + name + R"(  inside (\S+)  host (\S+)  \()");
    std::smatch match;
    if (std::regex_search(out, match, pattern)) {
        return {match[1], match[2]};
    }
    return {"<none>", "<none>"};
}

std::set<std::string> mount_lines() {
    std::set<std::string> lines;
    for (const auto& mount : host_mounts()) {
        lines.insert(mount.line);
    }
    return lines;
}

std::vector<std::string> demo_links() {
    std::vector<std::string> found;
    auto links = run({"/usr/sbin/ip", "-o", "link", "show"});
    for (const auto& line : split_lines(links.out)) {
        if (contains(line, ": mrd")) {
            found.push_back(line);
        }
    }
    return found;
}

// Runs demos with TMPDIR pointing at a directory of the test, so that their temporary
// bundles and state roots can be checked to be gone.
class DemoRun {
public:
    std::vector<std::string> argv(const std::vector<std::string>& args) const {
        std::vector<std::string> out{"/usr/bin/env", "TMPDIR=" + tmp_.path(),
                                     "MINIRUN_SOURCE_DIR=" + source_dir(), minirun_binary(),
                                     "demo"};
        out.insert(out.end(), args.begin(), args.end());
        return out;
    }
    RunResult operator()(const std::string& name) const {
        return run(argv({name}), {}, std::chrono::seconds(120));
    }
    // Everything the demos made is gone.
    void check_clean(const std::set<std::string>& mounts_before) const {
        auto left = run({"/bin/ls", "-A", tmp_.path()});
        CHECK(left.out.empty());
        CHECK(processes_with_marker("mini-run-demo-").empty());
        CHECK(demo_links().empty());
        // Other tests may mount things meanwhile: only what names a demo counts.
        auto mounts_after = mount_lines();
        std::vector<std::string> added;
        std::set_difference(mounts_after.begin(), mounts_after.end(), mounts_before.begin(),
                            mounts_before.end(), std::back_inserter(added));
        std::erase_if(added, [&](const std::string& line) {
            return !contains(line, "mini-run-demo") && !contains(line, tmp_.path()) &&
                   !contains(line, "rootfs-examples");
        });
        INFO("new mounts: " << added.size());
        for (const auto& line : added) {
            INFO(line);
        }
        CHECK(added.empty());
    }

private:
    TempDir tmp_{"minirun-it-demo"};
};

void check_ns(const std::string& out, const std::string& name) {
    NsLine ns = ns_line(out, name);
    INFO("namespace " << name);
    CHECK(ns.host == ns_link(0, name));
    CHECK(ns.inside.rfind(name + ":[", 0) == 0);
    CHECK(ns.inside != ns.host);
}

// Runs one demo and checks the parts every demo has.
RunResult run_demo(const DemoRun& demos, const std::string& name, const std::string& ns) {
    const auto mounts_before = mount_lines();
    auto result = demos(name);
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK_FALSE(contains(result.out, "UNEXPECTED"));
    CHECK(contains(result.out, "flag      CLONE_NEW"));
    CHECK(contains(result.out, "code      runtime/"));
    check_ns(result.out, ns);
    demos.check_clean(mounts_before);
    return result;
}

std::vector<std::string> words(const std::string& text) {
    return split_words(text);
}

} // namespace

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
    CHECK(fact(result.out, "inside", "hostname, as mini-run set it from config.json") ==
          "mini-run-demo");
    CHECK(fact(result.out, "inside", "after `hostname renamed-inside`") == "renamed-inside");
    CHECK(fact(result.out, "host  ", "gethostname() while the container ran") == before);
    CHECK(host_hostname() == before);
}

TEST_CASE("demo ipc: a queue made on one side is invisible on the other", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "ipc", "ipc");
    INFO(result.out);
    std::smatch match;
    REQUIRE(std::regex_search(result.out, match, std::regex(R"(msgget key (0x4d52[0-9a-f]+))")));
    const std::string host_key = match[1];
    REQUIRE(std::regex_search(result.out, match, std::regex(R"(msgget key (0x4d43[0-9a-f]+))")));
    const std::string inside_key = match[1];
    auto inside = words(fact(result.out, "inside", "queues (cat /proc/sysvipc/msg)"));
    auto host = words(fact(result.out, "host  ", "queues (cat /proc/sysvipc/msg)"));
    CHECK(std::count(inside.begin(), inside.end(), inside_key) == 1);
    CHECK(std::count(inside.begin(), inside.end(), host_key) == 0);
    CHECK(std::count(host.begin(), host.end(), host_key) == 1);
    CHECK(std::count(host.begin(), host.end(), inside_key) == 0);
    // Both queues are gone now: the host's removed by the demo, the container's with its
    // namespace.
    const std::string queues = read_file("/proc/sysvipc/msg").value_or("");
    for (const std::string& key : {host_key, inside_key}) {
        CHECK_FALSE(contains(queues, std::to_string(std::stoul(key, nullptr, 16))));
    }
}

TEST_CASE("demo pid: the shell is pid 1 inside and has another pid on the host", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "pid", "pid");
    INFO(result.out);
    CHECK(fact(result.out, "inside", "echo $$") == "1");
    std::smatch match;
    REQUIRE(std::regex_search(result.out, match,
                              std::regex(R"(/proc/(\d+)/status NSpid: (\d+) (\d+))")));
    CHECK(match[1] == match[2]);
    CHECK(match[2] != "1");
    CHECK(match[3] == "1");
    CHECK(std::stol(match[2]) != getpid());
    // ps inside: a header, the shell as pid 1, and very few others.
    auto at = result.out.find("PID   COMMAND");
    REQUIRE(at != std::string::npos);
    auto rest = split_lines(result.out.substr(at));
    REQUIRE(rest.size() >= 2);
    CHECK(words(rest[1]) == std::vector<std::string>{"1", "sh"});
}

TEST_CASE("demo mount: a tmpfs mounted inside is not in the host's mount table", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "mount", "mnt");
    INFO(result.out);
    std::smatch match;
    REQUIRE(std::regex_search(result.out, match,
                              std::regex(R"(mount -t tmpfs (\S+) /tmp: (\S+) /tmp tmpfs)")));
    CHECK(match[1] == match[2]);
    const std::string source = match[1];
    CHECK(fact(result.out, "host  ", "grep " + source + " /proc/self/mountinfo") == "nothing");
    for (const auto& mount : host_mounts()) {
        CHECK_FALSE(contains(mount.line, source));
    }
    CHECK(fact(result.out, "inside", "/ is the bind mount of").ends_with("/rootfs"));
    CHECK(contains(result.out, "]: unreachable"));
}

TEST_CASE("demo net: a veth pair carries a ping across and is gone afterwards", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "net", "net");
    INFO(result.out);
    CHECK(fact(result.out, "inside", "ls /sys/class/net, at the start") == "lo");
    std::smatch match;
    REQUIRE(std::regex_search(
        result.out, match, std::regex(R"(ip link add (mrd\d+h) type veth peer name (mrd\d+c))")));
    const std::string host_end = match[1];
    CHECK(fact(result.out, "inside", "with the veth end") == "lo " + std::string(match[2]));
    CHECK(fact(result.out, "inside", "after `ip link del` on the host") == "lo");
    REQUIRE(std::regex_search(result.out, match, std::regex(R"(ping (10\.203\.\d+\.1): ok)")));
    const std::string host_addr = match[1];
    REQUIRE(std::regex_search(result.out, match,
                              std::regex(R"(host    ping (10\.203\.\d+\.2) \(.*\): ok)")));
    // Gone: the device, and with it the address and the route of the test subnet.
    CHECK(run({"/usr/sbin/ip", "link", "show", host_end}).exit_code != 0);
    CHECK_FALSE(contains(run({"/usr/sbin/ip", "-4", "addr", "show"}).out, host_addr + "/"));
}

TEST_CASE("demo user: root inside is uid 100000 outside and cannot write the host's file",
          "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "user", "user");
    INFO(result.out);
    CHECK(fact(result.out, "inside", "id").rfind("uid=0(root) gid=0(root)", 0) == 0);
    CHECK(contains(result.out, "Uid (real, effective, saved, fs): 100000 100000 100000 100000"));
    CHECK(fact(result.out, "inside", "cat /proc/self/uid_map (inside-id host-id count)") ==
          "0 100000 65536");
    CHECK(fact(result.out, "inside", "stat -c %u:%g on the host root's file") == "65534:65534");
    CHECK(fact(result.out, "inside", "echo changed >> that file") == "denied");
}

TEST_CASE("demo cgroup: every hierarchy is / inside", "[demo]") {
    DemoRun demos;
    auto result = run_demo(demos, "cgroup", "cgroup");
    INFO(result.out);
    auto lines = split_lines(result.out);
    auto inside = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
        return contains(line, "inside  cat /proc/self/cgroup");
    });
    auto host = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
        return contains(line, "host    cat /proc/");
    });
    REQUIRE(inside != lines.end());
    REQUIRE(host != lines.end());
    REQUIRE(inside < host);
    const auto hierarchies = std::distance(inside, host) - 1;
    // The test's own /proc/self/cgroup has as many hierarchies as the container's.
    CHECK(hierarchies ==
          static_cast<long>(split_lines(read_file("/proc/self/cgroup").value_or("")).size()));
    for (auto line = inside + 1; line != host; ++line) {
        CHECK(line->ends_with(":/"));
    }
}

TEST_CASE("demo time: the clocks inside run ten days ahead", "[demo]") {
    if (!read_file("/proc/self/timens_offsets")) {
        skip_test("no time namespaces on this kernel (no /proc/self/timens_offsets)");
        return;
    }
    DemoRun demos;
    auto result = run_demo(demos, "time", "time");
    INFO(result.out);
    CHECK(contains(fact(result.out, "inside", "cat /proc/self/timens_offsets"),
                   "monotonic 864000 0"));
    const double inside = std::stod(fact(result.out, "inside", "uptime in seconds (/proc/uptime)"));
    const double host = std::stod(fact(result.out, "host  ", "uptime in seconds (/proc/uptime)"));
    CHECK(std::abs(inside - host - 864000) < 60);
    // And the test, on the host, sees its own clock unchanged.
    CHECK(contains(read_file("/proc/self/timens_offsets").value_or(""), "monotonic"));
    CHECK(std::stod(read_file("/proc/uptime").value_or("0")) < inside);
}

TEST_CASE("demo all: every namespace differs, then every demo", "[demo]") {
    DemoRun demos;
    const auto mounts_before = mount_lines();
    auto result = demos("all");
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK_FALSE(contains(result.out, "UNEXPECTED"));
    for (const auto& name : namespace_names()) {
        check_ns(result.out, name);
    }
    for (const char* heading : {"== uts:", "== ipc:", "== pid:", "== mount:", "== net:", "== user:",
                                "== cgroup:", "== time:"}) {
        CHECK(contains(result.out, heading));
    }
    demos.check_clean(mounts_before);
}

TEST_CASE("demo: Ctrl-C while the container runs removes everything", "[demo]") {
    DemoRun demos;
    const auto mounts_before = mount_lines();
    Child demo(demos.argv({"net", "--step"}));
    REQUIRE(demo.wait_for_output("press Enter"));
    // Paused with the veth pair up and the container running.
    const std::string host_end = "mrd" + std::to_string(demo.pid()) + "h";
    CHECK(run({"/usr/sbin/ip", "link", "show", host_end}).exit_code == 0);
    CHECK_FALSE(processes_with_marker("mini-run-demo-net-" + std::to_string(demo.pid())).empty());
    demo.signal(SIGINT);
    auto result = demo.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 130);
    CHECK(contains(result.out, "interrupted"));
    CHECK(contains(result.out, "removed the veth pair"));
    CHECK(run({"/usr/sbin/ip", "link", "show", host_end}).exit_code != 0);
    demos.check_clean(mounts_before);
}

// ---------------------------------------------------------------------------------------
// --explain

namespace {

// The example with every namespace, id maps, time offsets and a seccomp filter, so that
// every kind of step shows.
void every_namespace(TempBundle& bundle) {
    for (const char* type : {"user", "cgroup", "time"}) {
        bundle.add_namespace(type);
    }
    const nlohmann::json mapping = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    bundle.config["linux"]["uidMappings"] = mapping;
    bundle.config["linux"]["gidMappings"] = mapping;
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
                                step.text.starts_with("exec gate:");
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
    const long execve = index_of(steps, "execveat(exec gate)", "execve(\"/bin/sh\"");

    CHECK(gate == 0);
    CHECK(clone == 1);
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
