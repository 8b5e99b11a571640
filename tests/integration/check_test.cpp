// `mini-run check`: the real binary on the example bundle, a `mini-run spec` bundle and a
// bad one; every error reported with its path, nothing created.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

using namespace it;
namespace stdfs = std::filesystem;

namespace {

// The rules a `runc spec` config breaks (docs/security.md).
const std::vector<std::string> kDefaultRules = {"no-seccomp", "root-without-user-namespace",
                                                "no-memory-limit", "no-pids-limit"};

std::vector<std::string> warning_rules(const nlohmann::json& report) {
    std::vector<std::string> rules;
    for (const auto& warning : report["warnings"]) {
        rules.push_back(warning["rule"].get<std::string>());
    }
    return rules;
}

// Directories named `name` in any cgroup hierarchy (the container's, had it made one).
std::vector<std::string> cgroups_named(const std::string& name) {
    std::vector<std::string> found;
    std::error_code error;
    for (const auto& hierarchy : stdfs::directory_iterator("/sys/fs/cgroup", error)) {
        if (stdfs::exists(hierarchy.path() / name, error)) {
            found.push_back(hierarchy.path() / name);
        }
    }
    return found;
}

} // namespace

TEST_CASE("check: the example bundle has warnings only", "[check]") {
    auto result = run_minirun({"check", "--bundle", example_bundle()});
    INFO(result.describe());
    CHECK(result.exit_code == 1);
    CHECK(result.err.empty());
    for (const std::string& rule : kDefaultRules) {
        CHECK(contains(result.out, "[" + rule + "]"));
    }
    CHECK(contains(result.out, "    why: "));
    CHECK(contains(result.out, "    fix: "));
    CHECK(contains(result.out, ": 0 errors, 4 warnings\n"));

    auto json = run_minirun({"check", "--bundle", example_bundle(), "--format", "json"});
    INFO(json.describe());
    CHECK(json.exit_code == 1);
    nlohmann::json report = nlohmann::json::parse(json.out);
    CHECK(report["bundle"] == example_bundle());
    CHECK(report["errors"].empty());
    CHECK(warning_rules(report) == kDefaultRules);
    for (const auto& warning : report["warnings"]) {
        for (const char* key : {"rule", "path", "message", "why", "fix"}) {
            CHECK_FALSE(warning[key].get<std::string>().empty());
        }
    }
}

TEST_CASE("check: a mini-run spec bundle", "[check]") {
    TempDir bundle("minirun-it-check-spec");
    stdfs::create_directory_symlink(example_rootfs(), bundle.path() + "/rootfs");
    auto spec = run_minirun({"spec", "--bundle", bundle.path()});
    REQUIRE(spec.exit_code == 0);
    auto result = run_minirun({"check", "--bundle", bundle.path(), "--format", "json"});
    INFO(result.describe());
    CHECK(result.exit_code == 1);
    nlohmann::json report = nlohmann::json::parse(result.out);
    CHECK(report["errors"].empty());
    CHECK(warning_rules(report) == kDefaultRules);

    // With `spec --seccomp`, that warning goes.
    stdfs::remove(bundle.path() + "/config.json");
    REQUIRE(run_minirun({"spec", "--seccomp", "--bundle", bundle.path()}).exit_code == 0);
    result = run_minirun({"check", "--bundle", bundle.path(), "--format", "json"});
    INFO(result.describe());
    report = nlohmann::json::parse(result.out);
    CHECK(report["errors"].empty());
    auto rules = warning_rules(report);
    CHECK(std::find(rules.begin(), rules.end(), "no-seccomp") == rules.end());
}

TEST_CASE("check: a bad bundle: every error with its path, nothing created", "[check]") {
    TempBundle bundle("check-bad");
    TempDir state_root("minirun-it-check-root");
    const std::string cgroup = "it-check-" + bundle.id();
    bundle.config["linux"]["cgroupsPath"] = "/" + cgroup;
    bundle.config["linux"]["namespaces"][0]["type"] = "foo";
    bundle.config["linux"]["namespaces"][2]["type"] = "bar";
    bundle.config["mounts"][1]["options"] = {"nosuid", 42};
    bundle.config["hostname"] = std::string(100, 'h');
    bundle.set_args({"no-such-program"});
    bundle.write_config();

    for (const char* format : {"text", "json"}) {
        auto result = run_minirun(
            {"--root", state_root.path(), "check", "--bundle", bundle.dir(), "--format", format});
        INFO(result.describe());
        CHECK(result.exit_code == 2);
        CHECK(result.err.empty());
        std::vector<std::string> paths;
        if (std::string(format) == "json") {
            nlohmann::json report = nlohmann::json::parse(result.out);
            for (const auto& error : report["errors"]) {
                paths.push_back(error["path"].get<std::string>());
            }
        } else {
            for (const std::string& line : split_lines(result.out)) {
                if (line.starts_with("error: ")) {
                    paths.push_back(line.substr(7, line.find(": ", 7) - 7));
                }
            }
            CHECK(contains(result.out, ": 5 errors, "));
            CHECK(contains(result.out, "unknown namespace \"foo\""));
        }
        CHECK(paths == std::vector<std::string>{"hostname", "mounts[1].options[1]",
                                                "linux.namespaces[0].type",
                                                "linux.namespaces[2].type", "process.args[0]"});
    }
    CHECK(stdfs::is_empty(state_root.path()));
    CHECK(cgroups_named(cgroup).empty());
    check_no_leftovers(bundle);
}

TEST_CASE("check: an unreadable bundle is a one-line error", "[check]") {
    TempDir dir("minirun-it-check-missing");
    for (const std::string& bundle : {dir.path() + "/no-such-bundle", dir.path()}) {
        auto result = run_minirun({"check", "--bundle", bundle});
        INFO(result.describe());
        CHECK(result.exit_code == 2);
        CHECK(result.out.empty());
        CHECK(result.err.starts_with("mini-run: "));
        CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    }
}

TEST_CASE("check: a command line it cannot use exits 2, never 1 (warnings only)", "[check]") {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"check", "--format", "xml"},
          std::vector<std::string>{"check", "--no-such-option"}}) {
        auto result = run_minirun(args);
        INFO(result.describe());
        CHECK(result.exit_code == 2);
        CHECK(result.err.starts_with("mini-run: "));
        CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    }
}
