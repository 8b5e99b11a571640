// Joining namespaces (namespaces.cpp): runc's two-stage join, and what the parent does with
// a joined user namespace before the clone (its maps checked against the config's, a new
// PID namespace made in it). Without root: the fake's namespace holder joins nothing, so
// the maps it shows are this process's own.
#include "fake_syscalls.hpp"
#include "fs.hpp"
#include "ns/namespaces.hpp"
#include "ns/pid.hpp"
#include "sync.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using namespace minirun;
using minirun::testing::FakeSyscalls;
using runtime::NamespaceEntry;

namespace {

// A kernel that refuses setns(EPERM) into the namespaces of `refused` until the user
// namespace is joined: one the joined user namespace owns, for a caller without the host's
// root.
class OwnedByUserNamespace : public FakeSyscalls {
public:
    explicit OwnedByUserNamespace(int refused) : refused_(refused) {}
    Status setns(int fd, int nstype) override {
        if (nstype == CLONE_NEWUSER) {
            in_user_ = true;
        } else if ((nstype & refused_) != 0 && !in_user_) {
            calls.push_back(cat("setns ", fd, " ", nstype, " -> refused"));
            return Error(EPERM, "setns");
        }
        return FakeSyscalls::setns(fd, nstype);
    }

private:
    int refused_;
    bool in_user_ = false;
};

std::vector<NamespaceEntry> user_net_ipc() {
    return {{10, CLONE_NEWUSER, "join user namespace"},
            {11, CLONE_NEWNET, "join network namespace"},
            {12, CLONE_NEWIPC, "join ipc namespace"}};
}

runtime::Plan joining_own_user_namespace() {
    runtime::Plan plan;
    plan.joins.push_back({spec::NamespaceType::user, CLONE_NEWUSER, "/proc/self/ns/user", 0});
    return plan;
}

std::string own_map(const char* file) {
    auto text = fs::read_file(cat("/proc/self/", file));
    REQUIRE(text.ok());
    return runtime::normalized_id_map(*text);
}

} // namespace

TEST_CASE("join: the user namespace comes after what the caller may join itself",
          "[namespaces][join]") {
    FakeSyscalls sys;
    REQUIRE(runtime::join_namespaces(user_net_ipc(), sys).ok());
    // The host's root joins all of them itself (a network namespace the user namespace
    // does not own: runc issue 4390), then the user namespace.
    CHECK(sys.calls == std::vector<std::string>{cat("setns 11 ", CLONE_NEWNET),
                                                cat("setns 12 ", CLONE_NEWIPC),
                                                cat("setns 10 ", CLONE_NEWUSER)});
}

TEST_CASE("join: a namespace refused before the user namespace is joined after it",
          "[namespaces][join]") {
    OwnedByUserNamespace sys(CLONE_NEWNET);
    REQUIRE(runtime::join_namespaces(user_net_ipc(), sys).ok());
    CHECK(sys.calls == std::vector<std::string>{cat("setns 11 ", CLONE_NEWNET, " -> refused"),
                                                cat("setns 12 ", CLONE_NEWIPC),
                                                cat("setns 10 ", CLONE_NEWUSER),
                                                cat("setns 11 ", CLONE_NEWNET)});
}

TEST_CASE("join: an error other than EPERM, or EPERM again, is the step's error",
          "[namespaces][join]") {
    SECTION("EINVAL in the first pass") {
        FakeSyscalls sys;
        sys.fail("setns", EINVAL);
        auto joined = runtime::join_namespaces(user_net_ipc(), sys);
        REQUIRE_FALSE(joined.ok());
        CHECK(joined.error().errno_value() == EINVAL);
        CHECK_THAT(joined.error().message(), Catch::StartsWith("join network namespace: "));
    }
    SECTION("refused even with the user namespace's privileges") {
        OwnedByUserNamespace sys(CLONE_NEWNET);
        std::vector<NamespaceEntry> entries = user_net_ipc();
        entries[0].clone_flag = CLONE_NEWUTS; // no user namespace to join: refused twice
        auto joined = runtime::join_namespaces(entries, sys);
        REQUIRE_FALSE(joined.ok());
        CHECK(joined.error().errno_value() == EPERM);
        CHECK_THAT(joined.error().message(), Catch::StartsWith("join network namespace: "));
    }
}

