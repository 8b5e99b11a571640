// Soak (issue 19): many containers one after another and side by side, against one
// test-owned --root, and then nothing may be left: no state directory, no cgroup, no mount,
// no process (zombies included) and no descriptor more than at the start. Sized for CI: the
// three cases together take well under 90 s on 2 cores. The rates they print are a report,
// never a pass mark.
//
// Catch2 v2's assertions and the helpers' Child, run() and run_to_files() are not
// thread-safe (an unsynchronised counter, the set of live children), so the worker threads
// start their commands with Command below, record what went wrong as text, and the main
// thread asserts once they are joined.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace it;
namespace stdfs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kThreads = 8;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// `worker` on kThreads threads at once; the seconds until the last one is done.
template <typename Worker>
double on_all_threads(const Worker& worker) {
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back(worker);
    }
    for (auto& thread : threads) {
        thread.join();
    }
    return seconds_since(start);
}

// Waits for a process of ours (a container's init, reparented to the subreaper test) to
// exit and reaps it; its wait status, or nullopt on timeout (it is then left running).
std::optional<int> wait_and_reap(pid_t pid, Millis timeout = 10s) {
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) {
        return std::nullopt;
    }
    pollfd entry{pidfd, POLLIN, 0};
    int ready = 0;
    do {
        ready = ::poll(&entry, 1, static_cast<int>(timeout.count()));
    } while (ready < 0 && errno == EINTR);
    ::close(pidfd);
    int status = 0;
    if (ready <= 0 || ::waitpid(pid, &status, __WALL) != pid) {
        return std::nullopt;
    }
    return status;
}

// One command of a worker thread: stdin from /dev/null, stdout and stderr into `log` (a
// container that inherits them cannot hold the test up), no other descriptor. Waits for
// the command itself through a pidfd, never for its containers.
struct Outcome {
    int exit_code = -1; // or 128+N when killed by signal N
    bool timed_out = false;
    std::string log;
    [[nodiscard]] std::string describe() const {
        return "exit " + std::to_string(exit_code) + (timed_out ? " (timed out)" : "") + ": " +
               read_file(log).value_or("<no output>");
    }
};

Outcome command(const std::vector<std::string>& argv, const std::string& log,
                Millis timeout = 20s) {
    Outcome outcome;
    outcome.log = log;
    pid_t pid = spawn_logged(argv, log);
    if (pid < 0) {
        return outcome;
    }
    std::optional<int> status = wait_and_reap(pid, timeout);
    if (!status) {
        outcome.timed_out = true;
        ::kill(pid, SIGKILL);
        int killed = 0;
        while (::waitpid(pid, &killed, 0) < 0 && errno == EINTR) {
        }
        status = killed;
    }
    outcome.exit_code = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
    return outcome;
}

