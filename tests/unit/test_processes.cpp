// Finding and signalling a container's processes when its init's pid may have been reused,
// and `delete --force` of a container whose state.json is damaged. Without root: the
// containers here have no cgroups, and their "init" is a process this test forks.
#include "capture_stderr.hpp"
#include "lifecycle.hpp"
#include "minirun/log.hpp"
#include "minirun/runtime.hpp"
#include "minirun/spec.hpp"
#include "state.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace minirun;
using minirun::testing::capture_stderr;
using minirun::testing::TempDir;
using runtime::ProcessRef;
using state::Record;
using state::StateDir;
namespace stdfs = std::filesystem;

namespace {

// A process of the test with one child of its own, both waiting until the test lets them
// go (the pipe closes); stands for whatever took a dead init's pid. Killed and reaped on
// destruction, the grandchild through a pidfd, so that no failed check leaks either.
class Family {
public:
    Family() {
        int release[2];
        int report[2];
        REQUIRE(::pipe2(release, O_CLOEXEC) == 0);
        REQUIRE(::pipe2(report, O_CLOEXEC) == 0);
        parent_ = ::fork();
        REQUIRE(parent_ >= 0);
        if (parent_ == 0) {
            ::close(release[1]);
            ::close(report[0]);
            pid_t child = ::fork();
            if (child == 0) {
                char byte = 0;
                (void)!::read(release[0], &byte, 1);
                ::_exit(0);
            }
            (void)!::write(report[1], &child, sizeof(child));
            char byte = 0;
            (void)!::read(release[0], &byte, 1);
            ::_exit(0);
        }
        ::close(release[0]);
        ::close(report[1]);
        release_fd_ = release[1];
        REQUIRE(::read(report[0], &child_, sizeof(child_)) == sizeof(child_));
        ::close(report[0]);
        child_pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, child_, 0));
        REQUIRE(child_pidfd_ >= 0);
        auto start = state::process_start_time(parent_);
        REQUIRE(start.ok());
        parent_start_ = *start;
    }
    Family(const Family&) = delete;
    Family& operator=(const Family&) = delete;
    ~Family() {
        ::syscall(SYS_pidfd_send_signal, child_pidfd_, SIGKILL, nullptr, 0);
        ::kill(parent_, SIGKILL);
        ::close(release_fd_);
        reap();
        ::close(child_pidfd_);
    }

    [[nodiscard]] pid_t parent() const { return parent_; }
    [[nodiscard]] pid_t child() const { return child_; }
    [[nodiscard]] uint64_t parent_start() const { return parent_start_; }

    // True while the parent has not exited (it stays our unreaped child meanwhile).
    [[nodiscard]] bool parent_alive() const {
        siginfo_t info{};
        return ::waitid(P_PID, static_cast<id_t>(parent_), &info, WEXITED | WNOHANG | WNOWAIT) ==
                   0 &&
               info.si_pid == 0;
    }
    [[nodiscard]] bool child_alive() const {
        pollfd entry{child_pidfd_, POLLIN, 0};
        return ::poll(&entry, 1, 0) == 0;
    }
    // Waits for the grandchild's exit, up to 5 s.
    [[nodiscard]] bool child_exits() const {
        pollfd entry{child_pidfd_, POLLIN, 0};
        return ::poll(&entry, 1, 5000) == 1;
    }
    // The parent's wait status (it is reaped), or -1 when it was reaped already.
    int reap() {
        int status = 0;
        if (!reaped_ && ::waitpid(parent_, &status, 0) == parent_) {
            reaped_ = true;
            return status;
        }
        return -1;
    }

private:
    pid_t parent_ = -1;
    pid_t child_ = -1;
    uint64_t parent_start_ = 0;
    int release_fd_ = -1;
    int child_pidfd_ = -1;
    bool reaped_ = false;
};

