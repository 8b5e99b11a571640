// `mini-run check` (minirun/check.hpp): each warning rule, every error at once with its
// path, and the exit codes.
#include "minirun/check.hpp"
#include "minirun/spec.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using minirun::check::check_config;
using minirun::check::Report;
using minirun::testing::TempDir;
using Json = nlohmann::json;

namespace {

// `mini-run spec`'s config with every risk the rules know closed.
Json safe_config() {
    Json config = Json::parse(minirun::spec::default_spec_json(false, 0, 0, true));
    config["process"]["user"]["uid"] = 1000;
    config["linux"]["resources"]["memory"] = {{"limit", 256 << 20}};
    config["linux"]["resources"]["pids"] = {{"limit", 100}};
    return config;
}

std::vector<std::string> rules_fired(const Json& config) {
    auto spec = minirun::spec::parse_spec(config.dump());
    INFO((spec ? std::string() : spec.error().message()));
    REQUIRE(spec.ok());
    std::vector<std::string> ids;
    for (const auto& warning : minirun::check::warnings_for(*spec)) {
        ids.push_back(warning.rule);
    }
    return ids;
}

bool fires(const Json& config, const std::string& rule) {
    auto ids = rules_fired(config);
    return std::find(ids.begin(), ids.end(), rule) != ids.end();
}

void remove_namespace(Json& config, const std::string& type) {
    Json& namespaces = config["linux"]["namespaces"];
    for (size_t i = 0; i < namespaces.size(); ++i) {
        if (namespaces[i]["type"] == type) {
            namespaces.erase(i);
            return;
        }
    }
}

Json& mount_at(Json& config, const std::string& destination) {
    for (Json& mount : config["mounts"]) {
        if (mount["destination"] == destination) {
            return mount;
        }
    }
    FAIL("no mount at " << destination);
    return config;
}

void drop_option(Json& mount, const std::string& option) {
    Json kept = Json::array();
    for (const Json& o : mount["options"]) {
        if (o != option) {
            kept.push_back(o);
        }
    }
    mount["options"] = kept;
}

// A bundle with an executable /bin/sh in its rootfs.
struct Bundle {
    TempDir dir;
    Bundle() {
        std::filesystem::create_directories(dir.path() + "/rootfs/bin");
        std::ofstream(dir.path() + "/rootfs/bin/sh") << "#!/bin/true\n";
        ::chmod((dir.path() + "/rootfs/bin/sh").c_str(), 0755);
    }
    [[nodiscard]] Report check(const Json& config) const {
        return check_config(config.dump(), "config.json", dir.path());
    }
    [[nodiscard]] Report check_text(const std::string& text) const {
        return check_config(text, "config.json", dir.path());
    }
};

std::vector<std::string> error_paths(const Report& report) {
    std::vector<std::string> paths;
    for (const auto& error : report.errors) {
        paths.push_back(error.path);
    }
    return paths;
}

std::string describe(const Report& report) {
    return minirun::check::report_text(report);
}

} // namespace

TEST_CASE("check: the safe config gives no warning", "[check]") {
    CHECK(rules_fired(safe_config()).empty());
}

TEST_CASE("check: each warning rule fires on its risk only", "[check]") {
    struct Case {
        const char* rule;
        std::function<void(Json&)> make_risky;
    };
    const std::vector<Case> cases = {
        {"host-pid-namespace",
         [](Json& c) {
             remove_namespace(c, "pid");
         }},
        {"host-network-namespace",
         [](Json& c) {
             remove_namespace(c, "network");
         }},
        {"host-ipc-namespace",
         [](Json& c) {
             remove_namespace(c, "ipc");
         }},
        {"dangerous-capabilities",
         [](Json& c) {
             c["process"]["capabilities"]["bounding"].push_back("CAP_SYS_ADMIN");
         }},
        {"no-seccomp",
         [](Json& c) {
             c["linux"].erase("seccomp");
         }},
        {"root-without-user-namespace",
         [](Json& c) {
             c["process"]["user"]["uid"] = 0;
         }},
        {"writable-proc-sys",
         [](Json& c) {
             c["linux"]["readonlyPaths"] = {"/proc/bus"};
         }},
        {"writable-sys",
         [](Json& c) {
             drop_option(mount_at(c, "/sys"), "ro");
         }},
        {"no-masked-paths",
         [](Json& c) {
             c["linux"]["maskedPaths"] = Json::array();
         }},
        {"all-devices-allowed",
         [](Json& c) {
             c["linux"]["resources"]["devices"].push_back({{"allow", true}, {"access", "rwm"}});
         }},
        {"no-memory-limit",
         [](Json& c) {
             c["linux"]["resources"].erase("memory");
         }},
        {"no-pids-limit",
         [](Json& c) {
             c["linux"]["resources"]["pids"]["limit"] = -1;
         }},
        {"shared-rootfs-propagation",
         [](Json& c) {
             c["linux"]["rootfsPropagation"] = "rshared";
         }},
        {"new-privileges-allowed",
         [](Json& c) {
             c["process"]["noNewPrivileges"] = false;
         }},
    };
    // Every rule of the table is tested here.
    REQUIRE(cases.size() == minirun::check::check_rules().size());
    for (const Case& test : cases) {
        DYNAMIC_SECTION(test.rule) {
            CHECK_FALSE(fires(safe_config(), test.rule));
            Json risky = safe_config();
            test.make_risky(risky);
            CHECK(fires(risky, test.rule));
            CHECK(rules_fired(risky).size() == 1); // that risk alone
        }
    }
}

