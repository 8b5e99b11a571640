// What Docker, Kubernetes' CRI and the runtime-spec send, and how runc answers it: exec
// failures in runc's words (Docker turns them into 127 and 126), a property that cannot be
// applied fails the create, every poststop hook runs, hooks without `env` inherit the
// runtime's environment, HOME from the container's /etc/passwd, kernel.domainname next to
// domainname, and crun's --config.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

bool exists(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0;
}

// The container's default cgroup (/<id>) in the hierarchies this test looks at.
std::vector<std::string> cgroups_of(const std::string& id) {
    std::vector<std::string> found;
    for (const char* controller : {"memory", "blkio", "pids", "cpu", "freezer"}) {
        std::string dir = std::string("/sys/fs/cgroup/") + controller + default_cgroup(id);
        if (exists(dir)) {
            found.push_back(dir);
        }
    }
    return found;
}

void write_script(const std::string& path, const std::string& body) {
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
}

} // namespace

TEST_CASE("exec failures are worded as runc's, which Docker maps to 127 and 126", "[ecosystem]") {
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<Case> cases = {
        {{"/nonexistent"}, R"(exec: "/nonexistent": stat /nonexistent: no such file or directory)"},
        {{"/etc/passwd"}, R"(exec: "/etc/passwd": permission denied)"},
        {{"/etc"}, R"(exec: "/etc": permission denied)"},
        {{"no-such-command"}, R"(exec: "no-such-command": executable file not found in $PATH)"},
    };
    for (const Case& c : cases) {
        INFO("args " << c.args.front());
        TempBundle bundle("exec-words");
        bundle.set_args(c.args);
        Runtime runtime;
        auto created = runtime.create(bundle);
        INFO(created.describe());
        CHECK(created.exit_code != 0);
        CHECK(contains(created.err_now(), c.message));
        check_root_empty(runtime);
        check_no_leftovers(bundle);
    }

    // exec into a running container: the same words, and runc's exit status 255.
    TempBundle bundle("exec-words-exec");
    bundle.set_shell(loop);
    Runtime runtime;
    REQUIRE(runtime.run_detached(bundle).exit_code == 0);
    auto missing = runtime({"exec", bundle.id(), "/nonexistent"});
    INFO(missing.describe());
    CHECK(missing.exit_code == 255);
    CHECK(contains(missing.err,
                   R"(exec: "/nonexistent": stat /nonexistent: no such file or directory)"));
    auto denied = runtime({"exec", bundle.id(), "/etc/passwd"});
    CHECK(contains(denied.err, R"(exec: "/etc/passwd": permission denied)"));
}

TEST_CASE("a security label the host cannot apply fails the create and leaves nothing",
          "[ecosystem]") {
    // runtime.md: a property that cannot be applied is an error. This host has neither
    // AppArmor nor SELinux; on one that has them, the made-up profile fails to load instead.
    struct Case {
        std::string pointer;
        std::string field;
    };
    for (const Case& c :
         {Case{"/process/apparmorProfile", "apparmor"}, Case{"/process/selinuxLabel", "selinux"},
          Case{"/linux/mountLabel", "selinux"}}) {
        INFO(c.pointer);
        TempBundle bundle("lsm-refused");
        bundle.set_shell("echo ran-unconfined");
        bundle.config[nlohmann::json::json_pointer(c.pointer)] = "mini-run-it-no-such-label";
        Runtime runtime;
        auto created = runtime.create(bundle);
        INFO(created.describe());
        CHECK(created.exit_code != 0);
        CHECK(contains(lower(created.err_now()), c.field));
        CHECK_FALSE(contains(created.out_now(), "ran-unconfined"));
        check_root_empty(runtime);
        CHECK(cgroups_of(bundle.id()).empty());
        check_no_leftovers(bundle);
    }
}

TEST_CASE("a cgroup knob this kernel lacks fails the create, naming the field", "[ecosystem]") {
    // blkio.leaf_weight was CFQ's, gone since Linux 5.0: runc fails here too.
    REQUIRE_FALSE(exists("/sys/fs/cgroup/blkio/blkio.leaf_weight"));
    TempBundle bundle("blkio-leaf");
    bundle.set_shell("echo ran-unlimited");
    bundle.config["linux"]["resources"]["blockIO"] = {{"leafWeight", 300}};
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO(created.describe());
    CHECK(created.exit_code != 0);
    CHECK(contains(created.err_now(), "linux.resources.blockIO.leafWeight: cannot be applied"));
    check_root_empty(runtime);
    CHECK(cgroups_of(bundle.id()).empty());
    check_no_leftovers(bundle);
}

