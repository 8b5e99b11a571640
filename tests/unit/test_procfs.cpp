// The procfs handle (src/procfs.hpp) and the rule for mount destinations under /proc
// (src/proc_mounts.hpp): what may be mounted where, and that a file with another procfs
// file bound over it is refused, not written through (CVE-2025-52881).
#include "../common/skips.hpp"
#include "fake_syscalls.hpp"
#include "proc_mounts.hpp"
#include "procfs.hpp"
#include "security/security.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>

#include <catch2/catch.hpp>

using namespace minirun;
using minirun::testing::FakeSyscalls;
namespace pm = minirun::proc_mounts;

TEST_CASE("proc mounts: /proc itself takes a fresh proc or a bind", "[procfs]") {
    CHECK_FALSE(pm::destination_problem("/proc", "proc", false));
    CHECK_FALSE(pm::destination_problem("/proc", "", true)); // its source is checked at mount
    CHECK(pm::destination_problem("/proc", "tmpfs", false) ==
          R"("/proc" cannot be mounted because it is not of type proc)");
    CHECK(pm::destination_problem("/proc", "sysfs", false) ==
          R"("/proc" cannot be mounted because it is not of type proc)");
}

TEST_CASE("proc mounts: below /proc, only the files lxcfs emulates", "[procfs]") {
    for (std::string_view file : pm::lxcfs_files()) {
        CAPTURE(file);
        CHECK(pm::classify(file) == pm::Where::lxcfs_file);
        CHECK_FALSE(pm::destination_problem(file, "", true));
        CHECK_FALSE(pm::destination_problem(file, "fuse.lxcfs", false));
    }
    CHECK(pm::lxcfs_files().size() == 10);
    for (std::string_view refused :
         {"/proc/sys", "/proc/sys/kernel/domainname", "/proc/self/attr/exec", "/proc/net/dev",
          "/proc/sysrq-trigger", "/proc/cpuinfo/x", "/proc/sys/kernel", "/proc/1"}) {
        CAPTURE(refused);
        CHECK(pm::classify(refused) == pm::Where::inside);
        CHECK(pm::destination_problem(refused, "proc", false) ==
              cat(quoted(refused), " cannot be mounted because it is inside /proc"));
        CHECK(pm::destination_problem(refused, "", true) ==
              cat(quoted(refused), " cannot be mounted because it is inside /proc"));
    }
    for (std::string_view outside : {"/", "/procfs", "/proc2/sys", "/sys/kernel", "/data/proc"}) {
        CAPTURE(outside);
        CHECK(pm::classify(outside) == pm::Where::outside);
        CHECK_FALSE(pm::destination_problem(outside, "tmpfs", false));
    }
}

TEST_CASE("proc mounts: a bind onto /proc must bring the root of a procfs", "[procfs]") {
    UniqueFd root(::open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC));
    UniqueFd self(::open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC));
    UniqueFd tmp(::open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE((root && self && tmp));
    CHECK_FALSE(pm::source_problem("/proc", root.get()));
    CHECK_THAT(pm::source_problem("/proc", self.get()).value_or(""),
               Catch::StartsWith(R"("/proc" cannot be mounted because its source is not the )"
                                 R"(root of a procfs (inode )"));
    CHECK(pm::source_problem("/proc", tmp.get()) ==
          R"("/proc" cannot be mounted because it is not of type proc)");
}

TEST_CASE("procfs handle: opens files below its root, checked", "[procfs]") {
    auto proc = procfs::Handle::open();
    REQUIRE(proc);
    INFO(proc->description());
    if (::geteuid() == 0) {
        // The host's root may make a procfs instance of its own (or at least a copy).
        CHECK(proc->kind() != procfs::Kind::host_proc);
    }
    auto status = proc->open_file("self/status", O_RDONLY);
    REQUIRE(status);
    CHECK(proc->verify(status->get(), "self/status").ok());
    // Never out of the root, nor through a magic link.
    CHECK_FALSE(proc->open_file("../etc/passwd", O_RDONLY));
    CHECK_FALSE(proc->open_file("/etc/passwd", O_RDONLY));
    auto magic = proc->open_file("self/root/etc/passwd", O_RDONLY);
    REQUIRE_FALSE(magic);
    CHECK(magic.error().errno_value() == ELOOP);
    // A file of another file system is not the handle's.
    UniqueFd tmp(::open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC));
    CHECK_FALSE(proc->verify(tmp.get(), "tmp").ok());
}

