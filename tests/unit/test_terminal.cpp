// The container's stdio after pivot_root: the pty's peer bound onto /dev/console through
// the seam, by fd, onto a /dev/console that is never followed (CVE-2025-52565); stdio on
// the caller's /dev/null moved onto the container's, checked to be 1:3.
#include "fake_syscalls.hpp"
#include "mount/mount.hpp"
#include "plan.hpp"
#include "process/terminal.hpp"
#include "skips.hpp"
#include "temp_dir.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::TempDir;

namespace {

// `check` in a child chrooted into `root` (bind_console() names "/dev/console", as the init
// does after pivot_root): true when it held there. With `host_null_stdin` the child's stdin
// is the host's /dev/null and its stdout a pipe, as a detached container's might be.
bool in_chroot(const std::string& root, const std::function<bool()>& check,
               bool host_null_stdin = false) {
    pid_t pid = ::fork();
    if (pid == 0) {
        std::array<int, 2> pipe_fds{};
        if (host_null_stdin) {
            int null = ::open("/dev/null", O_RDONLY);
            if (null < 0 || ::dup2(null, STDIN_FILENO) < 0 || ::pipe(pipe_fds.data()) < 0 ||
                ::dup2(pipe_fds[1], STDOUT_FILENO) < 0) {
                ::_exit(3);
            }
        }
        if (::chroot(root.c_str()) < 0 || ::chdir("/") < 0) {
            ::_exit(2);
        }
        ::_exit(check() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A pty for a test that chroots: skipped (and counted so) without root or a pty.
std::optional<terminal::Pty> pty_as_root() {
    if (::geteuid() != 0) {
        minirun_tests::skip_test("chroot needs root");
        return std::nullopt;
    }
    auto pty = terminal::open_pty(std::nullopt);
    if (!pty) {
        minirun_tests::skip_test("no pty here (" + pty.error().message() + ")");
        return std::nullopt;
    }
    return std::move(*pty);
}

} // namespace

TEST_CASE("console: the pty's peer is bound onto /dev/console by fd", "[terminal]") {
    auto pty = pty_as_root();
    if (!pty) {
        return;
    }
    TempDir dir;
    std::filesystem::create_directories(dir.path() + "/dev");
    // Exactly two calls: open_tree of the peer fd itself (no path of it looked up), then
    // move_mount onto /dev/console's fd.
    struct Recording : FakeSyscalls {
        struct stat source {};
        struct stat target {};
        Result<int> open_tree_clone_fd(int fd) override {
            ::fstat(fd, &source);
            return FakeSyscalls::open_tree_clone_fd(fd);
        }
        Status move_mount(int from_fd, int target_fd) override {
            ::fstat(target_fd, &target);
            return FakeSyscalls::move_mount(from_fd, target_fd);
        }
    };
    struct stat peer {};
    REQUIRE(::fstat(pty->slave.get(), &peer) == 0);
    CHECK(in_chroot(dir.path(), [&] {
        Recording sys;
        auto bound = terminal::bind_console(*pty, sys);
        struct stat console {};
        return bound.ok() && sys.names() == std::vector<std::string>{"open_tree", "move_mount"} &&
               sys.source.st_rdev == peer.st_rdev && sys.source.st_ino == peer.st_ino &&
               ::lstat("/dev/console", &console) == 0 && sys.target.st_ino == console.st_ino &&
               sys.mounts.size() == 1;
    }));
    // Made as an empty file to bind onto.
    struct stat console {};
    REQUIRE(::lstat((dir.path() + "/dev/console").c_str(), &console) == 0);
    CHECK(S_ISREG(console.st_mode));
    // A failed move is the bind's failure, in its words.
    CHECK(in_chroot(dir.path(), [&] {
        FakeSyscalls sys;
        sys.fail("move_mount", EPERM);
        auto bound = terminal::bind_console(*pty, sys);
        return !bound.ok() && bound.error().errno_value() == EPERM &&
               bound.error().message().starts_with("bind the pty on /dev/console: ");
    }));
}

TEST_CASE("console: a /dev/console that is a symlink or no file is refused, never followed",
          "[terminal]") {
    auto pty = pty_as_root();
    if (!pty) {
        return;
    }
    TempDir dir;
    const std::string dev = dir.path() + "/dev";
    std::filesystem::create_directories(dev);
    { std::ofstream(dir.path() + "/core_pattern") << "the target\n"; }
    const std::string kind = GENERATE(std::string("symlink to a file"),
                                      std::string("dangling symlink"), std::string("fifo"));
    INFO(kind);
    std::string expected;
    if (kind == "symlink to a file") {
        std::filesystem::create_symlink("/core_pattern", dev + "/console");
        expected = "/dev/console is a symlink in the rootfs: refused, never followed";
    } else if (kind == "dangling symlink") {
        std::filesystem::create_symlink("/made-by-the-kernel", dev + "/console");
        expected = "/dev/console is a symlink in the rootfs: refused, never followed";
    } else {
        REQUIRE(::mkfifo((dev + "/console").c_str(), 0600) == 0);
        expected = "/dev/console exists and is neither a file nor a character device";
    }
    CHECK(in_chroot(dir.path(), [&] {
        FakeSyscalls sys;
        auto bound = terminal::bind_console(*pty, sys);
        return !bound.ok() && bound.error().message() == expected && sys.calls.empty();
    }));
    CHECK(read_text(dir.path() + "/core_pattern") == "the target\n");
    CHECK_FALSE(std::filesystem::exists(dir.path() + "/made-by-the-kernel"));
}

TEST_CASE("stdio: fds on the caller's /dev/null move to the container's, a fake one is refused",
          "[terminal][dev]") {
    if (::geteuid() != 0) {
        minirun_tests::skip_test("mknod and chroot need root");
        return;
    }
    TempDir dir;
    const std::string dev = dir.path() + "/dev";
    std::filesystem::create_directories(dev);
    { std::ofstream(dir.path() + "/core_pattern") << "the target\n"; }
    Plan plan;
    plan.setup_dev = true;
    const std::string kind =
        GENERATE(std::string("the null device"), std::string("a symlink to a file"),
                 std::string("a file"), std::string("another device"));
    INFO("the container's /dev/null is " << kind);
    if (kind == "the null device") {
        REQUIRE(::mknod((dev + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    } else if (kind == "a symlink to a file") {
        std::filesystem::create_symlink("/core_pattern", dev + "/null");
    } else if (kind == "a file") {
        std::ofstream(dev + "/null") << "";
    } else {
        REQUIRE(::mknod((dev + "/null").c_str(), S_IFCHR | 0666, makedev(1, 5)) == 0);
    }
    struct stat node {};
    REQUIRE(::lstat((dev + "/null").c_str(), &node) == 0);
    // The child's stdin is the host's /dev/null, stdout a pipe: only stdin moves.
    CHECK(in_chroot(
        dir.path(),
        [&] {
            struct stat before_out {};
            ::fstat(STDOUT_FILENO, &before_out);
            auto moved = mount::reopen_stdio_on_dev_null(plan);
            struct stat in {};
            struct stat out {};
            ::fstat(STDIN_FILENO, &in);
            ::fstat(STDOUT_FILENO, &out);
            bool out_kept = out.st_ino == before_out.st_ino && out.st_dev == before_out.st_dev;
            if (kind == "the null device") {
                return moved.ok() && in.st_ino == node.st_ino && in.st_dev == node.st_dev &&
                       (::fcntl(STDIN_FILENO, F_GETFL) & O_ACCMODE) == O_RDWR && out_kept;
            }
            return !moved.ok() && in.st_ino != node.st_ino && out_kept;
        },
        true));
    CHECK(std::ifstream(dir.path() + "/core_pattern").get() == 't');
}
