// config.json hooks: each kind runs at its point of the lifecycle, with the state JSON on
// stdin, in the right mount namespace; a failing hook undoes the create; a failing
// poststop only warns.
//
// Each hook is a /bin/sh script in a host directory that is also bind-mounted at the same
// path into the container (a copy of the rootfs has the mount point), so one path works
// for the hooks that run on the host and for those that run in the container. The script
// records, per kind, its stdin, its mount namespace, and appends the kind to an order file.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

const std::vector<std::string> all_kinds{"prestart",       "createRuntime", "createContainer",
                                         "startContainer", "poststart",     "poststop"};

class HookSetup {
public:
    explicit HookSetup(TempBundle& bundle, const std::string& failing_kind = {}) : bundle_(bundle) {
        const std::string& dir = hooks_.path();
        write_script(dir + "/hook.sh", body(0));
        write_script(dir + "/fail.sh", body(1));
        const std::string rootfs = bundle.copy_rootfs();
        auto made = it::run({"/bin/mkdir", "-p", rootfs + dir});
        if (made.exit_code != 0) {
            throw std::runtime_error("mkdir failed: " + made.describe());
        }
        bundle.config["mounts"].push_back({{"destination", dir},
                                           {"type", "bind"},
                                           {"source", dir},
                                           {"options", {"rbind", "rw"}}});
        set_hooks(failing_kind);
    }

    // Every kind runs hook.sh, except `failing_kind`, which runs fail.sh (records, then
    // exits 1).
    void set_hooks(const std::string& failing_kind) {
        nlohmann::json hooks = nlohmann::json::object();
        for (const auto& kind : all_kinds) {
            const std::string script =
                hooks_.path() + (kind == failing_kind ? "/fail.sh" : "/hook.sh");
            hooks[kind] = nlohmann::json::array(
                {{{"path", script},
                  {"args", {kind == failing_kind ? "fail.sh" : "hook.sh", kind}},
                  {"env", {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}}}});
        }
        bundle_.config["hooks"] = hooks;
    }

    [[nodiscard]] std::vector<std::string> order() const {
        return split_lines(read_file(hooks_.path() + "/order").value_or(""));
    }
    bool wait_for_order(size_t count, Millis timeout = 10s) const {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (order().size() < count) {
            if (std::chrono::steady_clock::now() >= deadline) {
                return false;
            }
            std::this_thread::sleep_for(20ms);
        }
        return true;
    }
    [[nodiscard]] std::string file(const std::string& kind, const std::string& what) const {
        return read_file(hooks_.path() + "/" + kind + "." + what)
            .value_or("<no " + kind + "." + what + ">");
    }
    [[nodiscard]] std::string mnt(const std::string& kind) const {
        std::string text = file(kind, "mnt");
        while (!text.empty() && text.back() == '\n') {
            text.pop_back();
        }
        return text;
    }
    [[nodiscard]] nlohmann::json state(const std::string& kind) const {
        return nlohmann::json::parse(file(kind, "json"), nullptr, false);
    }

private:
    static void write_script(const std::string& path, const std::string& text) {
        std::ofstream(path) << text;
        ::chmod(path.c_str(), 0755);
    }
    [[nodiscard]] std::string body(int exit_code) const {
        const std::string& dir = hooks_.path();
        return "#!/bin/sh\n"
               "kind=$1\n"
               "dir=" +
               dir +
               "\n"
               "cat > \"$dir/$kind.json\"\n"
               "readlink /proc/self/ns/mnt > \"$dir/$kind.mnt\"\n"
               "if [ \"$kind\" = poststart ]; then\n"
               "  pid=$(sed -n 's/.*\"pid\"[^0-9]*\\([0-9][0-9]*\\).*/\\1/p' \"$dir/$kind.json\" "
               "| head -n 1)\n"
               "  tr '\\0' ' ' < /proc/$pid/cmdline > \"$dir/poststart.cmdline\"\n"
               "fi\n"
               "echo \"$kind\" >> \"$dir/order\"\n"
               "echo \"a message on stderr\" >&2\n"
               "exit " +
               std::to_string(exit_code) + "\n";
    }