namespace {

// In a child with a private mount namespace (the host's root only): /proc/<pid>/sched bound
// over /proc/<pid>/task/<tid>/attr/exec, the redirection of CVE-2025-52881's LSM variant.
// The child's exit code: 0 all as expected, else the number of the failed check.
int redirected_attr_child() {
    if (::unshare(CLONE_NEWNS) < 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0) {
        return 10;
    }
    std::string self = cat("/proc/", ::getpid());
    std::string attr = cat(self, "/task/", ::getpid(), "/attr/exec");
    if (::mount(cat(self, "/sched").c_str(), attr.c_str(), nullptr, MS_BIND, nullptr) < 0) {
        return 11;
    }
    // The positive control: the path leads to the sched file now.
    UniqueFd by_path(::open(attr.c_str(), O_RDONLY | O_CLOEXEC));
    std::array<char, 64> text{};
    if (!by_path || ::read(by_path.get(), text.data(), text.size() - 1) <= 0 ||
        std::string_view(text.data()).find('(') == std::string_view::npos) {
        return 12; // sched starts with "<comm> (<pid>, #threads: 1)"
    }
    // The host's /proc as a handle: the file under the bind is refused, never written.
    auto host = procfs::Handle::host_proc();
    if (!host) {
        return 13;
    }
    auto through = host->write("thread-self/attr/exec", "unconfined");
    if (through || through.error().errno_value() != EXDEV) {
        return 14;
    }
    // A private instance (or a copy without submounts) has nothing mounted on the file.
    auto fresh = procfs::Handle::open();
    if (!fresh || fresh->kind() == procfs::Kind::host_proc) {
        return 15;
    }
    auto opened = fresh->open_file("thread-self/attr/exec", O_RDONLY);
    if (!opened || !fresh->verify(opened->get(), "thread-self/attr/exec").ok()) {
        return 16;
    }
    return 0;
}

} // namespace

TEST_CASE("procfs handle: a procfs file bound over the target is refused", "[procfs]") {
    if (::geteuid() != 0) {
        minirun_tests::skip_test("needs root for a private mount namespace with a bind");
        return;
    }
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::_exit(redirected_attr_child());
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("LSM labels: written through the handle as the calling thread's, then closed",
          "[procfs]") {
    runtime::security::ProcessSecurity security;
    security.selinux_label = "system_u:system_r:container_t:s0";
    security.apparmor_profile = "container-default";
    spec::User user;
    FakeSyscalls sys;
    auto proc = procfs::Handle::host_proc();
    REQUIRE(proc);
    REQUIRE(runtime::security::drop_privileges(security, user, sys, {}, &*proc).ok());
    REQUIRE(sys.calls.size() >= 2);
    CHECK(sys.calls[0] == "write_proc /proc/thread-self/attr/apparmor/exec exec container-default");
    CHECK(sys.calls[1] ==
          "write_proc /proc/thread-self/attr/exec system_u:system_r:container_t:s0");
    // Its last use: the handle is gone before anything of the container's runs.
    CHECK_FALSE(proc->valid());

    // Without a handle there is nothing to write them through: refused, not skipped.
    FakeSyscalls none;
    auto refused = runtime::security::drop_privileges(security, user, none, {}, nullptr);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message() == "LSM labels: no procfs handle to write it through");
    CHECK(none.calls.empty());

    // A refused write (the handle's check: EXDEV) fails the drop, naming the field.
    FakeSyscalls failing;
    failing.fail("write_proc", EXDEV);
    auto again = procfs::Handle::host_proc();
    REQUIRE(again);
    auto failed = runtime::security::drop_privileges(security, user, failing, {}, &*again);
    REQUIRE_FALSE(failed);
    CHECK_THAT(failed.error().message(), Catch::StartsWith("process.apparmorProfile: "));
}