Record record_for(pid_t pid, uint64_t start_time) {
    Record record;
    record.oci_version = "1.2.0";
    record.id = "box";
    record.pid = pid;
    record.pid_start_time = start_time;
    record.bundle = "/nonexistent/bundle";
    record.rootfs = "/nonexistent/bundle/rootfs";
    record.created = "2026-01-01T00:00:00Z";
    record.owner = "root";
    return record;
}

std::vector<pid_t> pids_of(const std::vector<ProcessRef>& processes) {
    std::vector<pid_t> out;
    for (const auto& process : processes) {
        out.push_back(process.pid);
    }
    return out;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The default config with one poststop hook that writes "ran" to `marker`.
std::string config_with_poststop(const std::string& marker) {
    auto config = nlohmann::json::parse(spec::default_spec_json(false, 0, 0));
    config["hooks"]["poststop"] = nlohmann::json::array(
        {{{"path", "/bin/sh"}, {"args", {"sh", "-c", "echo ran > " + marker}}}});
    return config.dump();
}

} // namespace

TEST_CASE("signal_process: a pid whose start time differs is never signalled", "[processes]") {
    Family family;
    auto wrong = runtime::signal_process({family.parent(), family.parent_start() + 1}, SIGKILL);
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().errno_value() == ESRCH);
    CHECK(family.parent_alive());
    auto no_pid = runtime::open_process({0, family.parent_start()});
    REQUIRE_FALSE(no_pid.ok());
    CHECK(no_pid.error().errno_value() == ESRCH);

    REQUIRE(runtime::signal_process({family.parent(), family.parent_start()}, SIGKILL).ok());
    int status = family.reap();
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("processes_of: a reused init pid is no member, nor are its children", "[processes]") {
    Family family;
    // The init that had this pid started at another time: this process is a stranger.
    Record reused = record_for(family.parent(), family.parent_start() + 1);
    CHECK(runtime::processes_of(reused).empty());
    reused.pid = 0; // not even cloned
    CHECK(runtime::processes_of(reused).empty());

    // The same process as a real init, in the host's PID namespace, without cgroups: it and
    // its descendants, with their start times.
    Record real = record_for(family.parent(), family.parent_start());
    auto members = runtime::processes_of(real);
    CHECK(pids_of(members) == std::vector<pid_t>{family.parent(), family.child()});
    REQUIRE(members.size() == 2);
    CHECK(members[1].start_time == *state::process_start_time(family.child()));
}

TEST_CASE("kill, kill --all, ps and delete --force of a container whose init pid was reused",
          "[processes]") {
    TempDir tmp;
    Family family;
    {
        auto dir = StateDir::create(tmp.path(), "box");
        REQUIRE(dir.ok());
        REQUIRE(dir->save(record_for(family.parent(), family.parent_start() + 1)).ok());
    }
    auto state = container_state(tmp.path(), "box");
    REQUIRE(state.ok());
    CHECK_THAT(*state, Catch::Contains(R"("status": "stopped")"));

    // runc 1.1: a stopped container without cgroups has nothing to signal with --all.
    CHECK(kill_container(tmp.path(), "box", SIGKILL, true).ok());
    auto one = kill_container(tmp.path(), "box", SIGKILL, false);
    REQUIRE_FALSE(one.ok());
    CHECK(one.error().errno_value() == ESRCH);
    CHECK_THAT(one.error().message(), Catch::Contains("container not running"));
    auto pids = container_pids(tmp.path(), "box");
    REQUIRE(pids.ok());
    CHECK(pids->empty());
    CHECK(family.parent_alive());
    CHECK(family.child_alive());

    REQUIRE(delete_container(tmp.path(), "box", true).ok());
    CHECK_FALSE(stdfs::exists(tmp.path() + "/box"));
    CHECK(family.parent_alive());
    CHECK(family.child_alive());
}

