// `features` against the parser: every name features lists is one config.json may use, and
// the names the parser takes are the ones features lists. A field added to the parser
// without features (or the reverse) fails here.
#include "cgroup/intel_rdt.hpp"
#include "minirun/runtime.hpp"
#include "minirun/spec.hpp"
#include "mount/mount_options.hpp"
#include "process/memory_policy.hpp"
#include "security/seccomp.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/capability.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using Json = nlohmann::json;
using minirun::spec::parse_spec;

namespace {

Json features() {
    return Json::parse(minirun::features_json());
}

std::set<std::string> as_set(const Json& list) {
    REQUIRE(list.is_array());
    return list.get<std::set<std::string>>();
}

// The smallest config mini-run runs, with a mount namespace, to which a test adds its part.
Json base_config() {
    return Json::parse(R"json({
      "ociVersion": "1.0.0",
      "root": {"path": "rootfs"},
      "process": {"args": ["sh"], "cwd": "/"},
      "linux": {"namespaces": [{"type": "mount"}]}
    })json");
}

// The error parsing `config` gives, or "" when it parses.
std::string parse_error(const Json& config) {
    auto parsed = parse_spec(config.dump());
    return parsed ? std::string() : parsed.error().message();
}

// The config parses; says why not otherwise.
void require_parses(const Json& config) {
    std::string error = parse_error(config);
    INFO(config.dump());
    INFO(error);
    REQUIRE(error.empty());
}

// The parser reads `path` (a wrong type there is an error naming it): a field the parser
// ignored would parse with any value.
void require_read(Json config, const Json::json_pointer& pointer, std::string_view path) {
    config[pointer] = "not the right type";
    std::string error = parse_error(config);
    INFO(config.dump());
    CHECK(error.starts_with(std::string(path) + ":"));
}

Json seccomp_with(const std::string& action, const std::string& op) {
    Json rule = {{"names", {"getpid"}}, {"action", action}};
    if (!op.empty()) {
        rule["args"] = {{{"index", 0}, {"value", 1}, {"op", op}}};
    }
    Json seccomp = {{"defaultAction", "SCMP_ACT_ALLOW"}, {"syscalls", {rule}}};
    if (action == "SCMP_ACT_NOTIFY") {
        seccomp["listenerPath"] = "/run/agent.sock";
    }
    return seccomp;
}

} // namespace

TEST_CASE("features: every field of features.md and features-linux.md", "[features]") {
    Json f = features();
    for (const char* key : {"ociVersionMin", "ociVersionMax", "hooks", "mountOptions", "linux",
                            "annotations", "potentiallyUnsafeConfigAnnotations"}) {
        INFO(key);
        CHECK(f.contains(key));
    }
    const Json& linux = f["linux"];
    for (const char* key :
         {"namespaces", "capabilities", "cgroup", "seccomp", "apparmor", "selinux", "memoryPolicy",
          "intelRdt", "mountExtensions", "netDevices"}) {
        INFO(key);
        CHECK(linux.contains(key));
    }
    for (const char* key : {"v1", "v2", "systemd", "systemdUser", "rdma"}) {
        INFO(key);
        CHECK(linux["cgroup"][key].is_boolean());
    }
    for (const char* key :
         {"enabled", "actions", "operators", "archs", "knownFlags", "supportedFlags"}) {
        INFO(key);
        CHECK(linux["seccomp"].contains(key));
    }
    CHECK(linux["intelRdt"]["enabled"].is_boolean());
    CHECK(linux["intelRdt"]["schemata"].is_boolean());
    CHECK(linux["intelRdt"]["monitoring"].is_boolean());
    CHECK(linux["memoryPolicy"]["modes"].is_array());
    CHECK(linux["memoryPolicy"]["flags"].is_array());
    CHECK(linux["mountExtensions"]["idmap"]["enabled"].is_boolean());
    CHECK(linux["netDevices"]["enabled"].is_boolean());
    // mini-run reads no annotation of config.json: none can change what it does.
    CHECK(f["potentiallyUnsafeConfigAnnotations"] == Json::array());
}

TEST_CASE("features: the versions are the ones the parser takes", "[features]") {
    Json f = features();
    CHECK(f["ociVersionMax"] == std::string(minirun::kSpecVersion));
    for (const char* key : {"ociVersionMin", "ociVersionMax"}) {
        Json config = base_config();
        config["ociVersion"] = f[key];
        require_parses(config);
    }
    Json config = base_config();
    config["ociVersion"] = "2.0.0";
    CHECK_FALSE(parse_error(config).empty());
}

