// cgroups on this machine: a hybrid host, v1 controllers under /sys/fs/cgroup/<name> and
// cgroup2 at /sys/fs/cgroup/unified (hugetlb only). Each test looks at the container from
// inside (what it prints) and from the host (the cgroup files, /proc/<pid>/cgroup), and
// checks that delete leaves no cgroup directory anywhere under /sys/fs/cgroup.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace it;
namespace stdfs = std::filesystem;

namespace {

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";
constexpr const char* loop = "while true; do sleep 0.1; done";

std::string trimmed(std::optional<std::string> text) {
    if (!text) {
        return "<missing>";
    }
    while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) {
        text->pop_back();
    }
    return *text;
}

// A file of the container's cgroup in one hierarchy, trimmed.
std::string cgroup_file(const std::string& hierarchy, const std::string& id,
                        const std::string& file) {
    return trimmed(
        read_file(std::string(kCgroupRoot) + "/" + hierarchy + default_cgroup(id) + "/" + file));
}

// Runs `bundle` detached with the runtime, returns the init's pid.
pid_t run_detached(Runtime& runtime, TempBundle& bundle) {
    auto started = runtime.run_detached(bundle);
    INFO("run --detach: " << started.describe());
    REQUIRE(started.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    return *pid;
}

// Deletes the container and checks that no cgroup directory of it is left.
void delete_and_check_cgroups(Runtime& runtime, const std::string& id) {
    auto deleted = runtime({"delete", "--force", id});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    auto left = cgroup_dirs(default_cgroup(id));
    INFO("left behind: " << nlohmann::json(left).dump());
    CHECK(left.empty());
}

} // namespace

TEST_CASE("cgroups: the init is placed in every hierarchy and the limits are written", "[cgroup]") {
    TempBundle bundle("cg-limits");
    bundle.config["linux"]["resources"] = {
        {"memory", {{"limit", 64 * 1024 * 1024}, {"reservation", 32 * 1024 * 1024}}},
        {"cpu", {{"shares", 512}, {"quota", 50000}, {"period", 100000}, {"cpus", "0"}}},
        {"pids", {{"limit", 42}}}};
    bundle.set_shell(std::string("nproc > /dev/shm/nproc; ") + loop);
    Runtime runtime;
    pid_t pid = run_detached(runtime, bundle);
    const std::string& id = bundle.id();

    // From the host: the init's /proc/<pid>/cgroup names our directory in each hierarchy.
    auto membership = read_file("/proc/" + std::to_string(pid) + "/cgroup");
    REQUIRE(membership.has_value());
    INFO("/proc/<init>/cgroup:\n" << *membership);
    for (const char* controller : {"memory", "cpu", "pids", "freezer", "devices", "cpuset"}) {
        INFO(controller);
        CHECK(
            contains(*membership, ":" + std::string(controller) + ":" + default_cgroup(id) + "\n"));
    }
    CHECK(contains(*membership, "0::" + default_cgroup(id) + "\n")); // the cgroup2 part
    CHECK(contains(cgroup_file("memory", id, "cgroup.procs"), std::to_string(pid)));
    CHECK(contains(cgroup_file("unified", id, "cgroup.procs"), std::to_string(pid)));

    CHECK(cgroup_file("memory", id, "memory.limit_in_bytes") == "67108864");
    CHECK(cgroup_file("memory", id, "memory.soft_limit_in_bytes") == "33554432");
    CHECK(cgroup_file("cpu", id, "cpu.shares") == "512");
    CHECK(cgroup_file("cpu", id, "cpu.cfs_quota_us") == "50000");
    CHECK(cgroup_file("cpu", id, "cpu.cfs_period_us") == "100000");
    CHECK(cgroup_file("cpuset", id, "cpuset.cpus") == "0");
    CHECK(cgroup_file("pids", id, "pids.max") == "42");

    // From inside: the cpuset leaves one CPU. `run -d` returns once the shell is exec'd,
    // not once it has written the file: read until it has.
    RunResult nproc;
    CHECK(wait_until([&] {
        nproc = runtime({"exec", id, "cat", "/dev/shm/nproc"});
        return !trimmed(nproc.out).empty();
    }));
    INFO("exec: " << nproc.describe());
    CHECK(trimmed(nproc.out) == "1");

    // exec'd processes join the same cgroups.
    auto exec_cgroup = runtime({"exec", id, "cat", "/proc/self/cgroup"});
    INFO("exec cat /proc/self/cgroup: " << exec_cgroup.describe());
    CHECK(contains(exec_cgroup.out, "memory:" + default_cgroup(id)));
    CHECK(contains(exec_cgroup.out, "pids:" + default_cgroup(id)));

    REQUIRE_FALSE(cgroup_dirs(default_cgroup(id)).empty());
    delete_and_check_cgroups(runtime, id);
}

