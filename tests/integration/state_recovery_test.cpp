// Containers whose recorded state no longer matches the system (issue 14, item 11): an
// init pid that the kernel gave to another process. The reused pid is simulated by writing
// a live stranger's pid into the state of a stopped container, next to the dead init's
// start time, which is exactly what a reuse looks like.
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

// The hierarchies mounted below /sys/fs/cgroup.
std::vector<std::string> hierarchies() {
    std::vector<std::string> out;
    for (const MountInfo& mount : host_mounts()) {
        if ((mount.fs_type == "cgroup" || mount.fs_type == "cgroup2") &&
            stdfs::path(mount.mount_point).parent_path() == "/sys/fs/cgroup") {
            out.push_back(mount.mount_point);
        }
    }
    return out;
}

// The directories of the container's default cgroup, /mini-run/<id>, in any hierarchy.
std::vector<std::string> cgroup_dirs(const std::string& id) {
    std::vector<std::string> out;
    for (const std::string& hierarchy : hierarchies()) {
        std::error_code error;
        if (stdfs::is_directory(hierarchy + "/mini-run/" + id, error)) {
            out.push_back(hierarchy + "/mini-run/" + id);
        }
    }
    return out;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool mentions(const std::string& text, const std::string& part) {
    return contains(text, part);
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
    std::this_thread::sleep_for(200ms); // a signal sent would have acted by now
    CHECK(stranger.alive());

    auto deleted = runtime({"delete", "--force", id});
    INFO("delete --force: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    std::this_thread::sleep_for(200ms);
    CHECK(stranger.alive());
    CHECK(runtime.root_entries().empty());
    CHECK(cgroup_dirs(id).empty());
}
