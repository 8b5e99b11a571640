// The mount-target race (CVE-2021-30465, CVE-2024-45310; issue 39 item 7), as the attack
// runs: while containers are created and deleted, a racing process keeps swapping a
// directory on the path of a bind destination with a symlink that points out of the rootfs,
// at a host "canary" directory. A runtime that resolves the destination by path, or creates
// the mount point by path, would at some point make a directory in the canary (runc's
// CVE-2024-45310) or mount onto it (CVE-2021-30465). mini-run resolves every destination
// from the rootfs (openat2 RESOLVE_IN_ROOT) and mounts on the fd it got: each create either
// mounts inside the rootfs or fails with one line, and the canary never changes.
#include "escape_helpers.hpp"
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

using namespace it;

namespace {

constexpr int kCycles = 200;

// The racer: a child of the test that swaps two names atomically (renameat2
// RENAME_EXCHANGE), a directory and a symlink, as fast as it can, counting the swaps in
// shared memory. Killed by its pid and reaped when the test ends, however it ends.
class Racer {
public:
    Racer(const std::string& a, const std::string& b) {
        void* shared = ::mmap(nullptr, sizeof(std::atomic<long>), PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        REQUIRE(shared != MAP_FAILED);
        swaps_ = new (shared) std::atomic<long>(0);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            for (;;) {
                if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0) {
                    swaps_->fetch_add(1, std::memory_order_relaxed);
                }
            }
        }
    }
    Racer(const Racer&) = delete;
    Racer& operator=(const Racer&) = delete;
    ~Racer() {
        stop();
        ::munmap(swaps_, sizeof(std::atomic<long>));
    }
    void stop() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    [[nodiscard]] long swaps() const { return swaps_->load(); }
    // Holds the racer still (SIGSTOP) while a check looks at the container, and lets it go.
    // Waited for: kill() returns before the racer has stopped, and a swap or two after it
    // would turn the names mountinfo gave into the other ones.
    void pause() const {
        REQUIRE(::kill(pid_, SIGSTOP) == 0);
        int status = 0;
        REQUIRE(::waitpid(pid_, &status, WUNTRACED) == pid_);
        REQUIRE(WIFSTOPPED(status));
    }
    void resume() const { REQUIRE(::kill(pid_, SIGCONT) == 0); }

private:
    pid_t pid_ = -1;
    std::atomic<long>* swaps_ = nullptr;
};

// The names in a directory ("." and ".." left out).
std::vector<std::string> entries_of(const std::string& path) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
        names.push_back(entry.path().filename());
    }
    return names;
}

// The mount points, inside the container (after pivot_root), of the binds whose root on
// their filesystem ends with `root_tail` ("/minirun-it.XXXXXX/source").
// Each with its per-mount options ("ro,relatime").
std::vector<std::pair<std::string, std::string>> bind_points(pid_t init,
                                                             const std::string& root_tail) {
    std::vector<std::pair<std::string, std::string>> points;
    auto text = read_file("/proc/" + std::to_string(init) + "/mountinfo");
    for (const auto& mount : parse_mountinfo(text.value_or(""))) {
        const auto words = split_words(mount.line);
        if (mount.root.ends_with(root_tail) && words.size() > 5) {
            points.emplace_back(mount.mount_point, words[5]);
        }
    }
    return points;
}