    TempBundle& bundle_;
    TempDir hooks_{"minirun-hooks"};
};

} // namespace

TEST_CASE("hooks: each kind at its point, with the state on stdin, in its namespace", "[hooks]") {
    TempBundle bundle("hooks");
    HookSetup hooks(bundle);
    bundle.set_shell(loop);
    Runtime runtime;
    const std::string host_mnt = ns_link(0, "mnt");

    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    const std::string container_mnt = ns_link(*pid, "mnt");
    INFO("host mnt " << host_mnt << ", container mnt " << container_mnt << ", init " << *pid);
    REQUIRE(container_mnt != host_mnt);

    // create: prestart, createRuntime, createContainer, in this order, nothing else.
    CHECK(hooks.order() ==
          std::vector<std::string>{"prestart", "createRuntime", "createContainer"});

    // start: startContainer (before the user's process), then poststart (after it started).
    auto started = runtime({"start", bundle.id()});
    INFO("start: " << started.describe());
    REQUIRE(started.exit_code == 0);
    CHECK(hooks.wait_for_order(5));
    CHECK(hooks.order() == std::vector<std::string>{"prestart", "createRuntime", "createContainer",
                                                    "startContainer", "poststart"});
    // When poststart ran, the init already was the user's process.
    CHECK(contains(hooks.file("poststart", "cmdline"), bundle.id()));

    // kill, then delete: poststop.
    REQUIRE(runtime({"kill", bundle.id(), "KILL"}).exit_code == 0);
    CHECK(wait_for_exit(*pid));
    reap(*pid);
    REQUIRE(runtime.wait_for_status(bundle.id(), "stopped"));
    CHECK(hooks.order().size() == 5); // nothing runs at kill or at the init's exit
    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(hooks.order() == std::vector<std::string>{"prestart", "createRuntime", "createContainer",
                                                    "startContainer", "poststart", "poststop"});
    check_root_empty(runtime);

    // Namespaces: createContainer and startContainer in the container's, the rest on the
    // host's.
    for (const auto& kind : all_kinds) {
        INFO("hook " << kind);
        if (kind == "createContainer" || kind == "startContainer") {
            CHECK(hooks.mnt(kind) == container_mnt);
        } else {
            CHECK(hooks.mnt(kind) == host_mnt);
        }
    }

    // The state on stdin: one JSON object with the container's id and bundle; the hooks
    // that run on the host see the init's host pid.
    for (const auto& kind : all_kinds) {
        INFO("hook " << kind << " got: " << hooks.file(kind, "json"));
        auto state = hooks.state(kind);
        REQUIRE(state.is_object());
        CHECK(state["id"] == bundle.id());
        CHECK(state["bundle"] == bundle.dir());
        CHECK(state["ociVersion"].is_string());
        CHECK(state["status"].is_string());
        if (kind == "prestart" || kind == "createRuntime" || kind == "poststart") {
            CHECK(state["pid"] == *pid);
        }
    }
    check_no_leftovers(bundle);
}

TEST_CASE("hooks: a failing create-time hook undoes the create", "[hooks]") {
    const std::string failing = GENERATE(std::string("prestart"), std::string("createRuntime"),
                                         std::string("createContainer"));
    INFO("failing hook " << failing);
    TempBundle bundle("hook-fail");
    HookSetup hooks(bundle, failing);
    bundle.set_shell(loop);
    Runtime runtime;

    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    CHECK(created.exit_code != 0);
    // The error names the hook: its kind or its path.
    CHECK((contains(created.err, failing) || contains(created.err, "fail.sh")));
    // The failing hook ran, then no other hook but poststop (runtime-spec: a failing
    // create-time hook stops the container and goes on with its destruction, whose last step
    // runs the poststop hooks).
    auto order = hooks.order();
    INFO("hooks run: " << nlohmann::json(order).dump());
    auto failed_at = std::find(order.begin(), order.end(), failing);
    REQUIRE(failed_at != order.end());
    for (auto after = failed_at + 1; after != order.end(); ++after) {
        CHECK(*after == "poststop");
    }
    CHECK(std::count(order.begin(), order.end(), failing) == 1);

    // Nothing is left: no state, no process, no mount.
    check_root_empty(runtime);
    auto state = runtime({"state", bundle.id()});
    CHECK(state.exit_code != 0);
    if (auto pid = runtime.pid_from_file(bundle.id())) {
        CHECK(wait_for_exit(*pid, 5s));
    }
    for (pid_t orphan : live_orphans()) {
        INFO("live child of the test " << orphan << ": " << cmdline_of(orphan));
        CHECK(wait_for_exit(orphan, 5s));
    }
    reap_orphans();
    check_no_leftovers(bundle);

    // The same id can be created again right away.
    hooks.set_hooks({});
    auto again = runtime.create(bundle);
    INFO("create again: " << again.describe());
    CHECK(again.exit_code == 0);
    CHECK(runtime.status(bundle.id()) == "created");
}

