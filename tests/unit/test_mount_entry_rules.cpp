// runc 1.3's rules for single mounts[] entries, against the recording fake: a tmpfs takes
// the mode of the directory it covers, a bind's remount applies what its options set and
// clear, and bind sources inside the rootfs are looked up when their turn comes.
#include "mount_setup_fixture.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

using namespace minirun;
using namespace minirun::runtime;
using minirun::runtime::parse_mount_options;
using minirun::testing::MountCall;
using nlohmann::json;
namespace stdfs = std::filesystem;
using namespace mount_setup_test;

namespace {

const MountCall* mount_at(const FakeSyscalls& sys, const std::string& target) {
    for (const MountCall& call : sys.mounts) {
        if (call.target == target) {
            return &call;
        }
    }
    return nullptr;
}

json tmpfs_at(const std::string& destination, json options) {
    return {{"destination", destination},
            {"type", "tmpfs"},
            {"source", "tmpfs"},
            {"options", std::move(options)}};
}

} // namespace

// runc issue 4971 (runc 1.3, createOpenMountpoint): "mode=" of the covered directory goes
// ahead of the entry's own options, so that an explicit mode= (later) still wins.
TEST_CASE("tmpfs: an existing directory's mode, unless the options give one", "[mount]") {
    Fixture f;
    stdfs::create_directories(f.rootfs + "/inherit");
    stdfs::create_directories(f.rootfs + "/explicit");
    REQUIRE(::chmod((f.rootfs + "/inherit").c_str(), 0710) == 0);
    REQUIRE(::chmod((f.rootfs + "/explicit").c_str(), 02710) == 0);
    Plan plan = f.plan(config_with_mounts(json::array(
        {tmpfs_at("/inherit", {"rw", "nodev"}), tmpfs_at("/explicit", {"mode=1500", "size=1k"}),
         tmpfs_at("/new/dir", {"nosuid"})})));
    REQUIRE(prepare(plan, f.sys).ok());

    const MountCall* inherit = mount_at(f.sys, f.rootfs + "/inherit");
    REQUIRE(inherit != nullptr);
    CHECK(inherit->data == "mode=0710");
    const MountCall* explicit_mode = mount_at(f.sys, f.rootfs + "/explicit");
    REQUIRE(explicit_mode != nullptr);
    CHECK(explicit_mode->data == "mode=2710,mode=1500,size=1k");
    // A directory made for the mount: tmpfs's own default (1777), no mode= added.
    const MountCall* made = mount_at(f.sys, f.rootfs + "/new/dir");
    REQUIRE(made != nullptr);
    CHECK(made->data.empty());
    struct stat info {};
    REQUIRE(::stat((f.rootfs + "/new/dir").c_str(), &info) == 0);
    CHECK((info.st_mode & 07777) == 0755);
}