TEST_CASE("check: rules look at what makes a setting safe", "[check]") {
    SECTION("uid 0 in a user namespace") {
        Json config = safe_config();
        config["process"]["user"]["uid"] = 0;
        config["linux"]["namespaces"].push_back({{"type", "user"}});
        config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 1}}};
        config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 1}}};
        CHECK_FALSE(fires(config, "root-without-user-namespace"));
    }
    SECTION("allow-all followed by a deny rule") {
        Json config = safe_config();
        config["linux"]["resources"]["devices"] = {
            {{"allow", true}, {"access", "rwm"}},
            {{"allow", false}, {"type", "b"}, {"access", "rwm"}},
        };
        CHECK_FALSE(fires(config, "all-devices-allowed"));
    }
    SECTION("an allow rule for one device") {
        Json config = safe_config();
        config["linux"]["resources"]["devices"].push_back(
            {{"allow", true}, {"type", "c"}, {"major", 1}, {"minor", 3}, {"access", "rwm"}});
        CHECK_FALSE(fires(config, "all-devices-allowed"));
    }
    SECTION("/proc read-only as a whole") {
        Json config = safe_config();
        config["linux"]["readonlyPaths"] = {"/proc"};
        CHECK_FALSE(fires(config, "writable-proc-sys"));
    }
    SECTION("the capability warning names the capabilities") {
        Json config = safe_config();
        config["process"]["capabilities"]["effective"] = {"CAP_KILL", "CAP_NET_ADMIN",
                                                          "CAP_SYS_MODULE"};
        auto spec = minirun::spec::parse_spec(config.dump());
        REQUIRE(spec.ok());
        auto warnings = minirun::check::warnings_for(*spec);
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0].path == "process.capabilities.effective");
        CHECK(warnings[0].message.find("CAP_SYS_MODULE, CAP_NET_ADMIN") != std::string::npos);
        CHECK_FALSE(warnings[0].why.empty());
        CHECK_FALSE(warnings[0].fix.empty());
    }
}

TEST_CASE("check: runc spec's default gives the short list", "[check]") {
    auto ids = rules_fired(Json::parse(minirun::spec::default_spec_json(false, 0, 0)));
    CHECK(ids == std::vector<std::string>{"no-seccomp", "root-without-user-namespace",
                                          "no-memory-limit", "no-pids-limit"});
}

