// The container lifecycle (see lifecycle_test.cpp): run --detach / --keep, list, ps, the
// pid file, the log file, --root and the descriptors a container inherits.
#include "lifecycle_helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>

using namespace lifecycle_test;

TEST_CASE("run --detach: the container runs on after run exits", "[lifecycle][run]") {
    TempBundle bundle("run-detach");
    bundle.set_shell(std::string("echo detached-up; ") + loop);
    Runtime runtime;
    auto ran = runtime.run_detached(bundle);
    INFO("run -d: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    auto pid = runtime.pid_from_file(bundle.id());
    REQUIRE(pid.has_value());
    CHECK(runtime.status(bundle.id()) == "running");
    CHECK(state_pid(runtime, bundle.id()) == *pid);
    CHECK(process_alive(*pid));
    CHECK(parent_pid(*pid) == getpid());
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!contains(ran.out_now(), "detached-up") && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    CHECK(contains(ran.out_now(), "detached-up"));

    SECTION("-d is the short form") {
        TempBundle other("run-d");
        other.set_shell(loop);
        other.write_config();
        runtime.track(other.id());
        auto short_form = runtime.to_files({"run", "-d", "--bundle", other.dir(), other.id()});
        INFO("run -d: " << short_form.describe());
        CHECK(short_form.exit_code == 0);
        CHECK(runtime.status(other.id()) == "running");
        auto deleted = runtime({"delete", "--force", other.id()});
        CHECK(deleted.exit_code == 0);
    }
    auto deleted = runtime({"delete", "--force", bundle.id()});
    INFO("delete --force: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(wait_for_exit(*pid));
    reap(*pid);
    reap_orphans();
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("run in the foreground: the container's exit code, then nothing is left",
          "[lifecycle][run]") {
    TempBundle bundle("run-fg");
    bundle.set_shell("echo fg-out; exit 7");
    bundle.write_config();
    Runtime runtime;
    runtime.track(bundle.id());
    auto ran = runtime({"run", "--bundle", bundle.dir(), bundle.id()});
    INFO("run: " << ran.describe());
    CHECK(ran.exit_code == 7);
    CHECK(ran.out == "fg-out\n");
    check_root_empty(runtime);
    auto state = runtime({"state", bundle.id()});
    CHECK(state.exit_code != 0);
    CHECK(live_orphans().empty());
    check_no_leftovers(bundle);
}

TEST_CASE("run in the foreground: a failed execve is one bare line, as runc's",
          "[lifecycle][run]") {
    // runc 1.3's run.bats "execve error": the init writes "exec <path>: <reason>" itself,
    // and runc adds no line of its own (runc#4171). The interpreter does not exist, so the
    // path passes the lookup and only execve can refuse it.
    TempDir scripts("minirun-it-execve");
    const std::string script = scripts.path() + "/run.sh";
    {
        std::ofstream out(script);
        out << "#!/mmnnttbb foo bar\nsh\n";
    }
    REQUIRE(::chmod(script.c_str(), 0755) == 0);
    TempBundle bundle("run-execve");
    // Into the rootfs's /run (a tmpfs first, so the shared example rootfs gets no file).
    bundle.config["mounts"].push_back(
        {{"destination", "/run"}, {"type", "tmpfs"}, {"source", "tmpfs"}});
    bundle.config["mounts"].push_back({{"destination", "/run/run.sh"},
                                       {"type", "bind"},
                                       {"source", script},
                                       {"options", {"bind", "ro"}}});
    bundle.set_args({"/run/run.sh"});
    bundle.write_config();
    Runtime runtime;
    runtime.track(bundle.id());
    auto ran = runtime({"run", "--bundle", bundle.dir(), bundle.id()});
    INFO("run: " << ran.describe());
    CHECK(ran.exit_code != 0);
    CHECK(ran.err == "exec /run/run.sh: no such file or directory\n");
    check_root_empty(runtime);
    CHECK(live_orphans().empty());
    check_no_leftovers(bundle);
}

TEST_CASE("run --keep: the stopped container stays until delete", "[lifecycle][run]") {
    TempBundle bundle("run-keep");
    bundle.set_shell("exit 4");
    bundle.write_config();
    Runtime runtime;
    runtime.track(bundle.id());
    auto ran = runtime({"run", "--keep", "--bundle", bundle.dir(), bundle.id()});
    INFO("run --keep: " << ran.describe());
    CHECK(ran.exit_code == 4);
    CHECK(runtime.status(bundle.id()) == "stopped");
    CHECK(runtime.root_entries().size() == 1);
    auto deleted = runtime({"delete", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}

TEST_CASE("list and ps show the containers", "[lifecycle][list]") {
    TempBundle created_bundle("list-created");
    created_bundle.set_shell(loop);
    TempBundle running_bundle("list-running");
    running_bundle.set_shell(loop);
    Runtime runtime;
    auto created = runtime.create(created_bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto ran = runtime.run_detached(running_bundle);
    INFO("run -d: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    auto created_pid = runtime.pid_from_file(created_bundle.id());
    auto running_pid = runtime.pid_from_file(running_bundle.id());
    REQUIRE(created_pid.has_value());
    REQUIRE(running_pid.has_value());

    SECTION("the table") {
        auto table = runtime({"list"});
        INFO(table.describe());
        CHECK(table.exit_code == 0);
        auto lines = split_lines(table.out);
        REQUIRE(lines.size() == 3); // the header and two containers
        CHECK(contains(lines[0], "ID"));
        CHECK(contains(lines[0], "STATUS"));
        bool saw_created = false;
        bool saw_running = false;
        for (const auto& line : lines) {
            auto words = split_words(line);
            if (!words.empty() && words[0] == created_bundle.id()) {
                saw_created = contains(line, "created") &&
                              contains(line, " " + std::to_string(*created_pid) + " ");
            }
            if (!words.empty() && words[0] == running_bundle.id()) {
                saw_running = contains(line, "running") &&
                              contains(line, " " + std::to_string(*running_pid) + " ");
            }
        }
        CHECK(saw_created);
        CHECK(saw_running);
        auto table_flag = runtime({"list", "--format", "table"});
        CHECK(table_flag.exit_code == 0);
        CHECK(table_flag.out == table.out);
    }
    SECTION("json") {
        auto listed = runtime({"list", "--format", "json"});
        INFO(listed.describe());
        CHECK(listed.exit_code == 0);
        auto json = nlohmann::json::parse(listed.out, nullptr, false);
        REQUIRE(json.is_array());
        CHECK(json.size() == 2);
        int matched = 0;
        for (const auto& entry : json) {
            INFO(entry.dump());
            if (entry["id"] == created_bundle.id()) {
                CHECK(entry["status"] == "created");
                CHECK(entry["pid"] == *created_pid);
                CHECK(entry["bundle"] == created_bundle.dir());
                ++matched;
            } else if (entry["id"] == running_bundle.id()) {
                CHECK(entry["status"] == "running");
                CHECK(entry["pid"] == *running_pid);
                CHECK(entry["bundle"] == running_bundle.dir());
                ++matched;
            }
        }
        CHECK(matched == 2);
        auto short_flag = runtime({"list", "-f", "json"});
        CHECK(short_flag.exit_code == 0);
        CHECK(nlohmann::json::parse(short_flag.out, nullptr, false).size() == 2);
    }
    SECTION("-q: the ids only") {
        for (const char* flag : {"-q", "--quiet"}) {
            auto quiet = runtime({"list", flag});
            INFO(flag << ": " << quiet.describe());
            CHECK(quiet.exit_code == 0);
            auto lines = split_lines(quiet.out);
            std::sort(lines.begin(), lines.end());
            std::vector<std::string> ids{created_bundle.id(), running_bundle.id()};
            std::sort(ids.begin(), ids.end());
            CHECK(lines == ids);
        }
    }
    SECTION("ps --format json: an array of host pids with the init") {
        for (const char* flag : {"--format", "-f"}) {
            auto ps = runtime({"ps", flag, "json", running_bundle.id()});
            INFO(ps.describe());
            CHECK(ps.exit_code == 0);
            auto json = nlohmann::json::parse(ps.out, nullptr, false);
            REQUIRE(json.is_array());
            bool has_init = false;
            for (const auto& entry : json) {
                CHECK(entry.is_number_integer());
                has_init = has_init || entry == *running_pid;
            }
            CHECK(has_init);
        }
    }
    SECTION("ps of an unknown container fails") {
        auto ps = runtime({"ps", "--format", "json", "it-no-such-container"});
        INFO(ps.describe());
        CHECK(ps.exit_code != 0);
    }
}

TEST_CASE("pid file: written atomically, nothing else next to it", "[lifecycle]") {
    TempBundle bundle("pidfile");
    bundle.set_shell(loop);
    Runtime runtime;
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto text = read_file(runtime.pid_file(bundle.id()));
    REQUIRE(text.has_value());
    CHECK(std::regex_match(*text, std::regex("[1-9][0-9]*")));
    // Only the pid file and the outputs of create: no temporary file left in the directory.
    auto listing = it::run({"/bin/ls", "-A", runtime.io_dir()});
    for (const auto& name : split_lines(listing.out)) {
        INFO("in the pid file's directory: " << name);
        CHECK((name == bundle.id() + ".pid" || name.rfind("cmd-", 0) == 0));
    }
}

TEST_CASE("log: a failing create writes exactly one JSON error line", "[lifecycle][log]") {
    TempBundle bundle("log");
    bundle.set_args({"it-no-such-binary", "arg"});
    bundle.write_config();
    Runtime runtime;
    runtime.track(bundle.id());
    const std::string log = runtime.io_dir() + "/log.json";
    const std::string form = GENERATE(std::string("separate"), std::string("equals"));
    std::vector<std::string> args =
        form == "separate" ? std::vector<std::string>{"--log", log, "--log-format", "json"}
                           : std::vector<std::string>{"--log=" + log, "--log-format=json"};
    INFO("flags " << form);
    args.insert(args.end(), {"create", "--bundle", bundle.dir(), bundle.id()});
    auto created = runtime.to_files(args);
    INFO("create: " << created.describe());
    CHECK(created.exit_code != 0);
    CHECK(contains(created.err, "it-no-such-binary"));
    CHECK(contains(created.err, "executable file not found in $PATH"));

    auto text = read_file(log);
    REQUIRE(text.has_value());
    INFO("log file:\n" << *text);
    std::vector<std::string> lines;
    for (const auto& line : split_lines(*text)) {
        if (!line.empty()) {
            lines.push_back(line);
        }
    }
    REQUIRE(lines.size() == 1);
    CHECK(text->back() == '\n');
    auto entry = nlohmann::json::parse(lines[0], nullptr, false);
    REQUIRE(entry.is_object());
    CHECK(entry["level"] == "error");
    REQUIRE(entry["msg"].is_string());
    CHECK(contains(entry["msg"].get<std::string>(), "it-no-such-binary"));
    CHECK(contains(entry["msg"].get<std::string>(), "executable file not found in $PATH"));
    REQUIRE(entry["time"].is_string());
    CHECK(is_rfc3339(entry["time"].get<std::string>()));

    // The failed create left nothing.
    check_root_empty(runtime);
    CHECK(live_orphans().empty());
    auto state = runtime({"state", bundle.id()});
    CHECK(state.exit_code != 0);
    check_no_leftovers(bundle);
}

TEST_CASE("--root: a missing directory is created; --root=DIR works too", "[lifecycle]") {
    TempBundle bundle("root");
    bundle.set_shell(loop);
    TempDir parent("minirun-roots");
    const std::string root = parent.path() + "/not/there/yet";
    Runtime runtime(root);
    auto created = runtime.create(bundle);
    INFO("create: " << created.describe());
    REQUIRE(created.exit_code == 0);
    struct stat st {};
    REQUIRE(stat(root.c_str(), &st) == 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK(runtime.root_entries().size() == 1);

    auto state = it::run({minirun_binary(), "--root=" + root, "state", bundle.id()});
    INFO("state with --root=: " << state.describe());
    CHECK(state.exit_code == 0);
    auto json = nlohmann::json::parse(state.out, nullptr, false);
    CHECK((json.is_object() && json["status"] == "created"));

    // The default root does not see it.
    auto elsewhere = it::run({minirun_binary(), "--root", parent.path(), "state", bundle.id()});
    CHECK(elsewhere.exit_code != 0);

    auto deleted = it::run({minirun_binary(), "--root=" + root, "delete", "--force", bundle.id()});
    INFO("delete with --root=: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_root_empty(runtime);
}

TEST_CASE("fds: --preserve-fds passes fd 3 on, every other inherited fd is closed",
          "[lifecycle][fds]") {
    TempBundle bundle("fds");
    // The shell's own descriptors, listed by a child shell: busybox may run ls inside the
    // shell itself, whose directory descriptor would then show in the list. (Not the last
    // command, or the shell would exec it instead of forking.)
    bundle.set_shell("echo hi >&3 && echo wrote-3; sh -c 'ls /proc/$PPID/fd'; echo done");
    bundle.write_config();
    Runtime runtime;
    runtime.track(bundle.id());
    TempDir files("minirun-fds");
    const std::string passed = files.path() + "/passed";
    const std::string leaked = files.path() + "/leaked";
    int passed_fd = ::open(passed.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int leaked_fd = ::open(leaked.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(passed_fd >= 0);
    REQUIRE(leaked_fd >= 0);

    std::set<std::string> fds_inside;
    FileRunResult ran;
    SECTION("--preserve-fds 1") {
        ran =
            runtime.to_files({"run", "--preserve-fds", "1", "--bundle", bundle.dir(), bundle.id()},
                             {{3, passed_fd}, {4, leaked_fd}});
        INFO("run: " << ran.describe());
        CHECK(ran.exit_code == 0);
        CHECK(read_file(passed) == "hi\n");
        CHECK(contains(ran.out, "wrote-3"));
        for (const auto& line : split_lines(ran.out)) {
            if (!line.empty() && line != "wrote-3" && line != "done") {
                fds_inside.insert(line);
            }
        }
        CHECK(fds_inside == std::set<std::string>{"0", "1", "2", "3"});
    }
    SECTION("without --preserve-fds") {
        ran = runtime.to_files({"run", "--bundle", bundle.dir(), bundle.id()},
                               {{3, passed_fd}, {4, leaked_fd}});
        INFO("run: " << ran.describe());
        CHECK(ran.exit_code == 0);
        CHECK(read_file(passed) == "");
        CHECK_FALSE(contains(ran.out, "wrote-3"));
        for (const auto& line : split_lines(ran.out)) {
            if (!line.empty() && line != "done") {
                fds_inside.insert(line);
            }
        }
        CHECK(fds_inside == std::set<std::string>{"0", "1", "2"});
    }
    ::close(passed_fd);
    ::close(leaked_fd);
    CHECK(read_file(leaked) == "");
    check_root_empty(runtime);
    check_no_leftovers(bundle);
}