TEST_CASE("features: namespaces are the namespace table, each one parses", "[features]") {
    std::set<std::string> listed = as_set(features()["linux"]["namespaces"]);
    std::set<std::string> table;
    for (const auto& kind : minirun::spec::namespace_table()) {
        table.emplace(kind.spec_name);
    }
    CHECK(listed == table);
    for (const std::string& name : listed) {
        Json config = base_config();
        if (name != "mount") {
            config["linux"]["namespaces"].push_back({{"type", name}});
        }
        if (name == "user") {
            config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
            config["linux"]["gidMappings"] = config["linux"]["uidMappings"];
        }
        require_parses(config);
    }
    Json config = base_config();
    config["linux"]["namespaces"].push_back({{"type", "nosuchns"}});
    CHECK_FALSE(parse_error(config).empty());
}

TEST_CASE("features: every hook listed is read into its list", "[features]") {
    for (const std::string& name : as_set(features()["hooks"])) {
        Json config = base_config();
        config["hooks"][name] = {{{"path", "/bin/true"}}};
        require_parses(config);
        // A hook list of the wrong type is an error naming it: the parser reads this name.
        require_read(base_config(), Json::json_pointer("/hooks/" + name), "hooks." + name);
    }
}

TEST_CASE("features: every mount option listed is one mini-run understands", "[features]") {
    std::set<std::string> listed = as_set(features()["mountOptions"]);
    REQUIRE(listed.size() > 20);
    for (const std::string& option : listed) {
        INFO(option);
        // Understood: not handed on to the filesystem as data.
        auto options = minirun::runtime::parse_mount_options({option});
        CHECK(options.data.empty());
        Json config = base_config();
        if (option == "idmap" || option == "ridmap") {
            // With no mappings of its own, the mount takes the container's.
            config["linux"]["namespaces"].push_back({{"type", "user"}});
            config["linux"]["uidMappings"] = {
                {{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
            config["linux"]["gidMappings"] = config["linux"]["uidMappings"];
        }
        config["mounts"] = {{{"destination", "/mnt"},
                             {"type", "bind"},
                             {"source", "/tmp"},
                             {"options", {"rbind", option}}}};
        require_parses(config);
    }
    // The reverse: a word features does not list goes to the filesystem.
    CHECK(minirun::runtime::parse_mount_options({"size=64k"}).data == "size=64k");
}

TEST_CASE("features: seccomp actions and operators are the parser's", "[features]") {
    Json seccomp = features()["linux"]["seccomp"];
    CHECK(seccomp["enabled"] == true);
    std::set<std::string> actions = as_set(seccomp["actions"]);
    std::set<std::string> operators = as_set(seccomp["operators"]);
    // libseccomp's action and operator names, all of them (seccomp.h).
    const std::vector<std::string> all_actions = {
        "SCMP_ACT_ALLOW",        "SCMP_ACT_ERRNO", "SCMP_ACT_KILL",
        "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_LOG",   "SCMP_ACT_KILL_THREAD",
        "SCMP_ACT_NOTIFY",       "SCMP_ACT_TRACE", "SCMP_ACT_TRAP"};
    const std::vector<std::string> all_operators = {
        "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT",       "SCMP_CMP_LE",
        "SCMP_CMP_LT", "SCMP_CMP_NE", "SCMP_CMP_MASKED_EQ"};
    for (const std::string& action : all_actions) {
        INFO(action);
        Json config = base_config();
        config["linux"]["seccomp"] = seccomp_with(action, "");
        CHECK(parse_error(config).empty() == (actions.count(action) == 1));
    }
    for (const std::string& op : all_operators) {
        INFO(op);
        Json config = base_config();
        config["linux"]["seccomp"] = seccomp_with("SCMP_ACT_ERRNO", op);
        CHECK(parse_error(config).empty() == (operators.count(op) == 1));
    }
    Json config = base_config();
    config["linux"]["seccomp"] = seccomp_with("SCMP_ACT_NOSUCH", "");
    CHECK_FALSE(parse_error(config).empty());
}

TEST_CASE("features: every seccomp arch listed parses and builds a filter", "[features]") {
    std::set<std::string> archs = as_set(features()["linux"]["seccomp"]["archs"]);
    CHECK(archs.count("SCMP_ARCH_X86_64") == 1);
    CHECK(archs.count("SCMP_ARCH_X86") == 1);
    CHECK(archs.count("SCMP_ARCH_AARCH64") == 1);
    for (const std::string& arch : archs) {
        INFO(arch);
        Json config = base_config();
        config["linux"]["seccomp"] = seccomp_with("SCMP_ACT_ERRNO", "");
        config["linux"]["seccomp"]["architectures"] = {arch};
        auto spec = parse_spec(config.dump());
        REQUIRE(spec);
        auto filter = minirun::runtime::seccomp::Filter::build(*spec->linux.seccomp);
        INFO((filter ? std::string() : filter.error().message()));
        CHECK(filter);
    }
    Json config = base_config();
    config["linux"]["seccomp"] = seccomp_with("SCMP_ACT_ERRNO", "");
    config["linux"]["seccomp"]["architectures"] = {"SCMP_ARCH_VAX"};
    CHECK_FALSE(parse_error(config).empty());
    // The reverse: an architecture libseccomp knows but features leaves out (the other byte
    // order) is refused when the filter is built, with its path.
    config["linux"]["seccomp"]["architectures"] = {"SCMP_ARCH_S390X"};
    auto spec = parse_spec(config.dump());
    REQUIRE(spec);
    if (archs.count("SCMP_ARCH_S390X") == 0) {
        auto filter = minirun::runtime::seccomp::Filter::build(*spec->linux.seccomp);
        REQUIRE_FALSE(filter);
        CHECK_THAT(filter.error().message(),
                   Catch::Matchers::StartsWith("linux.seccomp.architectures[0]: "));
    }
}

TEST_CASE("features: seccomp flags: known ones parse, supported ones build", "[features]") {
    Json seccomp = features()["linux"]["seccomp"];
    std::set<std::string> known = as_set(seccomp["knownFlags"]);
    std::set<std::string> supported = as_set(seccomp["supportedFlags"]);
    CHECK(std::includes(known.begin(), known.end(), supported.begin(), supported.end()));
    // This kernel (6.x) has had these since 4.14-4.17.
    for (const char* flag : {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                             "SECCOMP_FILTER_FLAG_SPEC_ALLOW"}) {
        INFO(flag);
        CHECK(supported.count(flag) == 1);
    }
    for (const std::string& flag : known) {
        INFO(flag);
        Json config = base_config();
        config["linux"]["seccomp"] = seccomp_with("SCMP_ACT_ERRNO", "");
        config["linux"]["seccomp"]["flags"] = {flag};
        auto spec = parse_spec(config.dump());
        REQUIRE(spec);
        if (supported.count(flag) == 1) {
            CHECK(minirun::runtime::seccomp::Filter::build(*spec->linux.seccomp));
        }
    }
    Json config = base_config();
    config["linux"]["seccomp"] = seccomp_with("SCMP_ACT_ERRNO", "");
    config["linux"]["seccomp"]["flags"] = {"SECCOMP_FILTER_FLAG_NOSUCH"};
    CHECK_FALSE(parse_error(config).empty());
}

TEST_CASE("features: every capability listed is one libcap resolves", "[features]") {
    std::set<std::string> caps = as_set(features()["linux"]["capabilities"]);
    CHECK(caps.size() == static_cast<size_t>(CAP_LAST_CAP) + 1);
    for (const std::string& name : caps) {
        INFO(name);
        cap_value_t value = 0;
        CHECK(cap_from_name(name.c_str(), &value) == 0);
    }
}

TEST_CASE("features: the extensions it says are enabled are read by the parser", "[features]") {
    Json linux = features()["linux"];
    Json config = base_config();
    config["linux"]["namespaces"].push_back({{"type", "user"}});
    config["linux"]["namespaces"].push_back({{"type", "network"}});
    config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    config["linux"]["gidMappings"] = config["linux"]["uidMappings"];

    SECTION("idmapped mounts") {
        REQUIRE(linux["mountExtensions"]["idmap"]["enabled"] == true);
        config["mounts"] = {
            {{"destination", "/data"},
             {"type", "bind"},
             {"source", "/tmp"},
             {"options", {"rbind", "idmap"}},
             {"uidMappings", {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}}},
             {"gidMappings", {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}}}}};
        require_parses(config);
        auto spec = parse_spec(config.dump());
        REQUIRE(spec);
        require_read(config, Json::json_pointer("/mounts/0/uidMappings"), "mounts[0].uidMappings");
        require_read(config, Json::json_pointer("/mounts/0/gidMappings"), "mounts[0].gidMappings");
    }
    SECTION("network devices") {
        REQUIRE(linux["netDevices"]["enabled"] == true);
        config["linux"]["netDevices"] = {{"eth9", {{"name", "eth0"}}}};
        require_parses(config);
        require_read(config, Json::json_pointer("/linux/netDevices"), "linux.netDevices");
    }
    SECTION("Intel RDT, its schemata and monitoring") {
        REQUIRE(linux["intelRdt"]["enabled"] == true);
        require_read(config, Json::json_pointer("/linux/intelRdt"), "linux.intelRdt");
        REQUIRE(linux["intelRdt"]["schemata"] == true);
        REQUIRE(linux["intelRdt"]["monitoring"] == true);
        config["linux"]["intelRdt"] = {{"closID", "c1"}};
        require_read(config, Json::json_pointer("/linux/intelRdt/schemata"),
                     "linux.intelRdt.schemata");
        require_read(config, Json::json_pointer("/linux/intelRdt/enableMonitoring"),
                     "linux.intelRdt.enableMonitoring");
        // Read, and used: the lines go to the group's schemata file, and monitoring gives
        // the container a monitoring group of its own.
        config["linux"]["intelRdt"] = {{"schemata", {"L3:0=f"}}, {"enableMonitoring", true}};
        auto spec = parse_spec(config.dump());
        REQUIRE(spec);
        const auto& rdt = *spec->linux.intel_rdt;
        CHECK(minirun::runtime::intel_rdt::schemata_writes(rdt) ==
              std::vector<std::string>{"L3:0=f"});
        auto group = minirun::runtime::intel_rdt::group_of("/sys/fs/resctrl", rdt, "web");
        CHECK(group.monitor_dir == "/sys/fs/resctrl/web/mon_groups/web");
    }
}

namespace {

// A linux.memoryPolicy the parser takes with `mode`: nodes where the mode needs them.
Json policy_with(const std::string& mode) {
    Json policy = {{"mode", mode}};
    if (mode != "MPOL_DEFAULT" && mode != "MPOL_LOCAL") {
        policy["nodes"] = "0";
    }
    return policy;
}

} // namespace

TEST_CASE("features: memoryPolicy modes and flags are the parser's", "[features]") {
    Json policy = features()["linux"]["memoryPolicy"];
    std::set<std::string> modes = as_set(policy["modes"]);
    std::set<std::string> flags = as_set(policy["flags"]);
    // <linux/mempolicy.h>'s modes and mode flags as of Linux 6.9, all of them.
    const std::vector<std::string> all_modes = {"MPOL_DEFAULT",
                                                "MPOL_PREFERRED",
                                                "MPOL_BIND",
                                                "MPOL_INTERLEAVE",
                                                "MPOL_LOCAL",
                                                "MPOL_PREFERRED_MANY",
                                                "MPOL_WEIGHTED_INTERLEAVE"};
    const std::vector<std::string> all_flags = {"MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES",
                                                "MPOL_F_STATIC_NODES"};
    std::set<int> values;
    for (const std::string& mode : all_modes) {
        INFO(mode);
        Json config = base_config();
        config["linux"]["memoryPolicy"] = policy_with(mode);
        CHECK(parse_error(config).empty() == (modes.count(mode) == 1));
        if (modes.count(mode) == 1) {
            // Listed, parsed, and given to set_mempolicy(2) as a mode of its own.
            auto spec = parse_spec(config.dump());
            REQUIRE(spec);
            values.insert(
                minirun::runtime::memory_policy::request_for(*spec->linux.memory_policy).mode);
        }
    }
    CHECK(values.size() == modes.size());
    for (const std::string& flag : all_flags) {
        INFO(flag);
        Json config = base_config();
        // MPOL_BIND takes each flag (NUMA balancing only with it or MPOL_PREFERRED_MANY).
        config["linux"]["memoryPolicy"] = policy_with("MPOL_BIND");
        config["linux"]["memoryPolicy"]["flags"] = {flag};
        CHECK(parse_error(config).empty() == (flags.count(flag) == 1));
        if (flags.count(flag) == 1) {
            auto spec = parse_spec(config.dump());
            REQUIRE(spec);
            // The flag's bit is set on top of MPOL_BIND's 2.
            CHECK(minirun::runtime::memory_policy::request_for(*spec->linux.memory_policy).mode >
                  2);
        }
    }
    // The reverse: a name features does not list is refused.
    Json config = base_config();
    config["linux"]["memoryPolicy"] = policy_with("MPOL_NOSUCH");
    CHECK_FALSE(parse_error(config).empty());
    config["linux"]["memoryPolicy"] = policy_with("MPOL_BIND");
    config["linux"]["memoryPolicy"]["flags"] = {"MPOL_F_NOSUCH"};
    CHECK_FALSE(parse_error(config).empty());
}