TEST_CASE("check: every error at once, each with its path", "[check]") {
    Bundle bundle;
    SECTION("two bad namespaces and a bad mount: three errors, numbered as in the file") {
        Json config = safe_config();
        config["linux"]["namespaces"][1]["type"] = "foo";
        config["linux"]["namespaces"][3]["type"] = "bar";
        config["mounts"][2]["destination"] = 5;
        Report report = bundle.check(config);
        INFO(describe(report));
        CHECK(error_paths(report) == std::vector<std::string>{"mounts[2].destination",
                                                              "linux.namespaces[1].type",
                                                              "linux.namespaces[3].type"});
        CHECK(report.errors[2].message == "unknown namespace \"bar\"");
        CHECK(minirun::check::exit_code(report) == 2);
    }
    SECTION("a wrong required field is one error, not also \"is required\"") {
        Json config = safe_config();
        // Removed, height is missing: consoleSize goes, and the rest of process is read.
        config["process"]["consoleSize"] = {{"height", "tall"}, {"width", 80}};
        config["process"]["cwd"] = "relative";
        Report report = bundle.check(config);
        INFO(describe(report));
        CHECK(error_paths(report) ==
              std::vector<std::string>{"process.consoleSize.height", "process.cwd"});
    }
    SECTION("rules across fields: each reports") {
        Json config = safe_config();
        remove_namespace(config, "uts"); // the hostname needs it
        config["linux"]["sysctl"] = {{"kernel.panic", "1"}};
        Report report = bundle.check(config);
        INFO(describe(report));
        CHECK(error_paths(report) ==
              std::vector<std::string>{"hostname", "linux.sysctl.\"kernel.panic\""});
    }
    // Messages quote keys with quoted(), which writes a newline as \n; the pruner reads it
    // back, so the bad entry is removed and the next error is still found (before, keys
    // went through std::quoted and a newline broke the message in two).
    SECTION("a key with a newline: one-line messages, and the errors after it are found") {
        Json config = safe_config();
        config["linux"]["sysctl"] = {{"net.a\nb", 5}};
        config["linux"]["namespaces"][1]["type"] = "x\ny";
        Report report = bundle.check(config);
        INFO(describe(report));
        CHECK(error_paths(report) ==
              std::vector<std::string>{"linux.namespaces[1].type", "linux.sysctl.\"net.a\\nb\""});
        for (const auto& error : report.errors) {
            CHECK(error.message.find('\n') == std::string::npos);
        }
    }
    SECTION("the plan's errors, after the fields' ones") {
        Json config = safe_config();
        config["mounts"].push_back({{"destination", "/data"}, {"type", "bind"}});
        config["mounts"][0]["options"] = "nosuid";
        Report report = bundle.check(config);
        INFO(describe(report));
        // The bind without source is the last mount, mounts[7] in the file.
        CHECK(error_paths(report) == std::vector<std::string>{"mounts[0].options", "mounts[7]"});
    }
    SECTION("the rootfs and the executable in it") {
        Json config = safe_config();
        config["process"]["args"] = {"no-such-program"};
        CHECK(error_paths(bundle.check(config)) == std::vector<std::string>{"process.args[0]"});
        // Found by tests/fuzz/config_json.cpp: the $PATH searched was printed as it is, and a
        // PATH with a newline made the message two lines.
        config["process"]["env"] = {"PATH=/usr/bin:/x\ny"};
        Report missing = bundle.check(config);
        REQUIRE(missing.errors.size() == 1);
        CHECK(missing.errors[0].message ==
              R"("no-such-program": executable file not found in the rootfs's $PATH )"
              R"("/usr/bin:/x\ny")");
        config["process"]["args"] = {"/bin/sh"};
        CHECK(bundle.check(config).errors.empty());
        config["root"]["path"] = "missing";
        config["mounts"][1]["type"] = 7;
        Report report = bundle.check(config);
        INFO(describe(report));
        CHECK(error_paths(report) == std::vector<std::string>{"mounts[1].type", "root.path"});
    }
    SECTION("a symlink out of the rootfs is not followed") {
        std::filesystem::create_directories(bundle.dir.path() + "/rootfs/usr/bin");
        std::filesystem::create_symlink("/bin/true", bundle.dir.path() + "/rootfs/usr/bin/x");
        Json config = safe_config();
        config["process"]["args"] = {"/usr/bin/x"};
        // /bin/true of the host does not count; /bin/true of the rootfs does not exist.
        CHECK(error_paths(bundle.check(config)) == std::vector<std::string>{"process.args[0]"});
    }
    SECTION("malformed JSON is one error") {
        Report report = bundle.check_text("{\"ociVersion\": ");
        REQUIRE(report.errors.size() == 1);
        CHECK(report.errors[0].path.empty());
        CHECK(report.errors[0].message.find("parse error") != std::string::npos);
        CHECK(report.warnings.empty());
    }
    SECTION("warnings about removed parts are left out") {
        Json config = safe_config();
        config["linux"]["namespaces"][0]["type"] = "foo"; // was pid
        Report report = bundle.check(config);
        CHECK(report.errors.size() == 1);
        CHECK(report.warnings.empty()); // not "no pid namespace": we do not know
    }
}

TEST_CASE("check: exit codes and formats", "[check]") {
    Report report;
    report.bundle = "b";
    CHECK(minirun::check::exit_code(report) == 0);
    report.warnings.push_back({"no-seccomp", "linux.seccomp", "no seccomp filter", "why", "fix"});
    CHECK(minirun::check::exit_code(report) == 1);
    report.errors.push_back({"hostname", "bad"});
    CHECK(minirun::check::exit_code(report) == 2);

    std::string text = minirun::check::report_text(report);
    CHECK(text.find("error: hostname: bad\n") != std::string::npos);
    CHECK(text.find("warning: linux.seccomp: no seccomp filter [no-seccomp]\n") !=
          std::string::npos);
    CHECK(text.find("b: 1 error, 1 warning\n") != std::string::npos);

    Json json = Json::parse(minirun::check::report_json(report));
    CHECK(json["bundle"] == "b");
    CHECK(json["errors"][0] == Json{{"path", "hostname"}, {"message", "bad"}});
    CHECK(json["warnings"][0]["rule"] == "no-seccomp");
    CHECK(json["warnings"][0]["why"] == "why");
    CHECK(json["warnings"][0]["fix"] == "fix");
}
