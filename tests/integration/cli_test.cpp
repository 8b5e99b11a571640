// The command line: --version, --help, usage errors and `mini-run spec`.
#include "helpers.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <linux/magic.h>
#include <sys/vfs.h>

#include <regex>
#include <string>

using namespace it;

TEST_CASE("cli: --version prints the name and a version", "[cli]") {
    auto result = run_minirun({"--version"});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "mini-run"));
    CHECK(std::regex_search(result.out, std::regex(R"(\d+\.\d+\.\d+)")));
}

TEST_CASE("cli: features is JSON whose spec version is --version's, 1.3.0", "[cli]") {
    auto features = run_minirun({"features"});
    INFO(features.describe());
    REQUIRE(features.exit_code == 0);
    auto json = nlohmann::json::parse(features.out);
    auto version = run_minirun({"--version"});
    std::smatch spec;
    REQUIRE(std::regex_search(version.out, spec, std::regex(R"(spec: (\S+))")));
    CHECK(json["ociVersionMax"] == spec[1].str());
    CHECK(json["ociVersionMax"] == "1.3.0");
    CHECK(json["linux"]["mountExtensions"]["idmap"]["enabled"] == true);
    // runtime-spec 1.3's features-linux.md: the memory policies the parser takes, and Intel
    // RDT's schemata and monitoring (enableMonitoring).
    const auto& policy = json["linux"]["memoryPolicy"];
    CHECK(policy["modes"] == nlohmann::json({"MPOL_DEFAULT", "MPOL_BIND", "MPOL_INTERLEAVE",
                                             "MPOL_WEIGHTED_INTERLEAVE", "MPOL_PREFERRED",
                                             "MPOL_PREFERRED_MANY", "MPOL_LOCAL"}));
    CHECK(policy["flags"] == nlohmann::json({"MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES",
                                             "MPOL_F_STATIC_NODES"}));
    CHECK(json["linux"]["intelRdt"] ==
          nlohmann::json({{"enabled", true}, {"schemata", true}, {"monitoring", true}}));
    // An engine that asks for `features` with the global options it always passes.
    auto with_globals =
        run_minirun({"--root", "/run/mini-run", "--log-format", "json", "features"});
    CHECK(with_globals.exit_code == 0);
    CHECK(with_globals.out == features.out);
}

TEST_CASE("cli: --help lists the commands", "[cli]") {
    auto result = run_minirun({"--help"});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "run"));
    CHECK(contains(result.out, "spec"));
}

TEST_CASE("cli: run --help shows the bundle option", "[cli]") {
    auto result = run_minirun({"run", "--help"});
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "--bundle"));
}

TEST_CASE("cli: usage errors say mini-run and fail", "[cli]") {
    SECTION("an unknown command") {
        auto result = run_minirun({"frobnicate"});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(result.err.rfind("mini-run: ", 0) == 0);
        CHECK(contains(result.err, "frobnicate"));
    }
    SECTION("run without a container id") {
        TempBundle bundle("cli-noid");
        bundle.write_config();
        auto result = run_minirun({"run", "--bundle", bundle.dir()});
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK(result.err.rfind("mini-run: ", 0) == 0);
        check_no_leftovers(bundle);
    }
}

TEST_CASE("spec: writes a config that runs, and refuses to overwrite it", "[cli][spec]") {
    TempBundle bundle("spec");
    auto written = run_minirun({"spec", "--bundle", bundle.dir()});
    INFO(written.describe());
    REQUIRE(written.exit_code == 0);
    auto text = read_file(bundle.config_path());
    REQUIRE(text.has_value());
    nlohmann::json config;
    REQUIRE_NOTHROW(config = nlohmann::json::parse(*text));
    CHECK(config.contains("ociVersion"));
    CHECK(config["root"]["path"] == "rootfs");
    CHECK_FALSE(config["process"]["args"].empty());
    // runc 1.3's: no ambient and no inheritable set; a cgroup namespace on cgroup v2 only.
    const auto& caps = config["process"]["capabilities"];
    CHECK_FALSE(caps.contains("ambient"));
    CHECK_FALSE(caps.contains("inheritable"));
    CHECK(caps["bounding"] == caps["permitted"]);
    struct statfs cgroup_fs {};
    bool cgroup2 =
        ::statfs("/sys/fs/cgroup", &cgroup_fs) == 0 && cgroup_fs.f_type == CGROUP2_SUPER_MAGIC;
    bool cgroup_ns = false;
    for (const auto& ns : config["linux"]["namespaces"]) {
        cgroup_ns = cgroup_ns || ns["type"] == "cgroup";
    }
    CHECK(cgroup_ns == cgroup2);

    SECTION("it runs with root.path pointed at the example rootfs") {
        config["root"]["path"] = example_rootfs();
        bundle.config = config;
        bundle.set_shell("echo spec-ok; echo pid $$");
        auto result = bundle.run();
        INFO(result.describe());
        CHECK(result.exit_code == 0);
        CHECK(contains(result.out, "spec-ok"));
        CHECK(contains(result.out, "pid 1"));
        check_no_leftovers(bundle);
    }
    SECTION("a second spec fails and keeps the file") {
        auto again = run_minirun({"spec", "--bundle", bundle.dir()});
        INFO(again.describe());
        CHECK(again.exit_code != 0);
        CHECK(again.err.rfind("mini-run: ", 0) == 0);
        CHECK(contains(again.err, "config.json"));
        CHECK(read_file(bundle.config_path()) == text);
    }
}

TEST_CASE("spec --rootless: a user namespace with mappings", "[cli][spec]") {
    TempDir dir;
    auto written = run_minirun({"spec", "--bundle", dir.path(), "--rootless"});
    INFO(written.describe());
    REQUIRE(written.exit_code == 0);
    auto config = nlohmann::json::parse(read_file(dir.path() + "/config.json").value_or("{}"));
    bool has_user = false;
    for (const auto& ns : config["linux"]["namespaces"]) {
        has_user = has_user || ns["type"] == "user";
    }
    CHECK(has_user);
    CHECK_FALSE(config["linux"]["uidMappings"].empty());
    CHECK_FALSE(config["linux"]["gidMappings"].empty());
}
