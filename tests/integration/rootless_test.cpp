// Rootless (docs/rootless.md): mini-run run by an unprivileged user that each test makes
// (useradd, with its own /etc/subuid and /etc/subgid ranges and /run/user/<uid>) and
// removes again. Checked from inside (uid 0, hostname, pid 1, the maps) and from the host
// (the process runs as the user's uid, the state is in the user's runtime directory,
// nothing is left behind).
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

using namespace it;
namespace stdfs = std::filesystem;

namespace {

// The user's subordinate ids: far from the other tests' 100000.
constexpr uint32_t kSubStart = 400000;
constexpr uint32_t kSubCount = 65536;

// An unprivileged user for one test, removed (with its home, its subuid/subgid lines and
// its /run/user/<uid>) when the test ends.
class RootlessUser {
public:
    explicit RootlessUser(bool with_ranges = true)
        : name_("mrit" + std::to_string(::getpid() % 100000)) {
        (void)run({"/usr/sbin/userdel", "-r", "-f", name_}); // a leftover of a killed run
        // -K SUB_*_COUNT=0: no automatic ranges; this test sets its own.
        auto added = run({"/usr/sbin/useradd", "-m", "-U", "-s", "/bin/sh", "-K", "SUB_UID_COUNT=0",
                          "-K", "SUB_GID_COUNT=0", name_});
        if (added.exit_code != 0) {
            throw std::runtime_error("useradd failed: " + added.describe());
        }
        uid_ = std::stoul(run({"/usr/bin/id", "-u", name_}).out);
        gid_ = std::stoul(run({"/usr/bin/id", "-g", name_}).out);
        if (with_ranges) {
            std::string range =
                std::to_string(kSubStart) + "-" + std::to_string(kSubStart + kSubCount - 1);
            auto ranged =
                run({"/usr/sbin/usermod", "--add-subuids", range, "--add-subgids", range, name_});
            if (ranged.exit_code != 0) {
                throw std::runtime_error("usermod failed: " + ranged.describe());
            }
        }
        run_dir_ = "/run/user/" + std::to_string(uid_);
        stdfs::create_directories(run_dir_);
        if (::chown(run_dir_.c_str(), uid_, gid_) != 0 || ::chmod(run_dir_.c_str(), 0700) != 0) {
            throw std::runtime_error("cannot prepare " + run_dir_);
        }
    }
    RootlessUser(const RootlessUser&) = delete;
    RootlessUser& operator=(const RootlessUser&) = delete;
    ~RootlessUser() {
        // The user's processes are the tests' containers: their TempBundles kill them.
        (void)run({"/usr/sbin/userdel", "-r", "-f", name_});
        std::error_code ignored;
        stdfs::remove_all(run_dir_, ignored);
    }

    [[nodiscard]] uint32_t uid() const { return uid_; }
    [[nodiscard]] const std::string& name() const { return name_; }
    [[nodiscard]] std::string state_root() const { return run_dir_ + "/mini-run"; }

    // argv run as this user, with its XDG_RUNTIME_DIR.
    [[nodiscard]] std::vector<std::string> as_user(const std::vector<std::string>& argv,
                                                   const std::string& xdg = {}) const {
        std::vector<std::string> full = {"/usr/sbin/runuser",
                                         "-u",
                                         name_,
                                         "--",
                                         "/usr/bin/env",
                                         "XDG_RUNTIME_DIR=" + (xdg.empty() ? run_dir_ : xdg)};
        full.insert(full.end(), argv.begin(), argv.end());
        return full;
    }
    [[nodiscard]] RunResult minirun(const std::vector<std::string>& args,
                                    const std::string& xdg = {}) const {
        std::vector<std::string> argv = {minirun_binary()};
        argv.insert(argv.end(), args.begin(), args.end());
        return run(as_user(argv, xdg));
    }

private:
    std::string name_;
    uint32_t uid_ = 0;
    uint32_t gid_ = 0;
    std::string run_dir_;
};

// A bundle with what `mini-run spec --rootless` writes for the user, its rootfs a copy of
// the example's, and `script` as the process (no terminal).
void use_rootless_spec(TempBundle& bundle, const RootlessUser& user, const std::string& script) {
    TempDir spec_dir;
    ::chown(spec_dir.path().c_str(), user.uid(), user.uid());
    auto written = user.minirun({"spec", "--bundle", spec_dir.path(), "--rootless"});
    if (written.exit_code != 0) {
        throw std::runtime_error("spec --rootless failed: " + written.describe());
    }
    bundle.config = nlohmann::json::parse(*read_file(spec_dir.path() + "/config.json"));
    bundle.copy_rootfs();
    bundle.config["root"]["path"] = bundle.dir() + "/rootfs";
    bundle.config["process"]["terminal"] = false;
    bundle.set_shell(script);
    bundle.write_config();
}

std::vector<std::string> run_argv(const TempBundle& bundle, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--bundle", bundle.dir(), bundle.id()});
    return args;
}

std::string proc(pid_t pid, const std::string& file = {}) {
    return "/proc/" + std::to_string(pid) + file;
}

bool exists(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0;
}

pid_t init_pid_of(const RootlessUser& user, const std::string& id) {
    auto state = user.minirun({"state", id});
    REQUIRE(state.exit_code == 0);
    return nlohmann::json::parse(state.out)["pid"].get<pid_t>();
}

} // namespace

