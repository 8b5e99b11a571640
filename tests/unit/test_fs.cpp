#include "fs.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace minirun;
using minirun::testing::TempDir;
namespace stdfs = std::filesystem;

namespace {
UniqueFd open_dir(const std::string& path) {
    return UniqueFd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}
} // namespace

TEST_CASE("clean_path collapses . .. and slashes, never above /", "[fs]") {
    CHECK(fs::clean_path("/a/./b//c/") == "/a/b/c");
    CHECK(fs::clean_path("/a/../../../b") == "/b");
    CHECK(fs::clean_path("a/b") == "/a/b");
    CHECK(fs::clean_path("") == "/");
    CHECK(fs::clean_path("/..") == "/");
}

TEST_CASE("split_parent", "[fs]") {
    CHECK(fs::split_parent("/a/b/c") == std::pair<std::string, std::string>{"/a/b", "c"});
    CHECK(fs::split_parent("/c") == std::pair<std::string, std::string>{"/", "c"});
    CHECK(fs::split_parent("c") == std::pair<std::string, std::string>{".", "c"});
}

TEST_CASE("mkdir_all_in_root stays inside the root through hostile symlinks", "[fs]") {
    TempDir tmp;
    std::string root = tmp.path() + "/rootfs";
    std::string outside = tmp.path() + "/outside";
    stdfs::create_directories(root);
    stdfs::create_directories(outside);
    // An absolute link and a relative one that climbs, both aiming at `outside`.
    stdfs::create_symlink(outside, root + "/abs");
    stdfs::create_symlink("../../../../../../outside", root + "/rel");
    UniqueFd root_fd = open_dir(root);

    auto made = fs::mkdir_all_in_root(root_fd.get(), "/abs/x/y", 0755);
    REQUIRE(made.ok());
    auto relative = fs::mkdir_all_in_root(root_fd.get(), "/rel/z", 0755);
    REQUIRE(relative.ok());

    // Both were created below the rootfs ("/" of the root), nothing in `outside`.
    CHECK(stdfs::is_empty(outside));
    CHECK(*fs::fd_target(made->get()) == root + outside + "/x/y");
    CHECK(*fs::fd_target(relative->get()) == root + "/outside/z");
}

TEST_CASE("mkdir_all_in_root follows links to missing targets, and stops on loops", "[fs]") {
    TempDir tmp;
    const std::string& root = tmp.path();
    stdfs::create_symlink("/a/b", root + "/first");
    stdfs::create_symlink("loop2", root + "/loop1");
    stdfs::create_symlink("loop1", root + "/loop2");
    UniqueFd root_fd = open_dir(root);

    auto made = fs::mkdir_all_in_root(root_fd.get(), "/first/c", 0755);
    REQUIRE(made.ok());
    CHECK(stdfs::is_directory(root + "/a/b/c"));

    auto looped = fs::mkdir_all_in_root(root_fd.get(), "/loop1/x", 0755);
    REQUIRE_FALSE(looped.ok());
    CHECK(looped.error().errno_value() == ELOOP);
}

TEST_CASE("mkdir_all_in_root starts from the deepest directory there, and names a bad one",
          "[fs]") {
    TempDir tmp;
    const std::string& root = tmp.path();
    stdfs::create_directories(root + "/a/b/c");
    stdfs::create_symlink("/a/b", root + "/link");
    { std::ofstream(root + "/a/file") << "x"; }
    UniqueFd root_fd = open_dir(root);

    // All there, through a link inside the root: the directory it leads to.
    auto there = fs::mkdir_all_in_root(root_fd.get(), "/link/c", 0755);
    REQUIRE(there.ok());
    CHECK(*fs::fd_target(there->get()) == root + "/a/b/c");
    // Only the last component missing, then three levels missing below a deep one.
    auto last = fs::mkdir_all_in_root(root_fd.get(), "/a/b/c/d", 0755);
    REQUIRE(last.ok());
    CHECK(*fs::fd_target(last->get()) == root + "/a/b/c/d");
    auto deep = fs::mkdir_all_in_root(root_fd.get(), "link/c/x/y/z", 0700);
    REQUIRE(deep.ok());
    CHECK(*fs::fd_target(deep->get()) == root + "/a/b/c/x/y/z");
    CHECK(stdfs::is_directory(root + "/a/b/c/x/y"));
    // A file on the way: the error names the component at fault, not the whole path.
    auto through_file = fs::mkdir_all_in_root(root_fd.get(), "/a/file/x/y", 0755);
    REQUIRE_FALSE(through_file.ok());
    CHECK(through_file.error().errno_value() == ENOTDIR);
    CHECK(through_file.error().message().find("mkdir \"/a/file\"") != std::string::npos);
}

