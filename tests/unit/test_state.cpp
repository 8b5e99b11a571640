#include "state.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace minirun;
using minirun::testing::TempDir;
namespace stdfs = std::filesystem;
using state::Record;
using state::StateDir;

namespace {

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

Record sample_record() {
    Record record;
    record.oci_version = "1.2.0";
    record.id = "box";
    record.pid = 4242;
    record.pid_start_time = 18446744073709551000ULL; // beyond int64: must stay unsigned
    record.bundle = "/srv/bundles/box";
    record.rootfs = "/srv/bundles/box/rootfs";
    record.created = "2026-11-30T00:16:07.123456789Z";
    record.owner = "root";
    record.annotations = {{"org.example/a", "1"}, {"b", "two words"}};
    record.paused = true;
    record.cgroup_paths = {{"memory", "/sys/fs/cgroup/memory/mini-run/box"},
                           {"unified", "/sys/fs/cgroup/unified/mini-run/box"}};
    return record;
}

// A record describing this very test process, alive and with its true start time.
Record live_record() {
    Record record = sample_record();
    record.pid = ::getpid();
    auto start = state::process_start_time(record.pid);
    REQUIRE(start.ok());
    record.pid_start_time = *start;
    record.paused = false;
    return record;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A forked child that blocks until told to exit; killed and reaped on destruction so that
// a failed assertion never leaks a process.
class Child {
public:
    // `before_ready` runs in the child before it reports ready.
    template <typename Fn>
    explicit Child(Fn before_ready) {
        int ready[2];
        int release[2];
        REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);
        REQUIRE(::pipe2(release, O_CLOEXEC) == 0);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            // Only the parent may hold the write end, or the read below never sees EOF.
            ::close(release[1]);
            before_ready();
            char byte = 'r';
            (void)!::write(ready[1], &byte, 1);
            (void)!::read(release[0], &byte, 1);
            ::_exit(0);
        }
        ::close(ready[1]);
        ::close(release[0]);
        release_fd_ = release[1];
        char byte = 0;
        REQUIRE(::read(ready[0], &byte, 1) == 1);
        ::close(ready[0]);
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() {
        ::close(release_fd_);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    [[nodiscard]] pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
    int release_fd_ = -1;
};

} // namespace

TEST_CASE("status names", "[state]") {
    CHECK(state::status_name(state::Status::creating) == "creating");
    CHECK(state::status_name(state::Status::created) == "created");
    CHECK(state::status_name(state::Status::running) == "running");
    CHECK(state::status_name(state::Status::paused) == "paused");
    CHECK(state::status_name(state::Status::stopped) == "stopped");
}

TEST_CASE("create makes the root and the directory; a second create fails", "[state]") {
    TempDir tmp;
    std::string root = tmp.path() + "/run/mini-run";
    auto first = StateDir::create(root, "box");
    REQUIRE(first.ok());
    CHECK(first->id() == "box");
    CHECK(first->path() == root + "/box");
    CHECK(stdfs::is_directory(root + "/box"));
    CHECK((stdfs::status(root).permissions() & stdfs::perms::others_read) == stdfs::perms::none);
    CHECK(first->fifo_path() == root + "/box/exec.fifo");

    REQUIRE(first->save(sample_record()).ok());
    REQUIRE(first->save_config(R"({"ociVersion":"1.2.0"})").ok());
    std::string before = slurp(root + "/box/state.json");

    auto second = StateDir::create(root, "box");
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().errno_value() == EEXIST);
    CHECK(second.error().message() == R"(container "box" already exists)");
    // The loser must not have touched the winner's files.
    CHECK(slurp(root + "/box/state.json") == before);
    CHECK(*first->load_config() == R"({"ociVersion":"1.2.0"})");
}

