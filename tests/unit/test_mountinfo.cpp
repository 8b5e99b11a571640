#include "mountinfo.hpp"

#include <catch2/catch.hpp>

using namespace minirun::fs;

TEST_CASE("mountinfo: fields, optional fields and octal escapes", "[mountinfo]") {
    const char* text =
        "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "40 27 0:40 /a\\040b /mnt/with\\040space ro,nosuid shared:5 master:2 - tmpfs none rw\n";
    auto mounts = parse_mountinfo(text);
    REQUIRE(mounts.size() == 3);
    CHECK(mounts[0].id == 27);
    CHECK(mounts[0].parent_id == 1);
    CHECK(mounts[0].mount_point == "/");
    CHECK(mounts[0].optional == "shared:1");
    CHECK(mounts[0].fs_type == "ext4");
    CHECK(mounts[0].source == "/dev/vda");
    CHECK(mounts[0].super_options == "rw,discard");
    CHECK(mounts[1].super_options == "rw,cpu");
    CHECK(mounts[2].root == "/a b");
    CHECK(mounts[2].mount_point == "/mnt/with space");
    CHECK(mounts[2].mount_options == "ro,nosuid");
    CHECK(mounts[2].optional == "shared:5 master:2");
}

TEST_CASE("mountinfo: malformed lines are skipped", "[mountinfo]") {
    CHECK(parse_mountinfo("garbage\n\n1 2 3\n").empty());
}

TEST_CASE("/proc/self/cgroup: v1, named and v2 lines", "[mountinfo]") {
    auto lines = parse_proc_cgroup("4:cpu,cpuacct:/a/b\n1:name=systemd:/\n0::/unified/c\n");
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].hierarchy_id == 4);
    CHECK(lines[0].controllers == "cpu,cpuacct");
    CHECK(lines[0].path == "/a/b");
    CHECK(lines[1].controllers == "name=systemd");
    CHECK(lines[2].hierarchy_id == 0);
    CHECK(lines[2].controllers.empty());
    CHECK(lines[2].path == "/unified/c");
}

TEST_CASE("option lists match whole words only", "[mountinfo]") {
    CHECK(has_option("rw,cpu,cpuacct", "cpu"));
    CHECK(has_option("rw,cpu,cpuacct", "cpuacct"));
    CHECK_FALSE(has_option("rw,cpuacct", "cpu"));
    CHECK(split("a,,b", ',').size() == 3);
}