TEST_CASE("rootless: spec --rootless runs as an unprivileged user, root only inside",
          "[rootless]") {
    RootlessUser user;
    TempBundle bundle("rootless-run");
    use_rootless_spec(bundle, user, "id -u; id -g; hostname; echo pid $$");
    auto result = user.minirun(run_argv(bundle));
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(result.out == "0\n0\nmini-run\npid 1\n");
    // no delegated cgroup on this machine, and the config asks for none: not a word, as
    // runc (its tests read the container's output, stderr included)
    CHECK(result.err.empty());
    CHECK_FALSE(exists(user.state_root() + "/" + bundle.id()));
    CHECK_FALSE(exists("/run/mini-run/" + bundle.id()));
}

TEST_CASE("rootless: the host sees the user's uid; state in the user's runtime directory",
          "[rootless]") {
    RootlessUser user;
    TempBundle bundle("rootless-host");
    use_rootless_spec(bundle, user, "exec sleep 600");
    auto started = user.minirun(run_argv(bundle, {"--detach"}));
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    pid_t pid = init_pid_of(user, bundle.id());
    // Uid: real, effective, saved, fs: the user's own uid from the host's side
    auto uids = status_field(pid, "Uid");
    REQUIRE(uids.size() == 4);
    CHECK(uids[0] == std::to_string(user.uid()));
    CHECK(uids[1] == std::to_string(user.uid()));
    CHECK(read_file(proc(pid, "/uid_map")).value_or("").find(std::to_string(user.uid())) !=
          std::string::npos);
    CHECK(exists(user.state_root() + "/" + bundle.id() + "/state.json"));
    CHECK_FALSE(exists("/run/mini-run/" + bundle.id()));

    auto inside = user.minirun({"exec", bundle.id(), "sh", "-c", "id -u; hostname; echo $$"});
    INFO(inside.describe());
    CHECK(inside.exit_code == 0);
    CHECK(contains(inside.out, "0\nmini-run\n"));

    auto ps = user.minirun({"ps", bundle.id()});
    CHECK(ps.exit_code == 0);
    CHECK(contains(ps.out, "sleep 600"));

    CHECK(user.minirun({"kill", bundle.id(), "KILL"}).exit_code == 0);
    CHECK(wait_for_exit(pid));
    reap_orphans();
    auto deleted = user.minirun({"delete", bundle.id()});
    INFO(deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK_FALSE(exists(user.state_root() + "/" + bundle.id()));
}

TEST_CASE("rootless: /etc/subuid ranges are mapped through newuidmap and newgidmap", "[rootless]") {
    RootlessUser user;
    TempBundle bundle("rootless-subuid");
    use_rootless_spec(bundle, user, "cat /proc/self/uid_map /proc/self/gid_map; exec sleep 600");
    nlohmann::json maps = {{{"containerID", 0}, {"hostID", user.uid()}, {"size", 1}},
                           {{"containerID", 1}, {"hostID", kSubStart}, {"size", kSubCount}}};
    bundle.config["linux"]["uidMappings"] = maps;
    maps[0]["hostID"] = user.uid(); // the user's group has the same id here
    bundle.config["linux"]["gidMappings"] = maps;
    bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    bundle.write_config();
    auto started = user.minirun(run_argv(bundle, {"--detach"}));
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    pid_t pid = init_pid_of(user, bundle.id());
    // container uid 1000 is host uid kSubStart + 999
    auto uids = status_field(pid, "Uid");
    REQUIRE_FALSE(uids.empty());
    CHECK(uids[0] == std::to_string(kSubStart + 999));
    auto map = split_words(read_file(proc(pid, "/uid_map")).value_or(""));
    CHECK(map == std::vector<std::string>{"0", std::to_string(user.uid()), "1", "1",
                                          std::to_string(kSubStart), std::to_string(kSubCount)});
    CHECK(user.minirun({"delete", "--force", bundle.id()}).exit_code == 0);
    CHECK(wait_for_exit(pid));
    reap_orphans();
}

TEST_CASE("rootless: /sys and the cgroups are read-only inside, all the way down", "[rootless]") {
    RootlessUser user;
    TempBundle bundle("rootless-ro");
    use_rootless_spec(bundle, user,
                      "grep -E ' /sys(/| )' /proc/self/mountinfo | grep -v ' ro,' | wc -l; "
                      "touch /sys/fs/cgroup/unified/x 2>&1 | grep -c Read-only; "
                      "grep -E ' /dev/cg(/| )' /proc/self/mountinfo | grep -vc ' ro,'");
    // a cgroup mount asking for read-write gets read-only all the same (CVE-2023-25809)
    bundle.config["mounts"].push_back({{"destination", "/dev/cg"},
                                       {"type", "cgroup"},
                                       {"source", "cgroup"},
                                       {"options", {"nosuid", "noexec", "nodev", "rw"}}});
    bundle.write_config();
    auto result = user.minirun(run_argv(bundle));
    INFO(result.describe());
    REQUIRE(result.exit_code == 1); // grep -vc found nothing writable: count 0, status 1
    CHECK(result.out == "0\n1\n0\n");
}

TEST_CASE("rootless: limits without a delegated cgroup are an error, nothing left", "[rootless]") {
    RootlessUser user;
    TempBundle bundle("rootless-limits");
    use_rootless_spec(bundle, user, "true");
    bundle.config["linux"]["resources"] = {{"memory", {{"limit", 64 << 20}}}};
    bundle.write_config();
    auto result = user.minirun(run_argv(bundle));
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(split_lines(result.err).size() == 1);
    CHECK(contains(result.err, "mini-run: linux.resources.memory: cannot be applied: running "
                               "rootless, and no cgroup v2 subtree is delegated to uid "));
    CHECK_FALSE(exists(user.state_root() + "/" + bundle.id()));
    CHECK(processes_with_marker(bundle.id()).empty());
}

TEST_CASE("rootless: a delegated cgroup v2 subtree holds the container and its limits",
          "[rootless]") {
    const std::string v2 = "/sys/fs/cgroup/unified";
    auto controllers = read_file(v2 + "/cgroup.subtree_control");
    if (!controllers || !contains(*controllers, "hugetlb")) {
        skip_test("no hugetlb controller enabled in the cgroup2 tree at " + v2);
        return;
    }
    RootlessUser user;
    TempBundle bundle("rootless-deleg");
    // What systemd's Delegate=yes hands a user: a subtree it owns, its processes in a leaf.
    const std::string delegated = v2 + "/mrit-" + std::to_string(::getpid());
    struct Remove {
        std::string dir;
        ~Remove() {
            ::rmdir((dir + "/leaf").c_str());
            ::rmdir(dir.c_str());
        }
    } remove{delegated};
    for (const std::string& dir : {delegated, delegated + "/leaf"}) {
        REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
        for (const char* file :
             {"", "/cgroup.procs", "/cgroup.subtree_control", "/cgroup.threads"}) {
            REQUIRE(::chown((dir + file).c_str(), user.uid(), user.uid()) == 0);
        }
    }
    use_rootless_spec(bundle, user, "grep ^0:: /proc/self/cgroup; exec sleep 600");
    const std::string name = "mrit-" + std::to_string(::getpid());
    bundle.config["linux"]["cgroupsPath"] = "/" + name + "/ctr";
    bundle.config["linux"]["resources"] = {
        {"hugepageLimits", {{{"pageSize", "2MB"}, {"limit", 4 << 20}}}}};
    bundle.write_config();
    // The user's mini-run starts inside the leaf, as a delegated user's processes do.
    std::vector<std::string> argv = user.as_user({minirun_binary()});
    for (const std::string& arg : run_argv(bundle, {"--detach"})) {
        argv.push_back(arg);
    }
    std::string command = "echo $$ > " + delegated + "/leaf/cgroup.procs && exec";
    for (const std::string& arg : argv) {
        command += " '" + arg + "'";
    }
    auto started = run({"/bin/sh", "-c", command});
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    CHECK(read_file(delegated + "/ctr/hugetlb.2MB.max") == "4194304\n");
    pid_t pid = init_pid_of(user, bundle.id());
    CHECK(contains(read_file(delegated + "/ctr/cgroup.procs").value_or(""), std::to_string(pid)));
    CHECK(user.minirun({"delete", "--force", bundle.id()}).exit_code == 0);
    CHECK_FALSE(exists(delegated + "/ctr"));

    SECTION("a limit the delegated cgroup has no controller for") {
        bundle.config["linux"]["resources"] = {{"memory", {{"limit", 64 << 20}}}};
        bundle.write_config();
        auto refused = run({"/bin/sh", "-c", command});
        CHECK(refused.exit_code != 0);
        CHECK(contains(refused.err, "linux.resources.memory: cannot be applied: the delegated "
                                    "cgroup " +
                                        delegated + " has no memory controller"));
        CHECK_FALSE(exists(delegated + "/ctr"));
    }
}

TEST_CASE("rootless: root of a user namespace that maps less than all ids is rootless too",
          "[rootless]") {
    // What rootless podman does: its own user namespace first (here unshare's, mapping the
    // user to 0), then the runtime inside it, with euid 0.
    RootlessUser user;
    TempBundle bundle("rootless-nested");
    use_rootless_spec(bundle, user, "cat /proc/self/uid_map; exec sleep 600");
    nlohmann::json maps = {{{"containerID", 0}, {"hostID", 0}, {"size", 1}}};
    bundle.config["linux"]["uidMappings"] = maps;
    bundle.config["linux"]["gidMappings"] = maps;
    bundle.write_config();
    std::vector<std::string> argv = {"/usr/bin/unshare", "--user", "--map-root-user",
                                     minirun_binary()};
    for (const std::string& arg : run_argv(bundle, {"--detach"})) {
        argv.push_back(arg);
    }
    auto started = run(user.as_user(argv));
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    // the state went to the user's runtime directory, not /run/mini-run
    CHECK(exists(user.state_root() + "/" + bundle.id() + "/state.json"));
    CHECK_FALSE(exists("/run/mini-run/" + bundle.id()));
    pid_t pid = init_pid_of(user, bundle.id());
    CHECK(status_field(pid, "Uid").at(0) == std::to_string(user.uid()));
    // exec from the host's side: the user owns the namespaces below its own
    auto inside = user.minirun({"exec", bundle.id(), "id", "-u"});
    INFO(inside.describe());
    CHECK(inside.out == "0\n");
    CHECK(user.minirun({"delete", "--force", bundle.id()}).exit_code == 0);
    CHECK_FALSE(exists(user.state_root() + "/" + bundle.id()));
}

TEST_CASE("rootless: bad input is one line, and leaves nothing behind", "[rootless]") {
    RootlessUser user;
    TempBundle bundle("rootless-bad");
    use_rootless_spec(bundle, user, "exec sleep 600");
    auto refused = [&](const std::vector<std::string>& args, const std::string& message,
                       const std::string& xdg = {}) {
        auto result = user.minirun(args, xdg);
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(split_lines(result.err).size() == 1);
        CHECK(contains(result.err, message));
        CHECK_FALSE(exists(user.state_root() + "/" + bundle.id()));
        CHECK(processes_with_marker(bundle.id()).empty());
    };

    SECTION("a mapping of ids the user does not own") {
        bundle.config["linux"]["uidMappings"] = {
            {{"containerID", 0}, {"hostID", user.uid()}, {"size", 1}},
            {{"containerID", 1}, {"hostID", 600000}, {"size", 1000}}};
        bundle.write_config();
        refused(run_argv(bundle), "mini-run: linux.uidMappings[1]: host ids 600000-600999 are "
                                  "not yours: /etc/subuid gives \"" +
                                      user.name() + "\" 400000-465535");
    }
    SECTION("another user's uid") {
        bundle.config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 0}, {"size", 1}}};
        bundle.write_config();
        refused(run_argv(bundle), "linux.uidMappings[0]: host ids 0-0 are not yours");
    }
    SECTION("no user namespace") {
        bundle.remove_namespaces({"user"});
        bundle.config["linux"].erase("uidMappings");
        bundle.config["linux"].erase("gidMappings");
        bundle.write_config();
        refused(run_argv(bundle), "linux.namespaces: running as uid " + std::to_string(user.uid()) +
                                      " (not root), the container needs a user namespace");
    }
    SECTION("an unwritable state directory") {
        refused(
            {"--root", "/var/lib/mrit-nope/state", "run", "--bundle", bundle.dir(), bundle.id()},
            "/var/lib/mrit-nope");
        CHECK_FALSE(exists("/var/lib/mrit-nope"));
    }
    SECTION("a seccomp listener path with no agent: the init's own error, every time") {
        // Without cgroups the parent reads the init's start time right after the clone,
        // while the init connects to the agent as its first step: the init could fail and
        // exit first, and `run` then said "process N has exited" instead of the init's
        // error (runc's seccomp-notify.bats "no seccompagent" caught it about one run in
        // three). A race, so many tries.
        bundle.config["linux"]["seccomp"] = {
            {"defaultAction", "SCMP_ACT_ALLOW"},
            {"listenerPath", "/run/mrit-no-agent.sock"},
            {"syscalls", {{{"names", {"mkdir"}}, {"action", "SCMP_ACT_NOTIFY"}}}}};
        bundle.set_shell("true");
        bundle.write_config();
        for (int i = 0; i < 40; ++i) {
            refused(run_argv(bundle), "linux.seccomp.listenerPath \"/run/mrit-no-agent.sock\": "
                                      "failed to connect with seccomp agent");
        }
    }
    SECTION("XDG_RUNTIME_DIR that is not the user's, and no /run/user/<uid> of its own") {
        ::chown(("/run/user/" + std::to_string(user.uid())).c_str(), 0, 0);
        refused(run_argv(bundle), "XDG_RUNTIME_DIR \"/tmp\" belongs to uid 0, not to you", "/tmp");
    }
}

