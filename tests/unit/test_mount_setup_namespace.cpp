// The mount namespace steps against a recording fake (see test_mount_setup.cpp): pivot_root,
// no mount namespace, bind propagation, the process identity, uts, idmapped binds and the
// cgroup entry.
#include "mount_setup_fixture.hpp"

#include <catch2/catch.hpp>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::MountCall;
using minirun::testing::TempDir;
using nlohmann::json;
namespace stdfs = std::filesystem;
using namespace mount_setup_test;

TEST_CASE("pivot_root: into the rootfs, old root made a slave, then detached", "[mount]") {
    Fixture f;
    UniqueFd root(::open(f.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(mount::pivot_into(root.get(), f.sys).ok());
    REQUIRE(f.sys.calls.size() == 6);
    CHECK(f.sys.calls[0] == "fchdir " + f.rootfs);
    CHECK(f.sys.calls[1] == "pivot_root . .");
    // Back onto the old root, so that "." names it and not the new root for mount(2): the
    // slave below must not reach the container's tree (its rshared binds).
    CHECK(f.sys.calls[2] == "fchdir /");
    CHECK(f.sys.calls[3] == "mount .");
    CHECK(f.sys.mounts[0].flags == (MS_SLAVE | MS_REC));
    CHECK(f.sys.calls[4] == "umount .");
    CHECK(f.sys.calls[5] == "chdir /");
}

TEST_CASE("no mount namespace: the host's / is left alone, only the rootfs bind gets the "
          "propagation, and the init chroots",
          "[mount]") {
    Fixture f;
    json config = config_with_mounts(default_mounts());
    config["linux"]["namespaces"] = json::array({{{"type", "pid"}}});
    Plan plan = f.plan(config);
    auto root = prepare(plan, f.sys);
    REQUIRE(root.ok());
    REQUIRE(f.sys.mounts.size() == 5);
    for (const MountCall& call : f.sys.mounts) {
        CHECK(call.target != "/");
    }
    CHECK(f.sys.mounts[0].source == f.rootfs);
    CHECK(f.sys.mounts[0].target == f.rootfs);
    CHECK(f.sys.mounts[0].flags == (MS_BIND | MS_REC));
    CHECK(f.sys.mounts[1].target == f.rootfs);
    CHECK(f.sys.mounts[1].flags == (MS_PRIVATE | MS_REC));
    CHECK(f.sys.mounts[2].target == f.rootfs + "/proc");

    FakeSyscalls entering;
    REQUIRE(mount::enter_root(plan, root->get(), entering).ok());
    CHECK(entering.calls == std::vector<std::string>{"fchdir " + f.rootfs, "chroot .", "chdir /"});

    // With a mount namespace: pivot_root, never chroot.
    FakeSyscalls pivoting;
    Plan with_namespace = f.plan(config_with_mounts(default_mounts()));
    REQUIRE(mount::enter_root(with_namespace, root->get(), pivoting).ok());
    CHECK(pivoting.calls[1] == "pivot_root . .");
}

TEST_CASE("bind propagation: what / got, or the entry's own; shared keeps the host's peers only "
          "under a shared rootfsPropagation and without a user namespace",
          "[mount]") {
    Fixture f;
    std::filesystem::create_directories(f.dir.path() + "/data");
    auto plan_for = [&](const std::string& root_propagation, const std::string& option,
                        bool user_namespace) {
        json mounts = json::array({{{"destination", "/data"},
                                    {"type", "bind"},
                                    {"source", "data"},
                                    {"options", option.empty() ? json::array({"rbind"})
                                                               : json::array({"rbind", option})}}});
        json config = config_with_mounts(mounts);
        if (!root_propagation.empty()) {
            config["linux"]["rootfsPropagation"] = root_propagation;
        }
        if (user_namespace) {
            config["linux"]["namespaces"].push_back({{"type", "user"}});
            config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
            config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
        }
        return f.plan(config);
    };
    using Flags = std::vector<unsigned long>;
    constexpr unsigned long kRec = MS_REC;
    auto flags_for = [&](const std::string& root, const std::string& option, bool user = false) {
        Plan plan = plan_for(root, option, user);
        return mount::bind_propagation(plan, plan.mounts.at(0));
    };
    // No word of its own: that of "/".
    CHECK(flags_for("", "") == Flags{MS_PRIVATE | kRec});
    CHECK(flags_for("rslave", "") == Flags{MS_SLAVE | kRec});
    CHECK(flags_for("shared", "") == Flags{MS_SLAVE | kRec});
    // Its own word.
    CHECK(flags_for("", "rslave") == Flags{MS_SLAVE | kRec});
    CHECK(flags_for("shared", "private") == Flags{MS_PRIVATE});
    // Shared: both ways under a shared root...
    CHECK(flags_for("shared", "rshared") == Flags{MS_SHARED | kRec});
    CHECK(flags_for("rshared", "shared") == Flags{MS_SHARED});
    // ...otherwise a slave first, as runc's would be under its rslave "/".
    CHECK(flags_for("", "rshared") == Flags{MS_SLAVE | kRec, MS_SHARED | kRec});
    CHECK(flags_for("rslave", "shared") == Flags{MS_SLAVE, MS_SHARED});
    CHECK(flags_for("rshared", "rshared", true) == Flags{MS_SLAVE | kRec, MS_SHARED | kRec});

    // And in that order on the mount, after it is in place.
    FakeSyscalls sys;
    Plan plan = plan_for("", "rshared", false);
    REQUIRE(prepare(plan, sys).ok());
    REQUIRE(sys.mounts.size() == 5);
    CHECK(sys.mounts[2].target == f.rootfs + "/data"); // move_mount
    CHECK(sys.mounts[3].target == f.rootfs + "/data");
    CHECK(sys.mounts[3].flags == (MS_SLAVE | MS_REC));
    CHECK(sys.mounts[4].target == f.rootfs + "/data");
    CHECK(sys.mounts[4].flags == (MS_SHARED | MS_REC));
}

TEST_CASE("no mount namespace: delete detaches the rootfs bind and what is below it, deepest "
          "first, and nothing that was there before",
          "[mount]") {
    // 27: "/", 40: a host mount below the rootfs before create (hidden, not ours),
    // 50: the rootfs bind on 27, 51 its copy of 40, 52 /proc, 53 /dev, 54 /dev/pts,
    // 55: a tmpfs stacked on the rootfs itself, 60: somebody else's mount elsewhere.
    const std::string table = "27 1 254:0 / / rw - ext4 /dev/vda rw\n"
                              "40 27 0:40 / /b/rootfs/mnt rw - tmpfs host rw\n"
                              "50 27 254:0 /b/rootfs /b/rootfs rw - ext4 /dev/vda rw\n"
                              "51 50 0:40 / /b/rootfs/mnt rw - tmpfs host rw\n"
                              "52 50 0:41 / /b/rootfs/proc rw - proc proc rw\n"
                              "53 50 0:42 / /b/rootfs/dev rw - tmpfs tmpfs rw\n"
                              "54 53 0:43 / /b/rootfs/dev/pts rw - devpts devpts rw\n"
                              "55 50 0:44 / /b/rootfs rw - tmpfs over rw\n"
                              "60 27 0:45 / /b/rootfs2 rw - tmpfs other rw\n";
    auto mounts = fs::parse_mountinfo(table);
    std::vector<int> ids;
    for (const auto& entry : mount::host_mounts_to_detach(mounts, 27, "/b/rootfs")) {
        ids.push_back(entry.id);
    }
    REQUIRE(ids.size() == 6);
    CHECK(ids.front() == 54); // the deepest
    CHECK(ids.back() == 50);  // the rootfs bind last
    std::sort(ids.begin(), ids.end());
    CHECK(ids == std::vector<int>{50, 51, 52, 53, 54, 55});

    // Nothing of ours there (never made, or gone already): nothing to do.
    CHECK(mount::host_mounts_to_detach(mounts, 40, "/b/rootfs").empty());
    CHECK(mount::host_mounts_to_detach(mounts, 27, "/b/other").empty());
}

TEST_CASE("root.readonly remounts / read-only after pivot_root", "[mount]") {
    Fixture f;
    f.sys.statvfs_flags = ST_NOSUID;
    Plan plan = f.plan(config_with_mounts(json::array()));
    REQUIRE(mount::finalize_root(plan, f.sys).ok());
    REQUIRE(f.sys.mounts.size() == 1);
    CHECK(f.sys.mounts[0].target == "/");
    CHECK(f.sys.mounts[0].flags == (MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID));

    json writable = config_with_mounts(json::array());
    writable["root"]["readonly"] = false;
    FakeSyscalls untouched;
    REQUIRE(mount::finalize_root(f.plan(writable), untouched).ok());
    CHECK(untouched.mounts.empty());
}

TEST_CASE("process identity: groups, then gid, then uid", "[user]") {
    FakeSyscalls sys;
    spec::User user;
    user.uid = 1000;
    user.gid = 100;
    user.additional_gids = {5, 6};
    REQUIRE(user::apply_process_identity(user, sys).ok());
    CHECK(sys.calls ==
          std::vector<std::string>{"setgroups 5 6", "setresgid 100", "setresuid 1000"});

    FakeSyscalls root_sys;
    REQUIRE(user::become_namespace_root(root_sys).ok());
    CHECK(root_sys.calls == std::vector<std::string>{"setresgid 0", "setresuid 0"});
}

TEST_CASE("uts: hostname and domainname only when set", "[uts]") {
    FakeSyscalls sys;
    REQUIRE(uts::set_names("", "", sys).ok());
    CHECK(sys.calls.empty());
    REQUIRE(uts::set_names("box", "example", sys).ok());
    CHECK(sys.calls == std::vector<std::string>{"sethostname box", "setdomainname example"});
}

TEST_CASE("rootfs: an idmapped bind is idmapped by the parent, then moved into place",
          "[mount][idmap]") {
    Fixture f;
    stdfs::create_directories(f.dir.path() + "/data");
    json config = config_with_mounts(json::array(
        {{{"destination", "/data"}, {"source", "data"}, {"options", {"rbind", "ridmap"}}},
         {{"destination", "/plain"}, {"source", "data"}, {"options", {"bind"}}}}));
    // A joined user namespace: the mount maps through it, opened by path (no child needed).
    config["linux"]["namespaces"].push_back({{"type", "user"}, {"path", "/proc/self/ns/user"}});
    config["root"]["readonly"] = false;
    Plan plan = f.plan(config);
    auto sources = mount::open_bind_sources(plan, f.sys);
    REQUIRE(sources.ok());
    REQUIRE(mount::idmap_bind_sources(plan, sources->fds, f.sys).ok());
    const std::string source = f.dir.path() + "/data";
    // Only the idmapped entry, recursively for ridmap, on the parent's clone of the source.
    std::vector<std::string> idmapped;
    std::copy_if(f.sys.calls.begin(), f.sys.calls.end(), std::back_inserter(idmapped),
                 [](const std::string& call) { return call.starts_with("mount_setattr_idmap"); });
    CHECK(idmapped == std::vector<std::string>{"mount_setattr_idmap " + source + " recursive"});
    REQUIRE(mount::prepare_rootfs(plan, sources->fds, f.sys).ok());
    CHECK(std::find(f.sys.calls.begin(), f.sys.calls.end(),
                    "move_mount " + source + " " + f.rootfs + "/data") != f.sys.calls.end());
}

TEST_CASE("rootfs: a source the kernel cannot idmap is named in the error", "[mount][idmap]") {
    Fixture f;
    stdfs::create_directories(f.dir.path() + "/data");
    json config = config_with_mounts(json::array(
        {{{"destination", "/data"}, {"source", "data"}, {"options", {"bind", "idmap"}}}}));
    config["linux"]["namespaces"].push_back({{"type", "user"}, {"path", "/proc/self/ns/user"}});
    Plan plan = f.plan(config);
    auto sources = mount::open_bind_sources(plan, f.sys);
    REQUIRE(sources.ok());
    f.sys.fail("mount_setattr_idmap", EINVAL);
    auto mapped = mount::idmap_bind_sources(plan, sources->fds, f.sys);
    REQUIRE_FALSE(mapped.ok());
    CHECK(mapped.error().message() ==
          "mounts[0] on /data: cannot idmap \"" + f.dir.path() +
              "/data\" (its filesystem does not support idmapped mounts): Invalid argument");
}

namespace {

// Two v1 hierarchies and the cgroup2 leftover of a hybrid host, as mountinfo lists them.
const char* kHybridCgroupMounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
const char* kHybridCgroupMemberships = "4:memory:/\n1:cpu:/\n0::/\n";

json cgroup_mount_config() {
    json mounts = default_mounts();
    mounts.push_back({{"destination", "/sys/fs/cgroup"},
                      {"type", "cgroup"},
                      {"source", "cgroup"},
                      {"options", {"nosuid", "noexec", "nodev", "relatime", "ro"}}});
    return config_with_mounts(mounts);
}

} // namespace

TEST_CASE("rootfs: the cgroup entry binds the directories create planned, in mountinfo's order",
          "[mount]") {
    RootlessAs as_root(false);
    Fixture f;
    Plan plan = f.plan(cgroup_mount_config());
    cgroup::Host host =
        cgroup::host_from(fs::parse_mountinfo(kHybridCgroupMounts), kHybridCgroupMemberships, "");
    REQUIRE(host.mounts_are_hierarchies);
    cgroup::Cgroup container = cgroup::Cgroup::for_path(host, "/c1");
    auto cgroup_binds = mount::planned_cgroup_binds(plan, host, container);
    REQUIRE(cgroup_binds.size() == 3);
    CHECK(cgroup_binds[0].name == "cpu");
    CHECK(cgroup_binds[0].source == "/sys/fs/cgroup/cpu/c1");
    CHECK(cgroup_binds[2].name == "unified");
    CHECK(cgroup_binds[2].source == "/sys/fs/cgroup/unified/c1");

    REQUIRE(prepare(plan, f.sys, cgroup_binds).ok());
    const std::string holder = f.rootfs + "/sys/fs/cgroup";
    std::vector<MountCall> binds;
    std::copy_if(f.sys.mounts.begin(), f.sys.mounts.end(), std::back_inserter(binds),
                 [](const MountCall& call) { return call.flags == (MS_BIND | MS_REC); });
    REQUIRE(binds.size() == 4); // the rootfs, then one per hierarchy
    CHECK(binds[1].source == "/sys/fs/cgroup/cpu/c1");
    CHECK(binds[1].target == holder + "/cpu");
    CHECK(binds[2].source == "/sys/fs/cgroup/memory/c1");
    CHECK(binds[3].source == "/sys/fs/cgroup/unified/c1");
    CHECK(binds[3].target == holder + "/unified");
    // The holding tmpfs is read-only at last, as the entry asks.
    const MountCall& last = f.sys.mounts.back();
    CHECK(last.target == holder);
    CHECK((last.flags & (MS_REMOUNT | MS_RDONLY)) == (MS_REMOUNT | MS_RDONLY));
}

TEST_CASE("rootfs: no planned cgroup binds where the init's own view may differ", "[mount]") {
    Fixture f;
    cgroup::Host host =
        cgroup::host_from(fs::parse_mountinfo(kHybridCgroupMounts), kHybridCgroupMemberships, "");
    cgroup::Cgroup container = cgroup::Cgroup::for_path(host, "/c1");
    Plan plan = f.plan(cgroup_mount_config());
    CHECK_FALSE(mount::planned_cgroup_binds(plan, host, container).empty());

    SECTION("a cgroup namespace mounts each hierarchy afresh") {
        json config = cgroup_mount_config();
        config["linux"]["namespaces"].push_back({{"type", "cgroup"}});
        CHECK(mount::planned_cgroup_binds(f.plan(config), host, container).empty());
    }
    SECTION("no cgroups of its own, or not in every hierarchy") {
        CHECK(mount::planned_cgroup_binds(plan, host, cgroup::Cgroup()).empty());
        auto paths = container.paths();
        paths.erase("memory");
        CHECK(mount::planned_cgroup_binds(plan, host, cgroup::Cgroup::from_paths(paths)).empty());
    }
    SECTION("a cgroup mount that is no hierarchy of the host's (hidden, or a second one)") {
        std::string hidden =
            cat(kHybridCgroupMounts,
                "50 41 0:60 / /sys/fs/cgroup/unified rw,relatime - tmpfs tmpfs rw\n");
        cgroup::Host covered =
            cgroup::host_from(fs::parse_mountinfo(hidden), kHybridCgroupMemberships, "");
        CHECK_FALSE(covered.mounts_are_hierarchies);
        CHECK(mount::planned_cgroup_binds(plan, covered, container).empty());
        std::string twice = cat(kHybridCgroupMounts,
                                "51 31 0:29 / /sys/fs/cgroup/cpu2 rw - cgroup cgroup rw,cpu\n");
        CHECK_FALSE(cgroup::host_from(fs::parse_mountinfo(twice), kHybridCgroupMemberships, "")
                        .mounts_are_hierarchies);
    }
    SECTION("a unified host: one cgroup2 mount, not a tmpfs of binds") {
        cgroup::Host unified = cgroup::host_from(
            fs::parse_mountinfo("30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"), "0::/\n",
            "memory\n");
        CHECK(mount::planned_cgroup_binds(plan, unified, cgroup::Cgroup::for_path(unified, "/c1"))
                  .empty());
    }
}
