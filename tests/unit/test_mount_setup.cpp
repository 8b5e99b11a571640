// The mount namespace steps against a recording fake: which mounts, in which order, with
// which flags, onto which paths of a real (temporary, unprivileged) rootfs.
// This file: the rootfs, its devices and its mounts[]; the rest in
// test_mount_setup_namespace.cpp.
#include "mount_setup_fixture.hpp"

#include <catch2/catch.hpp>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::MountCall;
using nlohmann::json;
namespace stdfs = std::filesystem;
using namespace mount_setup_test;

TEST_CASE("rootfs: propagation first, then the rootfs bind, then mounts[] in order", "[mount]") {
    Fixture f;
    Plan plan = f.plan(config_with_mounts(default_mounts()));
    auto root = prepare(plan, f.sys);
    REQUIRE(root.ok());

    REQUIRE(f.sys.mounts.size() == 5);
    const MountCall& propagation = f.sys.mounts[0];
    CHECK(propagation.target == "/");
    CHECK(propagation.flags == (MS_PRIVATE | MS_REC));

    const MountCall& bind = f.sys.mounts[1];
    CHECK(bind.source == f.rootfs);
    CHECK(bind.target == f.rootfs);
    CHECK(bind.flags == (MS_BIND | MS_REC));

    CHECK(f.sys.mounts[2].target == f.rootfs + "/proc");
    CHECK(f.sys.mounts[2].fs_type == "proc");
    CHECK(f.sys.mounts[2].flags == 0);

    CHECK(f.sys.mounts[3].target == f.rootfs + "/dev");
    CHECK(f.sys.mounts[3].flags == (MS_NOSUID | MS_STRICTATIME));
    CHECK(f.sys.mounts[3].data == "mode=755,size=65536k");

    CHECK(f.sys.mounts[4].target == f.rootfs + "/dev/pts");
    CHECK(f.sys.mounts[4].fs_type == "devpts");
    CHECK(f.sys.mounts[4].data == "newinstance,ptmxmode=0666");

    // The cwd was created inside the rootfs.
    CHECK(stdfs::is_directory(f.rootfs + "/work/dir"));
    CHECK(*fs::fd_target(root->get()) == f.rootfs);
}
TEST_CASE("rootfs: default devices and /dev links", "[mount]") {
    RootlessAs as_root(false);
    Fixture f;
    json config = config_with_mounts(default_mounts());
    config["linux"]["devices"] = {{{"path", "/dev/fuse"},
                                   {"type", "c"},
                                   {"major", 10},
                                   {"minor", 229},
                                   {"fileMode", 0600},
                                   {"uid", 7},
                                   {"gid", 8}}};
    Plan plan = f.plan(config);
    REQUIRE(prepare(plan, f.sys).ok());

    auto has_call = [&](const std::string& call) {
        return std::find(f.sys.calls.begin(), f.sys.calls.end(), call) != f.sys.calls.end();
    };
    for (const char* name : {"null", "zero", "full", "random", "urandom", "tty", "fuse"}) {
        CHECK(has_call("mknod " + f.rootfs + "/dev/" + name));
    }
    CHECK(has_call("chown " + f.rootfs + "/dev/fuse 7:8"));
    CHECK(has_call("chown " + f.rootfs + "/dev/null 0:0"));
    CHECK(stdfs::read_symlink(f.rootfs + "/dev/ptmx") == "pts/ptmx");
    CHECK(stdfs::read_symlink(f.rootfs + "/dev/fd") == "/proc/self/fd");
    CHECK(stdfs::read_symlink(f.rootfs + "/dev/stdin") == "/proc/self/fd/0");
    CHECK(stdfs::read_symlink(f.rootfs + "/dev/stderr") == "/proc/self/fd/2");
}

