// config.json's "linux.memoryPolicy" (set_mempolicy(2)) and "linux.intelRdt" (resctrl):
// names checked against the kernel's constants, node lists expanded, and the combinations
// the kernel would refuse refused here, with the field's path.
#include "minirun/spec.hpp"
#include "minirun/units.hpp"
#include "spec_reader.hpp"
#include "spec_rules.hpp"
#include "spec_sections.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::spec::sections {

using namespace reader; // Node, read, field, member ...: the parser's vocabulary

namespace {

// set_mempolicy(2)'s modes and mode flags, as runtime-spec 1.3 names them (in its order),
// with the values of <linux/mempolicy.h>, which not every libc's headers carry in full
// (weighted interleave is Linux 6.9): the kernel ABI. The one table of them: the runtime
// passes these values (runtime/process/memory_policy.cpp), features lists these names.
constexpr std::array<rules::MemoryPolicyName, 7> kModes = {{
    {"MPOL_DEFAULT", 0},
    {"MPOL_BIND", 2},
    {"MPOL_INTERLEAVE", 3},
    {"MPOL_WEIGHTED_INTERLEAVE", 6},
    {"MPOL_PREFERRED", 1},
    {"MPOL_PREFERRED_MANY", 5},
    {"MPOL_LOCAL", 4},
}};
constexpr std::array<rules::MemoryPolicyName, 3> kFlags = {{
    {"MPOL_F_NUMA_BALANCING", 1 << 13},
    {"MPOL_F_RELATIVE_NODES", 1 << 14},
    {"MPOL_F_STATIC_NODES", 1 << 15},
}};

bool known(std::span<const rules::MemoryPolicyName> table, std::string_view name) {
    return std::any_of(table.begin(), table.end(),
                       [name](const rules::MemoryPolicyName& entry) { return entry.name == name; });
}

// "A, B or C": the names a message says are expected.
std::string one_of(std::span<const rules::MemoryPolicyName> table) {
    std::string text;
    for (size_t i = 0; i < table.size(); ++i) {
        if (i > 0) {
            text += i + 1 == table.size() ? " or " : ", ";
        }
        text += table[i].name;
    }
    return text;
}

bool has(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

Status parse_memory_policy(const Node& node, MemoryPolicy& policy) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node mode, required_member(node, "mode"));
    MR_TRY(read(mode, policy.mode));
    if (!known(kModes, policy.mode)) {
        return mode.error(
            cat("unknown mode ", quoted(policy.mode), " (expected ", one_of(kModes), ")"));
    }
    bool takes_no_nodes = policy.mode == "MPOL_DEFAULT" || policy.mode == "MPOL_LOCAL";
    auto nodes = member(node, "nodes");
    if (nodes) {
        MR_TRY(read(*nodes, policy.nodes));
        auto parsed = units::parse_number_list(policy.nodes, {"node", rules::kMaxNumaNode});
        if (!parsed) {
            return nodes->error(parsed.error().message());
        }
        policy.node_ids = std::move(*parsed);
    }
    // The kernel refuses nodes for these two, and an empty set for every other mode.
    if (takes_no_nodes && !policy.node_ids.empty()) {
        return nodes->error(
            cat("must be empty with ", policy.mode, ", got ", quoted(policy.nodes)));
    }
    if (!takes_no_nodes && policy.node_ids.empty()) {
        return Error(EINVAL, cat(node.child_path("nodes"), ": required with ", policy.mode,
                                 " (a list of memory nodes such as \"0-3,7\")"));
    }
    if (auto flags = member(node, "flags")) {
        MR_TRY(
            read_with(*flags, policy.flags, [](const Node& element, std::string& flag) -> Status {
                MR_TRY(read(element, flag));
                if (!known(kFlags, flag)) {
                    return element.error(
                        cat("unknown flag ", quoted(flag), " (expected ", one_of(kFlags), ")"));
                }
                return {};
            }));
        bool relative = has(policy.flags, "MPOL_F_RELATIVE_NODES");
        bool fixed = has(policy.flags, "MPOL_F_STATIC_NODES");
        if (relative && fixed) {
            return flags->error("MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other");
        }
        if ((relative || fixed) && takes_no_nodes) {
            return flags->error(cat(relative ? "MPOL_F_RELATIVE_NODES" : "MPOL_F_STATIC_NODES",
                                    " says how nodes are read, and ", policy.mode, " has none"));
        }
        // NUMA balancing moves pages towards the nodes a policy allows: the kernel takes it
        // with MPOL_BIND (5.12) and MPOL_PREFERRED_MANY (6.9) only.
        if (has(policy.flags, "MPOL_F_NUMA_BALANCING") && policy.mode != "MPOL_BIND" &&
            policy.mode != "MPOL_PREFERRED_MANY") {
            return flags->error(cat("MPOL_F_NUMA_BALANCING needs MPOL_BIND or "
                                    "MPOL_PREFERRED_MANY, not ",
                                    policy.mode));
        }
    }
    return {};
}

Status parse_intel_rdt(const Node& node, IntelRdt& rdt) {
    MR_TRY(expect_object(node));
    if (auto clos = member(node, "closID")) {
        MR_TRY(read(*clos, rdt.clos_id));
        // It names a directory right below the resctrl root (as runc checks).
        if (rdt.clos_id == "." || rdt.clos_id == ".." ||
            rdt.clos_id.find('/') != std::string::npos ||
            rdt.clos_id.find('\0') != std::string::npos) {
            return clos->error(cat("must name a directory of its own, got ", quoted(rdt.clos_id)));
        }
    }
    MR_TRY(field(node, "l3CacheSchema", rdt.l3_cache_schema));
    if (auto mem_bw = member(node, "memBwSchema")) {
        MR_TRY(read(*mem_bw, rdt.mem_bw_schema));
        // The spec: it MUST start with "MB:" and MUST NOT contain newlines.
        if (!rdt.mem_bw_schema.empty() && !rdt.mem_bw_schema.starts_with("MB:")) {
            return mem_bw->error(cat("must start with \"MB:\", got ", quoted(rdt.mem_bw_schema)));
        }
        if (rdt.mem_bw_schema.find('\n') != std::string::npos) {
            return mem_bw->error("must be one line");
        }
    }
    if (auto schemata = member(node, "schemata")) {
        MR_TRY(read_with(*schemata, rdt.schemata,
                         [](const Node& element, std::string& line) -> Status {
                             MR_TRY(read(element, line));
                             if (line.find('\n') != std::string::npos) {
                                 return element.error("must be one line of the schemata file");
                             }
                             return {};
                         }));
    }
    MR_TRY(field(node, "enableMonitoring", rdt.enable_monitoring));
    MR_TRY(field(node, "enableCMT", rdt.enable_cmt));
    return field(node, "enableMBM", rdt.enable_mbm);
}

} // namespace minirun::spec::sections

namespace minirun::spec::rules {

// The parser's tables, for the runtime and features.
std::span<const MemoryPolicyName> memory_policy_modes() {
    return sections::kModes;
}
std::span<const MemoryPolicyName> memory_policy_flags() {
    return sections::kFlags;
}

} // namespace minirun::spec::rules
