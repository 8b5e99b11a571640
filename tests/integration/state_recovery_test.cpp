// Containers whose recorded state no longer matches the system (issue 14, items 11 and 12):
// an init pid that the kernel gave to another process, and a state.json that was damaged.
// The reused pid is simulated by writing a live stranger's pid into the state of a stopped
// container, next to the dead init's start time, which is exactly what a reuse looks like.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

using namespace it;
namespace stdfs = std::filesystem;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool mentions(const std::string& text, const std::string& part) {
    return contains(text, part);
}

// Waits until `count` processes carry the bundle's marker.
bool wait_for_processes(const TempBundle& bundle, size_t count, Millis timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (processes_with_marker(bundle.id()).size() < count) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

bool wait_for_no_processes(const TempBundle& bundle, Millis timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!processes_with_marker(bundle.id()).empty()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

// `run --detach` with global flags before the command (--cgroup-manager disabled).
pid_t run_detached(Runtime& runtime, const TempBundle& bundle,
                   const std::vector<std::string>& global = {}) {
    bundle.write_config();
    runtime.track(bundle.id());
    std::vector<std::string> args = global;
    for (const std::string& arg :
         {std::string("run"), std::string("--detach"), std::string("--bundle"), bundle.dir(),
          std::string("--pid-file"), runtime.pid_file(bundle.id())}) {
        args.push_back(arg);
    }
    args.push_back(bundle.id());
    auto ran = runtime.to_files(args);
    INFO("run --detach: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    return *pid;
}

// A host process with a child, unrelated to any container: what got a dead init's pid.
// Both are killed (by pid, after checking they still are ours) and reaped at the end.
class Stranger {
public:
    Stranger() : shell_({"/bin/sh", "-c", "sleep 1000 & echo $!; wait"}) {
        become_subreaper();
        REQUIRE(shell_.wait_for_output("\n"));
        sleeper_ = std::stoi(shell_.out());
        REQUIRE(process_alive(sleeper_));
    }
    Stranger(const Stranger&) = delete;
    Stranger& operator=(const Stranger&) = delete;
    ~Stranger() {
        auto parent = parent_pid(sleeper_);
        if (parent && (*parent == shell_.pid() || *parent == ::getpid())) {
            ::kill(sleeper_, SIGKILL);
        }
        shell_.signal(SIGKILL);
        shell_.wait(5s);
        reap(sleeper_, 2s);
    }
    [[nodiscard]] pid_t pid() const { return shell_.pid(); }
    [[nodiscard]] pid_t sleeper() const { return sleeper_; }
    [[nodiscard]] bool alive() const { return process_alive(pid()) && process_alive(sleeper_); }

private:
    Child shell_;
    pid_t sleeper_ = -1;
};

std::string state_path(const Runtime& runtime, const std::string& id) {
    return runtime.root() + "/" + id + "/state.json";
}

} // namespace

TEST_CASE("reused init pid: kill, kill --all, ps, exec, pause and delete leave its new "
          "owner alone",
          "[state-recovery][reuse]") {
    const bool with_cgroups = GENERATE(false, true);
    INFO((with_cgroups ? "with cgroups" : "--cgroup-manager disabled"));
    become_subreaper();
    TempBundle bundle("reuse");
    bundle.set_shell(loop);
    Runtime runtime;
    const std::string& id = bundle.id();
    std::vector<std::string> global;
    if (!with_cgroups) {
        global = {"--cgroup-manager", "disabled"};
    }
    pid_t init = run_detached(runtime, bundle, global);
    REQUIRE(runtime.wait_for_status(id, "running"));
    REQUIRE(::kill(init, SIGKILL) == 0);
    REQUIRE(wait_for_exit(init));
    reap(init);
    REQUIRE(runtime.status(id) == "stopped");

    // The kernel hands the pid to another process: the state names it, with the dead
    // init's start time.
    Stranger stranger;
    {
        auto state = nlohmann::json::parse(slurp(state_path(runtime, id)));
        state["pid"] = stranger.pid();
        std::ofstream(state_path(runtime, id), std::ios::trunc) << state.dump(2);
    }
    auto state = runtime.state(id);
    REQUIRE(state.has_value());
    CHECK((*state)["status"] == "stopped");
    CHECK((*state)["pid"] == 0);

    auto all = runtime({"kill", "--all", id, "KILL"});
    INFO("kill --all: " << all.describe());
    CHECK(all.exit_code == 0); // runc 1.1: nothing left to signal is no error
    auto one = runtime({"kill", id, "KILL"});
    INFO("kill: " << one.describe());
    CHECK(one.exit_code != 0);
    CHECK(mentions(one.err, "container not running"));
    auto ps = runtime({"ps", id});
    INFO("ps: " << ps.describe());
    CHECK(ps.exit_code == 0);
    CHECK(split_lines(ps.out).size() <= 1); // the header at most
    auto exec = runtime({"exec", id, "true"});
    INFO("exec: " << exec.describe());
    CHECK(exec.exit_code != 0);
    CHECK(mentions(exec.err, "not running"));
    auto pause = runtime({"pause", id});
    INFO("pause: " << pause.describe());
    CHECK(pause.exit_code != 0);
    // What is tested is that nothing happens: a signal sent would have acted by now.
    std::this_thread::sleep_for(200ms);
    CHECK(stranger.alive());

    auto deleted = runtime({"delete", "--force", id});
    INFO("delete --force: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    std::this_thread::sleep_for(200ms); // nothing happens, as above
    CHECK(stranger.alive());
    CHECK(runtime.root_entries().empty());
    CHECK(cgroup_dirs(default_cgroup(id)).empty());
}

TEST_CASE("damaged state.json: state, list and delete say it is corrupt; delete --force "
          "cleans up everything",
          "[state-recovery][damaged]") {
    const std::string damage =
        GENERATE(as<std::string>{}, "empty", "truncated", "garbage", "symlink");
    INFO("state.json: " << damage);
    become_subreaper();
    TempDir outside("minirun-outside");
    const std::string target = outside.path() + "/state.json";
    TempBundle bundle("damaged");
    // No PID namespace: the init's death takes nothing else along, only the cgroups can.
    bundle.remove_namespaces({"pid"});
    bundle.set_shell(std::string("(") + loop + ") & (" + loop + ") & " + loop);
    Runtime runtime;
    const std::string& id = bundle.id();
    pid_t init = run_detached(runtime, bundle);
    REQUIRE(wait_for_processes(bundle, 3));
    REQUIRE_FALSE(cgroup_dirs(default_cgroup(id)).empty());

    const std::string path = state_path(runtime, id);
    const std::string good = slurp(path);
    // Outside the state root: a valid state, so that following the link would "work".
    std::ofstream(target, std::ios::binary) << good;
    REQUIRE(::unlink(path.c_str()) == 0);
    if (damage == "symlink") {
        REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
    } else {
        std::ofstream out(path, std::ios::binary);
        if (damage == "truncated") {
            out << good.substr(0, good.size() / 2);
        } else if (damage == "garbage") {
            const char garbage[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR garbage";
            out.write(garbage, sizeof(garbage) - 1);
        }
    }

    auto state = runtime({"state", id});
    INFO("state: " << state.describe());
    CHECK(state.exit_code != 0);
    CHECK(mentions(state.err, "corrupt state"));
    CHECK(mentions(state.err, path));
    CHECK(split_lines(state.err).size() == 1);

    auto list = runtime({"list"});
    INFO("list: " << list.describe());
    CHECK(list.exit_code == 0);
    CHECK(mentions(list.out, id));
    CHECK(mentions(list.out, "corrupt"));
    CHECK(mentions(list.err, "corrupt state"));

    auto refused = runtime({"delete", id});
    INFO("delete: " << refused.describe());
    CHECK(refused.exit_code != 0);
    CHECK(mentions(refused.err, "corrupt state"));
    CHECK(mentions(refused.err, "--force"));
    CHECK(process_alive(init));
    CHECK(stdfs::exists(runtime.root() + "/" + id));

    auto deleted = runtime({"delete", "--force", id});
    INFO("delete --force: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(wait_for_exit(init));
    CHECK(wait_for_no_processes(bundle));
    reap_orphans();
    auto left = cgroup_dirs(default_cgroup(id));
    INFO("cgroups left: " << nlohmann::json(left).dump());
    CHECK(left.empty());
    CHECK(runtime.root_entries().empty());
    CHECK(slurp(target) == good);
    CHECK(stdfs::is_regular_file(stdfs::symlink_status(target)));
}

namespace {

// SIGKILLs what is in these cgroup directories (the shells and their `sleep`s) until they
// are empty, reaping what was reparented to the test.
void end_processes_in(const std::vector<std::string>& cgroups) {
    for (int round = 0; round < 100; ++round) {
        std::vector<pid_t> pids;
        for (const auto& cgroup : cgroups) {
            for (const auto& line : split_lines(read_file(cgroup + "/cgroup.procs").value_or(""))) {
                pids.push_back(std::stoi(line));
            }
        }
        if (pids.empty()) {
            return;
        }
        for (pid_t pid : pids) {
            ::kill(pid, SIGKILL);
        }
        std::this_thread::sleep_for(20ms);
        reap_orphans();
    }
    FAIL_CHECK("processes still in " << nlohmann::json(cgroups).dump());
}

} // namespace

TEST_CASE("damaged state.json and recovery.json: delete --force finds the cgroups from the id "
          "and the saved config, and removes them only once nothing is left in them",
          "[state-recovery][damaged]") {
    // Whether create found the cgroup in use and shared it was recorded in the two damaged
    // files only, and the default "/<id>" could be a cgroup of the host's: what is still
    // in it is left alone.
    become_subreaper();
    TempBundle bundle("damaged-both");
    bundle.remove_namespaces({"pid"});
    bundle.set_shell(std::string("(") + loop + ") & " + loop);
    Runtime runtime;
    const std::string& id = bundle.id();
    pid_t init = run_detached(runtime, bundle);
    REQUIRE(wait_for_processes(bundle, 2));
    const std::string dir = runtime.root() + "/" + id;
    REQUIRE(stdfs::exists(dir + "/recovery.json"));
    std::ofstream(dir + "/state.json", std::ios::trunc) << "{\"ociVersion\": \"1.2.0\", \"id\"";
    std::ofstream(dir + "/recovery.json", std::ios::trunc) << "";
    const auto cgroups = cgroup_dirs(default_cgroup(id));
    REQUIRE_FALSE(cgroups.empty());

    SECTION("processes still in the cgroups: left alone, and so are their cgroups") {
        auto deleted = runtime({"delete", "--force", id});
        INFO("delete --force: " << deleted.describe());
        CHECK(deleted.exit_code == 0);
        CHECK(mentions(deleted.err, "corrupt state"));
        CHECK(mentions(deleted.err, "may be shared with others: removed only if nothing is left"));
        CHECK(runtime.root_entries().empty());
        CHECK(processes_with_marker(id).size() == 2);
        CHECK(cgroup_dirs(default_cgroup(id)) == cgroups);
        // The test's own clean-up: its processes, then the empty directories.
        end_processes_in(cgroups);
        CHECK(wait_for_exit(init));
        for (const auto& cgroup : cgroups) {
            ::rmdir(cgroup.c_str());
        }
    }
    SECTION("the container has exited: its cgroups are removed") {
        end_processes_in(cgroups);
        CHECK(wait_for_exit(init));
        auto deleted = runtime({"delete", "--force", id});
        INFO("delete --force: " << deleted.describe());
        CHECK(deleted.exit_code == 0);
        CHECK(mentions(deleted.err, "corrupt state"));
        CHECK(runtime.root_entries().empty());
    }
    CHECK(cgroup_dirs(default_cgroup(id)).empty());
}

TEST_CASE("damaged state.json without cgroups: delete --force ends the init recorded in "
          "recovery.json",
          "[state-recovery][damaged]") {
    become_subreaper();
    TempBundle bundle("damaged-nocg");
    bundle.set_shell(std::string("(") + loop + ") & " + loop);
    Runtime runtime;
    const std::string& id = bundle.id();
    pid_t init = run_detached(runtime, bundle, {"--cgroup-manager", "disabled"});
    REQUIRE(wait_for_processes(bundle, 2));
    REQUIRE(cgroup_dirs(default_cgroup(id)).empty());
    std::ofstream(state_path(runtime, id), std::ios::trunc) << "garbage";

    auto deleted = runtime({"delete", "--force", id});
    INFO("delete --force: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(wait_for_exit(init));
    CHECK(wait_for_no_processes(bundle));
    reap_orphans();
    CHECK(runtime.root_entries().empty());
}

TEST_CASE("list: a damaged container is listed as corrupt, the others as usual",
          "[state-recovery][damaged]") {
    become_subreaper();
    TempBundle good("list-good");
    TempBundle bad("list-bad");
    good.set_shell(loop);
    bad.set_shell(loop);
    Runtime runtime;
    run_detached(runtime, good);
    run_detached(runtime, bad);
    REQUIRE(runtime.wait_for_status(good.id(), "running"));
    std::ofstream(state_path(runtime, bad.id()), std::ios::trunc) << "[1, 2";

    auto table = runtime({"list"});
    INFO("list: " << table.describe());
    CHECK(table.exit_code == 0);
    auto lines = split_lines(table.out);
    auto line_of = [&](const std::string& id) {
        auto it = std::find_if(lines.begin(), lines.end(),
                               [&](const std::string& line) { return line.starts_with(id); });
        return it == lines.end() ? std::string() : *it;
    };
    CHECK(mentions(line_of(good.id()), "running"));
    CHECK(mentions(line_of(bad.id()), "corrupt"));
    CHECK(mentions(table.err, bad.id()));
    CHECK(mentions(table.err, "corrupt state"));

    auto quiet = runtime({"list", "-q"});
    INFO("list -q: " << quiet.describe());
    CHECK(quiet.exit_code == 0);
    auto ids = split_lines(quiet.out);
    std::sort(ids.begin(), ids.end());
    std::vector<std::string> expected = {good.id(), bad.id()};
    std::sort(expected.begin(), expected.end());
    CHECK(ids == expected);

    auto json = runtime({"list", "--format", "json"});
    INFO("list --format json: " << json.describe());
    CHECK(json.exit_code == 0);
    auto parsed = nlohmann::json::parse(json.out, nullptr, false);
    REQUIRE(parsed.is_array());
    REQUIRE(parsed.size() == 1);
    CHECK(parsed[0]["id"] == good.id());
    CHECK(mentions(json.err, "corrupt state"));

    CHECK(runtime({"delete", "--force", bad.id()}).exit_code == 0);
    CHECK(runtime({"delete", "--force", good.id()}).exit_code == 0);
    reap_orphans();
    check_root_empty(runtime);
}