TEST_CASE("cgroups: blockIO.weight is written to the I/O scheduler's weight file", "[cgroup]") {
    // CFQ's blkio.weight went with Linux 5.0; BFQ's blkio.bfq.weight exists only in a kernel
    // built with BFQ, and only below the root: a cgroup made for the question tells.
    const std::string probe =
        std::string(kCgroupRoot) + "/blkio/it-weight-probe-" + std::to_string(::getpid());
    REQUIRE(::mkdir(probe.c_str(), 0755) == 0);
    const bool bfq = stdfs::exists(probe + "/blkio.bfq.weight");
    const bool cfq = stdfs::exists(probe + "/blkio.weight");
    ::rmdir(probe.c_str());
    TempBundle bundle("cg-weight");
    bundle.config["linux"]["resources"] = {{"blockIO", {{"weight", 300}}}};
    bundle.set_shell(loop);
    bundle.write_config();
    Runtime runtime;
    if (!bfq && !cfq) {
        // As runc: a limit the kernel cannot apply is an error, not ignored.
        auto refused = runtime({"run", "--detach", "--bundle", bundle.dir(), bundle.id()});
        INFO("run --detach: " << refused.describe());
        CHECK(refused.exit_code == 1);
        CHECK(contains(refused.err, "linux.resources.blockIO.weight: cannot be applied"));
        CHECK(cgroup_dirs(default_cgroup(bundle.id())).empty());
        skip_test("blockIO.weight: this kernel has neither BFQ's nor CFQ's weight file");
        return;
    }
    run_detached(runtime, bundle);
    const std::string& id = bundle.id();
    std::string weight = cgroup_file("blkio", id, bfq ? "blkio.bfq.weight" : "blkio.weight");
    INFO("blkio weight file: " << weight);
    CHECK((weight == "300" || contains(weight, "default 300")));
    delete_and_check_cgroups(runtime, id);
}

TEST_CASE("cgroups: the pids limit makes fork fail beyond it", "[cgroup]") {
    TempBundle bundle("cg-pids");
    TempDir shared("minirun-cg");
    bundle.config["mounts"].push_back({{"destination", "/tmp"},
                                       {"type", "bind"},
                                       {"source", shared.path()},
                                       {"options", {"rbind", "rw"}}});
    bundle.config["linux"]["resources"] = {{"pids", {{"limit", 5}}}};
    // A subshell tries to start 10 sleeps; a failed fork ends only the subshell. The
    // init then becomes a sleep itself, without forking.
    bundle.set_shell("(for i in 1 2 3 4 5 6 7 8 9 10; do sleep 300 & done) > /tmp/out 2>&1; "
                     "echo finished >> /tmp/out; exec sleep 300");
    Runtime runtime;
    pid_t pid = run_detached(runtime, bundle);
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!contains(read_file(shared.path() + "/out").value_or(""), "finished") &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    std::string out = read_file(shared.path() + "/out").value_or("");
    INFO("inside: " << out);
    CHECK(contains(out, "finished"));
    CHECK(contains(out, "fork"));
    // The subshell got to 5 processes and failed; now the init and the sleeps are left.
    std::string current = cgroup_file("pids", bundle.id(), "pids.current");
    INFO("pids.current " << current);
    CHECK((current == "4" || current == "5"));
    CHECK(cgroup_file("pids", bundle.id(), "pids.max") == "5");
    std::string events = cgroup_file("pids", bundle.id(), "pids.events");
    INFO("pids.events " << events);
    CHECK((contains(events, "max ") && !contains(events, "max 0")));
    CHECK(contains(cmdline_of(pid), "sleep"));
    delete_and_check_cgroups(runtime, bundle.id());
}