TEST_CASE("rootfs: a /dev/ptmx in linux.devices stays the link to the devpts instance", "[mount]") {
    // runc's dev.bats "redundant default /dev/ptmx": in a user namespace a host node would
    // be bound there, a mount point the link could not replace.
    json config = config_with_mounts(default_mounts());
    config["linux"]["devices"] = {
        {{"path", "/dev/ptmx"}, {"type", "c"}, {"major", 5}, {"minor", 2}}};
    for (bool in_user_namespace : {false, true}) {
        if (in_user_namespace) {
            config["linux"]["namespaces"].push_back({{"type", "user"}});
            config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
            config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
        }
        Fixture g;
        Plan plan = g.plan(config);
        REQUIRE(prepare(plan, g.sys).ok());
        for (const std::string& call : g.sys.calls) {
            if (call.find("/dev/ptmx") != std::string::npos) {
                CHECK(call.starts_with("symlink")); // only the link, no node, no chown
            }
        }
        for (const MountCall& mount : g.sys.mounts) {
            CHECK(mount.target.find("/dev/ptmx") == std::string::npos);
        }
        CHECK(stdfs::read_symlink(g.rootfs + "/dev/ptmx") == "pts/ptmx");
    }
}

TEST_CASE("rootfs: a rootless caller binds the host's device nodes, without mknod", "[mount]") {
    // Rootless podman runs the runtime as root of its own user namespace; the container has
    // no user namespace of its own, and mknod would fail with EPERM there.
    RootlessAs rootless(true);
    Fixture f;
    Plan plan = f.plan(config_with_mounts(default_mounts()));
    REQUIRE_FALSE(plan.has_own(spec::NamespaceType::user));
    REQUIRE(prepare(plan, f.sys).ok());

    CHECK(std::none_of(f.sys.calls.begin(), f.sys.calls.end(),
                       [](const std::string& call) { return call.rfind("mknod ", 0) == 0; }));
    for (const char* name : {"null", "zero", "full", "random", "urandom", "tty"}) {
        INFO(name);
        std::string target = f.rootfs + "/dev/" + name;
        auto bind = std::find_if(f.sys.mounts.begin(), f.sys.mounts.end(),
                                 [&](const MountCall& call) { return call.target == target; });
        REQUIRE(bind != f.sys.mounts.end());
        CHECK(bind->source == std::string("/dev/") + name);
        CHECK(bind->flags == MS_BIND);
        CHECK(stdfs::is_regular_file(target)); // the empty file the node is bound onto
    }
}