TEST_CASE("rootless: a user without /etc/subuid ranges maps only its own id", "[rootless]") {
    RootlessUser user(false);
    TempBundle bundle("rootless-noranges");
    use_rootless_spec(bundle, user, "cat /proc/self/uid_map");
    auto own = user.minirun(run_argv(bundle));
    INFO(own.describe());
    CHECK(own.exit_code == 0);
    bundle.config["linux"]["uidMappings"].push_back(
        {{"containerID", 1}, {"hostID", kSubStart}, {"size", 10}});
    bundle.write_config();
    auto result = user.minirun(run_argv(bundle));
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(contains(result.err, "linux.uidMappings[1]: host ids 400000-400009 are not yours: "
                               "/etc/subuid gives \"" +
                                   user.name() + "\" (id " + std::to_string(user.uid()) +
                                   ") no range"));
    CHECK_FALSE(exists(user.state_root() + "/" + bundle.id()));
}

TEST_CASE("rootless: demo user runs as an unprivileged user", "[rootless][demo]") {
    RootlessUser user;
    auto result =
        run(user.as_user({"MINIRUN_SOURCE_DIR=" + source_dir(), minirun_binary(), "demo", "user"}));
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(
        contains(result.out, "ok      the host sees uid " + std::to_string(user.uid()) + " (you)"));
    CHECK(
        contains(result.out, "ok      uid_map maps 0 to " + std::to_string(user.uid()) + ", 1 id"));
    CHECK(contains(result.out, "ok      root inside cannot write the host root's file"));
    CHECK_FALSE(contains(result.out, "UNEXPECTED"));
    // the other demos still need root, and say so in one line
    auto refused = run(user.as_user({minirun_binary(), "demo", "net"}));
    CHECK(refused.exit_code != 0);
    CHECK(contains(refused.err, "except `demo user`, which runs rootless as any user"));
}

