// The mount namespace steps against a recording fake: which mounts, in which order, with
// which flags, onto which paths of a real (temporary, unprivileged) rootfs.
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
#include <sys/stat.h>
#include <sys/statvfs.h>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::MountCall;
using minirun::testing::TempDir;
using nlohmann::json;
namespace stdfs = std::filesystem;

namespace {

json config_with_mounts(json mounts) {
    return json{
        {"ociVersion", "1.0.2"},
        {"root", {{"path", "rootfs"}, {"readonly", true}}},
        {"process", {{"args", {"sh"}}, {"cwd", "/work/dir"}}},
        {"mounts", std::move(mounts)},
        {"linux", {{"namespaces", json::array({{{"type", "mount"}}})}}},
    };
}

json default_mounts() {
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
Result<UniqueFd> prepare(const Plan& plan, FakeSyscalls& sys) {
    auto sources = mount::open_bind_sources(plan, sys);
    if (!sources) {
        return sources.error();
    }
    return mount::prepare_rootfs(plan, *sources, sys);
}

} // namespace

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

// Sets what rootless::active() answers for one test, and puts detection back afterwards.
struct RootlessAs {
    explicit RootlessAs(bool rootless) { rootless::override_detection(rootless); }
    ~RootlessAs() { rootless::override_detection(std::nullopt); }
    RootlessAs(const RootlessAs&) = delete;
    RootlessAs& operator=(const RootlessAs&) = delete;
};

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

TEST_CASE("rootfs: a bind remount keeps the flags the kernel locks", "[mount]") {
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
    // noatime replaces the inherited relatime; nosuid and nodev are kept.
    CHECK(f.sys.mounts[3].flags ==
          (MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOATIME | MS_NOSUID | MS_NODEV));
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
    spec::Spec spec;
    REQUIRE(uts::set_names(spec, sys).ok());
    CHECK(sys.calls.empty());
    spec.hostname = "box";
    spec.domainname = "example";
    REQUIRE(uts::set_names(spec, sys).ok());
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
    REQUIRE(mount::idmap_bind_sources(plan, *sources, f.sys).ok());
    const std::string source = f.dir.path() + "/data";
    // Only the idmapped entry, recursively for ridmap, on the parent's clone of the source.
    std::vector<std::string> idmapped;
    std::copy_if(f.sys.calls.begin(), f.sys.calls.end(), std::back_inserter(idmapped),
                 [](const std::string& call) { return call.starts_with("mount_setattr_idmap"); });
    CHECK(idmapped == std::vector<std::string>{"mount_setattr_idmap " + source + " recursive"});
    REQUIRE(mount::prepare_rootfs(plan, *sources, f.sys).ok());
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
    auto mapped = mount::idmap_bind_sources(plan, *sources, f.sys);
    REQUIRE_FALSE(mapped.ok());
    CHECK(mapped.error().message() ==
          "mounts[0] on /data: cannot idmap \"" + f.dir.path() +
              "/data\" (its filesystem does not support idmapped mounts): Invalid argument");
}

namespace {

// A bind of <bundle>/data on /data idmapped with mappings of its own, in a container with
// a new user namespace.
Plan own_idmap_plan(Fixture& f, const json& uid_mappings, const json& gid_mappings) {
    stdfs::create_directories(f.dir.path() + "/data");
    json config = config_with_mounts(json::array({{{"destination", "/data"},
                                                   {"source", "data"},
                                                   {"options", {"bind", "idmap"}},
                                                   {"uidMappings", uid_mappings},
                                                   {"gidMappings", gid_mappings}}}));
    config["linux"]["namespaces"].push_back({{"type", "user"}});
    config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    return f.plan(config);
}

} // namespace

TEST_CASE("rootfs: an idmapped bind with mappings of its own gets a user namespace made for it",
          "[mount][idmap]") {
    Fixture f;
    Plan plan = own_idmap_plan(f, {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}},
                               {{{"containerID", 0}, {"hostID", 200000}, {"size", 10}}});
    auto sources = mount::open_bind_sources(plan, f.sys);
    REQUIRE(sources.ok());
    auto mapped = mount::idmap_bind_sources(plan, *sources, f.sys);
    REQUIRE(mapped.ok());
    // The holder's pid is in the map writes' paths: compare from the clone on.
    auto clone = std::find(f.sys.calls.begin(), f.sys.calls.end(), "clone_userns_holder");
    REQUIRE(clone != f.sys.calls.end());
    std::vector<std::string> after(clone + 1, f.sys.calls.end());
    REQUIRE(after.size() == 3);
    CHECK_THAT(after[0], Catch::StartsWith("write_proc /proc/") &&
                             Catch::EndsWith("/uid_map 0 100000 65536"));
    CHECK_THAT(after[1],
               Catch::StartsWith("write_proc /proc/") && Catch::EndsWith("/gid_map 0 200000 10"));
    CHECK(after[2] == "mount_setattr_idmap " + f.dir.path() + "/data");
}

