// Crash consistency (issue 19): a `create` that dies at any point, and one whose --root has no
// space left, must leave nothing that `delete --force` cannot take away: no state directory,
// no cgroup, no process (the init included), no mount. What runtime/create.cpp's recipe
// records before it makes something ("record the cgroups") is what the delete goes by.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace it;
namespace stdfs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// The processes of container `id`: those naming it in their command line (mini-run, and
// the init before it execs), those rooted in `rootfs` (the init after pivot_root) and those
// in one of its cgroups. Zombies are dead already: not counted.
std::vector<pid_t> processes_of(const std::string& id, const std::string& rootfs) {
    std::set<pid_t> found;
    for (pid_t pid : processes_with_marker(id)) {
        found.insert(pid);
    }
    struct stat root_of_rootfs {};
    bool have_rootfs = ::stat(rootfs.c_str(), &root_of_rootfs) == 0;
    std::error_code error;
    for (const auto& entry : stdfs::directory_iterator("/proc", error)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        pid_t pid = std::stoi(name);
        if (pid == ::getpid()) {
            continue;
        }
        struct stat root {};
        if (have_rootfs && ::stat((entry.path() / "root").c_str(), &root) == 0 &&
            root.st_dev == root_of_rootfs.st_dev && root.st_ino == root_of_rootfs.st_ino) {
            found.insert(pid);
        }
        for (const auto& line :
             split_lines(read_file(entry.path() / "cgroup").value_or(std::string()))) {
            if (line.ends_with(":" + default_cgroup(id)) ||
                contains(line, ":" + default_cgroup(id) + "/")) {
                found.insert(pid);
            }
        }
    }
    std::vector<pid_t> alive;
    for (pid_t pid : found) {
        if (process_alive(pid)) {
            alive.push_back(pid);
        }
    }
    return alive;
}

// `argv` with nothing open but /dev/null and `log`: the init it makes may hold them for as
// long as it likes (helpers.hpp, spawn_logged).
pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
    pid_t pid = spawn_logged(argv, log);
    REQUIRE(pid > 0);
    return pid;
}

