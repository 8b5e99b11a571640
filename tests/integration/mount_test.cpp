// The container's mounts as the host sees them: mount destinations that are symlinks
// inside the rootfs.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace it;

namespace {

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

bool exists_nofollow(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0;
}

} // namespace

// ---------------------------------------------------------------------------------------
// Destinations through symlinks

TEST_CASE("mount destinations through symlinks are resolved and created inside the rootfs",
          "[mount-symlink]") {
    TempBundle bundle("symlink-dest");
    const std::string rootfs = bundle.copy_rootfs();
    const std::string unique = "it-outside-" + std::to_string(::getpid());
    // Where a runtime that follows the links on the host would create or mount.
    const std::string host_abs = "/tmp/" + unique + "-abs";
    const std::string host_rel = "/" + unique + "-rel";
    const std::string host_file = "/tmp/" + unique + "-file";
    const std::string host_mid = "/tmp/" + unique + "-mid";
    for (const auto& path : {host_abs, host_rel, host_file, host_mid}) {
        REQUIRE_FALSE(exists_nofollow(path));
    }
    // Absolute, relative and climbing out, to a file, and in the middle of the path: all
    // dangling (nothing at the target, inside the rootfs or on the host).
    REQUIRE(::symlink(host_abs.c_str(), (rootfs + "/etc/link-abs").c_str()) == 0);
    REQUIRE(::symlink(("../../../../../../.." + host_rel).c_str(),
                      (rootfs + "/etc/link-rel").c_str()) == 0);
    REQUIRE(::symlink(host_file.c_str(), (rootfs + "/etc/link-file").c_str()) == 0);
    REQUIRE(::symlink((host_mid + "/deeper").c_str(), (rootfs + "/etc/link-mid").c_str()) == 0);

    TempDir data("minirun-it-data");
    write_text(data.path() + "/from-data", "bound\n");
    const std::string file = data.path() + "/file";
    write_text(file, "file-content-" + unique + "\n");
    const std::string tmpfs = bundle.id() + "-tmpfs";
    bundle.config["mounts"].push_back(
        {{"destination", "/etc/link-abs"}, {"type", "tmpfs"}, {"source", tmpfs}});
    bundle.config["mounts"].push_back({{"destination", "/etc/link-rel"},
                                       {"type", "bind"},
                                       {"source", data.path()},
                                       {"options", {"rbind", "ro"}}});
    bundle.config["mounts"].push_back({{"destination", "/etc/link-file"},
                                       {"type", "bind"},
                                       {"source", file},
                                       {"options", {"bind", "ro"}}});
    bundle.config["mounts"].push_back(
        {{"destination", "/etc/link-mid/sub"}, {"type", "tmpfs"}, {"source", tmpfs + "-mid"}});
    // Mount point, type and source of each mount (the optional fields vary in number).
    bundle.set_shell("awk '{ i = 7; while ($i != \"-\") i++; print $5, $(i + 1), $(i + 2) }' "
                     "/proc/self/mountinfo | grep " +
                     unique + "; cat /etc/link-file; ls /etc/link-rel; true");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);

    // Inside, each mount is at the link's target, taken inside the rootfs.
    CHECK(contains(result.out, host_abs + " tmpfs " + tmpfs + "\n"));
    CHECK(contains(result.out, host_rel + " "));
    CHECK(contains(result.out, host_file + " "));
    CHECK(contains(result.out, host_mid + "/deeper/sub tmpfs " + tmpfs + "-mid\n"));
    CHECK(contains(result.out, "file-content-" + unique + "\n"));
    CHECK(contains(result.out, "from-data\n"));
    // The mount points were made there, in the rootfs; nothing on the host.
    CHECK(exists_nofollow(rootfs + host_abs));
    CHECK(exists_nofollow(rootfs + host_rel));
    CHECK(exists_nofollow(rootfs + host_file));
    CHECK(exists_nofollow(rootfs + host_mid + "/deeper/sub"));
    for (const auto& path : {host_abs, host_rel, host_file, host_mid}) {
        INFO("host path " << path);
        CHECK_FALSE(exists_nofollow(path));
    }
    check_no_leftovers(bundle);
}
