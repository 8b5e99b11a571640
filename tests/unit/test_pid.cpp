// Leaving a joined PID namespace is checked: exec and create fail when the runtime cannot
// return to its own (pid.hpp). Without root: what is tested is the bookkeeping and the
// error, on descriptors that setns() refuses for anyone.
#include "fake_syscalls.hpp"
#include "ns/pid.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using namespace minirun;
using minirun::testing::FakeSyscalls;
using runtime::pid::JoinedForChildren;

TEST_CASE("pid namespace: nothing joined, nothing to leave", "[pid]") {
    JoinedForChildren none;
    CHECK(none.leave().ok());
    CHECK(none.leave().ok());
}

TEST_CASE("pid namespace: a failed return is an error, reported once", "[pid]") {
    // Not a namespace: setns() says EINVAL before it looks at privileges.
    JoinedForChildren joined =
        JoinedForChildren::returning_to(UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
    auto left = joined.leave();
    REQUIRE_FALSE(left.ok());
    CHECK(left.error().errno_value() == EINVAL);
    CHECK_THAT(left.error().message(),
               Catch::StartsWith("return to the runtime's own pid namespace (setns): "));
    // Done: neither a second call nor the destructor tries again.
    CHECK(joined.leave().ok());
}

TEST_CASE("pid namespace: a moved-from object has nothing to leave", "[pid]") {
    JoinedForChildren joined =
        JoinedForChildren::returning_to(UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
    JoinedForChildren moved = std::move(joined);
    CHECK(joined.leave().ok()); // NOLINT(bugprone-use-after-move): what is tested
    CHECK_FALSE(moved.leave().ok());
}

TEST_CASE("pid namespace: joining a descriptor that is not a namespace fails", "[pid]") {
    UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    REQUIRE(null);
    auto joined = JoinedForChildren::enter_fd(null.get(), linux_syscalls());
    REQUIRE_FALSE(joined.ok());
    CHECK(joined.error().errno_value() == EINVAL);
    CHECK_THAT(joined.error().message(), Catch::StartsWith("join pid namespace: "));
}

TEST_CASE("pid namespace: joining and leaving are setns calls through the seam", "[pid]") {
    FakeSyscalls sys;
    UniqueFd target(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    REQUIRE(target);
    auto joined = JoinedForChildren::enter_fd(target.get(), sys);
    REQUIRE(joined.ok());
    REQUIRE(joined->leave().ok());
    REQUIRE(sys.calls.size() == 2);
    CHECK(sys.calls[0] == cat("setns ", target.get(), " ", CLONE_NEWPID));
    CHECK_THAT(sys.calls[1],
               Catch::StartsWith("setns ") && Catch::EndsWith(cat(" ", CLONE_NEWPID)));
    CHECK(sys.calls[1] != sys.calls[0]); // back by the runtime's own namespace's fd
}

TEST_CASE("pid namespace: a refused join is an error, and nothing to leave", "[pid]") {
    FakeSyscalls sys;
    UniqueFd target(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    sys.fail("setns", EPERM);
    auto joined = JoinedForChildren::enter_fd(target.get(), sys);
    REQUIRE_FALSE(joined.ok());
    CHECK(joined.error().message() == "join pid namespace: Operation not permitted");
    CHECK(sys.calls.size() == 1);
}