TEST_CASE("cgroups: a memory limit OOM-kills a process that fills tmpfs, events report it",
          "[cgroup]") {
    TempBundle bundle("cg-oom");
    constexpr int64_t limit = 32 * 1024 * 1024;
    bundle.config["linux"]["resources"] = {{"memory", {{"limit", limit}, {"swap", limit}}}};
    // After the OOM kill the cgroup stays full (tmpfs pages cannot be reclaimed without
    // swap), so the init must not need memory any more: it becomes a plain sleep.
    bundle.set_shell("exec sleep 300");
    Runtime runtime;
    pid_t pid = run_detached(runtime, bundle);
    const std::string& id = bundle.id();
    CHECK(cgroup_file("memory", id, "memory.limit_in_bytes") == std::to_string(limit));

    Child events(runtime.argv({"events", "--interval", "200ms", id}));
    // The first stats event shows the stream is up before the OOM happens.
    REQUIRE(events.wait_for_output("\"type\":\"stats\"", 10s));
    auto filled = runtime({"exec", id, "sh", "-c",
                           "dd if=/dev/zero of=/dev/shm/fill bs=1M count=64; echo dd-exit $?"});
    INFO("exec dd: " << filled.describe());
    // dd was killed by the OOM killer (SIGKILL): the shell reports it, or exec does.
    CHECK((filled.exit_code == 137 || value_of(filled.out, "dd-exit") == "137"));
    CHECK(events.wait_for_output("\"type\":\"oom\"", 10s));
    INFO("events: " << events.out() << events.err());
    CHECK(process_alive(pid)); // only the greedy process died

    auto stats = runtime({"events", "--stats", id});
    INFO("events --stats: " << stats.describe());
    REQUIRE(stats.exit_code == 0);
    auto event = nlohmann::json::parse(stats.out, nullptr, false);
    REQUIRE(event.is_object());
    CHECK(event["type"] == "stats");
    CHECK(event["id"] == id);
    CHECK(event["data"]["memory"]["usage"]["limit"] == limit);
    CHECK(event["data"]["memory"]["usage"]["max"] == limit); // the peak hit the limit
    CHECK(event["data"]["pids"]["current"].get<int64_t>() >= 1);
    CHECK(event["data"]["cpu"]["usage"]["total"].get<int64_t>() > 0);

    events.signal(SIGTERM);
    events.wait(5s);
    delete_and_check_cgroups(runtime, id);
}

TEST_CASE("cgroups: pause freezes every process, resume thaws them", "[cgroup]") {
    TempBundle bundle("cg-pause");
    TempDir shared("minirun-cg");
    bundle.config["mounts"].push_back({{"destination", "/tmp"},
                                       {"type", "bind"},
                                       {"source", shared.path()},
                                       {"options", {"rbind", "rw"}}});
    bundle.set_shell("i=0; while true; do i=$((i+1)); echo $i > /tmp/counter; sleep 0.05; done");
    Runtime runtime;
    pid_t pid = run_detached(runtime, bundle);
    const std::string& id = bundle.id();
    auto counter = [&shared]() {
        return trimmed(read_file(shared.path() + "/counter"));
    };
    REQUIRE(wait_until([&] { return counter() != "<missing>"; }));

    auto paused = runtime({"pause", id});
    INFO("pause: " << paused.describe());
    REQUIRE(paused.exit_code == 0);
    CHECK(runtime.status(id) == "paused");
    CHECK(cgroup_file("freezer", id, "freezer.state") == "FROZEN");
    // A frozen task sleeps uninterruptibly in the freezer.
    auto state = status_field(pid, "State");
    INFO("State: " << nlohmann::json(state).dump());
    CHECK((!state.empty() && state.front() == "D"));
    std::string frozen_at = counter();
    // What is tested: nothing moves for a while (unfrozen, the counter ticks every 50 ms).
    std::this_thread::sleep_for(400ms);
    CHECK(counter() == frozen_at);
    // Nothing can be started in a frozen container, and a second pause is refused.
    CHECK(runtime({"exec", id, "true"}).exit_code != 0);
    CHECK(runtime({"pause", id}).exit_code != 0);

    auto resumed = runtime({"resume", id});
    INFO("resume: " << resumed.describe());
    REQUIRE(resumed.exit_code == 0);
    CHECK(runtime.status(id) == "running");
    CHECK(wait_until([&] { return counter() != frozen_at; }));
    CHECK(runtime({"resume", id}).exit_code != 0); // not paused any more

    // delete --force of a paused container still works (the freezer is thawed first).
    REQUIRE(runtime({"pause", id}).exit_code == 0);
    delete_and_check_cgroups(runtime, id);
    CHECK(wait_for_exit(pid));
}