TEST_CASE("hooks: a failing poststop only warns", "[hooks]") {
    TempBundle bundle("hook-poststop");
    HookSetup hooks(bundle, "poststop");
    bundle.set_shell(loop);
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    REQUIRE(runtime({"start", bundle.id()}).exit_code == 0);
    REQUIRE(runtime({"kill", bundle.id(), "KILL"}).exit_code == 0);
    CHECK(wait_for_exit(*pid));
    reap(*pid);
    REQUIRE(runtime.wait_for_status(bundle.id(), "stopped"));
    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    auto order = hooks.order();
    CHECK((!order.empty() && order.back() == "poststop"));
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("hooks: delete of a container whose saved config is damaged warns that its poststop "
          "hooks did not run, and deletes it",
          "[hooks]") {
    const std::string damage = GENERATE(as<std::string>{}, "garbage", "missing");
    INFO("saved config.json: " << damage);
    TempBundle bundle("hook-noconfig");
    HookSetup hooks(bundle);
    bundle.set_shell("true");
    Runtime runtime;
    create_start_until_stopped(runtime, bundle);
    const std::string saved = runtime.root() + "/" + bundle.id() + "/config.json";
    REQUIRE(::unlink(saved.c_str()) == 0);
    if (damage == "garbage") {
        write_text(saved, "{\"ociVersion\": \"1.");
    }

    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(contains(deleted.err, "container \"" + bundle.id() +
                                    "\": poststop hooks not run: its saved config cannot be "
                                    "read: "));
    CHECK(contains(deleted.err, saved));
    auto order = hooks.order();
    CHECK(std::find(order.begin(), order.end(), "poststop") == order.end());
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

// runc's hooks.bats "startContainer hook should inherit process environment": a
// startContainer hook without env of its own runs with the process's (deduplicated, HOME
// added); one with env keeps it.
TEST_CASE("hooks: a startContainer hook without env gets the process's", "[hooks]") {
    TempBundle bundle("hooks-env");
    const std::string rootfs = bundle.copy_rootfs();
    write_text(rootfs + "/check-env.sh", "#!/bin/sh -ue\n"
                                         "test $ONE = two\ntest $FOO = bar\n"
                                         "echo \"HOME=$HOME OWN=${OWN:-}\" >> /hook-env\n");
    REQUIRE(::chmod((rootfs + "/check-env.sh").c_str(), 0755) == 0);
    bundle.config["root"]["readonly"] = false; // the hooks write /hook-env
    bundle.config["process"]["env"] = {"ONE=one", "ONE=two", "FOO=bar", "PATH=/bin"};
    bundle.config["hooks"]["startContainer"] = {
        {{"path", "/check-env.sh"}},
        {{"path", "/bin/sh"},
         {"args", {"sh", "-c", "echo OWN=$OWN ONE=${ONE:-unset} >> /hook-env"}},
         {"env", {"OWN=mine"}}}};
    bundle.set_args({"/bin/true"});
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    auto written = read_file(rootfs + "/hook-env");
    REQUIRE(written.has_value());
    CHECK(*written == "HOME=/root OWN=\nOWN=mine ONE=unset\n");
    check_no_leftovers(bundle);
}
