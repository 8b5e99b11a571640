// Idmapped bind mounts (runtime-spec 1.2: mounts[].uidMappings/gidMappings, "idmap",
// "ridmap"), checked from both sides: the owners the container sees through the mount,
// the owners on disk of what it writes there, and that a mount the kernel cannot idmap
// fails the create with nothing left behind.
//
// How an idmapped mount reads: a file owned by id N on disk is seen as the host id that
// the mount's user namespace maps N to (its uid_map read as "N inside -> host id"), and
// the container sees that host id through its own mappings. With the container's own
// mappings the two cancel out: the container sees the ids on disk as they are.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

using namespace it;

namespace {

// The busybox bundle in a user namespace, container 0 -> host 100000 (65536 ids), with a
// rootfs its root owns.
void use_user_namespace(TempBundle& bundle) {
    bundle.copy_rootfs(std::make_pair(100000U, 100000U));
    bundle.add_user_namespace();
}

void make_file(const std::string& path, uid_t owner) {
    write_text(path, "x\n");
    if (::chown(path.c_str(), owner, owner) != 0) {
        throw std::runtime_error("chown " + path + " failed");
    }
}

std::string owner_of(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) {
        return "<missing>";
    }
    return std::to_string(info.st_uid) + " " + std::to_string(info.st_gid);
}

nlohmann::json bind(const std::string& destination, const std::string& source,
                    const std::vector<std::string>& options) {
    return {
        {"destination", destination}, {"type", "bind"}, {"source", source}, {"options", options}};
}

// A tmpfs mounted on a fresh host directory, with another one on its "sub" directory,
// unmounted again at the end. Made before the bundle, so that the bundle's leftover check
// does not count it.
class HostTmpfs {
public:
    HostTmpfs() : dir_("minirun-it-idmap-tmpfs") {
        if (::mount("tmpfs", path().c_str(), "tmpfs", 0, "mode=0755") != 0) {
            throw std::runtime_error("mount tmpfs on " + path());
        }
        mounted_ = true;
        std::filesystem::create_directory(sub());
        if (::mount("tmpfs", sub().c_str(), "tmpfs", 0, "mode=0755") != 0) {
            throw std::runtime_error("mount tmpfs on " + sub());
        }
        sub_mounted_ = true;
    }
    HostTmpfs(const HostTmpfs&) = delete;
    HostTmpfs& operator=(const HostTmpfs&) = delete;
    ~HostTmpfs() {
        if (sub_mounted_) {
            ::umount2(sub().c_str(), MNT_DETACH);
        }
        if (mounted_) {
            ::umount2(path().c_str(), MNT_DETACH);
        }
    }
    [[nodiscard]] const std::string& path() const { return dir_.path(); }
    [[nodiscard]] std::string sub() const { return path() + "/sub"; }

private:
    TempDir dir_;
    bool mounted_ = false;
    bool sub_mounted_ = false;
};

} // namespace

TEST_CASE("idmap: a bind with mappings of its own shows and writes ids through them", "[idmap]") {
    TempDir data("minirun-it-idmap-own");
    make_file(data.path() + "/owned", 1000);
    // On disk 5000: the container's root through the mount, so that it may write there.
    REQUIRE(::chown(data.path().c_str(), 5000, 5000) == 0);

    TempBundle bundle("idmap-own");
    use_user_namespace(bundle);
    // On disk 1000 -> host 100500 -> container 500; the container's root (host 100000)
    // writes as on-disk 5000.
    const nlohmann::json mapping = {{{"containerID", 1000}, {"hostID", 100500}, {"size", 1}},
                                    {{"containerID", 5000}, {"hostID", 100000}, {"size", 1}}};
    nlohmann::json mount = bind("/data", data.path(), {"bind", "idmap"});
    mount["uidMappings"] = mapping;
    mount["gidMappings"] = mapping;
    bundle.config["mounts"].push_back(mount);
    bundle.set_shell("echo owned $(stat -c '%u %g' /data/owned); "
                     "echo dir $(stat -c '%u %g' /data); "
                     "echo made > /data/made && echo wrote yes");

    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(value_of(result.out, "owned") == "500 500");
    CHECK(value_of(result.out, "dir") == "0 0");
    CHECK(value_of(result.out, "wrote") == "yes");
    CHECK(owner_of(data.path() + "/made") == "5000 5000");
    CHECK(owner_of(data.path() + "/owned") == "1000 1000"); // nothing was chowned
    check_no_leftovers(bundle);
}

