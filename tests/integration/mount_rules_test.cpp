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