TEST_CASE("rootless: joining another container's user and pid namespaces (runc's kill.bats)",
          "[rootless][userns-join]") {
    // Unprivileged, mini-run may not join a pid namespace the first container's user
    // namespace owns; its init may, once it has joined that user namespace (pid.hpp).
    RootlessUser user;
    TempBundle target("rootless-target");
    use_rootless_spec(target, user, "exec sleep 600");
    auto started = user.minirun(run_argv(target, {"--detach"}));
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    const pid_t target_pid = init_pid_of(user, target.id());

    TempBundle attached("rootless-attached");
    use_rootless_spec(attached, user, "exec sleep 601");
    for (auto& ns : attached.config["linux"]["namespaces"]) {
        if (ns["type"] == "user" || ns["type"] == "pid") {
            ns["path"] = proc(target_pid, "/ns/" + ns["type"].get<std::string>());
        }
    }
    attached.config["linux"].erase("uidMappings");
    attached.config["linux"].erase("gidMappings");
    attached.write_config();
    auto joined = user.minirun(run_argv(attached, {"--detach"}));
    INFO(joined.describe());
    REQUIRE(joined.exit_code == 0);
    const pid_t attached_pid = init_pid_of(user, attached.id());
    // From outside: the second init is in the first's pid and user namespaces.
    auto ns = [](pid_t pid, const char* type) {
        std::error_code error;
        return stdfs::read_symlink(proc(pid, std::string("/ns/") + type), error).string();
    };
    CHECK_FALSE(ns(target_pid, "pid").empty());
    CHECK(ns(attached_pid, "pid") == ns(target_pid, "pid"));
    CHECK(ns(attached_pid, "user") == ns(target_pid, "user"));
    // From inside: both sleeps, the first as pid 1.
    auto ps = user.minirun({"exec", attached.id(), "ps", "-o", "pid,args"});
    INFO(ps.describe());
    CHECK(ps.exit_code == 0);
    CHECK(contains(ps.out, "sleep 600"));
    CHECK(contains(ps.out, "sleep 601"));

    for (const TempBundle* bundle : {&attached, &target}) {
        CHECK(user.minirun({"kill", bundle->id(), "KILL"}).exit_code == 0);
    }
    CHECK(wait_for_exit(attached_pid));
    // The second init is now a zombie whose parent is this test (the subreaper). A pid
    // namespace's init does not finish exiting before every task of its namespace has been
    // reaped (the kernel's zap_pid_ns_processes), so the first container's init waits on this
    // test: reap first, then wait for it.
    reap_orphans();
    CHECK(wait_for_exit(target_pid));
    for (const TempBundle* bundle : {&attached, &target}) {
        CHECK(user.minirun({"delete", "--force", bundle->id()}).exit_code == 0);
    }
}

TEST_CASE("rootless: neither a cgroup nor a pid namespace of its own is warned about, as runc",
          "[rootless]") {
    RootlessUser user;
    TempBundle bundle("rootless-nopid");
    use_rootless_spec(bundle, user, "true");
    auto& namespaces = bundle.config["linux"]["namespaces"];
    for (size_t i = 0; i < namespaces.size(); ++i) {
        if (namespaces[i]["type"] == "pid") {
            namespaces.erase(i);
            break;
        }
    }
    // No real /proc without a pid namespace of its own: the host's, bound (runc's create.bats).
    for (auto& mount : bundle.config["mounts"]) {
        if (mount["type"] == "proc") {
            mount = {{"destination", "/proc"},
                     {"type", "none"},
                     {"source", "/proc"},
                     {"options", {"rbind", "nosuid", "nodev", "noexec"}}};
        }
    }
    bundle.write_config();
    auto result = user.minirun(run_argv(bundle));
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.err, "Such configuration is strongly discouraged"));
}