std::optional<pid_t> pid_in(const std::string& path) {
    auto text = read_file(path);
    if (!text || text->empty() || text->size() > 10 ||
        !std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    return static_cast<pid_t>(std::stol(*text));
}

// What went wrong in the worker threads, for the main thread to report.
class Problems {
public:
    void add(std::string problem) {
        std::lock_guard<std::mutex> lock(mutex_);
        list_.push_back(std::move(problem));
    }
    // On the main thread, once the workers are joined: each problem a failed check.
    void fail_each() const {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const std::string& problem : list_) {
            FAIL_CHECK(problem);
        }
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::string> list_;
};

// The names in a directory ("fd" of /proc/<pid>: its descriptors).
std::vector<std::string> entries_of(const std::string& dir) {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : stdfs::directory_iterator(dir, error)) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

size_t own_fd_count() {
    return entries_of("/proc/self/fd").size();
}

std::string link_of(const std::string& path) {
    std::error_code error;
    return stdfs::read_symlink(path, error).string();
}

bool is_under(const std::string& path, const std::string& dir) {
    return path == dir || path.starts_with(dir + "/");
}

// What the test had before it started containers, and the check that it has it again.
// `prefix` starts every container id and is in every container's command line.
class Baseline {
public:
    Baseline(const TempBundle& bundle, std::string prefix)
        : bundle_(bundle), prefix_(std::move(prefix)), fds_(own_fd_count()) {
        for (const auto& mount : host_mounts()) {
            mounts_.insert(mount.id);
        }
    }

    // Everything that is different now, each as one line. Processes get a few seconds to
    // go away (a SIGKILLed init is reaped by the kernel a little later).
    [[nodiscard]] std::vector<std::string> differences(const Runtime& runtime,
                                                       const std::vector<std::string>& ids) const {
        std::vector<std::string> found;
        for (const auto& entry : runtime.root_entries()) {
            found.push_back("state directory under --root: " + entry);
        }
        for (const auto& hierarchy : cgroup_hierarchies()) {
            for (const auto& id : ids) {
                std::error_code error;
                if (stdfs::exists(hierarchy + default_cgroup(id), error)) {
                    found.push_back("cgroup " + hierarchy + default_cgroup(id));
                }
            }
        }
        for (const auto& mount : host_mounts()) {
            if (mounts_.count(mount.id) == 0) {
                found.push_back("new mount: " + mount.line);
            }
        }
        std::vector<std::string> processes;
        wait_until(
            [&] {
                processes = stray_processes();
                return processes.empty();
            },
            3s);
        found.insert(found.end(), processes.begin(), processes.end());
        if (size_t fds = own_fd_count(); fds != fds_) {
            found.push_back("the test has " + std::to_string(fds) + " descriptors, " +
                            std::to_string(fds_) + " at the start");
        }
        return found;
    }

    // Processes of these containers: any child of the test (zombies too), anything carrying
    // the prefix, rooted in the bundle's rootfs, with its root or cwd in the bundle, or in
    // a cgroup of one of the containers.
    [[nodiscard]] std::vector<std::string> stray_processes() const {
        std::vector<std::string> found;
        const pid_t self = ::getpid();
        std::set<pid_t> seen;
        auto add = [&](pid_t pid, const std::string& why) {
            if (seen.insert(pid).second) {
                found.push_back("process " + std::to_string(pid) + " (" + why +
                                "): " + cmdline_of(pid) + " state " +
                                std::string(1, process_state(pid).value_or('?')));
            }
        };
        for (pid_t child : children_of(self)) {
            add(child, "a child of the test");
        }
        for (pid_t pid : processes_with_marker(prefix_)) {
            add(pid, "carries " + prefix_);
        }
        struct stat rootfs {};
        bool have_rootfs = ::stat(bundle_.rootfs().c_str(), &rootfs) == 0;
        for (const auto& name : entries_of("/proc")) {
            if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
                continue;
            }
            pid_t pid = std::stoi(name);
            if (pid == self) {
                continue;
            }
            const std::string proc = "/proc/" + name;
            struct stat root {};
            if (have_rootfs && ::stat((proc + "/root").c_str(), &root) == 0 &&
                root.st_dev == rootfs.st_dev && root.st_ino == rootfs.st_ino) {
                add(pid, "its root is the rootfs");
            }
            for (const char* link : {"/root", "/cwd"}) {
                if (is_under(link_of(proc + link), bundle_.dir())) {
                    add(pid, std::string(link + 1) + " in the bundle");
                }
            }
            for (const auto& line : split_lines(read_file(proc + "/cgroup").value_or(""))) {
                if (contains(line, ":/" + prefix_)) {
                    add(pid, "in cgroup " + line);
                }
            }
        }
        return found;
    }

private:
    const TempBundle& bundle_;
    std::string prefix_;
    size_t fds_;
    std::set<int> mounts_;
};