int wait_status(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

std::string describe_status(int status) {
    if (WIFSIGNALED(status)) {
        return "killed by signal " + std::to_string(WTERMSIG(status));
    }
    return "exited " + std::to_string(WEXITSTATUS(status));
}

// How far a killed create got, by its state directory.
std::string written_so_far(const std::string& dir) {
    auto state = read_file(dir + "/state.json");
    if (!state) {
        return "no state.json";
    }
    auto json = nlohmann::json::parse(*state, nullptr, false);
    if (!json.is_object() || !json.contains("pid") || !json["pid"].is_number_integer()) {
        return "unreadable state.json";
    }
    if (json["pid"].get<int>() != 0) {
        return "state.json with the init";
    }
    // Where no cgroup leads to the init, recovery.json has its pid from right after the clone.
    auto recovery =
        nlohmann::json::parse(read_file(dir + "/recovery.json").value_or(""), nullptr, false);
    return recovery.is_object() && recovery.value("pid", 0) != 0
               ? "state.json, no init yet, recovery.json with the init"
               : "state.json, no init yet";
}

uint32_t crash_seed() {
    if (const char* fixed = std::getenv("MINIRUN_CRASH_SEED")) {
        return static_cast<uint32_t>(std::strtoul(fixed, nullptr, 10));
    }
    return std::random_device{}();
}

// A tmpfs of 256 KiB mounted on a fresh directory and filled up: every write there fails
// with ENOSPC. Unmounted (detached) and removed at the end, also when the test fails.
class FullTmpfs {
public:
    FullTmpfs() : dir_("minirun-it-full"), path_(dir_.path() + "/root") {
        REQUIRE(::mkdir(path_.c_str(), 0700) == 0);
        REQUIRE(::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=256k") == 0);
        mounted_ = true;
        int fd = ::open(filler().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        std::string block(4096, 'x');
        while (::write(fd, block.data(), block.size()) > 0) {
        }
        int error = errno;
        // The last partial page, byte by byte, until not even one fits.
        while (::write(fd, "x", 1) == 1) {
        }
        ::close(fd);
        REQUIRE(error == ENOSPC);
    }
    FullTmpfs(const FullTmpfs&) = delete;
    FullTmpfs& operator=(const FullTmpfs&) = delete;
    ~FullTmpfs() {
        if (mounted_) {
            ::umount2(path_.c_str(), MNT_DETACH);
        }
    }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string filler() const { return path_ + "/filler"; }

private:
    TempDir dir_;
    std::string path_;
    bool mounted_ = false;
};

} // namespace

TEST_CASE("crash: create SIGKILLed at a random point, then delete --force leaves nothing",
          "[crash]") {
    constexpr int kTries = 40;
    // Without cgroups, only what state.json and recovery.json say leads to the init.
    const bool with_cgroups = GENERATE(true, false);
    INFO((with_cgroups ? "with cgroups" : "--cgroup-manager disabled"));
    become_subreaper();
    TempBundle bundle("crash");
    const std::string rootfs = bundle.copy_rootfs();
    Runtime runtime;
    TempDir io("minirun-it-crash");
    std::set<int> mounts_before;
    for (const auto& mount : host_mounts()) {
        mounts_before.insert(mount.id);
    }
    auto create_argv = [&](const std::string& id) {
        // The id in the process's arguments too: it then marks the container's processes
        // after the exec as well.
        bundle.set_args({"sh", "-c", "while true; do sleep 1; done", id});
        bundle.write_config();
        std::vector<std::string> args = {"create", "--bundle", bundle.dir(), id};
        if (!with_cgroups) {
            args.insert(args.begin(), {"--cgroup-manager", "disabled"});
        }
        return runtime.argv(args);
    };
    auto delete_force = [&](const std::string& id) {
        auto deleted = runtime({"delete", "--force", id});
        reap_orphans();
        return deleted;
    };

    // How long a create takes when nothing kills it, from fork to exit (the median of 5).
    std::vector<double> normal;
    for (int i = 0; i < 5; ++i) {
        const std::string id = bundle.id() + "-normal" + std::to_string(i);
        auto argv = create_argv(id);
        const auto start = Clock::now();
        pid_t pid = spawn(argv, io.path() + "/" + id);
        int status = wait_status(pid);
        normal.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        INFO("create " << id << ": " << describe_status(status) << ": "
                       << read_file(io.path() + "/" + id).value_or(""));
        REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
        REQUIRE(delete_force(id).exit_code == 0);
    }
    std::sort(normal.begin(), normal.end());
    const double normal_us = normal[normal.size() / 2];

    const uint32_t seed = crash_seed();
    INFO("seed " << seed << " (MINIRUN_CRASH_SEED=" << seed << " repeats this run); a normal "
                 << "create takes " << normal_us << " us");
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> delay_us(0, 1.2 * normal_us);
    // Where the kills landed, by what the create had written: nothing, the directory
    // without state.json, state.json without the init (pid 0), all of it; or it had finished.
    std::map<std::string, int> landed;
    for (int attempt = 0; attempt < kTries; ++attempt) {
        const std::string id = bundle.id() + "-" + std::to_string(attempt);
        const double delay = delay_us(random);
        auto argv = create_argv(id);
        pid_t pid = spawn(argv, io.path() + "/" + id);
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(delay)));
        ::kill(pid, SIGKILL); // our child, not yet reaped: the pid is still its own
        int status = wait_status(pid);
        const bool state_dir_made = exists(runtime.root() + "/" + id);
        INFO("try " << attempt << ", " << id << ": SIGKILL after " << delay << " us; create "
                    << describe_status(status) << "; state directory "
                    << (state_dir_made ? "made" : "never made")
                    << "; create said: " << read_file(io.path() + "/" + id).value_or(""));
        const std::string landed_at = !WIFSIGNALED(status) ? "finished"
                                      : !state_dir_made    ? "no directory"
                                                        : written_so_far(runtime.root() + "/" + id);
        ++landed[landed_at];
        INFO("killed with: " << landed_at);

        auto deleted = delete_force(id);
        INFO("delete --force: " << deleted.describe());
        if (state_dir_made) {
            CHECK(deleted.exit_code == 0);
        } else if (deleted.exit_code != 0) {
            WARN("delete --force failed, but the state directory of " << id << " never got made");
        }
        std::vector<std::string> left;
        if (exists(runtime.root() + "/" + id)) {
            left.push_back("state directory " + runtime.root() + "/" + id);
        }
        for (const auto& dir : cgroup_dirs(default_cgroup(id))) {
            left.push_back("cgroup " + dir);
        }
        std::vector<pid_t> pids;
        wait_until(
            [&] {
                reap_orphans();
                pids = processes_of(id, rootfs);
                return pids.empty();
            },
            3s);
        for (pid_t process : pids) {
            left.push_back("process " + std::to_string(process) + ": " + cmdline_of(process));
        }
        for (const auto& mount : host_mounts()) {
            if (mounts_before.count(mount.id) == 0) {
                left.push_back("new mount: " + mount.line);
            }
        }
        for (const auto& problem : left) {
            FAIL_CHECK("left behind: " << problem);
        }
        if (!left.empty()) {
            // Cleaned up by hand, so that the next try starts from nothing again: what this
            // try started (by pid), then its cgroups and state.
            for (pid_t process : pids) {
                ::kill(process, SIGKILL);
            }
            std::this_thread::sleep_for(100ms);
            reap_orphans();
            for (const auto& dir : cgroup_dirs(default_cgroup(id))) {
                ::rmdir(dir.c_str());
            }
            remove_tree(runtime.root() + "/" + id);
            mounts_before.clear();
            for (const auto& mount : host_mounts()) {
                mounts_before.insert(mount.id);
            }
        }
    }
    WARN("crash (" << (with_cgroups ? "with cgroups" : "no cgroups") << "): " << kTries
                   << " creates SIGKILLed within 0.." << 1.2 * normal_us
                   << " us (a normal one takes " << normal_us << " us, seed " << seed
                   << "), killed with: " << [&] {
                          std::string text;
                          for (const auto& [what, count] : landed) {
                              text += " " + what + " x" + std::to_string(count) + ";";
                          }
                          return text;
                      }());
    CHECK(runtime.root_entries().empty());
}