TEST_CASE("hooks: every poststop hook runs, each failure a warning; no env inherits ours",
          "[ecosystem][hooks]") {
    TempDir dir;
    const std::string log = dir.path() + "/log";
    write_script(dir.path() + "/record.sh",
                 "echo \"$1 MARK=${MINIRUN_IT_MARK:-unset}\" >> " + log + "\nexit \"$2\"\n");
    auto hook = [&](const std::string& name, int status, bool with_env) {
        nlohmann::json entry = {
            {"path", dir.path() + "/record.sh"},
            {"args", {"record.sh", name, std::to_string(status)}},
        };
        if (with_env) {
            entry["env"] = nlohmann::json::array();
        }
        return entry;
    };
    TempBundle bundle("poststop-all");
    bundle.set_shell("true");
    bundle.config["hooks"]["poststop"] = {hook("first", 1, false), hook("second", 0, true),
                                          hook("third", 2, false)};
    ::setenv("MINIRUN_IT_MARK", "inherited", 1);
    auto ran = bundle.run();
    ::unsetenv("MINIRUN_IT_MARK");
    INFO(ran.describe());
    CHECK(ran.exit_code == 0);
    // All three ran, in order; the two without env saw our environment, the one with an
    // empty env saw none of it.
    CHECK(read_file(log).value_or("") ==
          "first MARK=inherited\nsecond MARK=unset\nthird MARK=inherited\n");
    CHECK(contains(ran.err, "hooks.poststop[0]"));
    CHECK(contains(ran.err, "hooks.poststop[2]"));
    CHECK_FALSE(contains(ran.err, "hooks.poststop[1]"));
    check_no_leftovers(bundle);
}

TEST_CASE("hooks: a failing poststart hook fails start and stops the container",
          "[ecosystem][hooks]") {
    TempBundle bundle("poststart-fails");
    bundle.set_shell(loop);
    bundle.config["hooks"]["poststart"] = {{{"path", "/bin/false"}}};
    Runtime runtime;
    REQUIRE(runtime.create(bundle).exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    auto started = runtime({"start", bundle.id()});
    INFO(started.describe());
    CHECK(started.exit_code != 0);
    CHECK(contains(started.err, "hooks.poststart[0]"));
    CHECK(wait_for_exit(*pid));
    reap(*pid);
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
}

TEST_CASE("process.env without HOME gets the user's home from the container's passwd",
          "[ecosystem]") {
    struct Case {
        int uid;
        std::vector<std::string> env_extra;
        std::string home;
    };
    const std::vector<Case> cases = {
        {0, {}, "/root"},
        {1000, {}, "/home/user"},
        {4242, {}, "/"},             // no passwd entry: runc's default
        {0, {"HOME="}, "/root"},     // empty counts as unset, as in runc
        {0, {"HOME=/kept"}, "/kept"} // the config's own wins
    };
    for (const Case& c : cases) {
        INFO("uid " << c.uid << " extra env " << nlohmann::json(c.env_extra).dump());
        TempBundle bundle("home");
        bundle.config["process"]["user"] = {{"uid", c.uid}, {"gid", c.uid}};
        for (const std::string& entry : c.env_extra) {
            bundle.config["process"]["env"].push_back(entry);
        }
        bundle.set_shell("echo \"home=[$HOME]\"; env | grep -c '^HOME='");
        auto ran = bundle.run();
        INFO(ran.describe());
        CHECK(ran.exit_code == 0);
        CHECK(contains(ran.out, "home=[" + c.home + "]\n1\n"));
    }

    // exec: the same rule for the exec'd process.
    TempBundle bundle("home-exec");
    bundle.set_shell(loop);
    Runtime runtime;
    REQUIRE(runtime.run_detached(bundle).exit_code == 0);
    auto exec = runtime({"exec", "--user", "1000:1000", bundle.id(), "sh", "-c", "echo $HOME"});
    INFO(exec.describe());
    CHECK(exec.out == "/home/user\n");
}

TEST_CASE("linux.sysctl kernel.domainname next to an equal domainname", "[ecosystem]") {
    TempBundle bundle("domainname");
    bundle.config["domainname"] = "example.org";
    bundle.config["linux"]["sysctl"] = {{"kernel.domainname", "example.org"}};
    bundle.set_shell("cat /proc/sys/kernel/domainname");
    auto ran = bundle.run();
    INFO(ran.describe());
    CHECK(ran.exit_code == 0);
    CHECK(ran.out == "example.org\n");

    bundle.config["linux"]["sysctl"] = {{"kernel.domainname", "other.org"}};
    auto refused = bundle.run();
    CHECK(refused.exit_code != 0);
    CHECK(contains(refused.err, R"(linux.sysctl."kernel.domainname": "other.org" conflicts)"));
    check_no_leftovers(bundle);
}

TEST_CASE("run and create take crun's --config FILE", "[ecosystem]") {
    TempBundle bundle("config-flag");
    bundle.set_shell("echo from-other-config");
    bundle.write_config();
    // The other file holds the config; config.json is made useless.
    std::ofstream(bundle.dir() + "/other.json") << bundle.config.dump();
    std::ofstream(bundle.dir() + "/config.json") << "{}";
    auto ran =
        run_minirun({"run", "--bundle", bundle.dir(), "--config", "other.json", bundle.id()});
    INFO(ran.describe());
    CHECK(ran.exit_code == 0);
    CHECK(ran.out == "from-other-config\n");
    auto missing = run_minirun({"run", "--bundle", bundle.dir(), "-f", "none.json", bundle.id()});
    CHECK(missing.exit_code != 0);
    CHECK(contains(missing.err, bundle.dir() + "/none.json"));
    check_no_leftovers(bundle);
}
