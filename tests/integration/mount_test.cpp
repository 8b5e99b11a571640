// The container's mounts as the host sees them: propagation both ways through an rshared
// bind, a config without a mount namespace (the caller's mount table, chroot, undone on
// delete), and mount destinations that are symlinks inside the rootfs.
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

void make_dir(const std::string& path) {
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
        throw std::runtime_error("mkdir " + path + " failed");
    }
}

bool exists_nofollow(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0;
}

std::vector<std::string> lines_of(const std::vector<MountInfo>& mounts) {
    std::vector<std::string> lines;
    for (const auto& mount : mounts) {
        lines.push_back(mount.line);
    }
    return lines;
}

// The host's mount table line for "/": what a runtime must not change.
std::string host_root_line() {
    for (const auto& mount : host_mounts()) {
        if (mount.mount_point == "/") {
            return mount.line;
        }
    }
    return "<no / in the host's mountinfo>";
}

// The "shared:N" field of a mountinfo line, or "".
std::string peer_group(const std::string& line) {
    for (const auto& word : split_words(line)) {
        if (word.rfind("shared:", 0) == 0) {
            return word;
        }
        if (word == "-") {
            break;
        }
    }
    return "";
}

// Guarded: a script that mounts must never run in the host's mount namespace.
std::string guard_mount_namespace() {
    return "[ \"$(readlink /proc/self/ns/mnt)\" != '" + ns_link(0, "mnt") +
           "' ] || { echo 'host mount namespace' >&2; exit 1; }; ";
}

} // namespace

// ---------------------------------------------------------------------------------------
// Propagation

TEST_CASE("mount propagation: an rshared bind under a shared rootfsPropagation sends the "
          "container's mounts to the host",
          "[mount-propagation]") {
    SharedDir source(
        "minirun-it-shared-src"); // before the bundle, so that the bundle counts it as the host's
    make_dir(source.path() + "/sub");
    const std::string root_propagation = GENERATE(std::string("shared"), std::string("rshared"));
    INFO("rootfsPropagation " << root_propagation);
    TempBundle bundle("rshared");
    bundle.copy_rootfs();
    bundle.config["root"]["readonly"] = false;
    bundle.config["linux"]["rootfsPropagation"] = root_propagation;
    bundle.add_capabilities({"CAP_SYS_ADMIN"});
    bundle.config["mounts"].push_back({{"destination", "/data"},
                                       {"type", "bind"},
                                       {"source", source.path()},
                                       {"options", {"rbind", "rshared"}}});
    const std::string tmpfs = bundle.id() + "-tmpfs";
    bundle.set_shell(guard_mount_namespace() +
                     "grep ' /data ' /proc/self/mountinfo; mount -t tmpfs " + tmpfs +
                     " /data/sub && echo mounted; echo ready; read line");
    Child minirun = bundle.start();
    const bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    CHECK(contains(minirun.out(), "mounted"));

    // Inside, the bind is in the peer group of the host's source mount.
    const std::string host_group = peer_group(source.line());
    REQUIRE_FALSE(host_group.empty());
    auto inside = split_lines(minirun.out());
    REQUIRE_FALSE(inside.empty());
    INFO("container's /data: " << inside.front() << "\nhost's source: " << source.line());
    CHECK(peer_group(inside.front()) == host_group);

    // The tmpfs made inside is on the host, under the source directory.
    bool on_host = false;
    for (const auto& mount : host_mounts_under(source.path())) {
        on_host = on_host || (mount.mount_point == source.path() + "/sub" &&
                              mount.source == tmpfs && mount.fs_type == "tmpfs");
    }
    CHECK(on_host);

    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    source.detach_below(); // the host's copy of the tmpfs is the host's now
    check_no_leftovers(bundle);
}

