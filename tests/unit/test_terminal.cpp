// The console: the pty's slave bound onto /dev/console through the seam.
#include "fake_syscalls.hpp"
#include "process/terminal.hpp"
#include "temp_dir.hpp"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::TempDir;

namespace {

// bind_console() in a child chrooted into `root` (it names "/dev/console", as the init does
// after pivot_root): 0 when the fake recorded one bind mount, 2 when the bind failed with
// `fail_errno`, 1 otherwise.
int bind_console_in(const std::string& root, const terminal::Pty& pty, int fail_errno) {
    pid_t pid = ::fork();
    if (pid == 0) {
        if (::chroot(root.c_str()) < 0 || ::chdir("/") < 0) {
            ::_exit(1);
        }
        FakeSyscalls sys;
        if (fail_errno != 0) {
            sys.fail("mount", fail_errno);
        }
        auto bound = terminal::bind_console(pty, sys);
        if (fail_errno != 0) {
            bool named = !bound.ok() && bound.error().errno_value() == fail_errno &&
                         bound.error().message().starts_with("bind the pty on /dev/console: ");
            ::_exit(named ? 2 : 1);
        }
        bool one_bind = bound.ok() && sys.mounts.size() == 1 && sys.mounts[0].flags == MS_BIND &&
                        sys.mounts[0].fs_type.empty();
        ::_exit(one_bind ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

TEST_CASE("console: the pty is bound onto /dev/console through the seam", "[terminal]") {
    if (::geteuid() != 0) {
        WARN("chroot needs root; skipped");
        return;
    }
    auto pty = terminal::open_pty(std::nullopt);
    if (!pty) {
        WARN("no pty here (" << pty.error().message() << "); skipped");
        return;
    }
    TempDir dir;
    std::filesystem::create_directories(dir.path() + "/dev");
    CHECK(bind_console_in(dir.path(), *pty, 0) == 0);
    // Made as an empty file to bind onto.
    struct stat console {};
    REQUIRE(::lstat((dir.path() + "/dev/console").c_str(), &console) == 0);
    CHECK(S_ISREG(console.st_mode));
    CHECK(bind_console_in(dir.path(), *pty, EPERM) == 2);
}
