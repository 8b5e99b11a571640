// The late cgroup join (create_resources.hpp, joins_cgroups_late): which containers take
// it, how a cgroup splits into the part made before the clone and the part made after,
// how the v1 files reach the init, and where in the mounts the init joins.
#include "cgroup.hpp"
#include "create_resources.hpp"
#include "fake_syscalls.hpp"
#include "mount.hpp"
#include "plan_bundle.hpp"
#include "sync.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <array>
#include <filesystem>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::PlanBundle;
using nlohmann::json;

namespace {

json config(const json& namespaces) {
    json out = {
        {"ociVersion", "1.0.2"},
        {"root", {{"path", "rootfs"}}},
        {"process", {{"args", {"sh"}}, {"cwd", "/"}}},
        {"linux", {{"namespaces", json::array()}}},
    };
    for (const auto& type : namespaces) {
        out["linux"]["namespaces"].push_back({{"type", type}});
    }
    return out;
}

const json kDefault = {"pid", "network", "ipc", "uts", "mount"};

cgroup::Cgroup hybrid() {
    return cgroup::Cgroup::from_paths({{"memory", "/sys/fs/cgroup/memory/mini-run/x"},
                                       {"pids", "/sys/fs/cgroup/pids/mini-run/x"},
                                       {"unified", "/sys/fs/cgroup/unified/mini-run/x"}});
}

} // namespace

TEST_CASE("late join: a hybrid cgroup splits into its v1 and cgroup2 parts", "[late-join]") {
    cgroup::Cgroup whole = hybrid();
    cgroup::Cgroup v1 = whole.v1_part();
    cgroup::Cgroup v2 = whole.v2_part();
    CHECK(v1.paths() ==
          std::map<std::string, std::string>{{"memory", "/sys/fs/cgroup/memory/mini-run/x"},
                                             {"pids", "/sys/fs/cgroup/pids/mini-run/x"}});
    CHECK(v2.paths() ==
          std::map<std::string, std::string>{{"unified", "/sys/fs/cgroup/unified/mini-run/x"}});
    // A unified host's directory (key "") is cgroup2 too: nothing is left to join late.
    cgroup::Cgroup unified = cgroup::Cgroup::from_paths({{"", "/sys/fs/cgroup/mini-run/x"}});
    CHECK(unified.v1_part().empty());
    CHECK(unified.v2_part().paths().size() == 1);
}

