// Where the log lines of the init (and of the process `exec` starts) go: while mini-run
// listens on the sync socket, to mini-run's own log (its stderr, or --log FILE); once
// nobody listens any more (after `create` exited), to --log FILE only. Never to the
// container's own stderr, whatever the container does with it.
//
// To tell the two apart the containers here have a terminal: mini-run relays the pty (the
// container's stdin, stdout and stderr) to its stdout and writes its log to its stderr.
// Or a detached container whose stderr is a file of its own.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

// The lines of `text` that contain `needle`.
size_t lines_with(const std::string& text, std::string_view needle) {
    size_t count = 0;
    for (const std::string& line : split_lines(text)) {
        count += contains(line, needle) ? 1 : 0;
    }
    return count;
}

} // namespace

TEST_CASE("log: the init's --debug lines reach mini-run's stderr, not the container's terminal",
          "[log]") {
    TempBundle bundle("log-run");
    bundle.config["process"]["terminal"] = true;
    bundle.set_shell("echo container-said-hello");
    bundle.write_config();
    auto result = run_minirun({"--debug", "run", "--bundle", bundle.dir(), bundle.id()});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "container-said-hello"));
    // Nothing of mini-run's on the container's terminal (relayed to our stdout)...
    CHECK_FALSE(contains(result.out, "level=debug"));
    CHECK_FALSE(contains(result.out, "init step"));
    // ...and the init's steps after it made the terminal its stdio are runtime log lines.
    CHECK(contains(result.err, "level=debug msg=\"init step"));
    CHECK(lines_with(result.err, "prepare the exec") == 1);
    CHECK(contains(result.err, "level=debug msg=\"init: closing the pipe to signal completion"));
    check_no_leftovers(bundle);
}

TEST_CASE("log: with --log FILE the init's lines are in FILE, in its format", "[log]") {
    TempBundle bundle("log-file");
    bundle.config["process"]["terminal"] = true;
    bundle.set_shell("echo container-said-hello");
    bundle.write_config();
    TempDir logs("minirun-it-log");
    const std::string format = GENERATE(std::string("text"), std::string("json"));
    const std::string log = logs.path() + "/log." + format;
    auto result = run_minirun({"--log", log, "--log-format", format, "--debug", "run", "--bundle",
                               bundle.dir(), bundle.id()});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "container-said-hello"));
    CHECK_FALSE(contains(result.out, "level"));
    CHECK_FALSE(contains(result.err, "init step"));
    auto text = read_file(log);
    REQUIRE(text.has_value());
    INFO(*text);
    CHECK(lines_with(*text, "prepare the exec") == 1);
    if (format == "json") {
        size_t init_steps = 0;
        for (const std::string& line : split_lines(*text)) {
            auto entry = nlohmann::json::parse(line);
            const std::string msg = entry["msg"].get<std::string>();
            init_steps += entry["level"] == "debug" && msg.starts_with("init step") ? 1 : 0;
        }
        CHECK(init_steps >= 5);
    } else {
        CHECK(contains(*text, "level=debug msg=\"init step"));
    }
    check_no_leftovers(bundle);
}

TEST_CASE("log: after create, the init's lines go to --log only, never to its stderr", "[log]") {
    // With a startContainer hook there is no exec gate: the init itself waits for `start`
    // and takes its last steps then, when the `create` that listened is long gone.
    TempBundle bundle("log-start");
    bundle.config["hooks"]["startContainer"] = {{{"path", "/bin/true"}, {"args", {"true"}}}};
    bundle.set_shell("echo container-started");
    bundle.write_config();
    Runtime runtime;
    runtime.track(bundle.id());
    TempDir logs("minirun-it-log");
    const bool with_file = GENERATE(false, true);
    const std::string log = logs.path() + "/log.json";
    std::vector<std::string> global = {"--debug"};
    if (with_file) {
        global = {"--log", log, "--log-format", "json", "--debug"};
    }
    auto args = [&](std::vector<std::string> command) {
        command.insert(command.begin(), global.begin(), global.end());
        return command;
    };
    auto created = runtime.to_files(args({"create", "--bundle", bundle.dir(), bundle.id()}));
    INFO(created.describe());
    REQUIRE(created.exit_code == 0);
    auto started = runtime(args({"start", bundle.id()}));
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    REQUIRE(wait_until([&] { return contains(created.out_now(), "container-started"); }));
    // The container's stderr (create's, which it inherited) has create's lines only.
    const std::string container_err = created.err_now();
    INFO("container's stderr: " << container_err);
    if (!with_file) { // with --log, debug lines go to FILE only
        CHECK(contains(container_err, "init step"));
    }
    CHECK_FALSE(contains(container_err, "wait for start"));
    CHECK_FALSE(contains(container_err, "prepare the exec"));
    CHECK_FALSE(contains(started.err, "init step"));
    if (with_file) {
        auto text = read_file(log);
        REQUIRE(text.has_value());
        INFO(*text);
        CHECK(lines_with(*text, "init step") >= 5);
        CHECK(lines_with(*text, "wait for start") == 1); // logged once `start` came
        CHECK(lines_with(*text, "prepare the exec") == 1);
    }
    (void)runtime.force_delete(bundle.id());
    check_no_leftovers(bundle);
}

TEST_CASE("log: exec --debug: the exec'd process's lines reach mini-run's stderr", "[log][exec]") {
    TempBundle bundle("log-exec");
    bundle.set_shell(loop);
    Runtime runtime;
    auto ran = runtime.run_detached(bundle);
    INFO("run -d: " << ran.describe());
    REQUIRE(ran.exit_code == 0);
    REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    auto result =
        runtime({"--debug", "exec", "-t", bundle.id(), "sh", "-c", "echo exec-said-hello"});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "exec-said-hello"));
    CHECK_FALSE(contains(result.out, "level=debug"));
    CHECK(contains(result.err, "level=debug msg=\"exec step"));
    CHECK(lines_with(result.err, "prepare the exec") == 1);
    CHECK(contains(result.err, "setns_init: about to exec"));
}