TEST_CASE("open_in_root refuses magic links and can refuse symlinks", "[fs]") {
    TempDir tmp;
    const std::string& root = tmp.path();
    stdfs::create_directories(root + "/real");
    stdfs::create_symlink("real", root + "/link");
    stdfs::create_symlink("/proc/self/root", root + "/magic");
    UniqueFd root_fd = open_dir(root);

    CHECK(fs::open_in_root(root_fd.get(), "/link", O_PATH).ok());
    auto no_symlinks = fs::open_in_root(root_fd.get(), "/link", O_PATH, RESOLVE_NO_SYMLINKS);
    REQUIRE_FALSE(no_symlinks.ok());
    CHECK(no_symlinks.error().errno_value() == ELOOP);
    // /proc/self/root resolved in the root is <root>/proc/self/root, which does not exist:
    // the link can never jump to the real process root.
    CHECK_FALSE(fs::open_in_root(root_fd.get(), "/magic/etc", O_PATH).ok());
}

TEST_CASE("ensure_file_in_root creates a file and never follows a dangling link", "[fs]") {
    TempDir tmp;
    std::string root = tmp.path() + "/rootfs";
    stdfs::create_directories(root);
    std::string victim = tmp.path() + "/victim";
    stdfs::create_symlink(victim, root + "/dangling");
    UniqueFd root_fd = open_dir(root);

    auto file = fs::ensure_file_in_root(root_fd.get(), "/etc/hosts", 0644);
    REQUIRE(file.ok());
    CHECK(stdfs::is_regular_file(root + "/etc/hosts"));

    // The dangling link resolves inside the root, to <root>/<victim path>: created there.
    auto through = fs::ensure_file_in_root(root_fd.get(), "/dangling", 0644);
    REQUIRE(through.ok());
    CHECK_FALSE(stdfs::exists(victim));
    CHECK(stdfs::is_regular_file(root + victim));
    CHECK(*fs::fd_target(through->get()) == root + victim);
    CHECK(stdfs::is_symlink(root + "/dangling")); // the link itself stays as it was
}

TEST_CASE("ensure_file_in_root resolves relative and chained dangling links inside the root",
          "[fs]") {
    TempDir tmp;
    std::string root = tmp.path() + "/rootfs";
    stdfs::create_directories(root + "/etc");
    // Climbing out relatively, through a second link, to a missing directory and file.
    stdfs::create_symlink("../../../../../../escape/file", root + "/etc/rel");
    stdfs::create_symlink("/etc/rel", root + "/etc/chain");
    UniqueFd root_fd = open_dir(root);

    auto rel = fs::ensure_file_in_root(root_fd.get(), "/etc/chain", 0644);
    REQUIRE(rel.ok());
    CHECK(stdfs::is_regular_file(root + "/escape/file"));
    CHECK_FALSE(stdfs::exists(tmp.path() + "/escape"));
    CHECK(*fs::fd_target(rel->get()) == root + "/escape/file");

    // A loop is an error, not a hang.
    stdfs::create_symlink("loop-b", root + "/loop-a");
    stdfs::create_symlink("loop-a", root + "/loop-b");
    auto looped = fs::ensure_file_in_root(root_fd.get(), "/loop-a", 0644);
    REQUIRE_FALSE(looped.ok());
    CHECK(looped.error().errno_value() == ELOOP);
}

