// runc 1.3's rules for single mounts[] entries, seen from inside the container and from the
// host: a tmpfs takes the mode of the directory it covers; a bind's options set and clear
// its flags on the remount, keeping the flags the kernel locks; bind sources inside the
// rootfs are the mounts that earlier entries made.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <vector>

using namespace it;

namespace {

nlohmann::json tmpfs_at(const std::string& destination, const std::vector<std::string>& options) {
    return {
        {"destination", destination}, {"type", "tmpfs"}, {"source", "tmpfs"}, {"options", options}};
}

mode_t mode_of(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? info.st_mode & 07777 : 0;
}

} // namespace

// runc's mounts.bats "tmpfs mount mode= inherit" / "explicit mode=" / "mode=1777 default"
// (runc issue 4971).
TEST_CASE("tmpfs: takes the covered directory's mode unless mode= is given", "[mount][tmpfs]") {
    TempBundle bundle("tmpfs-mode");
    const std::string rootfs = bundle.copy_rootfs();
    REQUIRE(::mkdir((rootfs + "/inherit").c_str(), 0700) == 0);
    REQUIRE(::mkdir((rootfs + "/explicit").c_str(), 0700) == 0);
    REQUIRE(::chmod((rootfs + "/inherit").c_str(), 0710) == 0);
    REQUIRE(::chmod((rootfs + "/explicit").c_str(), 0710) == 0);
    bundle.config["mounts"].push_back(tmpfs_at("/inherit", {"rw", "nodev", "nosuid"}));
    bundle.config["mounts"].push_back(tmpfs_at("/explicit", {"nodev", "mode=1500"}));
    bundle.config["mounts"].push_back(tmpfs_at("/new/foo", {"nosuid"}));
    bundle.set_shell("stat -c '%n %a' /inherit /explicit /new/foo; grep ' /new/foo ' /proc/mounts");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.out, "/inherit 710\n"));
    CHECK(contains(result.out, "/explicit 1500\n"));
    CHECK(contains(result.out, "/new/foo 1777\n"));
    CHECK_FALSE(std::regex_search(result.out, std::regex("/new/foo tmpfs [^ ]*mode=")));
    // The directories themselves are left as they were.
    CHECK(mode_of(rootfs + "/inherit") == 0710);
    CHECK(mode_of(rootfs + "/explicit") == 0710);
    CHECK(mode_of(rootfs + "/new/foo") == 0755);
    check_no_leftovers(bundle);
}

namespace {

// A bind source as mounts_sshfs.bats makes one without sshfs: a tmpfs on the host whose
// superblock has no flag set, the flags of its mount set by `mount --bind -o remount,...`.
class FlaggedSource {
public:
    explicit FlaggedSource(const std::string& flags) {
        REQUIRE(run({"/bin/mount", "-t", "tmpfs", "-o", "rw,suid,dev,exec,diratime,strictatime",
                     "tmpfs", dir_.path()})
                    .exit_code == 0);
        mounted_ = true;
        REQUIRE(
            run({"/bin/mount", "--bind", "-o", "remount,diratime,atime,strictatime", dir_.path()})
                .exit_code == 0);
        auto remount = run({"/bin/mount", "--bind", "-o", "remount," + flags, dir_.path()});
        INFO(remount.describe());
        REQUIRE(remount.exit_code == 0);
    }
    FlaggedSource(const FlaggedSource&) = delete;
    FlaggedSource& operator=(const FlaggedSource&) = delete;
    ~FlaggedSource() {
        if (mounted_) {
            ::umount2(dir_.path().c_str(), MNT_DETACH);
        }
    }
    [[nodiscard]] const std::string& path() const { return dir_.path(); }

private:
    TempDir dir_{"minirun-it-bind-flags"};
    bool mounted_ = false;
};

// The container's /mnt, a bind of `source` with `options`: its mount options, as words.
RunResult bind_flags_inside(TempBundle& bundle, const FlaggedSource& source,
                            const std::vector<std::string>& options) {
    bundle.config["mounts"].push_back({{"destination", "/mnt"},
                                       {"source", source.path()},
                                       {"type", "bind"},
                                       {"options", options}});
    bundle.set_args({"awk", "$2 == \"/mnt\" { print $4 }", "/proc/self/mounts"});
    return bundle.run();
}

bool has_word(const std::string& flags, const std::string& word) {
    for (const std::string& each : split_words(std::regex_replace(flags, std::regex(","), " "))) {
        if (each == word) {
            return true;
        }
    }
    return false;
}

} // namespace

