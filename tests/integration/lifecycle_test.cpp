// The container lifecycle through the separate commands: create, start, state, kill,
// delete, run --detach / --keep, list, ps, the pid file, the log file, --root and the
// descriptors a container inherits. Checked from the runtime's output, from inside the
// container (what it writes into a host directory bind-mounted into it) and from outside
// (the host's /proc).
//
// Every test uses a private state root (Runtime passes --root on every call) and deletes its
// containers with `delete --force` in Runtime's destructor, even when it fails.
//
// This file: create, start, kill, delete and ids; run, list, ps, the pid file, the log,
// --root and descriptors in lifecycle_run_test.cpp. Shared helpers: lifecycle_helpers.hpp.
#include "lifecycle_helpers.hpp"

#include <catch2/catch.hpp>

using namespace lifecycle_test;

TEST_CASE("lifecycle: create, start, kill, state and delete", "[lifecycle]") {
    TempBundle bundle("life");
    TempDir shared("minirun-shared");
    bind_host_dir(bundle, shared.path());
    bundle.config["annotations"] = {{"org.example.it", "lifecycle"}};
    bundle.set_shell("trap 'echo term > /tmp/got-term; exit 42' TERM; touch /tmp/ran; "
                     "echo ran-stdout; " +
                     std::string(loop));
    Runtime runtime;

    // create: the container is set up, its init waits; the user's process has not run.
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);

    auto pid_text = read_file(runtime.pid_file(bundle.id()));
    REQUIRE(pid_text.has_value());
    INFO("pid file: '" << *pid_text << "'");
    CHECK(std::regex_match(*pid_text, std::regex("[1-9][0-9]*"))); // no newline, no spaces
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    INFO("init pid " << *pid);

    auto state = runtime.state(bundle.id());
    REQUIRE(state.has_value());
    INFO("state: " << state->dump());
    CHECK((*state)["ociVersion"].is_string());
    CHECK_FALSE((*state)["ociVersion"].get<std::string>().empty());
    CHECK((*state)["id"] == bundle.id());
    CHECK((*state)["status"] == "created");
    CHECK((*state)["pid"] == *pid);
    CHECK((*state)["bundle"] == bundle.dir());
    CHECK((*state)["rootfs"] == example_rootfs());
    REQUIRE((*state)["created"].is_string());
    CHECK(is_rfc3339((*state)["created"].get<std::string>()));
    CHECK((*state)["owner"].is_string());
    CHECK((*state)["annotations"]["org.example.it"] == "lifecycle");

    CHECK(process_alive(*pid));
    // The init is pid 1 of the container's pid namespace.
    auto nspids = ns_pids(*pid);
    CHECK(nspids.size() == 2);
    CHECK((!nspids.empty() && nspids.back() == 1));
    CHECK(ns_link(*pid, "mnt") != ns_link(0, "mnt"));

    // Give a runtime that runs the process too early the time to do it.
    std::this_thread::sleep_for(300ms);
    CHECK_FALSE(file_exists(shared.path() + "/ran"));
    CHECK_FALSE(contains(created.out_now(), "ran-stdout"));
    CHECK(runtime.status(bundle.id()) == "created");

    // start: releases the init, which runs the user's process.
    auto started = runtime({"start", bundle.id()}, {}, 10s);
    INFO("start: " << started.describe());
    REQUIRE(started.exit_code == 0);
    CHECK(wait_for_file(shared.path() + "/ran"));
    CHECK(runtime.status(bundle.id()) == "running");
    CHECK(state_pid(runtime, bundle.id()) == *pid);
    CHECK(process_alive(*pid));
    CHECK(contains(cmdline_of(*pid), bundle.id())); // the user's sh -c ... <id>

    // A second start fails, and changes nothing.
    auto again = runtime({"start", bundle.id()});
    INFO("second start: " << again.describe());
    CHECK(again.exit_code != 0);
    CHECK(runtime.status(bundle.id()) == "running");
    CHECK(process_alive(*pid));

    // kill without a signal sends TERM; the shell's trap makes it exit 42.
    auto killed = runtime({"kill", bundle.id()});
    INFO("kill: " << killed.describe());
    CHECK(killed.exit_code == 0);
    CHECK(wait_for_exit(*pid));
    CHECK(read_file(shared.path() + "/got-term").value_or("") == "term\n");
    auto status = reap(*pid); // the test is a subreaper: the init is its child now
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 42);
    CHECK(runtime.status(bundle.id()) == "stopped");

    // kill on a stopped container: "container not running".
    auto dead_kill = runtime({"kill", bundle.id(), "KILL"});
    INFO("kill on stopped: " << dead_kill.describe());
    CHECK(dead_kill.exit_code != 0);
    CHECK(mentions(dead_kill.err, "container not running"));

    // start on a stopped container fails too.
    auto dead_start = runtime({"start", bundle.id()});
    INFO("start on stopped: " << dead_start.describe());
    CHECK(dead_start.exit_code != 0);

    // delete of a stopped container needs no --force, and removes everything.
    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_root_empty(runtime);
    auto gone = runtime({"state", bundle.id()});
    INFO("state after delete: " << gone.describe());
    CHECK(gone.exit_code != 0);
    CHECK(mentions(gone.err, "does not exist"));
    check_no_leftovers(bundle);
}