TEST_CASE("a dangling link's '..' climbs from where the links in its target lead", "[fs]") {
    // "sub/../x" with sub -> /deep/er is /deep/x for the kernel, not /x: the directory must
    // be made where the mount's later lookups of the same path will arrive.
    TempDir tmp;
    const std::string& root = tmp.path();
    stdfs::create_directories(root + "/deep/er");
    stdfs::create_symlink("/deep/er", root + "/sub");
    stdfs::create_symlink("sub/../x", root + "/link");
    UniqueFd root_fd = open_dir(root);

    auto made = fs::mkdir_all_in_root(root_fd.get(), "/link", 0755);
    REQUIRE(made.ok());
    CHECK(stdfs::is_directory(root + "/deep/x"));
    CHECK_FALSE(stdfs::exists(root + "/x"));
    auto again = fs::open_in_root(root_fd.get(), "/link", O_PATH | O_DIRECTORY);
    REQUIRE(again.ok());
    CHECK(*fs::fd_target(again->get()) == root + "/deep/x");
}

TEST_CASE("read_file and write_file", "[fs]") {
    TempDir tmp;
    std::string path = tmp.path() + "/f";
    { UniqueFd fd(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600)); }
    REQUIRE(fs::write_file(path, "hello").ok());
    CHECK(*fs::read_file(path) == "hello");
    auto missing = fs::read_file(tmp.path() + "/missing");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message() ==
          "open " + tmp.path() + "/missing: No such file or directory");
}

TEST_CASE("file_mount_point makes a missing file and never follows what is there", "[fs]") {
    TempDir tmp;
    const std::string dev = tmp.path() + "/dev";
    const std::string outside = tmp.path() + "/outside";
    stdfs::create_directories(dev);
    { std::ofstream(outside) << "host file\n"; }
    UniqueFd dir = open_dir(dev);

    // Missing: created empty, with the mode asked for (umask aside), returned as O_PATH.
    auto made = fs::file_mount_point(dir.get(), "console", 0600, "/dev/console");
    REQUIRE(made.ok());
    CHECK((::fcntl(made->get(), F_GETFL) & O_PATH) != 0);
    CHECK(stdfs::is_regular_file(dev + "/console"));
    CHECK(stdfs::file_size(dev + "/console") == 0);
    // There: the same file again.
    CHECK(fs::file_mount_point(dir.get(), "console", 0600, "/dev/console").ok());

    // A symlink, to an existing file or to nothing, is refused: its target is neither
    // opened, nor created, nor changed.
    stdfs::create_symlink(outside, dev + "/null");
    stdfs::create_symlink(tmp.path() + "/would-be-made", dev + "/zero");
    for (const char* name : {"null", "zero"}) {
        auto linked = fs::file_mount_point(dir.get(), name, 0644, std::string("/dev/") + name);
        REQUIRE_FALSE(linked.ok());
        CHECK(linked.error().errno_value() == ELOOP);
        CHECK(linked.error().message() ==
              std::string("/dev/") + name + " is a symlink in the rootfs: refused, never followed");
    }
    CHECK_FALSE(stdfs::exists(tmp.path() + "/would-be-made"));
    std::ifstream in(outside);
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "host file\n");

    // Neither a file nor a character device: a directory, a fifo.
    stdfs::create_directories(dev + "/full");
    REQUIRE(::mkfifo((dev + "/tty").c_str(), 0600) == 0);
    for (const char* name : {"full", "tty"}) {
        auto other = fs::file_mount_point(dir.get(), name, 0644, name);
        REQUIRE_FALSE(other.ok());
        CHECK(other.error().message() ==
              std::string(name) + " exists and is neither a file nor a character device");
    }
}