TEST_CASE("rootfs: an idmap namespace that cannot be made is named in the error",
          "[mount][idmap]") {
    Fixture f;
    json one = {{{"containerID", 0}, {"hostID", 100000}, {"size", 1}}};
    Plan plan = own_idmap_plan(f, one, one);
    auto sources = mount::open_bind_sources(plan, f.sys);
    REQUIRE(sources.ok());
    SECTION("the clone") {
        f.sys.fail("clone_userns_holder", EAGAIN);
        auto mapped = mount::idmap_bind_sources(plan, *sources, f.sys);
        REQUIRE_FALSE(mapped.ok());
        CHECK(mapped.error().errno_value() == EAGAIN);
        CHECK_THAT(mapped.error().message(), Catch::StartsWith("mounts[0] on /data: "));
    }
    SECTION("the uid map") {
        f.sys.fail("write_proc", EPERM);
        auto mapped = mount::idmap_bind_sources(plan, *sources, f.sys);
        REQUIRE_FALSE(mapped.ok());
        CHECK(mapped.error().errno_value() == EPERM);
        CHECK_THAT(mapped.error().message(),
                   Catch::StartsWith("mounts[0] on /data: uidMappings: "));
    }
}

TEST_CASE("rootfs: tmpcopyup copies the covered directory's entries through the seam", "[mount]") {
    Fixture f;
    const std::string cache = f.rootfs + "/cache";
    stdfs::create_directories(cache + "/sub");
    ::chmod((cache + "/sub").c_str(), 0750);
    struct stat sub {};
    REQUIRE(::stat((cache + "/sub").c_str(), &sub) == 0);
    json config = config_with_mounts(json::array({{{"destination", "/cache"},
                                                   {"type", "tmpfs"},
                                                   {"source", "tmpfs"},
                                                   {"options", {"tmpcopyup"}}}}));
    config["root"]["readonly"] = false;
    Plan plan = f.plan(config);
    SECTION("a directory: made, given its owner, then its mode") {
        REQUIRE(prepare(plan, f.sys).ok());
        auto mount_call = std::find(f.sys.calls.begin(), f.sys.calls.end(), "mount " + cache);
        REQUIRE(mount_call != f.sys.calls.end());
        std::vector<std::string> copy;
        std::copy_if(
            mount_call + 1, f.sys.calls.end(), std::back_inserter(copy),
            [&](const std::string& call) { return call.find(cache + "/") != std::string::npos; });
        CHECK(copy ==
              std::vector<std::string>{"mkdir " + cache + "/sub 448",
                                       cat("chown ", cache, "/sub ", sub.st_uid, ":", sub.st_gid),
                                       "chmod " + cache + "/sub 488"});
    }
    SECTION("a failed copy is the mount's error") {
        f.sys.fail("mkdir", EPERM);
        auto prepared = prepare(plan, f.sys);
        REQUIRE_FALSE(prepared.ok());
        CHECK(prepared.error().errno_value() == EPERM);
        CHECK_THAT(prepared.error().message(),
                   Catch::Contains("tmpcopyup: mkdir: injected failure"));
    }
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
    plan.cgroup_binds = mount::planned_cgroup_binds(plan, host, container);
    REQUIRE(plan.cgroup_binds.size() == 3);
    CHECK(plan.cgroup_binds[0].name == "cpu");
    CHECK(plan.cgroup_binds[0].source == "/sys/fs/cgroup/cpu/c1");
    CHECK(plan.cgroup_binds[2].name == "unified");
    CHECK(plan.cgroup_binds[2].source == "/sys/fs/cgroup/unified/c1");

    REQUIRE(prepare(plan, f.sys).ok());
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