TEST_CASE("create and open reject bad roots and ids that leave the root", "[state]") {
    TempDir tmp;
    auto empty_root = StateDir::create("", "box");
    REQUIRE_FALSE(empty_root.ok());
    CHECK(empty_root.error().errno_value() == EINVAL);

    for (const char* id : {"", ".", "..", "../x", "a/b"}) {
        auto created = StateDir::create(tmp.path(), id);
        REQUIRE_FALSE(created.ok());
        CHECK(created.error().errno_value() == EINVAL);
        auto opened = StateDir::open(tmp.path(), id);
        REQUIRE_FALSE(opened.ok());
        CHECK(opened.error().errno_value() == EINVAL);
        CHECK(contains(opened.error().message(), "does not exist"));
    }
    CHECK(stdfs::is_empty(tmp.path()));

    // A root that is a file: the error names the path.
    std::ofstream(tmp.path() + "/file") << "x";
    auto under_file = StateDir::create(tmp.path() + "/file/sub", "box");
    REQUIRE_FALSE(under_file.ok());
    CHECK(contains(under_file.error().message(), tmp.path() + "/file"));
}

TEST_CASE("open of an unknown id or a missing root: does not exist", "[state]") {
    TempDir tmp;
    auto unknown = StateDir::open(tmp.path(), "nope");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().errno_value() == ENOENT);
    CHECK(unknown.error().message() == R"(container "nope" does not exist)");

    auto no_root = StateDir::open(tmp.path() + "/missing", "nope");
    REQUIRE_FALSE(no_root.ok());
    CHECK(no_root.error().errno_value() == ENOENT);
    CHECK(no_root.error().message() == R"(container "nope" does not exist)");

    REQUIRE(StateDir::create(tmp.path(), "there").ok());
    auto opened = StateDir::open(tmp.path(), "there");
    REQUIRE(opened.ok());
    CHECK(opened->path() == tmp.path() + "/there");
}

TEST_CASE("save and load round-trip every field, leaving no temp file", "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    Record record = sample_record();
    REQUIRE(dir->save(record).ok());
    CHECK_FALSE(stdfs::exists(dir->path() + "/state.json.tmp"));
    CHECK((stdfs::status(dir->path() + "/state.json").permissions() & stdfs::perms::all) ==
          (stdfs::perms::owner_read | stdfs::perms::owner_write));

    // Through a second handle, as another command would.
    auto again = StateDir::open(tmp.path(), "box");
    REQUIRE(again.ok());
    auto loaded = again->load();
    REQUIRE(loaded.ok());
    CHECK(loaded->oci_version == record.oci_version);
    CHECK(loaded->id == record.id);
    CHECK(loaded->pid == record.pid);
    CHECK(loaded->pid_start_time == record.pid_start_time);
    CHECK(loaded->bundle == record.bundle);
    CHECK(loaded->rootfs == record.rootfs);
    CHECK(loaded->created == record.created);
    CHECK(loaded->owner == record.owner);
    CHECK(loaded->annotations == record.annotations);
    CHECK(loaded->paused == record.paused);
    CHECK(loaded->cgroup_paths == record.cgroup_paths);

    // A second save replaces the first.
    record.paused = false;
    record.annotations.clear();
    REQUIRE(dir->save(record).ok());
    auto reloaded = again->load();
    REQUIRE(reloaded.ok());
    CHECK_FALSE(reloaded->paused);
    CHECK(reloaded->annotations.empty());
    CHECK_FALSE(stdfs::exists(dir->path() + "/state.json.tmp"));
}

TEST_CASE("load: a missing state is 'does not exist', a damaged one 'corrupt state'", "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    auto missing = dir->load();
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().errno_value() == ENOENT);
    CHECK(missing.error().message() == R"(container "box" does not exist)");

    std::string path = dir->path() + "/state.json";
    for (const char* text : {"{not json", "[]", R"({"id":"box"})",
                             R"({"ociVersion":"1","id":"box","pid":-1,"pidStartTime":1,)"
                             R"("bundle":"/b","rootfs":"/r","created":"c","owner":"o",)"
                             R"("annotations":{},"paused":false})",
                             R"({"ociVersion":"1","id":"other","pid":1,"pidStartTime":1,)"
                             R"("bundle":"/b","rootfs":"/r","created":"c","owner":"o",)"
                             R"("annotations":{},"paused":false})"}) {
        std::ofstream(path, std::ios::trunc) << text;
        auto corrupt = dir->load();
        REQUIRE_FALSE(corrupt.ok());
        CHECK(corrupt.error().errno_value() == state::kCorrupt);
        CHECK(contains(corrupt.error().message(), path));
        CHECK(contains(corrupt.error().message(), "corrupt state"));
    }
}