TEST_CASE("cgroups: update changes the limits of a running container", "[cgroup]") {
    TempBundle bundle("cg-update");
    bundle.config["linux"]["resources"] = {{"memory", {{"limit", 64 * 1024 * 1024}}},
                                           {"pids", {{"limit", 30}}}};
    bundle.set_shell(loop);
    Runtime runtime;
    run_detached(runtime, bundle);
    const std::string& id = bundle.id();

    auto updated = runtime({"update", "--memory", "128m", "--pids-limit", "50", "--cpu-shares",
                            "256", "--cpu-quota", "20000", "--cpu-period", "100000", id});
    INFO("update flags: " << updated.describe());
    REQUIRE(updated.exit_code == 0);
    CHECK(cgroup_file("memory", id, "memory.limit_in_bytes") == "134217728");
    CHECK(cgroup_file("pids", id, "pids.max") == "50");
    CHECK(cgroup_file("cpu", id, "cpu.shares") == "256");
    CHECK(cgroup_file("cpu", id, "cpu.cfs_quota_us") == "20000");

    // The LinuxResources JSON engines send, on stdin.
    auto from_json = runtime({"update", "--resources", "-", id},
                             R"({"memory":{"limit":100663296},"pids":{"limit":-1},)"
                             R"("cpu":{"cpus":"0"}})");
    INFO("update --resources -: " << from_json.describe());
    REQUIRE(from_json.exit_code == 0);
    CHECK(cgroup_file("memory", id, "memory.limit_in_bytes") == "100663296");
    CHECK(cgroup_file("pids", id, "pids.max") == "max");
    CHECK(cgroup_file("cpuset", id, "cpuset.cpus") == "0");

    // Bad input: a clear error, nothing changed.
    auto bad = runtime({"update", "--resources", "-", id}, R"({"memory":{"limit":"lots"}})");
    CHECK(bad.exit_code != 0);
    CHECK(contains(bad.err, "memory.limit"));
    CHECK(runtime({"update", "--memory", "12q", id}).exit_code != 0);
    CHECK(cgroup_file("memory", id, "memory.limit_in_bytes") == "100663296");
    CHECK(runtime({"update", "--memory", "64m", "no-such-container"}).exit_code != 0);

    delete_and_check_cgroups(runtime, id);
}

TEST_CASE("cgroups: the device allow-list denies what it does not list (v1)", "[cgroup]") {
    TempBundle bundle("cg-devices");
    bundle.add_capabilities({"CAP_MKNOD"});
    bundle.config["linux"]["resources"] = {
        {"devices", {{{"allow", false}, {"access", "rwm"}}}}}; // deny all, as runc spec
    // /dev/null (a default device) works; a node for /dev/mem's numbers can be made (mknod
    // is allowed) but not opened.
    bundle.set_shell("echo x > /dev/null && echo null-ok; mknod /dev/it-mem c 1 1 && "
                     "echo mknod-ok; head -c 1 /dev/it-mem > /dev/null 2>&1 && echo open-ok || "
                     "echo open-denied");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(contains(result.out, "null-ok"));
    CHECK(contains(result.out, "mknod-ok"));
    CHECK(contains(result.out, "open-denied"));
    CHECK_FALSE(contains(result.out, "open-ok"));
    check_no_leftovers(bundle);
    CHECK(cgroup_dirs(default_cgroup(bundle.id())).empty());
}

