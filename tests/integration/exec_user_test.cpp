// `exec --user` (crun CVE-2026-30892's class, issue 39 item 6): each accepted form runs as
// exactly those ids, and bad input fails with one line before anything starts; never root
// by mistake. runc 1.3's rules: <uid>[:<gid>], numbers only; --user UID keeps the
// process's gid. Refused beyond runc: an empty --user (runc reads it as "no --user", so an
// unset shell variable runs the command as the container's user, root here) and
// (uid_t)-1, which setresuid(2) reads as "unchanged".
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace it;

namespace {

// A running container whose own process is uid 0, gid 2000: --user UID must keep that gid.
struct Running {
    TempBundle bundle{"execuser"};
    Runtime runtime;

    Running() {
        bundle.config["process"]["user"] = {{"uid", 0}, {"gid", 2000}};
        bundle.set_shell("while true; do sleep 0.1; done");
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    }

    RunResult exec(const std::vector<std::string>& flags, const std::string& script) const {
        std::vector<std::string> full{"exec"};
        full.insert(full.end(), flags.begin(), flags.end());
        full.insert(full.end(), {bundle.id(), "sh", "-c", script, marker()});
        return runtime(full);
    }
    [[nodiscard]] std::string marker() const { return bundle.id() + "-exec"; }
};

constexpr const char* kIds = "echo \"$(id -u) $(id -g) $(id -G)\"";

} // namespace

TEST_CASE("exec --user: each accepted form runs as exactly those ids", "[exec][user]") {
    Running container;
    // Positive control: without --user the process is the container's, root with gid 2000.
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{}, "0 2000 2000"},
        {{"--user", "1000"}, "1000 2000 2000"}, // runc: the process's gid stays
        {{"-u", "1000:1000"}, "1000 1000 1000"},
        {{"--user=1000:100"}, "1000 100 100"},
        {{"-u", "0:0"}, "0 0 0"},
        {{"-u", "007:08"}, "7 8 8"},
        {{"-u", "4294967294:4294967294"}, "4294967294 4294967294 4294967294"},
        {{"-u", "1000:1000", "-g", "100", "-g", "65534"}, "1000 1000 1000 100 65534"},
    };
    for (const auto& [flags, ids] : cases) {
        auto result = container.exec(flags, kIds);
        INFO("exec " << (flags.empty() ? "" : flags[0]) << ": " << result.describe());
        CHECK(result.exit_code == 0);
        CHECK(result.out == ids + "\n");
    }
}

TEST_CASE("exec --user: bad input fails with one line, nothing started, never root",
          "[exec][user]") {
    Running container;
    const std::string tail = " (expected <uid>[:<gid>], decimal numbers)";
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"-u", ""}, R"(--user "": the uid is empty)" + tail},
        {{"-u", ":"}, R"(--user ":": the uid is empty)" + tail},
        {{"-u", "1:"}, R"(--user "1:": the gid is empty)" + tail},
        {{"--user=-1"},
         R"(--user "-1": the uid "-1" is not a number; names are not looked up)" + tail},
        {{"-u", "abc"},
         R"(--user "abc": the uid "abc" is not a number; names are not looked up)" + tail},
        {{"-u", "root"},
         R"(--user "root": the uid "root" is not a number; names are not looked up)" + tail},
        {{"-u", "1:abc"},
         R"(--user "1:abc": the gid "abc" is not a number; names are not looked up)" + tail},
        {{"-u", "4294967295"},
         R"(--user "4294967295": the uid 4294967295 is out of range: at most 4294967294)" + tail},
        {{"-u", "1000:4294967295"},
         R"(--user "1000:4294967295": the gid 4294967295 is out of range: at most 4294967294)" +
             tail},
        {{"-u", "99999999999"},
         R"(--user "99999999999": the uid 99999999999 is out of range: at most 4294967294)" + tail},
        {{"-u", "1000", "-g", "4294967295"},
         "--additional-gids 4294967295: out of range: at most 4294967294"},
    };
    for (const auto& [flags, message] : cases) {
        auto result = container.exec(flags, "echo started; " + std::string(kIds));
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK_FALSE(contains(result.out, "started")); // nothing ran
        CHECK(contains(result.err, message));
        CHECK(split_lines(result.err).size() == 1);
    }
    // -g with a sign: CLI11 refuses it, in one line too.
    auto negative = container.exec({"-u", "1000", "-g", "-1"}, "echo started");
    INFO(negative.describe());
    CHECK(negative.exit_code != 0);
    CHECK_FALSE(contains(negative.out, "started"));
    CHECK(split_lines(negative.err).size() == 1);
    CHECK(processes_with_marker(container.marker()).empty());
}

TEST_CASE("exec --process: the file's user, exactly; (uid_t)-1 refused with its path",
          "[exec][user]") {
    Running container;
    TempDir dir;
    auto process = [&](uint64_t uid, uint64_t gid) {
        nlohmann::json p = {{"args", {"sh", "-c", std::string("echo started; ") + kIds}},
                            {"cwd", "/"},
                            {"env", {"PATH=/bin:/usr/bin"}},
                            {"user", {{"uid", uid}, {"gid", gid}, {"additionalGids", {5}}}}};
        const std::string path = dir.path() + "/process.json";
        write_text(path, p.dump());
        return container.runtime({"exec", "--process", path, container.bundle.id()});
    };
    auto ok = process(1234, 4321);
    INFO(ok.describe());
    CHECK(ok.exit_code == 0);
    CHECK(ok.out == "started\n1234 4321 4321 5\n");
    for (const auto& [uid, gid, field] : std::vector<std::tuple<uint64_t, uint64_t, std::string>>{
             {4294967295U, 0, "process.user.uid"}, {0, 4294967295U, "process.user.gid"}}) {
        auto bad = process(uid, gid);
        INFO(bad.describe());
        CHECK(bad.exit_code != 0);
        CHECK_FALSE(contains(bad.out, "started"));
        CHECK(contains(bad.err, field + ": 4294967295 is (uid_t)-1, not an id"));
        CHECK(split_lines(bad.err).size() == 1);
    }
}