TEST_CASE("kill --all of a live container without cgroups reaches the init's descendants",
          "[processes]") {
    TempDir tmp;
    Family family;
    {
        auto dir = StateDir::create(tmp.path(), "box");
        REQUIRE(dir.ok());
        REQUIRE(dir->save(record_for(family.parent(), family.parent_start())).ok());
    }
    REQUIRE(kill_container(tmp.path(), "box", SIGKILL, true).ok());
    CHECK(family.child_exits());
    int status = family.reap();
    CHECK(WIFSIGNALED(status));
}

TEST_CASE("delete of a damaged state.json: refused without --force; with it, the init in "
          "recovery.json ends and the directory goes",
          "[processes]") {
    TempDir tmp;
    TempDir outside;
    const std::string precious = outside.path() + "/precious";
    std::ofstream(precious) << "not to be touched\n";
    Family family;
    std::string path = tmp.path() + "/box/state.json";
    {
        auto dir = StateDir::create(tmp.path(), "box");
        REQUIRE(dir.ok());
        Record record = record_for(family.parent(), family.parent_start());
        REQUIRE(dir->save(record).ok());
        REQUIRE(dir->save_recovery(record).ok());
    }
    const std::string damage =
        GENERATE(as<std::string>{}, "empty", "truncated", "garbage", "symlink");
    INFO("state.json: " << damage);
    std::string good = slurp(path);
    REQUIRE(::unlink(path.c_str()) == 0);
    if (damage == "symlink") {
        REQUIRE(::symlink(precious.c_str(), path.c_str()) == 0);
    } else {
        std::ofstream out(path, std::ios::binary);
        if (damage == "truncated") {
            out << good.substr(0, good.size() / 2);
        } else if (damage == "garbage") {
            const char garbage[] = "\x7f"
                                   "ELF\0\xff\xfe binary garbage";
            out.write(garbage, sizeof(garbage) - 1);
        }
    }

    auto state = container_state(tmp.path(), "box");
    REQUIRE_FALSE(state.ok());
    CHECK(state.error().errno_value() == state::kCorrupt);
    CHECK_THAT(state.error().message(), Catch::Contains("corrupt state") && Catch::Contains(path));

    auto refused = delete_container(tmp.path(), "box", false);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message(),
               Catch::Contains("corrupt state") && Catch::Contains("--force"));
    CHECK(family.parent_alive());
    CHECK(stdfs::exists(tmp.path() + "/box"));

    REQUIRE(delete_container(tmp.path(), "box", true).ok());
    CHECK_FALSE(stdfs::exists(tmp.path() + "/box"));
    int status = family.reap();
    CHECK(WIFSIGNALED(status));
    CHECK(family.child_exits());
    CHECK(slurp(precious) == "not to be touched\n");
    CHECK(stdfs::is_regular_file(stdfs::symlink_status(precious)));
}

TEST_CASE("list: a damaged state shows as corrupt, the others as they are", "[processes]") {
    TempDir tmp;
    Family family;
    for (const char* id : {"bad", "good"}) {
        auto dir = StateDir::create(tmp.path(), id);
        REQUIRE(dir.ok());
        Record record = record_for(family.parent(), family.parent_start());
        record.id = id;
        REQUIRE(dir->save(record).ok());
    }
    std::ofstream(tmp.path() + "/bad/state.json", std::ios::trunc) << "{\"ociVersion\": \"1.";
    auto listed = list_containers(tmp.path());
    REQUIRE(listed.ok());
    REQUIRE(listed->size() == 2);
    CHECK((*listed)[0].id == "bad");
    CHECK((*listed)[0].status == "corrupt");
    CHECK((*listed)[1].id == "good");
    CHECK((*listed)[1].status == "running");
    auto json = list_containers_json(tmp.path());
    REQUIRE(json.ok());
    CHECK_THAT(*json, Catch::Contains(R"("id":"good")") && !Catch::Contains("bad"));
}