// mounts_sshfs.bats: without a user namespace the options are the bind's flags, set and
// cleared; a bind without options keeps its source's.
TEST_CASE("bind flags: the options set and clear the bind's flags", "[mount][bind]") {
    SECTION("no option: the source's flags") {
        FlaggedSource source("ro,noexec,nodiratime");
        TempBundle bundle("bind-flags-none");
        auto result = bind_flags_inside(bundle, source, {"bind"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(has_word(result.out, "ro"));
        CHECK(has_word(result.out, "noexec"));
        CHECK(has_word(result.out, "nodiratime"));
        check_no_leftovers(bundle);
    }
    SECTION("a clearing option: rw, and only what was asked for") {
        FlaggedSource source("ro,noexec,nodiratime");
        TempBundle bundle("bind-flags-dev");
        auto result = bind_flags_inside(bundle, source, {"bind", "dev"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(has_word(result.out, "rw"));
        CHECK_FALSE(has_word(result.out, "noexec"));
        CHECK(has_word(result.out, "nodiratime")); // atime kept unless one is asked for
        check_no_leftovers(bundle);
    }
    SECTION("dev,suid,exec clear the source's nodev,nosuid,noexec") {
        FlaggedSource source("nosuid,nodev,noexec,noatime");
        TempBundle bundle("bind-flags-clear");
        auto result = bind_flags_inside(bundle, source, {"bind", "dev", "suid", "exec", "atime"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK_FALSE(has_word(result.out, "nosuid"));
        CHECK_FALSE(has_word(result.out, "nodev"));
        CHECK_FALSE(has_word(result.out, "noexec"));
        CHECK(has_word(result.out, "noatime"));
        check_no_leftovers(bundle);
    }
}

// mounts_sshfs.bats with a user namespace: the source's flags are locked there (runc binds
// from the copy the container's mount namespace has), so what is not asked for is kept, and
// clearing one is refused.
TEST_CASE("bind flags: in a user namespace the source's locked flags stay",
          "[mount][bind][userns]") {
    SECTION("implied rw keeps ro") {
        FlaggedSource source("ro");
        TempBundle bundle("bind-flags-userns");
        bundle.copy_rootfs({{100000, 100000}});
        bundle.add_user_namespace();
        auto result = bind_flags_inside(bundle, source, {"bind", "nosuid", "nodev", "rprivate"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(has_word(result.out, "ro"));
        CHECK(has_word(result.out, "nosuid"));
        CHECK(has_word(result.out, "nodev"));
        check_no_leftovers(bundle);
    }
    SECTION("an explicit rw is refused") {
        FlaggedSource source("ro");
        TempBundle bundle("bind-flags-userns-rw");
        bundle.copy_rootfs({{100000, 100000}});
        bundle.add_user_namespace();
        auto result = bind_flags_inside(bundle, source, {"bind", "rw", "nosuid", "rprivate"});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(contains(result.err, "cannot clear locked flags ro: operation not permitted"));
        check_no_leftovers(bundle);
    }
}

namespace {

nlohmann::json rbind(const std::string& source, const std::string& destination, bool idmap) {
    nlohmann::json mount = {{"source", source},
                            {"destination", destination},
                            {"type", "bind"},
                            {"options", {"rbind", "rprivate"}}};
    if (idmap) {
        const nlohmann::json mapping = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
        mount["options"].push_back("idmap");
        mount["uidMappings"] = mapping;
        mount["gidMappings"] = mapping;
    }
    return mount;
}

// runc's mounts.bats test_mount_order: a tree of binds, then binds whose sources are in the
// container's rootfs, made of the binds before them, then the whole tree bound again.
void check_mount_order(bool userns, bool idmap) {
    TempBundle bundle("mount-order");
    const std::string rootfs =
        userns ? bundle.copy_rootfs({{100000, 100000}}) : bundle.copy_rootfs();
    if (userns) {
        bundle.add_user_namespace();
    }
    const std::string src = bundle.dir() + "/bind-src";
    for (const std::string sub : {"a/x", "b/y", "c/z"}) {
        REQUIRE(run({"/bin/mkdir", "-p", src + "/" + sub}).exit_code == 0);
        write_text(src + "/" + sub + "/file", sub + "\n");
        const std::string top = sub.substr(0, 1);
        REQUIRE(::symlink(top.c_str(), (src + "/sym-" + top).c_str()) == 0);
    }
    // Out of reach of the container's root: the parent must open these.
    REQUIRE(::chmod(src.c_str(), 0750) == 0);
    REQUIRE(::mkdir((rootfs + "/final").c_str(), 0755) == 0);
    auto& mounts = bundle.config["mounts"];
    mounts.push_back(rbind(src + "/a", "/mnt", false));
    mounts.push_back(rbind(src + "/sym-b", "/mnt/x", false));
    mounts.push_back(rbind(src + "/c", "/mnt/x/y", false));
    mounts.push_back(rbind(src + "/sym-a", "/mnt/x/y/z", false));
    mounts.push_back(rbind(rootfs + "/mnt/x", rootfs + "/mnt/x/y/z/x", idmap));
    mounts.push_back(rbind(rootfs + "/mnt/x/y", rootfs + "/mnt/x/y/z", idmap));
    mounts.push_back(rbind(rootfs + "/mnt", rootfs + "/final", idmap));
    bundle.set_args({"cat", "/final/x/y/z/z/x/y/z/x/file"});
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(result.out == "a/x\n"); // the last file is a/x's: every mount in order
    // Nothing of it on the host: the rootfs's own directories are empty.
    CHECK(run({"/bin/ls", "-A", rootfs + "/mnt", rootfs + "/final"}).out ==
          rootfs + "/final:\n\n" + rootfs + "/mnt:\n");
    check_no_leftovers(bundle);
}

} // namespace

TEST_CASE("mount order: a source in the rootfs is what earlier entries mounted there",
          "[mount][bind]") {
    SECTION("without a user namespace") {
        check_mount_order(false, false);
    }
    SECTION("with a user namespace") {
        check_mount_order(true, false);
    }
    SECTION("idmapped") {
        check_mount_order(false, true);
    }
    SECTION("idmapped, with a user namespace") {
        check_mount_order(true, true);
    }
}

// A source given through a symlink inside the rootfs is resolved inside it, never on the
// host: "$rootfs/etc-link/x" with etc-link -> /etc is the rootfs's /etc/x.
TEST_CASE("mount order: a source in the rootfs cannot follow a symlink out of it",
          "[mount][bind]") {
    TempBundle bundle("mount-source-link");
    const std::string rootfs = bundle.copy_rootfs();
    REQUIRE(::symlink("/etc", (rootfs + "/etc-link").c_str()) == 0);
    write_text(rootfs + "/etc/it-inside", "rootfs-copy\n");
    bundle.config["mounts"].push_back(rbind(rootfs + "/etc-link/it-inside", "/seen", false));
    bundle.set_args({"cat", "/seen"});
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(result.out == "rootfs-copy\n");
    check_no_leftovers(bundle);

    // /etc/shadow of the host is not reachable that way.
    TempBundle escape("mount-source-escape");
    const std::string other = escape.copy_rootfs();
    REQUIRE(::symlink("/etc", (other + "/etc-link").c_str()) == 0);
    escape.config["mounts"].push_back(rbind(other + "/etc-link/shadow", "/seen", false));
    escape.set_args({"cat", "/seen"});
    auto refused = escape.run();
    INFO(refused.describe());
    CHECK(refused.exit_code != 0);
    CHECK(contains(refused.err, "mounts["));
    check_no_leftovers(escape);
}

// runc 1.3's mask.bats "directories share tmpfs" and "directory with read-only rootfs".
TEST_CASE("maskedPaths: directories share one read-only tmpfs", "[mount][masked]") {
    const bool readonly_root = GENERATE(false, true);
    INFO("root.readonly " << readonly_root);
    TempBundle bundle("masked-share");
    const std::string rootfs = bundle.copy_rootfs();
    for (const char* dir : {"/testdir", "/testdir2", "/testdir3"}) {
        REQUIRE(::mkdir((rootfs + dir).c_str(), 0755) == 0);
    }
    write_text(rootfs + "/testdir2/secret", "hidden\n");
    bundle.config["root"]["readonly"] = readonly_root;
    auto& masked = bundle.config["linux"]["maskedPaths"];
    for (const char* dir : {"/testdir", "/testdir2", "/testdir3"}) {
        masked.push_back(dir);
    }
    bundle.set_shell("set -- $(stat -c %d /testdir /testdir2 /testdir3); "
                     "[ \"$1\" = \"$2\" ] && [ \"$2\" = \"$3\" ] && echo same-device; "
                     "echo listing [$(ls -A /testdir2)]; touch /testdir2/foo 2>&1; "
                     "grep -c ' /testdir[23]* ' /proc/self/mounts");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.out, "same-device\n"));
    CHECK(contains(result.out, "listing []\n"));
    CHECK(contains(result.out, "Read-only file system"));
    CHECK(contains(result.out, "\n3\n")); // a mount on each
    check_no_leftovers(bundle);
}