TEST_CASE("cgroups: hugetlb limits go to the cgroup2 part of a hybrid host", "[cgroup]") {
    if (!stdfs::exists("/sys/fs/cgroup/unified/cgroup.controllers") ||
        !contains(read_file("/sys/fs/cgroup/unified/cgroup.controllers").value_or(""), "hugetlb")) {
        skip_test("no hugetlb controller on a cgroup2 mount at /sys/fs/cgroup/unified");
        return;
    }
    TempBundle bundle("cg-hugetlb");
    bundle.config["linux"]["resources"] = {
        {"hugepageLimits", {{{"pageSize", "2MB"}, {"limit", 4 * 1024 * 1024}}}}};
    bundle.set_shell(loop);
    Runtime runtime;
    run_detached(runtime, bundle);
    CHECK(cgroup_file("unified", bundle.id(), "hugetlb.2MB.max") == "4194304");
    delete_and_check_cgroups(runtime, bundle.id());
}

TEST_CASE("cgroups: a cgroup namespace shows the container's cgroup as the root", "[cgroup]") {
    TempBundle bundle("cg-ns");
    bundle.add_namespace("cgroup");
    bundle.set_shell("cat /proc/self/cgroup; echo mounts; ls /sys/fs/cgroup/memory | "
                     "grep -c limit_in_bytes; cat /sys/fs/cgroup/memory/cgroup.procs | wc -l");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    auto lines = split_lines(result.out);
    int cgroup_lines = 0;
    for (const std::string& line : lines) {
        if (line == "mounts") {
            break;
        }
        ++cgroup_lines;
        INFO(line);
        CHECK(line.substr(line.rfind(':')) == ":/");
    }
    CHECK(cgroup_lines >= 2);
    // The mounted hierarchy is the container's own cgroup: its processes only.
    CHECK_FALSE(contains(result.out, bundle.id()));
    check_no_leftovers(bundle);

    // Without the namespace, the container sees where it really is.
    TempBundle plain("cg-nons");
    plain.set_shell("cat /proc/self/cgroup");
    auto seen = plain.run();
    INFO(seen.describe());
    CHECK(contains(seen.out, "memory:" + default_cgroup(plain.id())));
}

TEST_CASE("cgroups: cgroupsPath absolute and relative; bad paths are refused", "[cgroup]") {
    Runtime runtime;
    std::string parent = "/it-cgpath-" + std::to_string(::getpid());
    {
        TempBundle bundle("cg-abs");
        bundle.config["linux"]["cgroupsPath"] = parent + "/" + bundle.id();
        bundle.set_shell(loop);
        pid_t pid = run_detached(runtime, bundle);
        auto membership = read_file("/proc/" + std::to_string(pid) + "/cgroup").value_or("");
        INFO(membership);
        CHECK(contains(membership, "memory:" + parent + "/" + bundle.id() + "\n"));
        auto deleted = runtime({"delete", "--force", bundle.id()});
        CHECK(deleted.exit_code == 0);
        CHECK(cgroup_dirs(parent + "/" + bundle.id()).empty());
    }
    // The parent is left, as runc leaves it: the test removes it.
    for (const std::string& dir : cgroup_dirs(parent)) {
        CHECK(::rmdir(dir.c_str()) == 0);
    }

    TempBundle bad("cg-bad");
    bad.config["linux"]["cgroupsPath"] = "/a/../../escape";
    bad.set_shell("true");
    auto refused = runtime.create(bad);
    INFO(refused.describe());
    CHECK(refused.exit_code != 0);
    CHECK(contains(refused.err_now(), "linux.cgroupsPath"));
    CHECK(runtime.root_entries().empty());
    CHECK(cgroup_dirs("/escape").empty());
}

TEST_CASE("cgroups: a frozen cgroup is refused at create, in runc's words", "[cgroup]") {
    Runtime runtime;
    TempBundle bundle("cg-frozen");
    std::string path = "/it-frozen-" + std::to_string(::getpid());
    std::string freezer = "/sys/fs/cgroup/freezer" + path;
    REQUIRE(::mkdir(freezer.c_str(), 0755) == 0);
    { std::ofstream(freezer + "/freezer.state") << "FROZEN\n"; }
    bundle.config["linux"]["cgroupsPath"] = path;
    bundle.set_shell("true");
    auto refused = runtime.create(bundle);
    INFO(refused.describe());
    CHECK(refused.exit_code != 0);
    CHECK(contains(refused.err_now(), "container's cgroup unexpectedly frozen"));
    CHECK(runtime.root_entries().empty());
    { std::ofstream(freezer + "/freezer.state") << "THAWED\n"; }
    CHECK(::rmdir(freezer.c_str()) == 0);
    CHECK(cgroup_dirs(path).empty());
}