TEST_CASE("load: empty, truncated, a symlink, a fifo, a directory: corrupt, never followed",
          "[state]") {
    TempDir tmp;
    TempDir outside;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    REQUIRE(dir->save(sample_record()).ok());
    const std::string path = dir->path() + "/state.json";
    const std::string good = slurp(path);
    // A valid state of this very container outside the directory: followed, it would load.
    const std::string target = outside.path() + "/state.json";
    std::ofstream(target) << good;
    REQUIRE(::unlink(path.c_str()) == 0);

    auto expect_corrupt = [&](std::string_view why) {
        auto loaded = dir->load();
        REQUIRE_FALSE(loaded.ok());
        CHECK(loaded.error().errno_value() == state::kCorrupt);
        CHECK(loaded.error().message() ==
              cat("container \"box\" has a corrupt state file ", path, ": ", why));
    };
    SECTION("empty") {
        std::ofstream(path).flush();
        expect_corrupt("it is empty");
    }
    SECTION("truncated") {
        std::ofstream(path) << good.substr(0, good.size() - 10);
        expect_corrupt("not valid JSON (truncated or overwritten?)");
    }
    SECTION("a symlink to a valid state elsewhere") {
        REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
        expect_corrupt("it is a symlink (not followed)");
        auto recovery = dir->load_recovery();
        REQUIRE_FALSE(recovery.ok());
        CHECK(recovery.error().errno_value() == ENOENT);
    }
    SECTION("a fifo: no read blocks on it") {
        REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
        expect_corrupt("it is not a regular file");
    }
    SECTION("a directory") {
        REQUIRE(::mkdir(path.c_str(), 0700) == 0);
        expect_corrupt("it is not a regular file");
    }
    CHECK(slurp(target) == good);
}

TEST_CASE("save_recovery and load_recovery round-trip, apart from state.json", "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    auto missing = dir->load_recovery();
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().errno_value() == ENOENT);

    Record record = sample_record();
    record.cgroup_shared = true;
    REQUIRE(dir->save_recovery(record).ok());
    CHECK_FALSE(stdfs::exists(dir->path() + "/state.json"));
    CHECK_FALSE(stdfs::exists(dir->path() + "/recovery.json.tmp"));
    auto loaded = dir->load_recovery();
    REQUIRE(loaded.ok());
    CHECK(loaded->pid == record.pid);
    CHECK(loaded->pid_start_time == record.pid_start_time);
    CHECK(loaded->bundle == record.bundle);
    CHECK(loaded->cgroup_paths == record.cgroup_paths);
    CHECK(loaded->cgroup_shared);

    std::ofstream(dir->path() + "/recovery.json", std::ios::trunc) << "{";
    auto corrupt = dir->load_recovery();
    REQUIRE_FALSE(corrupt.ok());
    CHECK(corrupt.error().errno_value() == state::kCorrupt);
    CHECK(contains(corrupt.error().message(), dir->path() + "/recovery.json"));
}

TEST_CASE("save_with_recovery: recovery.json keeps the first record through later saves",
          "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    Record first = sample_record();
    first.pid = 0; // creating
    REQUIRE(dir->save_with_recovery(first).ok());
    auto recovered = dir->load_recovery();
    REQUIRE(recovered.ok());
    CHECK(recovered->pid == 0);
    CHECK(recovered->cgroup_paths == first.cgroup_paths);

    // The init recorded: a new state.json; recovery.json still has the first record.
    Record later = first;
    later.pid = 4242;
    REQUIRE(dir->save(later).ok());
    CHECK_FALSE(stdfs::exists(dir->path() + "/state.json.tmp"));
    CHECK(dir->load()->pid == 4242);
    CHECK(dir->load_recovery()->pid == 0);
    REQUIRE(dir->save(first).ok());
    CHECK(dir->load_recovery()->pid == 0);

    // Where recovery.json exists already, it is replaced by a copy.
    first.cgroup_paths.clear();
    REQUIRE(dir->save_with_recovery(first).ok());
    CHECK(dir->load_recovery()->cgroup_paths.empty());
}

