// The whole recipe of a process `exec` starts, against the fake system calls: every step
// from joining the cgroups to the exec, in order, with the privilege-relevant calls checked,
// and a fault sweep over all of them. (The init's own steps before the privilege drop need
// a parent on the sync socket and a rootfs; test_recipe.cpp runs its drop and exec, the
// mount tests its rootfs.)
#include "fake_syscalls.hpp"
#include "recipe_fixture.hpp"
#include "security/security.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/personality.h>

#include <algorithm>
#include <catch2/catch.hpp>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::RecipeFixture;

namespace {

spec::Process process_as(uid_t uid) {
    spec::Process process;
    process.args = {"/bin/sh", "-c", "true"}; // found on the host: the fake does not chroot
    process.cwd = "/";
    process.env = {"PATH=/usr/bin:/bin"};
    process.user.uid = uid;
    process.user.gid = uid;
    process.no_new_privileges = true;
    return process;
}

// An exec'd process of a container whose network and mount namespaces it joins.
struct ExecdProcess {
    UniqueFd net{::open("/dev/null", O_RDONLY | O_CLOEXEC)};
    UniqueFd mnt{::open("/dev/null", O_RDONLY | O_CLOEXEC)};
    RecipeFixture fixture;

    explicit ExecdProcess(uid_t uid) : fixture(process_as(uid), prepared(process_as(uid))) {
        ProcessPlan& plan = fixture.init.process;
        plan.joins = {{net.get(), CLONE_NEWNET, "join the container's network namespace"},
                      {mnt.get(), CLONE_NEWNS, "join the container's mount namespace"}};
        plan.new_session = false;
        plan.bind_console = false;
        plan.keep_fds = {fixture.child.fd()};
    }

    static security::ProcessSecurity prepared(const spec::Process& process) {
        auto security = security::prepare(process, spec::Linux{});
        REQUIRE(security.ok());
        return std::move(*security);
    }

    Status run(FakeSyscalls& sys) { return fixture.run(Taker::process, sys); }
};

// Whether `wanted` appear in `names` in this order (others may come between).
bool in_order(const std::vector<std::string>& names, const std::vector<std::string>& wanted) {
    auto at = names.begin();
    for (const std::string& name : wanted) {
        at = std::find(at, names.end(), name);
        if (at == names.end()) {
            return false;
        }
        ++at;
    }
    return true;
}

} // namespace

TEST_CASE("process recipe: an exec'd process's whole recipe, the privilege-relevant calls in "
          "order",
          "[recipe][exec]") {
    FakeSyscalls sys;
    ExecdProcess process(1000);
    auto status = process.run(sys);
    INFO((status ? std::string() : status.error().message()));
    REQUIRE(status.ok());
    // Fds first (nothing of ours leaks into the container), then no way back for a dying
    // parent and no ptrace by the container, the limits while still the host's root, the
    // namespaces, then the drop: bounding set, ids, capabilities, no_new_privs; the exec last.
    CHECK(in_order(sys.names(),
                   {"close_range", "prctl PR_SET_PDEATHSIG", "prctl PR_SET_DUMPABLE", "setns",
                    "setns", "prctl PR_CAPBSET_DROP", "setgroups", "setresgid", "setresuid",
                    "capset", "prctl PR_SET_NO_NEW_PRIVS", "prctl PR_SET_PDEATHSIG", "execve"}));
    CHECK(std::count_if(sys.calls.begin(), sys.calls.end(),
                        [](const std::string& call) { return call.starts_with("setns"); }) == 2);
    CHECK(sys.calls.back().starts_with("execve /bin/sh"));
    // An exec'd process takes none of the init's steps: no mount, no hostname, no umask 0.
    for (const std::string& name : sys.names()) {
        INFO(name);
        CHECK_FALSE(name.starts_with("mount"));
        CHECK_FALSE(name.starts_with("pivot_root"));
        CHECK_FALSE(name.starts_with("sethostname"));
    }
}

TEST_CASE("process recipe: whichever call of an exec'd process fails, it is never exec'd",
          "[recipe][exec][fault]") {
    FakeSyscalls probe;
    ExecdProcess clean(1000);
    REQUIRE(clean.run(probe).ok());
    const size_t total = probe.calls.size();
    REQUIRE(total > 15);
    // Survivable, each for a stated reason: a chdir refused to root is tried again as the
    // user (process.cpp); setgroups() refused with no groups to set leaves what the process
    // has anyway (user.cpp); close_range with CLOSE_RANGE_CLOEXEC (4) refused falls back to
    // each fd of /proc/self/fd (process.cpp: a seccomp profile older than close_range); a
    // refused reset of the cpu affinity leaves the inherited one, as in runc
    // (scheduling.cpp); a setns refused (EPERM) before the user namespace is joined is tried
    // again after it, runc's two-stage join (namespaces.cpp).
    auto survivable = [](const std::string& call) {
        return call.starts_with("chdir") || call.starts_with("setgroups -> ") ||
               (call.starts_with("close_range ") && call.ends_with(" 4 -> failed")) ||
               call == "sched_setaffinity all -> failed" || call.starts_with("setns ");
    };
    size_t stopped = 0;
    for (size_t number = 1; number <= total; ++number) {
        FakeSyscalls sys;
        sys.fail_call(number, EPERM);
        ExecdProcess process(1000);
        auto status = process.run(sys);
        if (number > sys.calls.size()) {
            continue;
        }
        const std::string& failed = sys.calls.at(number - 1);
        INFO("call " << number << ": " << failed);
        if (!failed.ends_with(" -> failed")) {
            continue; // umask and the signal mask cannot fail
        }
        bool execd =
            sys.calls.back().starts_with("execve") && !sys.calls.back().ends_with(" -> failed");
        if (status.ok()) {
            CHECK(survivable(failed));
            CHECK(execd);
            continue;
        }
        ++stopped;
        CHECK_FALSE(execd);
        CHECK(status.error().errno_value() == EPERM);
    }
    CHECK(stopped > total / 2);
}

TEST_CASE("process recipe: an exec'd process tells the seccomp listener the state its plan has",
          "[recipe][exec]") {
    // runc's seccomp-notify.bats: the agent gets the container's state with each fd.
    RecipeFixture fixture(process_as(0), {});
    fixture.init.process.container_pid = 4242;
    fixture.init.process.state_json = R"({"id":"c1"})";
    FakeSyscalls sys;
    ProcessSetup setup(sys, fixture.init.process, fixture.child, false);
    CHECK(setup.container_pid == 4242);
    CHECK(setup.state_json == R"({"id":"c1"})");
}

TEST_CASE("process recipe: an exec'd process takes linux.personality, as the init does",
          "[recipe][exec]") {
    const std::string call = cat("personality ", static_cast<unsigned long>(PER_LINUX32));
    FakeSyscalls sys;
    ExecdProcess process(1000);
    SECTION("set: before the privilege drop and the exec, as runc 1.3 does") {
        process.fixture.init.process.personality = spec::Personality{"LINUX32", {}};
        REQUIRE(process.run(sys).ok());
        CHECK(std::count(sys.calls.begin(), sys.calls.end(), call) == 1);
        CHECK(in_order(sys.names(), {"personality", "prctl PR_SET_NO_NEW_PRIVS", "execve"}));
    }
    SECTION("unset: no call") {
        REQUIRE(process.run(sys).ok());
        for (const std::string& name : sys.names()) {
            CHECK(name != "personality");
        }
    }
}
