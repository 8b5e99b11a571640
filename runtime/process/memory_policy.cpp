#include "process/memory_policy.hpp"

#include "minirun/explain.hpp"
#include "minirun/file.hpp"
#include "spec_rules.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <span>

namespace minirun::runtime::memory_policy {
namespace {

// The value of a mode or flag name, from the parser's own table (spec_rules.hpp).
int value_of(std::span<const spec::rules::MemoryPolicyName> table, std::string_view name) {
    for (const auto& [known, value] : table) {
        if (known == name) {
            return value;
        }
    }
    return 0; // the parser let only known names through
}

constexpr size_t kWordBits = sizeof(unsigned long) * CHAR_BIT;

// The value of the "Mems_allowed_list:" line of a /proc/<pid>/status text.
std::string allowed_list(std::string_view status) {
    constexpr std::string_view key = "Mems_allowed_list:";
    size_t at = status.find(key);
    if (at == std::string_view::npos) {
        return {};
    }
    std::string_view rest = status.substr(at + key.size());
    rest = rest.substr(0, rest.find('\n'));
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) {
        rest.remove_prefix(1);
    }
    return std::string(rest);
}

} // namespace

Request request_for(const spec::MemoryPolicy& policy) {
    Request request;
    request.mode = value_of(spec::rules::memory_policy_modes(), policy.mode);
    for (const std::string& flag : policy.flags) {
        request.mode |= value_of(spec::rules::memory_policy_flags(), flag);
    }
    if (!policy.node_ids.empty()) {
        request.mask.assign(policy.node_ids.back() / kWordBits + 1, 0);
        for (uint32_t node : policy.node_ids) {
            request.mask[node / kWordBits] |= 1UL << (node % kWordBits);
        }
        request.max_node = request.mask.size() * kWordBits + 1;
    }
    return request;
}

std::string mode_text(const spec::MemoryPolicy& policy) {
    std::string text = policy.mode;
    for (const std::string& flag : policy.flags) {
        text += "|" + flag;
    }
    return text;
}

Error refusal(const spec::MemoryPolicy& policy, int error, std::string_view allowed_nodes) {
    std::string what = cat("linux.memoryPolicy: set_mempolicy(", mode_text(policy));
    if (!policy.nodes.empty()) {
        what += cat(", nodes ", quoted(policy.nodes));
    }
    what += cat("): ", std::strerror(error));
    if (error == ENOSYS) {
        return Error(error, cat(what, ": this kernel has no NUMA memory policies"));
    }
    if (error == EINVAL) {
        if (!allowed_nodes.empty()) {
            what +=
                cat(": the container's processes may use memory node(s) ", allowed_nodes, " only");
        }
        if (policy.mode == "MPOL_WEIGHTED_INTERLEAVE") {
            what += " (MPOL_WEIGHTED_INTERLEAVE needs Linux 6.9)";
        }
    }
    return Error(error, what);
}

Status apply(const spec::MemoryPolicy* policy, Syscalls& sys, const std::string& status_path) {
    if (policy == nullptr) {
        return {};
    }
    Request request = request_for(*policy);
    if (explain::enabled()) {
        explain::step(
            cat("set_mempolicy(", mode_text(*policy),
                policy->nodes.empty() ? std::string() : cat(", nodes ", quoted(policy->nodes)),
                "): the NUMA memory policy of this process and all it starts"));
    }
    auto set = sys.set_mempolicy(request.mode, request.mask, request.max_node);
    if (set) {
        return {};
    }
    int error = set.error().errno_value();
    std::string allowed;
    if (error == EINVAL) {
        if (auto status = fs::read_file(status_path)) {
            allowed = allowed_list(*status);
        }
    }
    return refusal(*policy, error, allowed);
}

} // namespace minirun::runtime::memory_policy