// Asserts that nothing is left, and then removes what was, by pid and by path, so that the
// next test starts clean: the processes (only those this test's containers made), the
// cgroups.
void check_nothing_left(const Baseline& baseline, const Runtime& runtime,
                        const std::vector<std::string>& ids) {
    const auto left = baseline.differences(runtime, ids);
    for (const auto& problem : left) {
        FAIL_CHECK("left behind: " << problem);
    }
    if (left.empty()) {
        return;
    }
    for (int round = 0; round < 3; ++round) {
        for (const auto& line : baseline.stray_processes()) {
            ::kill(std::stoi(line.substr(std::string("process ").size())), SIGKILL);
        }
        std::this_thread::sleep_for(100ms);
        reap_orphans();
    }
    for (const auto& hierarchy : cgroup_hierarchies()) {
        for (const auto& id : ids) {
            ::rmdir((hierarchy + default_cgroup(id)).c_str());
        }
    }
}

// A bundle with its own copy of the rootfs (so that a process rooted there is known to be
// one of these containers), running `script` with the bundle's id as $0.
void prepare(TempBundle& bundle, const std::string& script) {
    bundle.copy_rootfs();
    bundle.set_shell(script);
    bundle.write_config();
}

} // namespace

TEST_CASE("soak: 240 lifecycles 8-way (create, start, exit, delete) leave nothing behind",
          "[soak]") {
    constexpr int kContainers = 240;
    become_subreaper();
    TempBundle bundle("soak");
    prepare(bundle, "exit 0");
    Runtime runtime;
    TempDir io("minirun-it-soak");
    Baseline baseline(bundle, bundle.id());
    std::vector<std::string> ids;
    for (int i = 0; i < kContainers; ++i) {
        ids.push_back(bundle.id() + "-" + std::to_string(i));
    }

    Problems problems;
    std::atomic<int> next{0};
    auto worker = [&] {
        for (int i = next++; i < kContainers; i = next++) {
            const std::string& id = ids[i];
            const std::string log = io.path() + "/" + id;
            const std::string pid_file = log + ".pid";
            auto created = command(
                runtime.argv({"create", "--bundle", bundle.dir(), "--pid-file", pid_file, id}),
                log + ".create");
            auto pid = pid_in(pid_file);
            if (created.exit_code != 0 || !pid) {
                problems.add(id + ": create: " + created.describe());
                continue;
            }
            auto started = command(runtime.argv({"start", id}), log + ".start");
            if (started.exit_code != 0) {
                problems.add(id + ": start: " + started.describe());
                continue;
            }
            auto status = wait_and_reap(*pid);
            if (!status || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
                problems.add(id + ": its init " + std::to_string(*pid) + " did not exit 0 (" +
                             (status ? std::to_string(*status) : "still running") + ")");
                continue;
            }
            // Not --force: the container has stopped, a plain delete must do.
            auto deleted = command(runtime.argv({"delete", id}), log + ".delete");
            if (deleted.exit_code != 0) {
                problems.add(id + ": delete: " + deleted.describe());
            }
        }
    };
    const double took = on_all_threads(worker);
    WARN("soak: " << kContainers << " lifecycles " << kThreads << "-way in " << took
                  << " s: " << kContainers / took << " containers/s");
    problems.fail_each();
    check_nothing_left(baseline, runtime, ids);
}