TEST_CASE("create: the init is left with no helper process, reparented to the subreaper",
          "[lifecycle]") {
    TempBundle bundle("nohelper");
    bundle.set_shell(loop);
    Runtime runtime; // makes the test a child subreaper
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    auto parent = parent_pid(*pid);
    REQUIRE(parent.has_value());
    INFO("init " << *pid << " has parent " << *parent << ": " << cmdline_of(*parent));
    CHECK(*parent == getpid());
    // No other process of the runtime stays behind for this container.
    for (pid_t other : processes_with_marker(bundle.id())) {
        INFO("process " << other << ": " << cmdline_of(other));
        CHECK(other == *pid);
    }
    for (pid_t orphan : live_orphans()) {
        INFO("live child of the test " << orphan << ": " << cmdline_of(orphan));
        CHECK(orphan == *pid);
    }

    SECTION("and after start too") {
        auto started = runtime({"start", bundle.id()});
        INFO("start: " << started.describe());
        REQUIRE(started.exit_code == 0);
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
        CHECK(parent_pid(*pid) == getpid());
        for (pid_t orphan : live_orphans()) {
            INFO("live child of the test " << orphan << ": " << cmdline_of(orphan));
            CHECK(orphan == *pid);
        }
    }
    auto deleted = runtime({"delete", "--force", bundle.id()});
    INFO("delete --force: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(wait_for_exit(*pid));
    CHECK(reap(*pid).has_value());
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("delete: a running container needs --force", "[lifecycle]") {
    TempBundle bundle("delete-running");
    bundle.set_shell(std::string("echo up; ") + loop);
    Runtime runtime;
    pid_t pid = create_and_start(runtime, bundle);
    REQUIRE(runtime.wait_for_status(bundle.id(), "running"));

    auto refused = runtime({"delete", bundle.id()});
    INFO("delete without --force: " << refused.describe());
    CHECK(refused.exit_code != 0);
    CHECK(runtime.status(bundle.id()) == "running");
    CHECK(state_pid(runtime, bundle.id()) == pid);
    CHECK(process_alive(pid));
    CHECK(runtime.root_entries().size() == 1);

    auto forced = runtime({"delete", "--force", bundle.id()});
    INFO("delete --force: " << forced.describe());
    CHECK(forced.exit_code == 0);
    CHECK(wait_for_exit(pid));
    CHECK(reap(pid).has_value());
    check_root_empty(runtime);
    auto gone = runtime({"state", bundle.id()});
    CHECK(gone.exit_code != 0);
    check_no_leftovers(bundle);
}

TEST_CASE("delete -f: the short flag kills a created container", "[lifecycle]") {
    TempBundle bundle("delete-short");
    bundle.set_shell(loop);
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    auto forced = runtime({"delete", "-f", bundle.id()});
    INFO("delete -f: " << forced.describe());
    CHECK(forced.exit_code == 0);
    CHECK(wait_for_exit(*pid));
    reap(*pid);
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("kill: TERM stops a created container, as runc's init does", "[lifecycle][kill]") {
    // The created init is the first process of its PID namespace, which gets no signal it
    // has no handler for; runc's init has handlers while it waits for start, and engines
    // (runc's pidfd-socket.bats) stop a created container with SIGTERM.
    TempBundle bundle("kill-created");
    bundle.set_shell(loop);
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    auto killed = runtime({"kill", bundle.id(), "TERM"});
    INFO("kill: " << killed.describe());
    CHECK(killed.exit_code == 0);
    REQUIRE(wait_for_exit(*pid));
    auto status = reap(*pid);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 128 + SIGTERM);
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("delete: a container whose process exited", "[lifecycle]") {
    TempBundle bundle("delete-stopped");
    bundle.set_shell("exit 3");
    Runtime runtime;
    pid_t pid = create_and_start(runtime, bundle);
    CHECK(wait_for_exit(pid));
    auto status = reap(pid);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 3);
    CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("unknown ids: does not exist, except for delete --force", "[lifecycle]") {
    Runtime runtime;
    const std::string id = "it-unknown-" + std::to_string(getpid());
    SECTION("delete --force succeeds") {
        auto result = runtime({"delete", "--force", id});
        INFO(result.describe());
        CHECK(result.exit_code == 0);
    }
    SECTION("delete fails") {
        auto result = runtime({"delete", id});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(mentions(result.err, "does not exist"));
    }
    SECTION("state fails") {
        auto result = runtime({"state", id});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(mentions(result.err, "does not exist"));
        CHECK(result.out.empty());
    }
    SECTION("kill fails") {
        auto result = runtime({"kill", id, "KILL"});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(mentions(result.err, "does not exist"));
    }
    SECTION("start fails") {
        auto result = runtime({"start", id});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(mentions(result.err, "does not exist"));
    }
    check_root_empty(runtime);
}

TEST_CASE("create: a duplicate id fails with 'already exists', the first one unharmed",
          "[lifecycle]") {
    TempBundle first("dup");
    first.set_shell(loop);
    TempBundle second("dup-second");
    second.set_shell(loop);
    second.write_config();
    Runtime runtime;
    auto created = runtime.create(first);
    INFO("first create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(first.id());
    REQUIRE(pid.has_value());
    auto pid_text = read_file(runtime.pid_file(first.id()));

    const std::string other_pid_file = runtime.io_dir() + "/second.pid";
    auto duplicate = runtime.to_files(
        {"create", "--bundle", second.dir(), "--pid-file", other_pid_file, first.id()});
    INFO("second create: " << duplicate.describe());
    CHECK(duplicate.exit_code != 0);
    CHECK(mentions(duplicate.err, "already exists"));
    CHECK_FALSE(read_file(other_pid_file).has_value());

    auto state = runtime.state(first.id());
    REQUIRE(state.has_value());
    CHECK((*state)["status"] == "created");
    CHECK((*state)["pid"] == *pid);
    CHECK((*state)["bundle"] == first.dir());
    CHECK(process_alive(*pid));
    CHECK(read_file(runtime.pid_file(first.id())) == pid_text);
    for (pid_t orphan : live_orphans()) {
        INFO("live child of the test " << orphan << ": " << cmdline_of(orphan));
        CHECK(orphan == *pid);
    }
    // The first one still starts.
    auto started = runtime({"start", first.id()});
    INFO("start: " << started.describe());
    CHECK(started.exit_code == 0);
    CHECK(runtime.wait_for_status(first.id(), "running"));
}

TEST_CASE("ids: invalid ids are rejected and nothing is created", "[lifecycle][ids]") {
    const std::string id =
        GENERATE(std::string("../x"), std::string("a/b"), std::string(""), std::string(".hidden"),
                 std::string("."), std::string(".."), std::string("a b"), std::string(1025, 'a'));
    INFO("id '" << id << "'");
    TempBundle bundle("badid");
    bundle.set_shell("echo ran");
    bundle.write_config();
    TempDir parent("minirun-ids");
    const std::string root = parent.path() + "/root";
    Runtime runtime(root);
    auto created = runtime.to_files({"create", "--bundle", bundle.dir(), id});
    INFO("create: " << created.describe());
    CHECK(created.exit_code != 0);
    CHECK_FALSE(created.err.empty());
    CHECK(runtime.root_entries().empty());
    CHECK_FALSE(file_exists(parent.path() + "/x")); // root/../x
    CHECK_FALSE(file_exists(parent.path() + "/a"));
    CHECK(live_orphans().empty());

    auto ran = runtime({"run", "--bundle", bundle.dir(), id}, {}, 10s);
    INFO("run: " << ran.describe());
    CHECK(ran.exit_code != 0);
    CHECK_FALSE(ran.timed_out);
    CHECK(runtime.root_entries().empty());
    CHECK_FALSE(file_exists(parent.path() + "/x"));
    for (const char* command : {"state", "start", "kill", "delete"}) {
        auto result = runtime({command, id});
        INFO(command << ": " << result.describe());
        CHECK(result.exit_code != 0);
    }
    CHECK(runtime.root_entries().empty());
    check_no_leftovers(bundle);
}

TEST_CASE("ids: every allowed character", "[lifecycle][ids]") {
    TempBundle bundle("goodid");
    bundle.set_shell("echo ok");
    bundle.write_config();
    Runtime runtime;
    const std::string id = "A_z+0.9-" + bundle.id();
    runtime.track(id);
    auto result = runtime({"run", "--bundle", bundle.dir(), id});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(result.out == "ok\n");
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("kill: an init killed from outside makes the state stopped", "[lifecycle][kill]") {
    TempBundle bundle("outside-kill");
    bundle.set_shell(loop);
    Runtime runtime;
    pid_t pid = create_and_start(runtime, bundle);
    REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    REQUIRE(wait_for_exit(pid));

    SECTION("while it is a zombie not reaped yet") {
        REQUIRE(process_state(pid) == 'Z');
        CHECK(runtime.status(bundle.id()) == "stopped");
        reap(pid);
    }
    SECTION("after it was reaped") {
        auto status = reap(pid);
        REQUIRE(status.has_value());
        CHECK(WIFSIGNALED(*status));
        CHECK(runtime.status(bundle.id()) == "stopped");
    }
    auto killed = runtime({"kill", bundle.id()});
    INFO("kill: " << killed.describe());
    CHECK(killed.exit_code != 0);
    CHECK(mentions(killed.err, "container not running"));
    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("kill: the signal as a number, a name or a SIG name", "[lifecycle][kill]") {
    const std::string signal =
        GENERATE(std::string("9"), std::string("KILL"), std::string("SIGKILL"));
    INFO("signal " << signal);
    TempBundle bundle("kill-forms");
    bundle.set_shell(loop);
    Runtime runtime;
    pid_t pid = create_and_start(runtime, bundle);
    REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    auto killed = runtime({"kill", bundle.id(), signal});
    INFO("kill: " << killed.describe());
    CHECK(killed.exit_code == 0);
    REQUIRE(wait_for_exit(pid));
    auto status = reap(pid);
    REQUIRE(status.has_value());
    CHECK(WIFSIGNALED(*status));
    CHECK(WTERMSIG(*status) == SIGKILL);
    CHECK(runtime.status(bundle.id()) == "stopped");
}

TEST_CASE("kill: a named signal other than KILL reaches the init's trap", "[lifecycle][kill]") {
    TempBundle bundle("kill-usr1");
    bundle.set_shell(std::string("trap 'exit 46' USR1; echo trap-set; ") + loop);
    Runtime runtime;
    FileRunResult created;
    pid_t pid = create_and_start(runtime, bundle, &created);
    // The shell says when its trap is set.
    REQUIRE(wait_until([&] { return contains(created.out_now(), "trap-set\n"); }));
    auto killed = runtime({"kill", bundle.id(), "USR1"});
    INFO("kill: " << killed.describe());
    CHECK(killed.exit_code == 0);
    REQUIRE(wait_for_exit(pid));
    auto status = reap(pid);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 46);
}

TEST_CASE("kill --all: every process of the container gets the signal", "[lifecycle][kill]") {
    TempBundle bundle("kill-all");
    // pid 1 of a pid namespace ignores TERM when it has no handler; with this trap it
    // reports it and goes on. The background sleepers die of TERM.
    bundle.set_shell("trap 'echo init-got-term' TERM; sleep 1000 & sleep 1000 & echo ready; " +
                     std::string(loop));
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    REQUIRE(runtime({"start", bundle.id()}).exit_code == 0);
    const std::string pidns = ns_link(*pid, "pid");

    auto sleepers = [&] {
        std::vector<pid_t> found;
        for (pid_t p : processes_in_pid_namespace(pidns)) {
            if (cmdline_of(p) == "sleep 1000") {
                found.push_back(p);
            }
        }
        return found;
    };
    REQUIRE(wait_until([&] { return sleepers().size() >= 2; }));
    REQUIRE(sleepers().size() == 2);

    // Each TERM the init traps is one line of its output.
    auto init_got_term = [&](size_t times) {
        return wait_until(
            [&] {
                std::string out = created.out_now();
                size_t count = 0;
                for (size_t at = out.find("init-got-term"); at != std::string::npos;
                     at = out.find("init-got-term", at + 1)) {
                    ++count;
                }
                return count >= times;
            },
            5s);
    };

    // Without --all only the init gets it: once it has acted on it, a signal sent to the
    // sleepers would have ended them too.
    auto one = runtime({"kill", bundle.id(), "TERM"});
    INFO("kill: " << one.describe());
    CHECK(one.exit_code == 0);
    CHECK(init_got_term(1));
    CHECK(sleepers().size() == 2);
    CHECK(process_alive(*pid));

    SECTION("--all") {
        auto all = runtime({"kill", "--all", bundle.id(), "TERM"});
        INFO("kill --all: " << all.describe());
        CHECK(all.exit_code == 0);
    }
    SECTION("-a") {
        auto all = runtime({"kill", "-a", bundle.id(), "TERM"});
        INFO("kill -a: " << all.describe());
        CHECK(all.exit_code == 0);
    }
    CHECK(wait_until([&] { return sleepers().empty(); }));
    CHECK(process_alive(*pid)); // the init trapped it
    CHECK(runtime.status(bundle.id()) == "running");
    CHECK(init_got_term(2));
}
