// The exec's preparation under a seccomp profile older than close_range and execveat
// (issue 38): with no_new_privs off the filter is on before it, so a refusal falls back
// (runc's CloseExecFrom -> fdRangeFrom; glibc's fexecve -> /proc/self/fd).
#include "fake_syscalls.hpp"
#include "fs.hpp"
#include "process/process.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/close_range.h>
#include <unistd.h>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;

namespace {

spec::Process shell_process() {
    spec::Process process;
    process.args = {"/bin/sh", "-c", "true"};
    process.env = {"PATH=/bin"};
    return process;
}

std::string cloexec_range(unsigned first) {
    return cat("close_range ", first, " ", ~0U, " ", CLOSE_RANGE_CLOEXEC);
}

} // namespace

TEST_CASE("mark_inherited_cloexec: close_range, else each fd of /proc/self/fd",
          "[process][seccomp-old]") {
    FakeSyscalls sys;
    SECTION("close_range works: nothing else") {
        REQUIRE(process::mark_inherited_cloexec(5, sys).ok());
        CHECK(sys.calls == std::vector<std::string>{cloexec_range(5)});
    }
    SECTION("refused by the filter (EPERM, ENOSYS) or unknown to the kernel (EINVAL)") {
        const int refusal = GENERATE(EPERM, ENOSYS, EINVAL);
        sys.fail("close_range", refusal);
        REQUIRE(process::mark_inherited_cloexec(4, sys).ok());
        CHECK(sys.calls ==
              std::vector<std::string>{cloexec_range(4) + " -> failed", "cloexec_fds_from 4"});
    }
    SECTION("another error is the step's") {
        sys.fail("close_range", EBADF);
        auto marked = process::mark_inherited_cloexec(3, sys);
        REQUIRE_FALSE(marked.ok());
        CHECK(marked.error().errno_value() == EBADF);
        CHECK(sys.calls == std::vector<std::string>{cloexec_range(3) + " -> failed"});
    }
    SECTION("the fallback failing too is an error naming both") {
        sys.fail("close_range", EPERM);
        sys.fail("cloexec_fds_from", ENOENT);
        auto marked = process::mark_inherited_cloexec(3, sys);
        REQUIRE_FALSE(marked.ok());
        CHECK(marked.error().errno_value() == ENOENT);
        CHECK_THAT(marked.error().message(),
                   Catch::Contains("mark inherited fds close-on-exec (close_range: Operation "
                                   "not permitted)"));
    }
}

TEST_CASE("PreparedExec: prepared and run under a profile without close_range and execveat",
          "[process][seccomp-old]") {
    FakeSyscalls sys;
    spec::Process process = shell_process();
    process::PreparedExec exec;
    sys.fail("close_range", ENOSYS);
    SECTION("direct execve") {
        REQUIRE(exec.prepare("/bin/sh", process, 1, "", sys).ok());
        REQUIRE(exec.run(sys).ok());
        CHECK(sys.names() == std::vector<std::string>{"close_range", "cloexec_fds_from", "execve"});
        CHECK(sys.calls[1] == "cloexec_fds_from 4");
        CHECK(sys.calls[2] == "execve /bin/sh /bin/sh -c true");
    }
    SECTION("the exec gate: execveat refused, the same memfd through /proc/self/fd") {
        const int refusal = GENERATE(EPERM, ENOSYS);
        process::ExecGate gate{9, -1, -1};
        REQUIRE(exec.prepare("/bin/sh", process, 0, "", sys, gate).ok());
        sys.fail("execve", refusal);
        REQUIRE(exec.run(sys).ok());
        REQUIRE(sys.calls.size() == 4);
        CHECK(sys.calls[2].starts_with("execve (fd) -1 -1 /bin/sh /bin/sh -c true -> failed"));
        CHECK(sys.calls[3] == "execve /proc/self/fd/9 -1 -1 /bin/sh /bin/sh -c true");
    }
    SECTION("the exec gate: another error has no fallback") {
        process::ExecGate gate{9, -1, -1};
        REQUIRE(exec.prepare("/bin/sh", process, 0, "", sys, gate).ok());
        sys.fail("execve", E2BIG);
        auto ran = exec.run(sys);
        REQUIRE_FALSE(ran.ok());
        CHECK(ran.error().errno_value() == E2BIG);
        CHECK(sys.calls.size() == 3);
    }
}

TEST_CASE("fs::cloexec_fds_from marks this process's fds from the first one on",
          "[process][seccomp-old]") {
    // Real fds, without close-on-exec: the walk of /proc/self/fd must reach them.
    int low = ::open("/dev/null", O_RDONLY);
    int high = ::fcntl(low, F_DUPFD, 200);
    REQUIRE(low >= 0);
    REQUIRE(high >= 200);
    CHECK(fs::cloexec_fds_from(high) == 0);
    CHECK((::fcntl(high, F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(low, F_GETFD) & FD_CLOEXEC) == 0);
    CHECK(fs::cloexec_fds_from(low) == 0);
    CHECK((::fcntl(low, F_GETFD) & FD_CLOEXEC) != 0);
    ::close(low);
    ::close(high);
}
