// The state directory: create, open, save and load of state.json, recovery.json and config.json.
#include "state_fixture.hpp"

#include <catch2/catch.hpp>

using namespace minirun;
using minirun::testing::TempDir;
namespace stdfs = std::filesystem;
using state::StateDir;
using namespace state_test;

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
