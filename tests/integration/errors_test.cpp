// Bad bundles: each must fail with one clear line on stderr ("mini-run: ..."), a non-zero
// exit code, and nothing left behind (no mounts in the host's table, no processes).
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>

using namespace it;

namespace {

std::string lowercase(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// One line, "mini-run: ...", containing each of `words` (case-insensitively).
void check_clean_error(const RunResult& result, std::initializer_list<std::string_view> words) {
    INFO(result.describe());
    CHECK_FALSE(result.timed_out);
    CHECK(result.exit_code != 0);
    CHECK(result.err.rfind("mini-run: ", 0) == 0);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    CHECK((!result.err.empty() && result.err.back() == '\n'));
    for (auto word : words) {
        INFO("expected in stderr: " << word);
        CHECK(contains(lowercase(result.err), lowercase(std::string(word))));
    }
    CHECK(result.out.empty());
}

} // namespace

TEST_CASE("errors: a missing bundle directory", "[errors]") {
    TempBundle bundle("err-nobundle");
    const std::string missing = bundle.dir() + "/no-such-bundle";
    auto result = run_minirun({"run", "--bundle", missing, bundle.id()});
    check_clean_error(result, {"no-such-bundle"});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: a bundle without config.json", "[errors]") {
    TempBundle bundle("err-noconfig");
    auto result = run_minirun({"run", "--bundle", bundle.dir(), bundle.id()});
    check_clean_error(result, {"config.json"});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: malformed JSON names the line and column", "[errors]") {
    TempBundle bundle("err-json");
    bundle.write_raw_config("{\n    \"ociVersion\": \"1.0.2\",\n    oops\n}\n");
    auto result = it::run(bundle.run_argv());
    check_clean_error(result, {"line 3", "column"});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: a missing rootfs", "[errors]") {
    TempBundle bundle("err-rootfs");
    bundle.config["root"]["path"] = bundle.dir() + "/no-such-rootfs";
    auto result = bundle.run();
    check_clean_error(result, {"no-such-rootfs"});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: empty process.args", "[errors]") {
    TempBundle bundle("err-args");
    bundle.config["process"]["args"] = nlohmann::json::array();
    auto result = bundle.run();
    check_clean_error(result, {"process.args"});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: a relative process.cwd", "[errors]") {
    TempBundle bundle("err-cwd");
    bundle.config["process"]["cwd"] = "tmp";
    bundle.set_shell("pwd");
    auto result = bundle.run();
    check_clean_error(result, {"process.cwd"});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: an unknown namespace type", "[errors]") {
    TempBundle bundle("err-ns-unknown");
    REQUIRE(bundle.config["linux"]["namespaces"].size() == 5);
    bundle.add_namespace("foo");
    auto result = bundle.run();
    check_clean_error(result, {"linux.namespaces[5].type: unknown namespace \"foo\""});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: a namespace type given twice", "[errors]") {
    TempBundle bundle("err-ns-dup");
    bundle.add_namespace("pid");
    auto result = bundle.run();
    check_clean_error(result, {"linux.namespaces", "pid"});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: a user namespace without mappings", "[errors]") {
    TempBundle bundle("err-userns");
    bundle.add_namespace("user");
    auto result = bundle.run();
    check_clean_error(result, {"mapping"});
    check_no_leftovers(bundle);
}

TEST_CASE("errors: a missing executable, and the id is free again afterwards", "[errors]") {
    TempBundle bundle("err-exec");
    bundle.set_args({"nosuchcmd", bundle.id()});
    auto result = bundle.run();
    check_clean_error(result, {"nosuchcmd"});
    check_no_leftovers(bundle);

    // Nothing of the failed container may block the same id.
    bundle.set_shell("echo second try");
    auto again = bundle.run();
    INFO(again.describe());
    CHECK(again.exit_code == 0);
    CHECK(again.out == "second try\n");
    check_no_leftovers(bundle);
}
