// runc 1.3's cgroup behaviours (issue 38), checked on this hybrid host's v1 hierarchies:
// pids.limit 0 is a limit, update's --cpu-burst, --cpu-idle and the RT pair in the order
// the kernel takes, and SIGKILL to a container sharing the host's PID namespace killing
// everything in its cgroup, also after its init is gone.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

using namespace it;

namespace {

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

// A file of the cgroup `relative` in the v1 hierarchy `hierarchy`, trimmed.
std::string v1_file(const std::string& hierarchy, const std::string& relative,
                    const std::string& file) {
    return trimmed(read_file("/sys/fs/cgroup/" + hierarchy + relative + "/" + file));
}

bool has_v1(const std::string& hierarchy, const std::string& file) {
    return read_file("/sys/fs/cgroup/" + hierarchy + "/" + file).has_value();
}

pid_t run_detached(Runtime& runtime, TempBundle& bundle) {
    auto started = runtime.run_detached(bundle);
    INFO("run --detach: " << started.describe());
    REQUIRE(started.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    return *pid;
}

void delete_and_check(Runtime& runtime, const std::string& id, const std::string& relative) {
    auto deleted = runtime({"delete", "--force", id});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(cgroup_dirs(relative).empty());
}

// The pids in the pids hierarchy's cgroup.procs of `relative`.
std::vector<pid_t> procs_of(const std::string& relative) {
    std::vector<pid_t> pids;
    for (const auto& line :
         split_lines(read_file("/sys/fs/cgroup/pids" + relative + "/cgroup.procs").value_or(""))) {
        if (!line.empty()) {
            pids.push_back(static_cast<pid_t>(std::stol(line)));
        }
    }
    return pids;
}

// Reaps what was reparented to the test until none of `pids` is left, up to 10 s.
bool all_gone(const std::vector<pid_t>& pids) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    for (;;) {
        reap_orphans();
        bool left = false;
        for (pid_t pid : pids) {
            left = left || ::kill(pid, 0) == 0;
        }
        if (!left) {
            return true;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
}

} // namespace

TEST_CASE("cgroups: pids.limit 0 is a limit, and an absent limit leaves pids.max alone",
          "[cgroup][pids]") {
    TempBundle bundle("cg-pids0");
    bundle.set_shell("exec sleep 300"); // no fork needed
    Runtime runtime;
    const std::string& id = bundle.id();
    const std::string relative = default_cgroup(id);
    // A shell that needs a fork: busybox's sh gives up on "can't fork".
    const std::vector<std::string> forking = {"exec", id, "sh", "-c",
                                              "echo in; ls / >/dev/null; "
                                              "echo after"};
    SECTION("0: the init and exec'd processes join, but nothing can fork (runtime-spec 1.3)") {
        bundle.config["linux"]["resources"] = {{"pids", {{"limit", 0}}}};
        run_detached(runtime, bundle);
        CHECK(v1_file("pids", relative, "pids.max") == "0");
        auto refused = runtime(forking);
        INFO(refused.describe());
        CHECK(refused.exit_code != 0);
        CHECK(refused.out == "in\n");
        CHECK(contains(refused.err, "can't fork"));
        // update --pids-limit -1 lifts it, 0 sets it again.
        CHECK(runtime({"update", "--pids-limit", "-1", id}).exit_code == 0);
        CHECK(v1_file("pids", relative, "pids.max") == "max");
        auto forked = runtime(forking);
        INFO(forked.describe());
        CHECK(forked.exit_code == 0);
        CHECK(forked.out == "in\nafter\n");
        CHECK(runtime({"update", "--pids-limit", "0", id}).exit_code == 0);
        CHECK(v1_file("pids", relative, "pids.max") == "0");
    }
    SECTION("absent: pids.max stays max, update --resources with {} changes nothing") {
        bundle.config["linux"]["resources"] = {{"pids", nlohmann::json::object()}};
        run_detached(runtime, bundle);
        CHECK(v1_file("pids", relative, "pids.max") == "max");
        CHECK(runtime({"update", "--pids-limit", "7", id}).exit_code == 0);
        CHECK(v1_file("pids", relative, "pids.max") == "7");
        auto same = runtime({"update", "--resources", "-", id}, R"({"pids":{}})");
        INFO(same.describe());
        CHECK(same.exit_code == 0);
        CHECK(v1_file("pids", relative, "pids.max") == "7");
    }
    delete_and_check(runtime, id, relative);
}

TEST_CASE("cgroups: cpu burst and idle at create and through update (v1)", "[cgroup][cpu]") {
    if (!has_v1("cpu", "cpu.cfs_burst_us") || !has_v1("cpu", "cpu.idle")) {
        skip_test("no cpu.cfs_burst_us or cpu.idle in the v1 cpu hierarchy");
        return;
    }
    TempBundle bundle("cg-burst");
    bundle.config["linux"]["resources"] = {
        {"cpu", {{"quota", 50000}, {"period", 100000}, {"burst", 20000}, {"idle", 1}}}};
    bundle.set_shell(loop);
    Runtime runtime;
    run_detached(runtime, bundle);
    const std::string& id = bundle.id();
    const std::string relative = default_cgroup(id);
    CHECK(v1_file("cpu", relative, "cpu.cfs_burst_us") == "20000");
    CHECK(v1_file("cpu", relative, "cpu.idle") == "1");

    auto updated = runtime({"update", "--cpu-burst", "30000", "--cpu-idle", "0", id});
    INFO(updated.describe());
    CHECK(updated.exit_code == 0);
    CHECK(v1_file("cpu", relative, "cpu.cfs_burst_us") == "30000");
    CHECK(v1_file("cpu", relative, "cpu.idle") == "0");

    auto bad = runtime({"update", "--cpu-idle", "2", id});
    CHECK(bad.exit_code != 0);
    CHECK(contains(bad.err, "--cpu-idle: must be 0 or 1, got 2"));
    CHECK(v1_file("cpu", relative, "cpu.idle") == "0");
    delete_and_check(runtime, id, relative);
}

TEST_CASE("cgroups: update writes the RT period and runtime in the order the kernel takes",
          "[cgroup][cpu]") {
    if (!has_v1("cpu", "cpu.rt_runtime_us")) {
        skip_test("no RT group scheduling (cpu.rt_runtime_us) in the v1 cpu hierarchy");
        return;
    }
    // Right below the root, whose RT budget (950000 of 1000000 us) children share.
    TempBundle bundle("cg-rt");
    const std::string relative = "/it-rt-" + std::to_string(::getpid());
    bundle.config["linux"]["cgroupsPath"] = relative;
    bundle.config["linux"]["resources"] = {
        {"cpu", {{"realtimePeriod", 1000000}, {"realtimeRuntime", 300000}}}};
    bundle.set_shell(loop);
    Runtime runtime;
    run_detached(runtime, bundle);
    const std::string& id = bundle.id();
    CHECK(v1_file("cpu", relative, "cpu.rt_period_us") == "1000000");
    CHECK(v1_file("cpu", relative, "cpu.rt_runtime_us") == "300000");

    // Lowering the period below the runtime: the kernel refuses the period first (runtime
    // 300000 > period 200000), so the runtime goes first.
    auto lower = runtime({"update", "--cpu-rt-period", "200000", "--cpu-rt-runtime", "100000", id});
    INFO(lower.describe());
    CHECK(lower.exit_code == 0);
    CHECK(v1_file("cpu", relative, "cpu.rt_period_us") == "200000");
    CHECK(v1_file("cpu", relative, "cpu.rt_runtime_us") == "100000");

    // Raising both: the runtime (400000) is above the old period (200000), so the period
    // must go first.
    auto raise = runtime({"update", "--resources", "-", id},
                         R"({"cpu":{"realtimePeriod":1000000,"realtimeRuntime":400000}})");
    INFO(raise.describe());
    CHECK(raise.exit_code == 0);
    CHECK(v1_file("cpu", relative, "cpu.rt_period_us") == "1000000");
    CHECK(v1_file("cpu", relative, "cpu.rt_runtime_us") == "400000");
    delete_and_check(runtime, id, relative);
}

TEST_CASE("cgroups: a cgroup that already has processes is refused, in runc 1.3's words",
          "[cgroup]") {
    Runtime runtime;
    TempBundle first("cg-busy");
    std::string path = "/it-busy-" + std::to_string(::getpid());
    first.config["linux"]["cgroupsPath"] = path;
    first.set_shell(loop);
    run_detached(runtime, first);

    TempBundle second("cg-busy2");
    second.config["linux"]["cgroupsPath"] = path;
    second.set_shell(loop);
    auto refused = runtime.create(second);
    INFO(refused.describe());
    CHECK(refused.exit_code != 0);
    CHECK(contains(refused.err_now(), "container's cgroup is not empty: "));
    CHECK(contains(refused.err_now(), " process(es) found"));
    CHECK(runtime.status(second.id()).find("state failed") != std::string::npos);
    // The first one and its cgroup are untouched.
    CHECK(runtime.status(first.id()) == "running");
    CHECK_FALSE(cgroup_dirs(path).empty());
    CHECK(runtime({"delete", "--force", first.id()}).exit_code == 0);
    CHECK(cgroup_dirs(path).empty());
}

TEST_CASE("kill KILL without a PID namespace kills every process of the cgroup", "[cgroup][kill]") {
    TempBundle bundle("kill-hostpid");
    auto& namespaces = bundle.config["linux"]["namespaces"];
    for (auto entry = namespaces.begin(); entry != namespaces.end(); ++entry) {
        if ((*entry)["type"] == "pid") {
            namespaces.erase(entry);
            break;
        }
    }
    const std::string relative = "/it-hostpid-" + std::to_string(::getpid());
    bundle.config["linux"]["cgroupsPath"] = relative;
    bundle.set_shell(loop);
    Runtime runtime;
    pid_t init = run_detached(runtime, bundle);
    for (int i = 0; i < 3; ++i) {
        auto exec = runtime.to_files({"exec", "--detach", bundle.id(), "sleep", "1000"});
        INFO(exec.describe());
        REQUIRE(exec.exit_code == 0);
    }
    SECTION("the init alive") {}
    SECTION("the init gone: the container is stopped, its processes are not") {
        CHECK(::kill(init, SIGKILL) == 0);
        REQUIRE(all_gone({init}));
        CHECK(runtime.status(bundle.id()) == "stopped");
        // Any other signal is refused for a stopped container, as runc does.
        auto refused = runtime({"kill", bundle.id(), "TERM"});
        CHECK(refused.exit_code != 0);
        CHECK(contains(refused.err, "container not running"));
    }
    std::vector<pid_t> pids = procs_of(relative);
    INFO("pids: " << nlohmann::json(pids).dump());
    CHECK(pids.size() >= 3);
    auto killed = runtime({"kill", bundle.id(), "KILL"});
    INFO(killed.describe());
    CHECK(killed.exit_code == 0);
    CHECK(all_gone(pids));
    // Gone and reaped; the cgroup's list may lag behind a moment (v1 caches its pid lists).
    auto deadline = std::chrono::steady_clock::now() + 5s;
    std::vector<pid_t> left = procs_of(relative);
    while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
        left = procs_of(relative);
    }
    INFO("left in the cgroup: " << nlohmann::json(left).dump());
    CHECK(left.empty());
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
    delete_and_check(runtime, bundle.id(), relative);
}