TEST_CASE("save_config and load_config round-trip the exact bytes", "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    std::string config = "{\n  \"ociVersion\": \"1.2.0\",\n  \"x\": [1, 2]\n}\n";
    REQUIRE(dir->save_config(config).ok());
    CHECK_FALSE(stdfs::exists(dir->path() + "/config.json.tmp"));
    auto loaded = dir->load_config();
    REQUIRE(loaded.ok());
    CHECK(*loaded == config);
}

TEST_CASE("make_fifo creates exec.fifo once", "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    CHECK_FALSE(dir->fifo_exists());
    REQUIRE(dir->make_fifo().ok());
    CHECK(dir->fifo_exists());
    CHECK(stdfs::is_fifo(dir->fifo_path()));
    auto twice = dir->make_fifo();
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.error().errno_value() == EEXIST);
    ::unlink(dir->fifo_path().c_str());
    CHECK_FALSE(dir->fifo_exists());
}

TEST_CASE("add_mark leaves an empty file, idempotently; has_mark sees it; remove takes it",
          "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    CHECK_FALSE(dir->has_mark("ptrace-capable"));
    REQUIRE(dir->add_mark("ptrace-capable").ok());
    REQUIRE(dir->add_mark("ptrace-capable").ok());
    CHECK(dir->has_mark("ptrace-capable"));
    struct stat info {};
    REQUIRE(::stat((dir->path() + "/ptrace-capable").c_str(), &info) == 0);
    CHECK(S_ISREG(info.st_mode));
    CHECK(info.st_size == 0);
    CHECK((info.st_mode & 07777) == 0600);
    // Another command's view of the same directory sees it too.
    auto again = StateDir::open(tmp.path(), "box");
    REQUIRE(again.ok());
    CHECK(again->has_mark("ptrace-capable"));
    // A symlink in its place is neither followed nor taken for the mark's file.
    REQUIRE(::symlink("/etc/hostname", (dir->path() + "/other").c_str()) == 0);
    CHECK_FALSE(dir->add_mark("other").ok());
    REQUIRE(dir->remove().ok());
    CHECK_FALSE(stdfs::exists(tmp.path() + "/box"));
}

TEST_CASE("status_of derives the status from the live system", "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());

    SECTION("pid 0 is creating") {
        Record record = sample_record();
        record.pid = 0;
        CHECK(dir->status_of(record) == state::Status::creating);
    }
    SECTION("a live init with the recorded start time: running, created, paused") {
        Record record = live_record();
        CHECK(dir->status_of(record) == state::Status::running);
        REQUIRE(dir->make_fifo().ok());
        CHECK(dir->status_of(record) == state::Status::created);
        record.paused = true;
        CHECK(dir->status_of(record) == state::Status::paused);
    }
    SECTION("a pid reused by another process is stopped") {
        Record record = live_record();
        record.pid_start_time += 1;
        CHECK(dir->status_of(record) == state::Status::stopped);
        record.paused = true;
        CHECK(dir->status_of(record) == state::Status::stopped);
    }
    SECTION("a pid that no longer exists is stopped") {
        pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            ::_exit(0);
        }
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        Record record = live_record();
        record.pid = child;
        CHECK(dir->status_of(record) == state::Status::stopped);
        auto start = state::process_start_time(child);
        REQUIRE_FALSE(start.ok());
        CHECK(start.error().errno_value() == ESRCH);
    }
    SECTION("a zombie is stopped, even with its true start time") {
        uint64_t start_time = 0;
        pid_t child = 0;
        {
            int go[2];
            REQUIRE(::pipe2(go, O_CLOEXEC) == 0);
            child = ::fork();
            REQUIRE(child >= 0);
            if (child == 0) {
                ::close(go[1]);
                char byte = 0;
                (void)!::read(go[0], &byte, 1);
                ::_exit(0);
            }
            ::close(go[0]);
            auto start = state::process_start_time(child);
            ::close(go[1]); // lets the child exit
            REQUIRE(start.ok());
            start_time = *start;
        }
        // Wait for the exit without reaping, so the child stays a zombie.
        siginfo_t info{};
        REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);
        Record record = live_record();
        record.pid = child;
        record.pid_start_time = start_time;
        CHECK(dir->status_of(record) == state::Status::stopped);
        auto zombie = state::process_start_time(child);
        REQUIRE_FALSE(zombie.ok());
        CHECK(zombie.error().errno_value() == ESRCH);
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
    }
}