TEST_CASE("cgroups: delete kills what the init left behind and removes the cgroups", "[cgroup]") {
    TempBundle bundle("cg-orphan");
    // No PID namespace: a daemonized sleep survives the init's exit.
    bundle.remove_namespaces({"pid"});
    bundle.set_shell("setsid sleep 300 < /dev/null > /dev/null 2>&1 & exit 0");
    Runtime runtime;
    pid_t pid = run_detached(runtime, bundle);
    const std::string& id = bundle.id();
    REQUIRE(wait_for_exit(pid));
    reap_orphans();
    auto procs = cgroup_file("memory", id, "cgroup.procs");
    INFO("left in the cgroup: " << procs);
    REQUIRE(procs != "<missing>");
    REQUIRE_FALSE(procs.empty());
    pid_t orphan = std::stoi(split_lines(procs).front());
    CHECK(contains(cmdline_of(orphan), "sleep"));
    CHECK(runtime.status(id) == "stopped");

    auto deleted = runtime({"delete", id});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(wait_for_exit(orphan));
    reap_orphans();
    CHECK(cgroup_dirs(default_cgroup(id)).empty());
}

TEST_CASE("cgroups: delete --force cleans up after a create that was killed midway", "[cgroup]") {
    TempBundle bundle("cg-crash");
    TempDir marks("minirun-cg-crash");
    // The createRuntime hook runs in the runtime's namespaces while the container is half
    // made: the test kills mini-run right then.
    // The hook waits for a file the test makes at the end, so it ends by itself.
    bundle.config["hooks"] = {{"createRuntime",
                               {{{"path", "/bin/sh"},
                                 {"args",
                                  {"sh", "-c",
                                   "cd " + marks.path() +
                                       " && touch in-hook && while [ ! -e stop ]; do sleep 0.1; "
                                       "done"}}}}}};
    bundle.set_shell("true");
    bundle.write_config();
    Runtime runtime;
    runtime.track(bundle.id());
    Child create(runtime.argv({"create", "--bundle", bundle.dir(), bundle.id()}));
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!stdfs::exists(marks.path() + "/in-hook") &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    REQUIRE(stdfs::exists(marks.path() + "/in-hook"));
    REQUIRE_FALSE(cgroup_dirs(default_cgroup(bundle.id())).empty());
    create.signal(SIGKILL);
    create.wait(5s);

    auto deleted = runtime({"delete", "--force", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(cgroup_dirs(default_cgroup(bundle.id())).empty());
    CHECK(runtime.root_entries().empty());
    // The hook was mini-run's child, not the container's: it ends once told to.
    std::ofstream(marks.path() + "/stop").put('\n');
    auto hooks_deadline = std::chrono::steady_clock::now() + 5s;
    while (!processes_with_marker(marks.path()).empty() &&
           std::chrono::steady_clock::now() < hooks_deadline) {
        std::this_thread::sleep_for(50ms);
    }
    reap_orphans();
}

TEST_CASE("cgroups: the init is born in its cgroup2 directory (clone3 CLONE_INTO_CGROUP)",
          "[cgroup]") {
    if (!stdfs::exists("/sys/fs/cgroup/unified/cgroup.procs")) {
        skip_test("no cgroup2 mount at /sys/fs/cgroup/unified");
        return;
    }
    TempBundle bundle("cg-into");
    bundle.set_shell("cat /proc/self/cgroup");
    bundle.write_config();
    auto argv = bundle.run_argv();
    argv.insert(argv.end() - 1, "--explain");
    auto result = run(argv);
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.err, "CLONE_INTO_CGROUP"));
    CHECK(contains(result.out, "0::" + default_cgroup(bundle.id()) + "\n"));
    check_no_leftovers(bundle);
    CHECK(cgroup_dirs(default_cgroup(bundle.id())).empty());
}