TEST_CASE("crash: --root on a full tmpfs: create and run fail with one line naming it, and "
          "leave nothing",
          "[crash]") {
    become_subreaper();
    FullTmpfs full;
    TempBundle bundle("crash-full");
    bundle.set_shell("exit 0");
    bundle.write_config();
    Runtime runtime(full.path());
    std::set<int> mounts_before; // the tmpfs is there already
    for (const auto& mount : host_mounts()) {
        mounts_before.insert(mount.id);
    }
    const std::string& id = bundle.id();

    for (const std::string command : {"create", "run"}) {
        INFO("mini-run --root " << full.path() << " " << command);
        auto result = runtime.to_files({command, "--bundle", bundle.dir(), id});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        auto lines = split_lines(result.err);
        lines.erase(std::remove(lines.begin(), lines.end(), std::string()), lines.end());
        CHECK(lines.size() == 1);
        CHECK(contains(result.err, "No space left on device"));
        CHECK(contains(result.err, full.path()));

        reap_orphans();
        std::vector<std::string> entries = runtime.root_entries();
        entries.erase(std::remove(entries.begin(), entries.end(), "filler"), entries.end());
        for (const auto& entry : entries) {
            FAIL_CHECK("left under --root: " << entry);
        }
        for (const auto& dir : cgroup_dirs(default_cgroup(id))) {
            FAIL_CHECK("left behind: cgroup " << dir);
        }
        for (pid_t pid : processes_of(id, bundle.rootfs())) {
            FAIL_CHECK("left behind: process " << pid << ": " << cmdline_of(pid));
        }
        for (const auto& mount : host_mounts()) {
            if (mounts_before.count(mount.id) == 0) {
                FAIL_CHECK("left behind: new mount: " << mount.line);
            }
        }
    }
}
