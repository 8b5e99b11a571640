// `mini-run features`: the OCI features document (runtime-spec features.md and
// features-linux.md), every field of it.
//
// Each list is read from the table the parser or the runtime itself uses, never written out
// a second time, so features cannot say more or less than this build does; the unit test
// [features] parses a config with every entry and checks the reverse as well.
#include "minirun/runtime.hpp"
#include "mount/mount_options.hpp"
#include "security/seccomp.hpp"
#include "spec_rules.hpp"

#include <sys/capability.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace minirun {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> strings(std::span<const std::string_view> names) {
    return {names.begin(), names.end()};
}

// Every capability libcap knows by name (CAP_LAST_CAP of the headers this was built with);
// process.capabilities takes these, and warns about names the running kernel lacks.
std::vector<std::string> capability_names() {
    std::vector<std::string> names;
    for (cap_value_t cap = 0; cap <= CAP_LAST_CAP; ++cap) {
        char* name = cap_to_name(cap);
        if (name == nullptr) {
            continue;
        }
        std::string upper = name;
        cap_free(name);
        std::transform(upper.begin(), upper.end(), upper.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        names.push_back(upper);
    }
    return names;
}

std::vector<std::string> namespace_names() {
    std::vector<std::string> names;
    for (const spec::NamespaceKind& kind : spec::namespace_table()) {
        names.emplace_back(kind.spec_name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

Json seccomp_features() {
    Json seccomp;
    seccomp["enabled"] = true;
    seccomp["actions"] = strings(spec::rules::seccomp_action_names());
    seccomp["operators"] = strings(spec::rules::seccomp_operator_names());
    std::vector<std::string> archs = spec::rules::seccomp_arch_names();
    std::erase_if(archs,
                  [](const std::string& arch) { return !runtime::seccomp::arch_usable(arch); });
    seccomp["archs"] = archs;
    std::vector<std::string> known = strings(spec::rules::seccomp_flag_names());
    std::vector<std::string> supported;
    std::copy_if(known.begin(), known.end(), std::back_inserter(supported),
                 [](const std::string& flag) { return runtime::seccomp::flag_supported(flag); });
    seccomp["knownFlags"] = known;
    seccomp["supportedFlags"] = supported;
    return seccomp;
}

// A table's names, in its order.
std::vector<std::string> names_of(std::span<const spec::rules::MemoryPolicyName> table) {
    std::vector<std::string> names;
    for (const auto& entry : table) {
        names.emplace_back(entry.name);
    }
    return names;
}

} // namespace

std::string features_json() {
    Json features;
    features["ociVersionMin"] = "1.0.0";
    features["ociVersionMax"] = kSpecVersion;
    features["hooks"] = {"prestart",       "createRuntime", "createContainer",
                         "startContainer", "poststart",     "poststop"};
    features["mountOptions"] = runtime::known_mount_options();

    Json linux;
    linux["namespaces"] = namespace_names();
    linux["capabilities"] = capability_names();
    // systemd: --systemd-cgroup is accepted but the cgroupfs manager is used (engines.md).
    linux["cgroup"] = {
        {"v1", true}, {"v2", true}, {"systemd", false}, {"systemdUser", false}, {"rdma", true}};
    linux["seccomp"] = seccomp_features();
    // Labels are applied when the host has the LSM enabled (and warned about otherwise).
    linux["apparmor"] = {{"enabled", true}};
    linux["selinux"] = {{"enabled", true}};
    // The names the parser takes, including those this kernel may refuse (a mode newer than
    // it is refused by set_mempolicy(2) at create, with the reason).
    linux["memoryPolicy"] = {{"modes", names_of(spec::rules::memory_policy_modes())},
                             {"flags", names_of(spec::rules::memory_policy_flags())}};
    // Implemented, though this machine has no resctrl: a config that asks for it is refused
    // at create with the reason (cgroups.md). schemata: its lines are written to the group's
    // schemata file after l3CacheSchema and memBwSchema; monitoring: enableMonitoring makes
    // the container a mon_groups/<id> group of its own (runtime/cgroup/intel_rdt.cpp).
    linux["intelRdt"] = {{"enabled", true}, {"schemata", true}, {"monitoring", true}};
    linux["mountExtensions"] = {{"idmap", {{"enabled", true}}}};
    linux["netDevices"] = {{"enabled", true}};
    features["linux"] = linux;

    features["annotations"] = {{"io.github.mini-run.version", MINIRUN_VERSION}};
    // Annotations in config.json that change what mini-run does: none, it reads none of
    // them (runc lists its "bundle" and org.systemd.property.* here).
    features["potentiallyUnsafeConfigAnnotations"] = Json::array();
    return features.dump(2);
}

} // namespace minirun