TEST_CASE("soak: 200 execs 8-way into one container, which holds only fds 0, 1 and 2", "[soak]") {
    constexpr int kExecs = 200;
    become_subreaper();
    TempBundle bundle("soak-exec");
    prepare(bundle, "while true; do sleep 1; done");
    Runtime runtime;
    TempDir io("minirun-it-soak");
    Baseline baseline(bundle, bundle.id());
    const std::string& id = bundle.id();

    // Created with one more descriptor than stdio open (fd 5, not close-on-exec, not
    // --preserve-fds): the init must not get it, nor any of mini-run's own.
    int stray = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(stray >= 0);
    auto created = runtime.create(bundle, {}, {{5, stray}});
    ::close(stray);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(id);
    REQUIRE(pid.has_value());
    const pid_t init = *pid;
    REQUIRE(runtime({"start", id}).exit_code == 0);
    // Counted once pid 1 is the container's shell (the bundle's id is its $0).
    REQUIRE(wait_until([&] { return contains(cmdline_of(init), id); }));
    const std::vector<std::string> stdio = {"0", "1", "2"};
    CHECK(entries_of("/proc/" + std::to_string(init) + "/fd") == stdio);

    Problems problems;
    std::atomic<int> next{0};
    auto worker = [&] {
        for (int i = next++; i < kExecs; i = next++) {
            auto ran = command(runtime.argv({"exec", id, "true"}),
                               io.path() + "/exec-" + std::to_string(i));
            if (ran.exit_code != 0) {
                problems.add("exec " + std::to_string(i) + ": " + ran.describe());
            }
        }
    };
    const double took = on_all_threads(worker);
    WARN("soak: " << kExecs << " execs " << kThreads << "-way into one container in " << took
                  << " s: " << kExecs / took << " execs/s");
    problems.fail_each();
    // The storm left the init as it was: still running, still with the same descriptors.
    CHECK(process_alive(init));
    CHECK(entries_of("/proc/" + std::to_string(init) + "/fd") == stdio);

    auto deleted = runtime({"delete", "--force", id});
    INFO("delete --force: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(wait_and_reap(init).has_value());
    check_nothing_left(baseline, runtime, {id});
}

TEST_CASE("soak: one id reused 60 times by run -d and delete -f, and 20 times by a "
          "foreground run whose descriptors stay the same",
          "[soak]") {
    constexpr int kDetached = 60;
    constexpr int kForeground = 20;
    become_subreaper();
    TempBundle bundle("soak-reuse");
    prepare(bundle, "while true; do sleep 1; done"); // until delete -f
    Runtime runtime;
    TempDir io("minirun-it-soak");
    Baseline baseline(bundle, bundle.id());
    const std::string& id = bundle.id();
    const std::string pid_file = io.path() + "/pid";

    const auto start = Clock::now();
    for (int i = 0; i < kDetached; ++i) {
        INFO("run -d, round " << i);
        auto ran = command(
            runtime.argv({"run", "--detach", "--bundle", bundle.dir(), "--pid-file", pid_file, id}),
            io.path() + "/run-" + std::to_string(i));
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        auto pid = pid_in(pid_file);
        REQUIRE(pid.has_value());
        auto deleted =
            command(runtime.argv({"delete", "-f", id}), io.path() + "/delete-" + std::to_string(i));
        INFO("delete -f: " << deleted.describe());
        REQUIRE(deleted.exit_code == 0);
        // delete -f returns once the init is dead; it is ours (the subreaper's) to reap.
        REQUIRE(wait_and_reap(*pid).has_value());
        REQUIRE(runtime.root_entries().empty());
    }
    const double took = seconds_since(start);
    WARN("soak: " << kDetached << " run -d + delete -f of one id in " << took
                  << " s: " << kDetached / took << " rounds/s");

    // The foreground run stays the container's parent: counted while the container waits
    // for its stdin, once the count has settled (two reads 50 ms apart agree).
    bundle.set_shell("echo ready; read line; exit 0"); // read fails at end of file
    bundle.write_config();
    std::vector<size_t> counts;
    for (int i = 0; i < kForeground; ++i) {
        INFO("foreground run, round " << i);
        Child run(runtime.argv({"run", "--bundle", bundle.dir(), id}));
        bool ready = run.wait_for_output("ready\n");
        INFO("stderr: " << run.err());
        REQUIRE(ready);
        const std::string fd_dir = "/proc/" + std::to_string(run.pid()) + "/fd";
        std::vector<std::string> fds;
        REQUIRE(wait_until([&] {
            auto before = entries_of(fd_dir);
            std::this_thread::sleep_for(50ms);
            fds = entries_of(fd_dir);
            return fds == before;
        }));
        counts.push_back(fds.size());
        run.close_stdin();
        auto result = run.wait();
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
    }
    std::string rounds;
    for (size_t count : counts) {
        rounds += " " + std::to_string(count);
    }
    WARN("soak: descriptors of the foreground run, round by round:" << rounds);
    CHECK(counts.front() == counts.back());
    check_nothing_left(baseline, runtime, {id});
}
