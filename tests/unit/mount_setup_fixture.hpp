// What the mount setup unit tests share (test_mount_setup*.cpp): configs with mounts, a
// temporary rootfs with a recording fake, and what rootless::active() answers.
#pragma once

#include "cgroup/cgroup.hpp"
#include "fake_syscalls.hpp"
#include "minirun/rootless.hpp"
#include "mount/mount.hpp"
#include "ns/user.hpp"
#include "ns/uts.hpp"
#include "plan.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <linux/mount.h>
#include <nlohmann/json.hpp>
#include <sys/mount.h>
#include <sys/statvfs.h>

namespace mount_setup_test {

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::TempDir;
using nlohmann::json;
namespace stdfs = std::filesystem;

inline json config_with_mounts(json mounts) {
    return json{
        {"ociVersion", "1.0.2"},
        {"root", {{"path", "rootfs"}, {"readonly", true}}},
        {"process", {{"args", {"sh"}}, {"cwd", "/work/dir"}}},
        {"mounts", std::move(mounts)},
        {"linux", {{"namespaces", json::array({{{"type", "mount"}}})}}},
    };
}

inline json default_mounts() {
    return json::array({
        {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
        {{"destination", "/dev"},
         {"type", "tmpfs"},
         {"source", "tmpfs"},
         {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}},
        {{"destination", "/dev/pts"},
         {"type", "devpts"},
         {"source", "devpts"},
         {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666"}}},
    });
}

struct Fixture {
    TempDir dir;
    std::string rootfs;
    FakeSyscalls sys;
    Fixture() : rootfs(dir.path() + "/rootfs") { stdfs::create_directories(rootfs); }

    Plan plan(const json& config) const {
        auto spec = spec::parse_spec(config.dump());
        REQUIRE(spec.ok());
        auto made = make_plan(std::move(*spec), {"test", dir.path(), 0});
        REQUIRE(made.ok());
        return std::move(*made);
    }
};

// The parent's half (the bind sources) and the init's, as create runs them.
inline Result<UniqueFd> prepare(const Plan& plan, FakeSyscalls& sys,
                                const std::vector<CgroupBind>& cgroup_binds = {}) {
    auto sources = mount::open_bind_sources(plan, sys);
    if (!sources) {
        return sources.error();
    }
    return mount::prepare_rootfs(plan, sources->fds, sys, cgroup_binds);
}

// Sets what rootless::active() answers for one test, and puts detection back afterwards.
struct RootlessAs {
    explicit RootlessAs(bool rootless) { rootless::override_detection(rootless); }
    ~RootlessAs() { rootless::override_detection(std::nullopt); }
    RootlessAs(const RootlessAs&) = delete;
    RootlessAs& operator=(const RootlessAs&) = delete;
};

} // namespace mount_setup_test