TEST_CASE("process_start_time", "[state]") {
    SECTION("is stable for a live process") {
        auto first = state::process_start_time(::getpid());
        auto second = state::process_start_time(::getpid());
        REQUIRE(first.ok());
        REQUIRE(second.ok());
        CHECK(*first > 0);
        CHECK(*first == *second);
    }
    SECTION("non-positive pids do not exist") {
        for (pid_t pid : {0, -1}) {
            auto result = state::process_start_time(pid);
            REQUIRE_FALSE(result.ok());
            CHECK(result.error().errno_value() == ESRCH);
        }
    }
    SECTION("a comm made of ') Z 1 (' still parses") {
        // A parser that stopped at the first ')' would read state 'Z' (a zombie) and every
        // later field shifted.
        constexpr const char* kName = "a) Z 1 2 (b";
        Child child([&] { ::prctl(PR_SET_NAME, kName, 0, 0, 0); });
        std::string comm = slurp(cat("/proc/", child.pid(), "/comm"));
        REQUIRE(comm == std::string(kName) + "\n");
        auto start = state::process_start_time(child.pid());
        REQUIRE(start.ok());
        // Cross-check with a parse that anchors on the known name instead of guessing.
        std::string stat = slurp(cat("/proc/", child.pid(), "/stat"));
        std::string prefix = cat(child.pid(), " (", kName, ") ");
        REQUIRE(stat.rfind(prefix, 0) == 0);
        std::istringstream fields(stat.substr(prefix.size()));
        std::vector<std::string> parts{std::istream_iterator<std::string>(fields),
                                       std::istream_iterator<std::string>()};
        REQUIRE(parts.size() > 19);
        // Alive (running or asleep), not the 'Z' inside the name.
        CHECK((parts[0] == "R" || parts[0] == "S"));
        CHECK(*start == std::stoull(parts[19]));
        // Born after this process, so never earlier.
        CHECK(*start >= *state::process_start_time(::getpid()));
    }
}

TEST_CASE("owner_name", "[state]") {
    CHECK(state::owner_name(0) == "root");
    // No password database has this one.
    CHECK(state::owner_name(4000000123U) == "4000000123");
}

TEST_CASE("oci_state_json: key order, values, pid by status", "[state]") {
    Record record = sample_record();
    record.paused = false;
    using Ordered = nlohmann::ordered_json;

    std::string text = state::oci_state_json(record, state::Status::running);
    CHECK(text.back() == '}');
    CHECK(contains(text, "\n  \"ociVersion\": \"1.2.0\",\n"));
    Ordered running = Ordered::parse(text);
    std::vector<std::string> keys;
    for (const auto& item : running.items()) {
        keys.push_back(item.key());
    }
    CHECK(keys == std::vector<std::string>{"ociVersion", "id", "pid", "status", "bundle", "rootfs",
                                           "created", "owner", "annotations"});
    CHECK(running["ociVersion"] == "1.2.0");
    CHECK(running["id"] == "box");
    CHECK(running["pid"] == 4242);
    CHECK(running["status"] == "running");
    CHECK(running["bundle"] == "/srv/bundles/box");
    CHECK(running["rootfs"] == "/srv/bundles/box/rootfs");
    CHECK(running["created"] == "2026-11-30T00:16:07.123456789Z");
    CHECK(running["owner"] == "root");
    CHECK(running["annotations"] == Ordered{{"b", "two words"}, {"org.example/a", "1"}});
    CHECK_FALSE(running.contains("pidStartTime"));
    CHECK_FALSE(running.contains("paused"));

    Ordered created = Ordered::parse(state::oci_state_json(record, state::Status::created));
    CHECK(created["status"] == "created");
    CHECK(created["pid"] == 4242);
    Ordered paused = Ordered::parse(state::oci_state_json(record, state::Status::paused));
    CHECK(paused["status"] == "paused");
    CHECK(paused["pid"] == 4242);

    Ordered stopped = Ordered::parse(state::oci_state_json(record, state::Status::stopped));
    CHECK(stopped["status"] == "stopped");
    CHECK(stopped["pid"] == 0);

    // Hooks run while creating, once the init exists, and need its pid.
    Ordered hook = Ordered::parse(state::oci_state_json(record, state::Status::creating));
    CHECK(hook["status"] == "creating");
    CHECK(hook["pid"] == 4242);

    record.pid = 0;
    record.annotations.clear();
    Ordered creating = Ordered::parse(state::oci_state_json(record, state::Status::creating));
    CHECK(creating["status"] == "creating");
    CHECK_FALSE(creating.contains("pid"));
    CHECK(creating["annotations"].is_object());
    CHECK(creating["annotations"].empty());
}