TEST_CASE("rootfs: an existing node that is not the device is an error", "[mount]") {
    RootlessAs as_root(false);
    Fixture f;
    stdfs::create_directories(f.rootfs + "/dev");
    { std::ofstream(f.rootfs + "/dev/null") << "not a device"; }
    // No /dev tmpfs: devices go into the rootfs's own /dev, where the regular file sits;
    // this fake answers mknod like the kernel does for an existing name.
    struct ExistingSys : FakeSyscalls {
        Status mknodat(int dir_fd, const std::string& name, mode_t /*mode*/,
                       dev_t /*device*/) override {
            if (::faccessat(dir_fd, name.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
                return Error(EEXIST, "mknod " + name + ": File exists");
            }
            return {};
        }
    } sys;
    Plan plan = f.plan(config_with_mounts(json::array()));
    auto root = prepare(plan, sys);
    REQUIRE_FALSE(root.ok());
    CHECK(root.error().message() ==
          "devices: /dev/null: /dev/null exists and is not the requested device");
}

TEST_CASE("rootfs: no /dev mount: a node or /dev/console planted as a symlink is refused, "
          "its target never covered (CVE-2025-31133, CVE-2025-52565)",
          "[mount]") {
    // No /dev tmpfs (crun's CVE-2026-88264/88265 setting): the rootfs's own /dev is used.
    // Its links lead to a procfs-like file of the container; in a user namespace (rootless
    // here) the host's node would be bound onto whatever the name resolves to.
    RootlessAs rootless(true);
    Fixture f;
    stdfs::create_directories(f.rootfs + "/dev");
    stdfs::create_directories(f.rootfs + "/proc/sys/kernel");
    { std::ofstream(f.rootfs + "/proc/sys/kernel/core_pattern") << "core\n"; }
    const std::string name = GENERATE(std::string("null"), std::string("console"));
    INFO("/dev/" << name);
    stdfs::create_symlink("/proc/sys/kernel/core_pattern", f.rootfs + "/dev/" + name);
    json config = config_with_mounts(json::array());
    config["process"]["terminal"] = true;
    Plan plan = f.plan(config);
    auto root = prepare(plan, f.sys);
    REQUIRE_FALSE(root.ok());
    CHECK(root.error().message().ends_with("/dev/" + name +
                                           " is a symlink in the rootfs: refused, never followed"));
    for (const MountCall& mount : f.sys.mounts) {
        CHECK(mount.target.find("core_pattern") == std::string::npos);
    }
    CHECK(stdfs::is_symlink(f.rootfs + "/dev/" + name));
}

TEST_CASE("rootfs: no /dev mount and /dev a symlink out: every node lands inside the rootfs",
          "[mount]") {
    for (bool rootless_caller : {false, true}) {
        INFO("rootless: " << rootless_caller);
        RootlessAs as(rootless_caller);
        Fixture f;
        const std::string outside = f.dir.path() + "/outside";
        stdfs::create_directories(outside);
        stdfs::create_symlink("../../../../../../outside", f.rootfs + "/dev");
        json config = config_with_mounts(json::array());
        config["process"]["terminal"] = true;
        Plan plan = f.plan(config);
        REQUIRE(prepare(plan, f.sys).ok());
        CHECK(stdfs::is_empty(outside));
        // The link climbs no higher than the rootfs: /outside inside it holds /dev.
        CHECK(stdfs::is_regular_file(f.rootfs + "/outside/console"));
        for (const std::string& call : f.sys.calls) {
            CHECK(call.find(outside) == std::string::npos);
        }
    }
}

TEST_CASE("rootfs: a /proc that is a symlink is refused", "[mount]") {
    Fixture f;
    stdfs::create_directories(f.rootfs + "/elsewhere");
    stdfs::create_symlink("elsewhere", f.rootfs + "/proc");
    Plan plan = f.plan(config_with_mounts(default_mounts()));
    auto root = prepare(plan, f.sys);
    REQUIRE_FALSE(root.ok());
    CHECK(root.error().message() == "mounts[0] on /proc: \"/proc\" cannot be mounted because it "
                                    "is not a directory: proc must be mounted on ordinary "
                                    "directory");
}

TEST_CASE("rootfs: a /sys symlink to nowhere is refused, and nothing is made for it", "[mount]") {
    // runc's mask.bats: `ln -s /symlink rootfs/sys`. The link's target must not be created.
    Fixture f;
    stdfs::create_symlink("/symlink", f.rootfs + "/sys");
    Plan plan = f.plan(config_with_mounts(
        json::array({{{"destination", "/sys"}, {"type", "sysfs"}, {"source", "sysfs"}}})));
    auto root = prepare(plan, f.sys);
    REQUIRE_FALSE(root.ok());
    CHECK(root.error().message() == "mounts[0] on /sys: \"/sys\" cannot be mounted because it "
                                    "is not a directory: sysfs must be mounted on ordinary "
                                    "directory");
    CHECK_FALSE(stdfs::exists(f.rootfs + "/symlink"));
}

TEST_CASE("rootfs: a symlinked mount destination cannot lead out of the rootfs", "[mount]") {
    Fixture f;
    std::string outside = f.dir.path() + "/outside";
    stdfs::create_directories(outside);
    stdfs::create_symlink("../../../../outside", f.rootfs + "/evil");
    stdfs::create_directories(f.dir.path() + "/data");
    Plan plan = f.plan(config_with_mounts(json::array(
        {{{"destination", "/evil/target"}, {"source", "data"}, {"options", {"rbind", "ro"}}}})));
    REQUIRE(prepare(plan, f.sys).ok());

    CHECK(stdfs::is_empty(outside));
    // The bind went to <rootfs>/outside/target, and the read-only remount followed it.
    REQUIRE(f.sys.mounts.size() == 5);
    CHECK(f.sys.mounts[2].source == f.dir.path() + "/data");
    CHECK(f.sys.mounts[2].target == f.rootfs + "/outside/target");
    // The source was cloned by the parent (rbind: with its submounts) and moved into place.
    CHECK(f.sys.mounts[2].flags == 0);
    CHECK(std::find(f.sys.calls.begin(), f.sys.calls.end(),
                    "open_tree " + f.dir.path() + "/data recursive") != f.sys.calls.end());
    CHECK(f.sys.mounts[3].target == f.rootfs + "/outside/target");
    CHECK(f.sys.mounts[3].flags == (MS_BIND | MS_REMOUNT | MS_RDONLY));
    // No propagation word: the bind gets the one "/" got.
    CHECK(f.sys.mounts[4].target == f.rootfs + "/outside/target");
    CHECK(f.sys.mounts[4].flags == (MS_PRIVATE | MS_REC));
}

// runc 1.3: a bind's remount sets exactly its options (the source's nosuid and nodev are not
// inherited once an option is given); test_mount_entry_rules.cpp has the locked cases.
TEST_CASE("rootfs: a bind remount applies exactly the options given", "[mount]") {
    Fixture f;
    f.sys.statvfs_flags = ST_NOSUID | ST_NODEV | ST_RELATIME;
    { std::ofstream(f.dir.path() + "/hosts") << "127.0.0.1 localhost\n"; }
    Plan plan = f.plan(config_with_mounts(json::array({{{"destination", "/etc/hosts"},
                                                        {"source", "hosts"},
                                                        {"options", {"bind", "ro", "noatime"}}}})));
    REQUIRE(prepare(plan, f.sys).ok());
    // A file source gets a file mount point.
    CHECK(stdfs::is_regular_file(f.rootfs + "/etc/hosts"));
    REQUIRE(f.sys.mounts.size() == 5);
    CHECK(f.sys.mounts[2].flags == 0); // move_mount of the parent's open_tree clone
    CHECK(std::find(f.sys.calls.begin(), f.sys.calls.end(),
                    "open_tree " + f.dir.path() + "/hosts") != f.sys.calls.end());
    // noatime replaces the inherited relatime; nosuid and nodev, not asked for, go.
    CHECK(f.sys.mounts[3].flags == (MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOATIME));
}

TEST_CASE("rootfs: a read-only /dev is made read-only after its submounts and devices", "[mount]") {
    // runc's mounts.bats "ro /dev mount": /dev/pts, /dev/shm and the device nodes are made
    // inside it first; runc, too, remounts /dev read-only at the end.
    Fixture f;
    json mounts = default_mounts();
    mounts[1]["options"].push_back("ro");
    Plan plan = f.plan(config_with_mounts(mounts));
    REQUIRE(plan.setup_dev);
    REQUIRE(prepare(plan, f.sys).ok());
    // /dev mounted writable, then /dev/pts, then the devices, then /dev made read-only.
    size_t dev_mount = 0;
    size_t pts_mount = 0;
    size_t remount = 0;
    for (size_t i = 0; i < f.sys.mounts.size(); ++i) {
        const MountCall& call = f.sys.mounts[i];
        if (call.target == f.rootfs + "/dev" && call.fs_type == "tmpfs") {
            dev_mount = i;
            CHECK((call.flags & MS_RDONLY) == 0);
        } else if (call.target == f.rootfs + "/dev/pts") {
            pts_mount = i;
        } else if (call.target == f.rootfs + "/dev" && (call.flags & MS_REMOUNT) != 0) {
            remount = i;
            CHECK(call.flags == (MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_STRICTATIME));
        }
    }
    CHECK(dev_mount < pts_mount);
    CHECK(pts_mount < remount);
    auto first_device = std::find_if(f.sys.calls.begin(), f.sys.calls.end(),
                                     [](auto& call) { return call.starts_with("mknod "); });
    auto remount_call =
        std::find(f.sys.calls.rbegin(), f.sys.calls.rend(), "mount " + f.rootfs + "/dev");
    REQUIRE(first_device != f.sys.calls.end());
    CHECK(first_device < remount_call.base());
}

TEST_CASE("rootfs: rro makes the bind read-only recursively, after its submounts", "[mount]") {
    Fixture f;
    stdfs::create_directories(f.dir.path() + "/data/sub");
    Plan plan = f.plan(config_with_mounts(
        json::array({{{"destination", "/mnt"}, {"source", "data"}, {"options", {"rbind", "rro"}}},
                     {{"destination", "/mnt/sub/tmp"}, {"type", "tmpfs"}, {"source", "tmpfs"}}})));
    REQUIRE(prepare(plan, f.sys).ok());
    std::string setattr = "mount_setattr " + f.rootfs + "/mnt recursive set " +
                          std::to_string(MOUNT_ATTR_RDONLY) + " clear 0";
    auto attr = std::find(f.sys.calls.begin(), f.sys.calls.end(), setattr);
    auto tmpfs =
        std::find(f.sys.calls.begin(), f.sys.calls.end(), "mount " + f.rootfs + "/mnt/sub/tmp");
    REQUIRE(attr != f.sys.calls.end());
    REQUIRE(tmpfs != f.sys.calls.end());
    CHECK(tmpfs < attr);
}