TEST_CASE("idmap: without mappings a bind maps through the container's own", "[idmap]") {
    TempDir data("minirun-it-idmap-borrowed");
    make_file(data.path() + "/root", 0);
    make_file(data.path() + "/user", 1000);
    make_file(data.path() + "/mapped", 100000);

    TempBundle bundle("idmap-borrowed");
    use_user_namespace(bundle);
    bundle.config["mounts"].push_back(bind("/data", data.path(), {"bind", "idmap"}));
    // The same directory without idmap, for contrast: there only the host's 100000 is root.
    bundle.config["mounts"].push_back(bind("/plain", data.path(), {"bind"}));
    bundle.set_shell("for f in root user mapped; do "
                     "echo idmapped-$f $(stat -c %u /data/$f); "
                     "echo plain-$f $(stat -c %u /plain/$f); done; "
                     "echo new > /data/new && echo wrote yes");

    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    // Through the idmapped bind the ids on disk are the container's: the host's root is
    // its root, and the host's 100000 is unmapped (the overflow uid, 65534).
    CHECK(value_of(result.out, "idmapped-root") == "0");
    CHECK(value_of(result.out, "idmapped-user") == "1000");
    CHECK(value_of(result.out, "idmapped-mapped") == "65534");
    CHECK(value_of(result.out, "plain-root") == "65534");
    CHECK(value_of(result.out, "plain-user") == "65534");
    CHECK(value_of(result.out, "plain-mapped") == "0");
    // The container's root writes as the host's root, in a directory the host's root owns.
    CHECK(value_of(result.out, "wrote") == "yes");
    CHECK(owner_of(data.path() + "/new") == "0 0");
    check_no_leftovers(bundle);
}

TEST_CASE("idmap: a tmpfs source; ridmap maps the mounts below too, idmap only the top",
          "[idmap]") {
    HostTmpfs source;
    make_file(source.path() + "/top", 1000);
    make_file(source.sub() + "/below", 1000);

    TempBundle bundle("idmap-tmpfs");
    use_user_namespace(bundle);
    bundle.config["mounts"].push_back(bind("/r", source.path(), {"rbind", "ridmap"}));
    bundle.config["mounts"].push_back(bind("/n", source.path(), {"rbind", "idmap"}));
    bundle.set_shell("for m in r n; do echo $m-top $(stat -c %u /$m/top); "
                     "echo $m-below $(stat -c %u /$m/sub/below); done");

    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(value_of(result.out, "r-top") == "1000");
    CHECK(value_of(result.out, "r-below") == "1000");
    CHECK(value_of(result.out, "n-top") == "1000");
    // Not idmapped: the host's 1000 has no id in the container.
    CHECK(value_of(result.out, "n-below") == "65534");
    check_no_leftovers(bundle);
}

TEST_CASE("idmap: what cannot be idmapped fails the create and leaves nothing", "[idmap]") {
    become_subreaper();
    TempBundle bundle("idmap-refused");
    use_user_namespace(bundle);
    const std::string cgroups_path = "/minirun-it-idmap-" + bundle.id();
    bundle.config["linux"]["cgroupsPath"] = cgroups_path;
    const size_t index = bundle.config["mounts"].size();
    std::string expected;
    SECTION("a bind of /proc: procfs does not support idmapped mounts") {
        bundle.config["mounts"].push_back(bind("/hostproc", "/proc", {"rbind", "idmap"}));
        expected = "mounts[" + std::to_string(index) +
                   "] on /hostproc: cannot idmap \"/proc\" (its filesystem does not support "
                   "idmapped mounts): Invalid argument";
    }
    SECTION("a new filesystem is not a bind") {
        bundle.config["mounts"].push_back({{"destination", "/proc2"},
                                           {"type", "proc"},
                                           {"source", "proc"},
                                           {"options", {"idmap"}}});
        expected = "mounts[" + std::to_string(index) +
                   "]: options: idmapped mounts are only supported for bind mounts, not type "
                   "\"proc\"";
    }
    bundle.set_shell("echo should-not-run");
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO(created.describe());
    CHECK(created.exit_code != 0);
    CHECK(created.err == "mini-run: " + expected + "\n");
    CHECK_FALSE(contains(created.out, "should-not-run"));
    CHECK(runtime.root_entries().empty());
    for (const auto& entry : std::filesystem::directory_iterator("/sys/fs/cgroup")) {
        INFO("cgroup " << entry.path().string() + cgroups_path);
        CHECK_FALSE(std::filesystem::exists(entry.path().string() + cgroups_path));
    }
    CHECK_FALSE(std::filesystem::exists("/sys/fs/cgroup" + cgroups_path));
    check_no_leftovers(bundle);
}