TEST_CASE("late join: taken only where the order does not matter", "[late-join]") {
    PlanBundle bundle;
    auto plain = bundle.plan(config(kDefault));
    REQUIRE(plain.ok());
    CHECK(joins_cgroups_late(*plain, hybrid()));
    // Nothing in v1 (a unified host, a rootless cgroup2 subtree, --no-cgroups): no.
    CHECK_FALSE(joins_cgroups_late(*plain, hybrid().v2_part()));
    CHECK_FALSE(joins_cgroups_late(*plain, cgroup::Cgroup()));

    SECTION("a new cgroup namespace is rooted where its creator is when it unshares") {
        json with_cgroupns = kDefault;
        with_cgroupns.push_back("cgroup");
        auto plan = bundle.plan(config(with_cgroupns));
        REQUIRE(plan.ok());
        CHECK_FALSE(joins_cgroups_late(*plan, hybrid()));
    }
    SECTION("linux.memoryPolicy is bounded by the cpuset") {
        json c = config(kDefault);
        c["linux"]["memoryPolicy"] = {{"mode", "MPOL_LOCAL"}};
        auto plan = bundle.plan(c);
        REQUIRE(plan.ok());
        CHECK_FALSE(joins_cgroups_late(*plan, hybrid()));
    }
    SECTION("process.scheduler: SCHED_DEADLINE admission is per cpuset") {
        json c = config(kDefault);
        c["process"]["scheduler"] = {{"policy", "SCHED_OTHER"}};
        auto plan = bundle.plan(c);
        REQUIRE(plan.ok());
        CHECK_FALSE(joins_cgroups_late(*plan, hybrid()));
    }
    SECTION("a user namespace changes nothing: the parent opens the files") {
        json with_userns = kDefault;
        with_userns.push_back("user");
        json c = config(with_userns);
        c["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
        c["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
        auto plan = bundle.plan(c);
        REQUIRE(plan.ok());
        CHECK(joins_cgroups_late(*plan, hybrid()));
    }
}

TEST_CASE("late join: the v1 files reach the init, which writes \"0\" into each",
          "[late-join][sync]") {
    auto pair = create_sync_pair();
    REQUIRE(pair.ok());
    auto& [parent, init] = *pair;
    // Pipes stand in for the `tasks` files: what the init writes comes out of the other end.
    std::array<std::array<int, 2>, 2> pipes{};
    for (auto& ends : pipes) {
        REQUIRE(::pipe2(ends.data(), O_CLOEXEC) == 0);
    }
    REQUIRE(parent.send(ToInit::kCgroupFile, "/sys/fs/cgroup/memory/x", pipes[0][1]).ok());
    REQUIRE(parent.send(ToInit::kCgroupFile, "/sys/fs/cgroup/pids/x", pipes[1][1]).ok());
    REQUIRE(parent.send(ToInit::kCgroupsSent).ok());
    for (auto& ends : pipes) {
        ::close(ends[1]); // the init's copies are the only writers left
    }

    int joined = 0;
    for (;;) {
        auto event = init.receive();
        REQUIRE(event.ok());
        REQUIRE_FALSE(event->eof);
        if (event->message == ToInit::kCgroupsSent) {
            break;
        }
        REQUIRE(event->message == ToInit::kCgroupFile);
        REQUIRE(event->fd);
        CHECK(event->payload ==
              (joined == 0 ? "/sys/fs/cgroup/memory/x" : "/sys/fs/cgroup/pids/x"));
        CHECK(cgroup::SelfJoin::join_file(event->fd.get(), event->payload).ok());
        ++joined;
    }
    CHECK(joined == 2);
    for (auto& ends : pipes) {
        std::array<char, 4> got{};
        CHECK(::read(ends[0], got.data(), got.size()) == 1);
        CHECK(got[0] == '0');
        ::close(ends[0]);
    }

    // A refused write names the directory.
    auto refused = cgroup::SelfJoin::join_file(-1, "/sys/fs/cgroup/pids/x");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message() ==
          "join cgroup \"/sys/fs/cgroup/pids/x\": Bad file descriptor");
}

TEST_CASE("late join: the init joins right before the cgroup mount, after the mounts before it",
          "[late-join][mount]") {
    PlanBundle bundle;
    json c = config(kDefault);
    c["mounts"] = json::array({
        {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
        {{"destination", "/dev"}, {"type", "tmpfs"}, {"source", "tmpfs"}},
        {{"destination", "/sys/fs/cgroup"}, {"type", "cgroup"}, {"source", "cgroup"}},
        {{"destination", "/run"}, {"type", "tmpfs"}, {"source", "tmpfs"}},
    });
    auto plan = bundle.plan(c);
    REQUIRE(plan.ok());
    FakeSyscalls sys;
    auto sources = mount::open_bind_sources(*plan, sys);
    REQUIRE(sources.ok());
    std::vector<size_t> mounts_at_join;
    auto root = mount::prepare_rootfs(*plan, *sources, sys, [&] {
        mounts_at_join.push_back(sys.mounts.size());
        return Status{};
    });
    REQUIRE(root.ok());
    // "/" private, the rootfs bind, /proc, /dev: four calls, then the join, once.
    REQUIRE(mounts_at_join == std::vector<size_t>{4});
    CHECK(sys.mounts[3].target == plan->rootfs + "/dev");
    CHECK(sys.mounts[4].target == plan->rootfs + "/sys/fs/cgroup");

    SECTION("a failed join stops the mounts there") {
        FakeSyscalls again;
        auto more = mount::open_bind_sources(*plan, again);
        REQUIRE(more.ok());
        auto failed = mount::prepare_rootfs(*plan, *more, again,
                                            [] { return Status(Error(EPIPE, "parent gone")); });
        REQUIRE_FALSE(failed.ok());
        CHECK(failed.error().message() == "parent gone");
        CHECK(again.mounts.size() == 4);
    }
    SECTION("without a cgroup entry nothing is called (the init joins at its next step)") {
        json no_cgroup = c;
        no_cgroup["mounts"].erase(2);
        auto other = bundle.plan(no_cgroup);
        REQUIRE(other.ok());
        FakeSyscalls plain;
        auto more = mount::open_bind_sources(*other, plain);
        REQUIRE(more.ok());
        bool called = false;
        REQUIRE(mount::prepare_rootfs(*other, *more, plain, [&] {
                    called = true;
                    return Status{};
                }).ok());
        CHECK_FALSE(called);
    }
}
