// The state directory: exec.fifo, marks, the live status, the OCI state JSON, the lock,
// remove and list_ids.
#include "state_fixture.hpp"

#include <catch2/catch.hpp>

using namespace minirun;
using minirun::testing::TempDir;
namespace stdfs = std::filesystem;
using state::StateDir;
using namespace state_test;

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
