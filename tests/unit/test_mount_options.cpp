#include "mount/mount_options.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <sys/mount.h>
#include <sys/statvfs.h>

using minirun::runtime::known_mount_options;
using minirun::runtime::locked_mount_flags;
using minirun::runtime::parse_mount_options;
using minirun::runtime::propagation_flags;

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