TEST_CASE("lock holds an exclusive flock until the StateDir is closed", "[state]") {
    TempDir tmp;
    std::string path;
    {
        auto dir = StateDir::create(tmp.path(), "box");
        REQUIRE(dir.ok());
        path = dir->path();
        REQUIRE(dir->lock().ok());
        UniqueFd other(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        REQUIRE(other.valid());
        errno = 0;
        CHECK(::flock(other.get(), LOCK_EX | LOCK_NB) == -1);
        CHECK(errno == EWOULDBLOCK);

        // Another StateDir of the same id sees the same lock.
        auto second = StateDir::open(tmp.path(), "box");
        REQUIRE(second.ok());
        CHECK(::flock(other.get(), LOCK_SH | LOCK_NB) == -1);
    }
    UniqueFd after(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(after.valid());
    CHECK(::flock(after.get(), LOCK_EX | LOCK_NB) == 0);
}

TEST_CASE("remove deletes everything, and again is fine", "[state]") {
    TempDir tmp;
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    REQUIRE(dir->save(sample_record()).ok());
    REQUIRE(dir->save_config("{}").ok());
    REQUIRE(dir->make_fifo().ok());
    REQUIRE(dir->remove().ok());
    CHECK_FALSE(stdfs::exists(tmp.path() + "/box"));
    auto opened = StateDir::open(tmp.path(), "box");
    REQUIRE_FALSE(opened.ok());
    CHECK(contains(opened.error().message(), R"(container "box" does not exist)"));
    CHECK(dir->remove().ok());
    // The still-open handle of a removed container reports it gone, not corrupt.
    auto load = dir->load();
    REQUIRE_FALSE(load.ok());
    CHECK(load.error().message() == R"(container "box" does not exist)");
    // And the id is free again.
    CHECK(StateDir::create(tmp.path(), "box").ok());
}

TEST_CASE("remove takes entries as they are: symlinks are not followed", "[state]") {
    TempDir tmp;
    TempDir outside;
    std::ofstream(outside.path() + "/file") << "outside\n";
    stdfs::create_directory(outside.path() + "/dir");
    std::ofstream(outside.path() + "/dir/inner") << "inner\n";
    auto dir = StateDir::create(tmp.path(), "box");
    REQUIRE(dir.ok());
    const std::string& path = dir->path();
    stdfs::create_symlink(outside.path() + "/file", path + "/state.json");
    stdfs::create_directory_symlink(outside.path() + "/dir", path + "/config.json");
    stdfs::create_directory_symlink(outside.path(), path + "/up");
    stdfs::create_directories(path + "/sub/deeper");
    std::ofstream(path + "/sub/deeper/x") << "x";
    stdfs::create_directory_symlink(outside.path() + "/dir", path + "/sub/link");

    REQUIRE(dir->remove().ok());
    CHECK_FALSE(stdfs::exists(stdfs::symlink_status(path)));
    CHECK(slurp(outside.path() + "/file") == "outside\n");
    CHECK(slurp(outside.path() + "/dir/inner") == "inner\n");
    CHECK(dir->remove().ok());
}

TEST_CASE("list_ids: sorted directories only", "[state]") {
    TempDir tmp;
    std::string root = tmp.path() + "/root";
    auto missing = state::list_ids(root);
    REQUIRE(missing.ok());
    CHECK(missing->empty());

    for (const char* id : {"zeta", "alpha", "mid-1"}) {
        REQUIRE(StateDir::create(root, id).ok());
    }
    std::ofstream(root + "/a-file") << "x";
    stdfs::create_directory(root + "/.hidden");
    stdfs::create_directory(root + "/leftover.tmp");
    stdfs::create_directory_symlink(root + "/alpha", root + "/link");
    auto ids = state::list_ids(root);
    REQUIRE(ids.ok());
    CHECK(*ids == std::vector<std::string>{"alpha", "mid-1", "zeta"});
}
