// Joining a user namespace by path, as containerd 2 starts a user-namespaced pod
// (Kubernetes hostUsers: false): the user namespace is pinned outside (by a process, or its
// nsfs file bind-mounted), the config names it by path and also gives its mappings, and asks
// for new pid, mount, ipc and uts namespaces. Checked from inside (root of the namespace,
// pid 1, its maps, mounts made) and from outside (the init's user namespace is the pinned
// one, owns the new namespaces, and the init's host ids are the mapped ones).
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <optional>

using namespace it;

namespace {

const char* const kMap = "0 100000 65536\n";

// A child of the test in namespaces of its own (unshare(flags)), waiting to be killed: it
// pins them. Killed and reaped by the destructor.
class Pinned {
public:
    explicit Pinned(int flags) {
        std::array<int, 2> ends{};
        REQUIRE(::pipe2(ends.data(), O_CLOEXEC) == 0);
        pid_ = ::fork();
        if (pid_ == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            char ok = ::unshare(flags) == 0 ? 1 : 0;
            (void)!::write(ends[1], &ok, 1);
            for (;;) {
                ::pause();
            }
        }
        ::close(ends[1]);
        char ok = 0;
        ssize_t got = ::read(ends[0], &ok, 1);
        ::close(ends[0]);
        REQUIRE(pid_ > 0);
        REQUIRE(got == 1);
        REQUIRE(ok == 1);
    }
    Pinned(const Pinned&) = delete;
    Pinned& operator=(const Pinned&) = delete;
    ~Pinned() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    [[nodiscard]] std::string ns(std::string_view name) const {
        return "/proc/" + std::to_string(pid_) + "/ns/" + std::string(name);
    }
    [[nodiscard]] pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
};

// A user namespace with kMap as its uid and gid maps, written by the test (the host's root);
// with `deny_setgroups`, setgroups(2) is denied in it, as in one an unprivileged user made.
void map_user_namespace(const Pinned& pinned, bool deny_setgroups) {
    const std::string proc = "/proc/" + std::to_string(pinned.pid());
    if (deny_setgroups) {
        write_text(proc + "/setgroups", "deny");
    }
    write_text(proc + "/uid_map", kMap);
    write_text(proc + "/gid_map", kMap);
}

ino_t inode_of(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

// The inode of the user namespace that owns the namespace at `path` (NS_GET_USERNS).
ino_t owner_of(const std::string& path) {
    int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) {
        return 0;
    }
    int owner = ::ioctl(ns, NS_GET_USERNS);
    ::close(ns);
    if (owner < 0) {
        return 0;
    }
    struct stat info {};
    int stated = ::fstat(owner, &info);
    ::close(owner);
    return stated == 0 ? info.st_ino : 0;
}

nlohmann::json mapping() {
    return {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
}

// The bundle containerd makes for such a pod: the pinned user namespace by path and its
// mappings besides; new pid, mount, ipc, uts and network namespaces (the example's).
void join_user_namespace(TempBundle& bundle, const std::string& path) {
    bundle.copy_rootfs(std::make_pair(100000U, 100000U));
    // Writable, so that mkdir shows the init is uid 0 of the namespace that owns the copy.
    bundle.config["root"]["readonly"] = false;
    bundle.config["linux"]["namespaces"].push_back({{"type", "user"}, {"path", path}});
    bundle.config["linux"]["uidMappings"] = mapping();
    bundle.config["linux"]["gidMappings"] = mapping();
}

const char* const kInsideScript =
    "echo uid $(id -u); echo gid $(id -g); echo pid $$; echo map $(cat /proc/self/uid_map); "
    "test -d /dev/pts && echo pts yes; mkdir /tmp/made && echo mkdir yes; "
    "echo net $(readlink /proc/self/ns/net); echo ready; read line";

} // namespace

TEST_CASE("userns: a pinned user namespace joined by path, with a new pid namespace",
          "[namespaces][user][userns-join]") {
    Pinned user(CLONE_NEWUSER);
    bool deny_setgroups = false;
    std::optional<Pinned> net;
    TempBundle bundle("userns-pod");
    SECTION("as containerd starts a pod") {}
    SECTION("setgroups denied in it") {
        deny_setgroups = true;
    }
    SECTION("with a network namespace it does not own (runc issue 4390)") {
        // Made by the host's root: only the host's root may join it, so the init joins it
        // before the user namespace. sysfs cannot be mounted for it: /sys is bound instead.
        net.emplace(CLONE_NEWNET);
        for (auto& ns : bundle.config["linux"]["namespaces"]) {
            if (ns["type"] == "network") {
                ns["path"] = net->ns("net");
            }
        }
        for (auto& mount : bundle.config["mounts"]) {
            if (mount["type"] == "sysfs") {
                mount = {{"source", "/sys"},
                         {"destination", mount["destination"]},
                         {"type", "bind"},
                         {"options", {"rbind", "nosuid", "noexec", "nodev"}}};
            }
        }
    }
    map_user_namespace(user, deny_setgroups);
    join_user_namespace(bundle, user.ns("user"));
    bundle.set_shell(kInsideScript);

    Child minirun = bundle.start();
    bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    // Inside: root of the joined namespace, pid 1 of its own, mounts and files made.
    CHECK(value_of(minirun.out(), "uid") == "0");
    CHECK(value_of(minirun.out(), "gid") == "0");
    CHECK(value_of(minirun.out(), "pid") == "1");
    CHECK(split_words(value_of(minirun.out(), "map")) == split_words(kMap));
    CHECK(value_of(minirun.out(), "pts") == "yes");
    CHECK(value_of(minirun.out(), "mkdir") == "yes");
    if (net) {
        CHECK(value_of(minirun.out(), "net") == ns_link(net->pid(), "net"));
    }

    // Outside: the pinned user namespace, which owns the new ones; the mapped host ids.
    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    const std::string proc = "/proc/" + std::to_string(*init);
    CHECK(ns_link(*init, "user") == ns_link(user.pid(), "user"));
    const ino_t pinned = inode_of(user.ns("user"));
    REQUIRE(pinned != 0);
    CHECK(owner_of(proc + "/ns/pid") == pinned);
    CHECK(owner_of(proc + "/ns/mnt") == pinned);
    CHECK(owner_of(proc + "/ns/uts") == pinned);
    CHECK(owner_of(proc + "/ns/ipc") == pinned);
    CHECK(ns_link(*init, "pid") != ns_link(0, "pid"));
    const std::vector<std::string> mapped(4, "100000");
    CHECK(status_field(*init, "Uid") == mapped);
    CHECK(status_field(*init, "Gid") == mapped);
    CHECK(split_words(read_file(proc + "/uid_map").value_or("")) == split_words(kMap));

    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("userns: joining another container's user and pid namespaces",
          "[namespaces][user][userns-join]") {
    TempBundle first("userns-first");
    first.copy_rootfs(std::make_pair(100000U, 100000U));
    first.add_user_namespace();
    first.set_shell("echo ready; read line");
    Child target = first.start();
    const bool target_ready = target.wait_for_output("ready\n");
    INFO("first's stdout: " << target.out() << "\nfirst's stderr: " << target.err());
    REQUIRE(target_ready);
    auto target_init = find_container_init(target.pid());
    REQUIRE(target_init.has_value());
    const std::string target_ns = "/proc/" + std::to_string(*target_init) + "/ns/";

    // runc's userns.bats shape: the paths, no mappings; pid joined too (user first).
    TempBundle second("userns-second");
    second.copy_rootfs(std::make_pair(100000U, 100000U));
    second.config["root"]["readonly"] = false;
    second.remove_namespaces({"pid"});
    second.config["linux"]["namespaces"].push_back({{"type", "pid"}, {"path", target_ns + "pid"}});
    second.config["linux"]["namespaces"].push_back(
        {{"type", "user"}, {"path", target_ns + "user"}});
    second.set_shell("echo uid $(id -u); echo pid $$; echo first $(cat /proc/1/cmdline | tr '\\0' "
                     "' '); echo map $(cat /proc/self/uid_map); mkdir /tmp/made && echo mkdir "
                     "yes; echo ready; read line");
    Child minirun = second.start();
    bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    CHECK(value_of(minirun.out(), "uid") == "0");
    CHECK(value_of(minirun.out(), "pid") != "1");
    CHECK(contains(value_of(minirun.out(), "first"), first.id())); // the first one's pid 1
    CHECK(split_words(value_of(minirun.out(), "map")) == split_words(kMap));
    CHECK(value_of(minirun.out(), "mkdir") == "yes");

    auto children = children_of(minirun.pid());
    REQUIRE(children.size() == 1);
    const pid_t init = children.front();
    CHECK(ns_link(init, "user") == ns_link(*target_init, "user"));
    CHECK(ns_link(init, "pid") == ns_link(*target_init, "pid"));
    CHECK(ns_link(init, "mnt") != ns_link(*target_init, "mnt"));
    CHECK(status_field(init, "Uid") == std::vector<std::string>(4, "100000"));

    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    check_no_leftovers(second);
    target.write_stdin("\n");
    CHECK(target.wait().exit_code == 0);
    check_no_leftovers(first);
}

TEST_CASE("userns: mappings that are not the joined namespace's are refused",
          "[namespaces][user][userns-join]") {
    Pinned user(CLONE_NEWUSER);
    map_user_namespace(user, false);
    TempBundle bundle("userns-mismatch");
    join_user_namespace(bundle, user.ns("user"));
    const char* field = "gidMappings";
    SECTION("uid") {
        field = "uidMappings";
    }
    SECTION("gid") {}
    bundle.config["linux"][field] = {{{"containerID", 0}, {"hostID", 200000}, {"size", 65536}}};
    bundle.set_shell("echo should not run");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK_FALSE(contains(result.out, "should not run"));
    CHECK(contains(result.err, std::string("linux.") + field +
                                   ": user namespaces enabled, but both namespace path and "
                                   "non-matching mapping specified -- you may only provide one"));
    CHECK(split_lines(result.err).size() == 1);
    check_no_leftovers(bundle);
}

TEST_CASE("userns: a container of a user-namespaced pod, in containerd 2's shape",
          "[namespaces][user][userns-join]") {
    // The pod's sandbox (pause) container makes the user namespace with the pod's mappings;
    // each app container joins its user, network, ipc and uts namespaces by path, repeats the
    // mappings, and gets a pid and mount namespace of its own.
    TempBundle sandbox("userns-sandbox");
    sandbox.copy_rootfs(std::make_pair(100000U, 100000U));
    sandbox.add_user_namespace();
    sandbox.set_shell("echo ready; read line");
    Child pause = sandbox.start();
    const bool pause_ready = pause.wait_for_output("ready\n");
    INFO("sandbox's stdout: " << pause.out() << "\nsandbox's stderr: " << pause.err());
    REQUIRE(pause_ready);
    auto sandbox_init = find_container_init(pause.pid());
    REQUIRE(sandbox_init.has_value());
    const std::string pod = "/proc/" + std::to_string(*sandbox_init) + "/ns/";

    TempBundle app("userns-app");
    app.copy_rootfs(std::make_pair(100000U, 100000U));
    app.config["root"]["readonly"] = false;
    app.remove_namespaces({"network", "ipc", "uts"});
    for (const char* type : {"network", "ipc", "uts"}) {
        const std::string proc_name = std::string(type) == "network" ? "net" : type;
        app.config["linux"]["namespaces"].push_back({{"type", type}, {"path", pod + proc_name}});
    }
    app.config["linux"]["namespaces"].push_back({{"type", "user"}, {"path", pod + "user"}});
    app.config["linux"]["uidMappings"] = mapping();
    app.config["linux"]["gidMappings"] = mapping();
    app.set_shell(kInsideScript);
    Child minirun = app.start();
    bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    CHECK(value_of(minirun.out(), "uid") == "0");
    CHECK(value_of(minirun.out(), "pid") == "1");
    CHECK(value_of(minirun.out(), "mkdir") == "yes");
    CHECK(value_of(minirun.out(), "net") == ns_link(*sandbox_init, "net"));

    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    for (const char* shared : {"user", "net", "ipc", "uts"}) {
        CHECK(ns_link(*init, shared) == ns_link(*sandbox_init, shared));
    }
    for (const char* own : {"pid", "mnt"}) {
        CHECK(ns_link(*init, own) != ns_link(*sandbox_init, own));
        CHECK(owner_of("/proc/" + std::to_string(*init) + "/ns/" + own) == inode_of(pod + "user"));
    }
    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    check_no_leftovers(app);
    pause.write_stdin("\n");
    CHECK(pause.wait().exit_code == 0);
    check_no_leftovers(sandbox);
}