TEST_CASE("mount propagation: rslave (and rshared under a private or slave root) brings the "
          "host's mounts in and sends none back",
          "[mount-propagation]") {
    SharedDir source("minirun-it-shared-src");
    make_dir(source.path() + "/from-host");
    struct Case {
        const char* root;
        const char* bind;
    };
    const Case which = GENERATE(values<Case>(
        {{"rslave", "rslave"}, {"", "rslave"}, {"", "rshared"}, {"rslave", "rshared"}}));
    INFO("rootfsPropagation '" << which.root << "', bind " << which.bind);
    TempBundle bundle("rslave");
    bundle.copy_rootfs();
    bundle.config["root"]["readonly"] = false;
    if (std::string(which.root).empty()) {
        bundle.config["linux"].erase("rootfsPropagation");
    } else {
        bundle.config["linux"]["rootfsPropagation"] = which.root;
    }
    bundle.add_capabilities({"CAP_SYS_ADMIN"});
    bundle.config["mounts"].push_back({{"destination", "/data"},
                                       {"type", "bind"},
                                       {"source", source.path()},
                                       {"options", {"rbind", which.bind}}});
    const std::string host_tmpfs = bundle.id() + "-host";
    const std::string inner_tmpfs = bundle.id() + "-inner";
    bundle.set_shell(guard_mount_namespace() +
                     "mkdir -p /data/inner; echo ready; read line; grep -c " + host_tmpfs +
                     " /proc/self/mountinfo; mount -t tmpfs " + inner_tmpfs +
                     " /data/inner && echo mounted; echo done; read line");
    Child minirun = bundle.start();
    REQUIRE(minirun.wait_for_output("ready\n"));

    // The host mounts below the source while the container runs: it arrives inside.
    REQUIRE(::mount(host_tmpfs.c_str(), (source.path() + "/from-host").c_str(), "tmpfs", 0,
                    nullptr) == 0);
    minirun.write_stdin("\n");
    const bool done = minirun.wait_for_output("done\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(done);
    CHECK(contains(minirun.out(), "ready\n1\nmounted\n"));
    // The container's own mount stays inside.
    for (const auto& mount : host_mounts()) {
        CHECK_FALSE(mount.source == inner_tmpfs);
    }
    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    source.detach_below();
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// No mount namespace: the caller's mount table, chroot

namespace {

// A bundle without a mount namespace, on a copy of the rootfs with a marker file at its
// top, which the container prints to show that the rootfs is its "/".
struct HostNamespaceBundle {
    TempBundle bundle{"no-mntns"};
    std::string rootfs;
    std::string marker = "it-rootfs-marker-" + std::to_string(::getpid());

    HostNamespaceBundle() {
        rootfs = bundle.copy_rootfs();
        write_text(rootfs + "/it-marker", marker + "\n");
        bundle.remove_namespaces({"mount"});
    }
};

} // namespace

TEST_CASE("no mount namespace: the container runs chrooted in the caller's mount namespace, "
          "and `run` leaves no mount behind",
          "[mount-no-namespace]") {
    HostNamespaceBundle made;
    TempBundle& bundle = made.bundle;
    const std::string root_before = host_root_line();
    bundle.set_shell("cat /it-marker; readlink /proc/self/ns/mnt; [ -e " + made.rootfs +
                     " ] && echo host-path-visible; grep -c ' /proc ' /proc/self/mountinfo; "
                     "echo ready; read line");
    Child minirun = bundle.start();
    const bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    auto lines = split_lines(minirun.out());
    REQUIRE(lines.size() >= 3);
    CHECK(lines[0] == made.marker);       // the rootfs is its "/"
    CHECK(lines[1] == ns_link(0, "mnt")); // in our mount namespace
    CHECK_FALSE(contains(minirun.out(), "host-path-visible"));
    // Its mounts are in the host's table, below the rootfs, and "/" is as it was.
    CHECK_FALSE(host_mounts_under(made.rootfs).empty());
    CHECK(host_root_line() == root_before);

    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(lines_of(host_mounts_under(made.rootfs)).empty());
    CHECK(host_root_line() == root_before);
    check_no_leftovers(bundle);
}

TEST_CASE("no mount namespace: create, exec and delete; delete detaches the container's "
          "mounts and only those",
          "[mount-no-namespace]") {
    HostNamespaceBundle made;
    TempBundle& bundle = made.bundle;
    // A mount of the host's below the rootfs before create: not the container's to undo.
    const std::string host_owned = made.rootfs + "/mnt";
    make_dir(host_owned);
    REQUIRE(::mount("it-host-owned", host_owned.c_str(), "tmpfs", 0, nullptr) == 0);
    const std::string root_before = host_root_line();
    bundle.set_shell("while true; do sleep 0.1; done");
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto started = runtime({"start", bundle.id()});
    INFO("start: " << started.describe());
    REQUIRE(started.exit_code == 0);
    CHECK(host_mounts_under(made.rootfs).size() > 1);

    // exec joins its root too, not the host's.
    auto exec = runtime({"exec", bundle.id(), "cat", "/it-marker"});
    INFO("exec: " << exec.describe());
    CHECK(exec.exit_code == 0);
    CHECK(exec.out == made.marker + "\n");

    auto deleted = runtime({"delete", "--force", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    auto left = host_mounts_under(made.rootfs);
    REQUIRE(left.size() == 1);
    CHECK(left[0].source == "it-host-owned");
    CHECK(host_root_line() == root_before);
    ::umount2(host_owned.c_str(), MNT_DETACH);
    check_no_leftovers(bundle);
}

TEST_CASE("no mount namespace: a create that fails leaves no mount behind",
          "[mount-no-namespace]") {
    HostNamespaceBundle made;
    TempBundle& bundle = made.bundle;
    // Fails at the very end of the init's setup, after every mount was made.
    bundle.set_args({"/it-no-such-program"});
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    CHECK(created.exit_code != 0);
    CHECK(contains(created.err, "it-no-such-program"));
    CHECK(lines_of(host_mounts_under(made.rootfs)).empty());
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("no mount namespace: refused with a user namespace, which could not mount there",
          "[mount-no-namespace]") {
    HostNamespaceBundle made;
    TempBundle& bundle = made.bundle;
    bundle.add_user_namespace();
    bundle.set_shell("true");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(contains(result.err, "linux.namespaces: a user namespace needs a mount namespace"));
    CHECK(split_lines(result.err).size() == 1);
    check_no_leftovers(bundle);
}

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

// ---------------------------------------------------------------------------------------
// Relative destinations

TEST_CASE("a relative mount destination is read from the container's /, .. stopping there",
          "[mount-relative]") {
    // runtime-spec 1.2: a relative destination is relative to the container's "/".
    TempBundle bundle("relative-dest");
    const std::string rootfs = bundle.copy_rootfs();
    TempDir data("minirun-it-relative");
    write_text(data.path() + "/file", "relative-content\n");
    bundle.config["mounts"].push_back({{"destination", "data/x"},
                                       {"type", "bind"},
                                       {"source", data.path()},
                                       {"options", {"rbind", "ro"}}});
    const std::string tmpfs = bundle.id() + "-climb";
    bundle.config["mounts"].push_back(
        {{"destination", "../../climb"}, {"type", "tmpfs"}, {"source", tmpfs}});
    bundle.set_shell("cat /data/x/file; grep -c ' /climb ' /proc/self/mountinfo");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(split_lines(result.out) == std::vector<std::string>{"relative-content", "1"});
    // The mount points were made in the rootfs, never in the bundle or the working directory.
    CHECK(exists_nofollow(rootfs + "/data/x"));
    CHECK(exists_nofollow(rootfs + "/climb"));
    CHECK_FALSE(exists_nofollow(bundle.dir() + "/data"));
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// A mount point the container's root may not search

TEST_CASE("a mount point that the user namespace's root may not search is mounted on all the "
          "same",
          "[mount-unsearchable]") {
    // mount(2) does not need search permission on its mount point; fchdir(2), which mini-run
    // uses to name a directory by fd (Syscalls::mount_on), does. A directory of the host's
    // root (unmapped in the container's user namespace) with mode 0700 is such a mount point:
    // the runtime must fall back to naming it otherwise, not fail.
    TempBundle bundle("unsearchable");
    const std::string rootfs = bundle.copy_rootfs(std::make_pair(100000U, 100000U));
    bundle.add_user_namespace();
    const std::string locked = rootfs + "/locked";
    REQUIRE(::mkdir(locked.c_str(), 0700) == 0);
    REQUIRE(::chown(locked.c_str(), 0, 0) == 0);
    const std::string source = bundle.id() + "-locked";
    bundle.config["mounts"].push_back(
        {{"destination", "/locked"}, {"type", "tmpfs"}, {"source", source}});
    bundle.set_shell("grep ' /locked ' /proc/self/mountinfo | grep -c ' tmpfs " + source + " '");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(split_lines(result.out) == std::vector<std::string>{"1"});
    // The mount was the container's: nothing is left on the host's directory.
    struct stat info {};
    REQUIRE(::stat(locked.c_str(), &info) == 0);
    CHECK((info.st_mode & 07777) == 0700);
    check_no_leftovers(bundle);
}
