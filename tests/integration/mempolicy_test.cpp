// linux.memoryPolicy and linux.intelRdt on this machine: one NUMA node (node0), no resctrl.
//
// The memory policy is seen in /proc/<pid>/numa_maps: a mapping without a policy of its own
// shows the task's ("bind:0", "interleave:0", "default"), from inside the container (the
// reading process, born in it) and from the host (the init). An exec'd process gets it too.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

// The policy column of the first line of a numa_maps text ("bind:0").
std::string first_policy(const std::string& numa_maps) {
    auto lines = split_lines(numa_maps);
    if (lines.empty()) {
        return "<empty>";
    }
    auto words = split_words(lines.front());
    return words.size() >= 2 ? words[1] : "<none>";
}

bool exists(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0;
}

// False (and the test skipped) when the kernel shows no numa_maps.
bool have_numa_maps() {
    if (!exists("/proc/self/numa_maps")) {
        skip_test("this kernel has no /proc/<pid>/numa_maps (CONFIG_NUMA)");
        return false;
    }
    return true;
}

} // namespace

TEST_CASE("memoryPolicy: the container's processes run under the policy, exec'd ones too",
          "[mempolicy]") {
    if (!have_numa_maps()) {
        return;
    }
    struct Case {
        nlohmann::json policy;
        std::string shown; // numa_maps' words for it
    };
    const std::vector<Case> cases = {
        {{{"mode", "MPOL_BIND"}, {"nodes", "0"}}, "bind:0"},
        {{{"mode", "MPOL_INTERLEAVE"}, {"nodes", "0"}}, "interleave:0"},
        {{{"mode", "MPOL_PREFERRED"}, {"nodes", "0"}, {"flags", {"MPOL_F_STATIC_NODES"}}},
         "prefer=static:0"},
        {{{"mode", "MPOL_BIND"}, {"nodes", "0"}, {"flags", {"MPOL_F_NUMA_BALANCING"}}},
         "bind=balancing:0"},
        {{{"mode", "MPOL_LOCAL"}}, "local"},
        {{{"mode", "MPOL_DEFAULT"}}, "default"},
    };
    for (const Case& c : cases) {
        INFO(c.policy.dump());
        TempBundle bundle("mempolicy");
        bundle.config["linux"]["memoryPolicy"] = c.policy;
        // The container's own view: the reading process (head) was forked in it.
        bundle.set_shell("head -n1 /proc/self/numa_maps; echo; " + std::string(loop));
        Runtime runtime;
        pid_t init = create_and_start(runtime, bundle);
        auto from_host = read_file("/proc/" + std::to_string(init) + "/numa_maps");
        REQUIRE(from_host);
        CHECK(first_policy(*from_host) == c.shown);
        auto exec = runtime({"exec", bundle.id(), "head", "-n1", "/proc/self/numa_maps"});
        INFO(exec.describe());
        CHECK(exec.exit_code == 0);
        CHECK(first_policy(exec.out) == c.shown);
        auto deleted = runtime({"delete", "--force", bundle.id()});
        CHECK(deleted.exit_code == 0);
        check_no_leftovers(bundle);
    }

    // Without linux.memoryPolicy nothing is set: the host's default.
    TempBundle plain("mempolicy-none");
    plain.set_shell("head -n1 /proc/self/numa_maps");
    auto result = plain.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(first_policy(result.out) == "default");
}

TEST_CASE("memoryPolicy: a node this host lacks fails the create in one line, leaving nothing",
          "[mempolicy]") {
    if (!have_numa_maps()) {
        return;
    }
    auto allowed = status_field(::getpid(), "Mems_allowed_list");
    REQUIRE(allowed.size() == 1);
    if (allowed.front() != "0") {
        skip_test("this host has more memory nodes than node0: " + allowed.front());
        return;
    }
    TempBundle bundle("mempolicy-bad-node");
    bundle.set_shell("echo ran-anyway");
    bundle.config["linux"]["memoryPolicy"] = {{"mode", "MPOL_BIND"}, {"nodes", "5"}};
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO(created.describe());
    CHECK(created.exit_code != 0);
    CHECK(created.err_now() ==
          "mini-run: linux.memoryPolicy: set_mempolicy(MPOL_BIND, nodes \"5\"): Invalid "
          "argument: the container's processes may use memory node(s) 0 only\n");
    CHECK_FALSE(contains(created.out_now(), "ran-anyway"));
    check_root_empty(runtime);
    check_no_leftovers(bundle);

    // A config error is refused before anything exists, with its path.
    TempBundle wrong("mempolicy-bad-mode");
    wrong.config["linux"]["memoryPolicy"] = {{"mode", "MPOL_FOO"}};
    auto refused = runtime.create(wrong);
    CHECK(refused.exit_code != 0);
    CHECK(contains(refused.err_now(),
                   "mini-run: linux.memoryPolicy.mode: unknown mode \"MPOL_FOO\""));
    check_root_empty(runtime);
    check_no_leftovers(wrong);
}

TEST_CASE("intelRdt: without resctrl on the host the create fails, naming it, leaving nothing",
          "[intelrdt]") {
    for (const MountInfo& mount : host_mounts()) {
        if (mount.fs_type == "resctrl") {
            skip_test("this host has resctrl mounted at " + mount.mount_point);
            return;
        }
    }
    for (const nlohmann::json& rdt :
         {nlohmann::json{{"closID", "mini-run-it"}},
          nlohmann::json{{"l3CacheSchema", "L3:0=f"}, {"memBwSchema", "MB:0=50"}},
          nlohmann::json{{"schemata", {"L3:0=f"}}, {"enableMonitoring", true}}}) {
        INFO(rdt.dump());
        TempBundle bundle("intelrdt");
        bundle.set_shell("echo ran-anyway");
        bundle.config["linux"]["intelRdt"] = rdt;
        Runtime runtime;
        auto created = runtime.create(bundle);
        INFO(created.describe());
        CHECK(created.exit_code != 0);
        CHECK(created.err_now() == "mini-run: linux.intelRdt: cannot be applied: this host has no "
                                   "resctrl filesystem mounted (/sys/fs/resctrl)\n");
        CHECK_FALSE(contains(created.out_now(), "ran-anyway"));
        check_root_empty(runtime);
        check_no_leftovers(bundle);
        CHECK_FALSE(exists("/sys/fs/cgroup/pids" + default_cgroup(bundle.id())));
    }
}