TEST_CASE("delete: a saved config that cannot be read is a warning that the poststop hooks "
          "did not run; the container is deleted all the same",
          "[processes][poststop]") {
    TempDir tmp;
    TempDir outside;
    const std::string marker = outside.path() + "/poststop-ran";
    Family family;
    const bool damaged_state = GENERATE(false, true);
    const std::string config = GENERATE(as<std::string>{}, "readable", "missing", "garbage");
    INFO("state.json damaged: " << damaged_state << ", config.json: " << config);
    {
        auto dir = StateDir::create(tmp.path(), "box");
        REQUIRE(dir.ok());
        // Its init is gone (the pid now names another process): stopped.
        Record record = record_for(family.parent(), family.parent_start() + 1);
        REQUIRE(dir->save(record).ok());
        REQUIRE(dir->save_recovery(record).ok());
        if (config != "missing") {
            REQUIRE(dir->save_config(config == "garbage" ? std::string("{\"ociVersion\": \"1.")
                                                         : config_with_poststop(marker))
                        .ok());
        }
    }
    if (damaged_state) {
        std::ofstream(tmp.path() + "/box/state.json", std::ios::trunc) << "{\"ociVersion\"";
    }
    REQUIRE(log::configure(log::Options{}).ok());
    Status deleted = Error("not run");
    std::string warnings =
        capture_stderr([&] { deleted = delete_container(tmp.path(), "box", damaged_state); });
    INFO("stderr: " << warnings);
    REQUIRE(deleted.ok());
    CHECK_FALSE(stdfs::exists(tmp.path() + "/box"));
    CHECK(family.parent_alive()); // a stranger now: never signalled
    if (config == "readable") {
        CHECK(slurp(marker) == "ran\n");
        CHECK_THAT(warnings, !Catch::Contains("poststop"));
    } else {
        CHECK_FALSE(stdfs::exists(marker));
        CHECK_THAT(warnings, Catch::Contains("mini-run: warning: container \"box\": poststop "
                                             "hooks not run: its saved config cannot be read: "));
        CHECK_THAT(warnings, Catch::Contains(tmp.path() + "/box/config.json"));
    }
}

TEST_CASE("saved_spec_for: parses the config only when it can name what the caller uses",
          "[processes]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    auto saved_for = [&](const std::string& text) {
        REQUIRE(dir->save_config(text).ok());
        return runtime::saved_spec_for(*dir, {"poststop", "intelRdt"});
    };
    // Not a config parse_spec accepts (ociVersion must be a string): a parse would fail.
    const std::string unparsed = "{\"ociVersion\": 5, \"process\": {}}\n";
    REQUIRE_FALSE(spec::parse_spec(unparsed).ok());

    SECTION("naming none of the keys: a default spec, nothing parsed") {
        auto spec = saved_for(unparsed);
        REQUIRE(spec.ok());
        CHECK(spec->hooks.poststop.empty());
        CHECK_FALSE(spec->linux.intel_rdt.has_value());
    }
    SECTION("naming one: parsed, its hooks read") {
        auto spec = saved_for(config_with_poststop("/nowhere"));
        REQUIRE(spec.ok());
        CHECK(spec->hooks.poststop.size() == 1);
        CHECK_FALSE(saved_for("{\"intelRdt\": 1, \"ociVersion\": 5}").ok());
    }
    SECTION("a name that could hide behind \\u escapes, or a text cut short: parsed") {
        CHECK_FALSE(saved_for("{\"ociVersion\": 5, \"p\\u006fststop\": []}").ok());
        CHECK_FALSE(saved_for("{\"ociVersion\": \"1.").ok());
        CHECK_FALSE(saved_for("").ok());
    }
    SECTION("a missing config is an error, as for saved_spec") {
        REQUIRE(dir->save_config("{}").ok());
        REQUIRE(::unlink((dir->path() + "/config.json").c_str()) == 0);
        CHECK_FALSE(runtime::saved_spec_for(*dir, {"poststop"}).ok());
    }
}
