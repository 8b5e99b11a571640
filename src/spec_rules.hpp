// The value rules of config.json that are more than a type check: known names (rlimits,
// seccomp constants), sysctl classification, path normalisation, and the checks that
// look at several fields at once. Private to the spec parser; exposed here for the tests.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::spec::rules {

// Which namespace makes a sysctl private to the container. Only those may be set: writing
// any other one would change the host.
enum class SysctlScope {
    network,     // net.*
    ipc,         // the SysV IPC limits and fs.mqueue.*
    uts,         // kernel.hostname / kernel.domainname: refused, config.json has fields for them
    user,        // user.*: the per-user-namespace limits (user.max_user_namespaces, ...)
    not_private, // everything else
};
SysctlScope classify_sysctl(std::string_view name);

// RLIMIT_NOFILE -> its resource number.
std::optional<int> rlimit_resource(std::string_view name);

bool is_seccomp_action(std::string_view name);      // SCMP_ACT_*
bool is_seccomp_arch(std::string_view name);        // SCMP_ARCH_*, as libseccomp resolves it
bool is_seccomp_flag(std::string_view name);        // SECCOMP_FILTER_FLAG_*
bool is_seccomp_operator(std::string_view name);    // SCMP_CMP_*
bool is_rootfs_propagation(std::string_view value); // "", private, rslave, ...

// The names the checks above accept, for `features` (runtime/features.cpp), so that what
// features says and what the parser takes are one list.
std::span<const std::string_view> seccomp_action_names();
std::span<const std::string_view> seccomp_operator_names();
std::span<const std::string_view> seccomp_flag_names();
std::vector<std::string> seccomp_arch_names(); // the SCMP_ARCH_* the linked libseccomp knows

// linux.memoryPolicy's modes (MPOL_*) and mode flags (MPOL_F_*) with the kernel's values: the
// parser takes these names, the runtime passes set_mempolicy(2) their values, and features
// lists them (spec_parse_mempolicy_rdt.cpp has the table).
struct MemoryPolicyName {
    std::string_view name;
    int value;
};
std::span<const MemoryPolicyName> memory_policy_modes();
std::span<const MemoryPolicyName> memory_policy_flags();

// A mount destination as mini-run uses it: absolute ("proc" -> "/proc") and lexically clean,
// never above "/" ("/a/../../b" -> "/b").
std::string normalize_destination(std::string_view destination);

// The problem with a network interface name, if any: the kernel's rules (dev_valid_name):
// 1 to 15 bytes (IFNAMSIZ with its NUL), not "." or "..", no '/', ':' or white space.
// With `allow_template`, one "%d" may stand for a number the kernel picks; any other '%' is
// refused (the kernel would take it for a bad template).
std::optional<std::string> interface_name_problem(std::string_view name, bool allow_template);

// The problem with an ociVersion value, if any (without the "ociVersion: " prefix).
std::optional<std::string> oci_version_problem(std::string_view version);

// The rules that relate several parts of the config (namespaces against the fields that need
// them, seccomp notify against its listener, id mappings against each other).
// Each rule reports the first problem it finds; validate_cross_references() the first of
// all. `mini-run check` runs every rule on its own, to report them all (runtime/check/check.cpp).
Status validate_cross_references(const Spec& spec);
struct CrossCheck {
    std::string_view name;
    Status (*check)(const Spec& spec);
};
std::span<const CrossCheck> cross_reference_checks();

// The reading half of load_spec(): the config file's text, and its path for messages.
Result<std::string> read_config(const std::string& bundle_dir, const std::string& config_file,
                                std::string* path_out);

// parse_spec() of a document already read as JSON. Without `cross_references` only the
// types and values of each field are checked, not validate_cross_references(): `mini-run
// check` runs those rules one by one.
Result<Spec> parse_spec_document(const nlohmann::json& document, std::string_view source_name,
                                 bool cross_references = true);

// The largest NUMA node number any kernel has (MAX_NUMNODES is 1 << NODES_SHIFT, at most 10).
// Node lists ("0-3,7") are read by units::parse_number_list.
inline constexpr uint32_t kMaxNumaNode = 1023;

} // namespace minirun::spec::rules
