#include "mount/mount_options.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <sys/mount.h>
#include <sys/statvfs.h>

using minirun::runtime::bind_needs_remount;
using minirun::runtime::known_mount_options;
using minirun::runtime::locked_flags_allow;
using minirun::runtime::locked_mount_flags;
using minirun::runtime::mount_flag_words;
using minirun::runtime::parse_mount_options;
using minirun::runtime::propagation_flags;
using minirun::runtime::statvfs_mount_flags;
using minirun::runtime::with_locked_flags;

TEST_CASE("mount options: runc's default /dev/pts options", "[mount]") {
    auto options = parse_mount_options(
        {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"});
    CHECK(options.flags == (MS_NOSUID | MS_NOEXEC));
    CHECK(options.data == "newinstance,ptmxmode=0666,mode=0620,gid=5");
    CHECK_FALSE(options.bind);
    CHECK(options.propagation == 0);
}

TEST_CASE("mount options: a later word undoes an earlier one", "[mount]") {
    CHECK(parse_mount_options({"ro", "rw"}).flags == 0);
    CHECK(parse_mount_options({"rw", "ro"}).flags == MS_RDONLY);
    CHECK(parse_mount_options({"nosuid", "suid", "nodev"}).flags == MS_NODEV);
    CHECK(parse_mount_options({"noexec", "exec"}).flags == 0);
}

TEST_CASE("mount options: atime words exclude each other", "[mount]") {
    CHECK(parse_mount_options({"noatime", "relatime"}).flags == MS_RELATIME);
    CHECK(parse_mount_options({"relatime", "strictatime"}).flags == MS_STRICTATIME);
    CHECK(parse_mount_options({"strictatime", "nodiratime"}).flags ==
          (MS_STRICTATIME | MS_NODIRATIME));
}

TEST_CASE("mount options: bind, rbind and propagation", "[mount]") {
    auto bind = parse_mount_options({"bind", "ro"});
    CHECK(bind.bind);
    CHECK_FALSE(bind.recursive);
    CHECK(bind.flags == MS_RDONLY);

    auto rbind = parse_mount_options({"rbind", "rslave"});
    CHECK(rbind.bind);
    CHECK(rbind.recursive);
    CHECK(rbind.propagation == (MS_SLAVE | MS_REC));
    CHECK(rbind.flags == 0);
    CHECK(rbind.data.empty());

    CHECK(propagation_flags("private") == MS_PRIVATE);
    CHECK(propagation_flags("rshared") == (MS_SHARED | MS_REC));
    CHECK(propagation_flags("runbindable") == (MS_UNBINDABLE | MS_REC));
    CHECK(propagation_flags("bogus") == 0);
}

TEST_CASE("mount options: rro is read-only", "[mount]") {
    auto options = parse_mount_options({"rbind", "rro"});
    CHECK(options.flags == MS_RDONLY);
    CHECK(options.recursive_readonly);
}

TEST_CASE("mount options: locked flags follow statvfs", "[mount]") {
    CHECK(locked_mount_flags(ST_NOSUID | ST_NODEV) == (MS_NOSUID | MS_NODEV));
    CHECK(locked_mount_flags(ST_RDONLY | ST_RELATIME) == (MS_RDONLY | MS_RELATIME));
    CHECK(locked_mount_flags(0) == 0);
}

TEST_CASE("mount options: tmpcopyup is a flag, not tmpfs data", "[mount]") {
    auto options = parse_mount_options({"rw", "nosuid", "tmpcopyup", "size=64k"});
    CHECK(options.tmpcopyup);
    CHECK(options.data == "size=64k");
    CHECK_FALSE(parse_mount_options({"tmpcopyup", "notmpcopyup"}).tmpcopyup);
}

TEST_CASE("mount options: idmap and ridmap are for mount_setattr, not mount(2) data", "[mount]") {
    auto idmap = parse_mount_options({"bind", "idmap", "ro"});
    CHECK(idmap.idmap);
    CHECK_FALSE(idmap.recursive_idmap);
    CHECK(idmap.data.empty());
    auto ridmap = parse_mount_options({"rbind", "ridmap"});
    CHECK(ridmap.idmap);
    CHECK(ridmap.recursive_idmap);
    CHECK(ridmap.data.empty());
    CHECK_FALSE(parse_mount_options({"rbind"}).idmap);
    // features.mountOptions lists them.
    auto known = known_mount_options();
    CHECK(std::find(known.begin(), known.end(), "idmap") != known.end());
    CHECK(std::find(known.begin(), known.end(), "ridmap") != known.end());
}

// runc's ClearedFlags: what a bind's remount must drop from its source.
TEST_CASE("mount options: words that clear are remembered until set again", "[mount]") {
    auto options = parse_mount_options({"bind", "dev", "suid", "exec", "atime", "rw"});
    CHECK(options.flags == 0);
    CHECK(options.cleared == (MS_NODEV | MS_NOSUID | MS_NOEXEC | MS_NOATIME | MS_RDONLY));
    CHECK(parse_mount_options({"rw", "ro"}).cleared == 0);
    CHECK(parse_mount_options({"ro", "rw"}).cleared == MS_RDONLY);
    CHECK(parse_mount_options({"diratime", "norelatime"}).cleared == (MS_NODIRATIME | MS_RELATIME));
}

TEST_CASE("mount options: a bind is remounted once an option sets or clears a flag", "[mount]") {
    CHECK_FALSE(bind_needs_remount(parse_mount_options({"bind"})));
    CHECK_FALSE(bind_needs_remount(parse_mount_options({"rbind", "rprivate", "idmap"})));
    CHECK_FALSE(bind_needs_remount(parse_mount_options({"bind", "remount"})));
    CHECK(bind_needs_remount(parse_mount_options({"bind", "rw"})));
    CHECK(bind_needs_remount(parse_mount_options({"bind", "dev"})));
    CHECK(bind_needs_remount(parse_mount_options({"bind", "nosuid"})));
}

TEST_CASE("mount options: statvfs flags, strictatime when no other atime", "[mount]") {
    CHECK(statvfs_mount_flags(ST_RDONLY | ST_NOATIME) == (MS_RDONLY | MS_NOATIME));
    CHECK(statvfs_mount_flags(ST_NODIRATIME) == (MS_NODIRATIME | MS_STRICTATIME));
    CHECK(statvfs_mount_flags(0) == MS_STRICTATIME);
}

// The kernel's can_change_locked_flags for a bind remount (path_mount's atime rules).
TEST_CASE("mount options: what locked flags allow", "[mount]") {
    const unsigned long ro_noexec = MS_RDONLY | MS_NOEXEC | MS_RELATIME;
    CHECK(locked_flags_allow(ro_noexec, MS_RDONLY | MS_NOEXEC | MS_NOSUID));
    CHECK_FALSE(locked_flags_allow(ro_noexec, MS_NOEXEC));
    CHECK_FALSE(locked_flags_allow(ro_noexec, MS_RDONLY));
    // No atime asked for: the mount keeps its own. relatime is what one gets by default.
    CHECK(locked_flags_allow(MS_NOATIME, 0));
    CHECK(locked_flags_allow(MS_RELATIME, MS_RELATIME));
    CHECK(locked_flags_allow(MS_RELATIME, MS_NODEV)); // nothing locked to lose
    CHECK_FALSE(locked_flags_allow(MS_NOATIME, MS_RELATIME));
    CHECK_FALSE(locked_flags_allow(MS_NOATIME, MS_NODIRATIME)); // implies relatime
    CHECK(locked_flags_allow(MS_NOATIME | MS_NODIRATIME, MS_NOATIME | MS_NODIRATIME));
    CHECK(locked_flags_allow(MS_STRICTATIME, MS_STRICTATIME));
    CHECK_FALSE(locked_flags_allow(MS_STRICTATIME, MS_NOATIME));
    // Unlocked flags come and go freely.
    CHECK(locked_flags_allow(MS_RELATIME, MS_RELATIME | MS_NOSYMFOLLOW));
}

// runc's "remount with locked flags re-applied", and its two refusals.
TEST_CASE("mount options: the second attempt keeps the locked flags", "[mount]") {
    const unsigned long source = MS_RDONLY | MS_NOEXEC | MS_NODIRATIME | MS_RELATIME;
    auto kept = with_locked_flags(MS_NODEV, 0, source);
    REQUIRE(kept.ok());
    CHECK(*kept == (MS_NODEV | source));

    auto cleared = with_locked_flags(MS_NOSUID, MS_RDONLY, source);
    REQUIRE_FALSE(cleared.ok());
    CHECK(cleared.error().errno_value() == EPERM);
    CHECK(cleared.error().message() == "cannot clear locked flags ro");

    auto atime = with_locked_flags(MS_NOATIME, 0, source);
    REQUIRE_FALSE(atime.ok());
    CHECK(atime.error().message() == "cannot change locked atime flags nodiratime,relatime");

    // Asking for the source's own atime is fine.
    CHECK(with_locked_flags(MS_RELATIME | MS_NODIRATIME, 0, source).ok());
    CHECK(mount_flag_words(MS_RDONLY | MS_NOSUID | MS_NODEV) == "ro,nosuid,nodev");
}