TEST_CASE("join: the kernel's uid_map text in the plan's form", "[namespaces][join]") {
    CHECK(runtime::normalized_id_map("         0     100000      65536\n") == "0 100000 65536\n");
    CHECK(runtime::normalized_id_map("0 1 2\n  5   6 7\n\n") == "0 1 2\n5 6 7\n");
    CHECK(runtime::normalized_id_map("").empty());
    CHECK(runtime::one_line_id_map("0 1 2\n5 6 7\n") == "0 1 2,5 6 7");
}

TEST_CASE("join: a joined user namespace's maps must be the config's", "[namespaces][join]") {
    FakeSyscalls sys;
    runtime::Plan plan = joining_own_user_namespace();
    SECTION("no mappings given: nothing to check, no holder") {
        auto opened = runtime::open_namespaces_to_join(plan, sys);
        REQUIRE(opened.ok());
        CHECK(opened->size() == 1);
        CHECK(sys.calls.empty());
    }
    SECTION("the namespace's own maps") {
        plan.uid_map = own_map("uid_map");
        plan.gid_map = own_map("gid_map");
        auto opened = runtime::open_namespaces_to_join(plan, sys);
        INFO((opened ? std::string() : opened.error().message()));
        REQUIRE(opened.ok());
        REQUIRE(sys.calls.size() == 1);
        CHECK_THAT(sys.calls[0], Catch::StartsWith("clone_namespace_holder "));
    }
    SECTION("other maps: runc's error, naming both") {
        plan.uid_map = own_map("uid_map");
        plan.gid_map = "0 200000 65536\n";
        auto opened = runtime::open_namespaces_to_join(plan, sys);
        REQUIRE_FALSE(opened.ok());
        CHECK_THAT(opened.error().message(),
                   Catch::StartsWith("linux.gidMappings: user namespaces enabled, but both "
                                     "namespace path and non-matching mapping specified") &&
                       Catch::Contains("\"/proc/self/ns/user\" has gid_map") &&
                       Catch::EndsWith("the config \"0 200000 65536\")"));
    }
    SECTION("a holder that cannot be made") {
        plan.uid_map = own_map("uid_map");
        sys.fail("clone_namespace_holder", EPERM);
        auto opened = runtime::open_namespaces_to_join(plan, sys);
        REQUIRE_FALSE(opened.ok());
        CHECK_THAT(opened.error().message(),
                   Catch::StartsWith("linux.namespaces[0].path: user namespace "
                                     "\"/proc/self/ns/user\": "));
    }
}

TEST_CASE("join: the init's second stage takes over from the first (kForked)",
          "[namespaces][join]") {
    runtime::Plan plan;
    plan.new_pid_namespace_in_joined_user = true;
    auto pair = runtime::create_sync_pair();
    REQUIRE(pair.ok());
    auto& [parent, child] = *pair;
    runtime::ScopedChild first(::fork());
    if (first.get() == 0) {
        ::_exit(0); // the first stage, gone once it has reported
    }
    pid_t second_pid = ::fork();
    if (second_pid == 0) {
        for (;;) {
            ::pause();
        }
    }
    runtime::ScopedChild second(second_pid); // killed and reaped by the test in any case
    SECTION("its pid: the init is the second stage, the first is reaped") {
        REQUIRE(child.send(runtime::ToParent::kForked, cat(second_pid)).ok());
        REQUIRE(runtime::pid::take_second_stage(plan, parent, first).ok());
        CHECK(first.get() == second_pid);
        CHECK(::kill(second_pid, 0) == 0);
        second.release();
        first.kill_and_reap();
    }
    SECTION("not a pid: a protocol error, the first stage still held") {
        REQUIRE(child.send(runtime::ToParent::kForked, "12x").ok());
        auto taken = runtime::pid::take_second_stage(plan, parent, first);
        REQUIRE_FALSE(taken.ok());
        CHECK(taken.error().errno_value() == EPROTO);
        CHECK(first.get() > 0);
    }
    SECTION("without a new pid namespace in a joined user namespace: nothing to wait for") {
        plan.new_pid_namespace_in_joined_user = false;
        const pid_t before = first.get();
        REQUIRE(runtime::pid::take_second_stage(plan, parent, first).ok());
        CHECK(first.get() == before);
    }
}