// A write through a mount point of the container of `init`: a file created in `point` (the
// path inside the container, looked up from its root with RESOLVE_IN_ROOT, so that a
// symlink on the way stays inside) and removed again. Its errno, 0 if the write worked.
int write_errno(pid_t init, const std::string& point) {
    escape_test::Fd root(::open(("/proc/" + std::to_string(init) + "/root").c_str(),
                                O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(root.fd >= 0);
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    escape_test::Fd dir(
        static_cast<int>(::syscall(SYS_openat2, root.fd, point.c_str(), &how, sizeof how)));
    INFO("open " << point << " in the container: " << std::strerror(errno));
    REQUIRE(dir.fd >= 0);
    escape_test::Fd probe(
        ::openat(dir.fd, "write-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (probe.fd < 0) {
        return errno;
    }
    REQUIRE(::unlinkat(dir.fd, "write-probe", 0) == 0);
    return 0;
}

// Every bind of the source in the container of `init` is read-only, and really so (a write
// through it fails with EROFS), exactly if it is the "ro" entry's; the other bind, of the
// same source, takes the same write: the positive control that the write would land.
void check_read_only_entry(pid_t init,
                           const std::vector<std::pair<std::string, std::string>>& points) {
    for (const auto& [point, options] : points) {
        INFO(point << " " << options);
        const bool wants_ro = point.ends_with("/made/here");
        CHECK(options.starts_with("ro") == wants_ro);
        CHECK(write_errno(init, point) == (wants_ro ? EROFS : 0));
    }
}

} // namespace

TEST_CASE("escape: a racer swapping a bind destination's parent for a symlink to the host "
          "during hundreds of creates",
          "[escape][mount][race]") {
    become_subreaper();
    TempDir host;
    const std::string canary = host.path() + "/canary"; // must stay empty and unmounted
    const std::string source = host.path() + "/source"; // the bind's source
    std::filesystem::create_directory(canary);
    std::filesystem::create_directory(source);
    write_text(source + "/marker", "source\n");

    TempBundle bundle("mountrace");
    const std::string rootfs = bundle.copy_rootfs();
    const std::string dir = rootfs + "/race/dir";     // swapped with ...
    const std::string link = rootfs + "/race/dir.ln"; // ... this symlink to the canary
    std::filesystem::create_directories(dir + "/sub");
    std::filesystem::create_directory_symlink(canary, link);
    bundle.config["mounts"].push_back({{"destination", "/race/dir/sub"},
                                       {"type", "bind"},
                                       {"source", source},
                                       {"options", {"bind"}}});
    // And one whose mount point does not exist yet: made by the runtime (CVE-2024-45310),
    // read-only: the remount that makes it so must hit this bind, wherever the racer is.
    bundle.config["mounts"].push_back({{"destination", "/race/dir/made/here"},
                                       {"type", "bind"},
                                       {"source", source},
                                       {"options", {"bind", "ro"}}});
    bundle.set_shell("true");
    bundle.write_config();
    const std::string source_tail = host.path().substr(host.path().rfind('/')) + "/source";

    // The watcher: anything made in the canary, even if gone again before a check.
    struct Watch {
        int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        Watch() = default;
        Watch(const Watch&) = delete;
        Watch& operator=(const Watch&) = delete;
        ~Watch() {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    } watcher;
    const int watch = watcher.fd;
    REQUIRE(watch >= 0);
    REQUIRE(::inotify_add_watch(watch, canary.c_str(),
                                IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY) >= 0);

    Runtime runtime;
    runtime.track(bundle.id());
    const std::vector<std::string> create = {
        "create",   "--bundle", bundle.dir(), "--pid-file", runtime.pid_file(bundle.id()),
        bundle.id()};
    {
        // Without the racer the config works, with both binds where the config puts them:
        // every refusal and every other place below is the race's doing.
        auto made = runtime.to_files(create);
        INFO("create without the racer: " << made.describe());
        REQUIRE(made.exit_code == 0);
        auto init = runtime.pid_from_file(bundle.id());
        REQUIRE(init.has_value());
        std::vector<std::string> points;
        for (const auto& point : bind_points(*init, source_tail)) {
            points.push_back(point.first);
        }
        CHECK(points == std::vector<std::string>{"/race/dir/sub", "/race/dir/made/here"});
        check_read_only_entry(*init, bind_points(*init, source_tail));
        REQUIRE(runtime.force_delete(bundle.id()).exit_code == 0);
    }
    int created = 0;
    int failed = 0;
    std::string refusals; // the first few, for the report
    int saw_symlink = 0;  // creates that met the symlink: refused, or mounted where it led
    long swaps_during_creates = 0;
    Racer racer(dir, link);
    const auto start = std::chrono::steady_clock::now();
    for (int cycle = 0; cycle < kCycles; ++cycle) {
        const long before = racer.swaps();
        auto made = runtime.to_files(create);
        swaps_during_creates += racer.swaps() - before;
        INFO("cycle " << cycle << ": " << made.describe());
        if (made.exit_code == 0) {
            ++created;
            auto init = runtime.pid_from_file(bundle.id());
            REQUIRE(init.has_value());
            // Both binds are in the container's tree; where the symlink was met, at the
            // place it leads to inside the rootfs (the canary's path below the rootfs).
            // The racer is held still meanwhile, so the names mountinfo gives stay true.
            racer.pause();
            const auto points = bind_points(*init, source_tail);
            INFO("the binds inside: " << points.size());
            CHECK(points.size() == 2);
            for (const auto& [point, options] : points) {
                INFO(point << " " << options);
                // On the real directory (which the racer may have renamed to dir.ln since),
                // or where the symlink leads inside the rootfs: the canary's path below it.
                const bool on_directory =
                    point.starts_with("/race/dir/") || point.starts_with("/race/dir.ln/");
                if (!on_directory) {
                    ++saw_symlink;
                    CHECK(point.starts_with(canary + "/"));
                }
            }
            // The "ro" entry, and only it, is read-only: its remount went to that bind,
            // wherever the racer had the path lead by then.
            check_read_only_entry(*init, points);
            racer.resume();
        } else {
            ++failed;
            const std::string error = made.err_now();
            CHECK(split_lines(error).size() == 1);
            if (contains(error, "race/dir")) {
                ++saw_symlink;
            }
            if (failed <= 3) {
                refusals += error;
            }
        }
        auto deleted = runtime.force_delete(bundle.id());
        REQUIRE(deleted.exit_code == 0);
        // Nothing reached the host: the canary is empty and nothing is mounted on or below it.
        REQUIRE(entries_of(canary).empty());
        REQUIRE(host_mounts_under(canary).empty());
    }
    const auto took = std::chrono::steady_clock::now() - start;
    racer.stop();

    // Positive control: the swap is real, and a path walk from the host, which is what a
    // path-based runtime does, goes through it to the canary.
    if (!std::filesystem::is_symlink(dir)) {
        REQUIRE(::renameat2(AT_FDCWD, dir.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE) == 0);
    }
    CHECK(std::filesystem::canonical(dir) == std::filesystem::path(canary));

    char events[4096];
    const ssize_t got = ::read(watch, events, sizeof events);
    const int watch_errno = errno;
    CHECK(got < 0);
    CHECK(watch_errno == EAGAIN); // no event: nothing was made in the canary, ever
    CHECK(entries_of(canary).empty());
    CHECK(host_mounts_under(canary).empty());

    const auto seconds = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
    WARN(kCycles << " creates in " << seconds << " ms: " << created << " created, " << failed
                 << " refused, " << saw_symlink << " met the symlink; " << swaps_during_creates
                 << " swaps during the creates; refusals: " << refusals);
    CHECK(created + failed == kCycles);
    CHECK(swaps_during_creates > 0);
    if (saw_symlink == 0) {
        skip_test("the racer never hit a create at the swap point on this machine");
    }
    check_no_leftovers(bundle);
}
