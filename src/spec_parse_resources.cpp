// config.json's "linux.resources", and the file of `update --resources`: the cgroup
// limits, each value checked on its own (runtime/cgroup*.cpp writes them).
#include "minirun/log.hpp"
#include "minirun/spec.hpp"
#include "spec_reader.hpp"
#include "spec_sections.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace minirun::spec::sections {

using namespace reader; // Node, read, field, member ...: the parser's vocabulary

namespace {

Status parse_device_rule(const Node& node, DeviceCgroupRule& rule) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field(node, "allow", rule.allow));
    if (auto type = member(node, "type")) {
        MR_TRY(read(*type, rule.type));
        // Unset means "all" per the spec; Go configs write that as "".
        if (rule.type.empty()) {
            rule.type = "a";
        }
        if (rule.type != "a" && rule.type != "c" && rule.type != "b") {
            return type->error(
                cat("unknown device type ", quoted(rule.type), " (expected a, c or b)"));
        }
    }
    MR_TRY(field(node, "major", rule.major));
    MR_TRY(field(node, "minor", rule.minor));
    if (auto access = member(node, "access")) {
        MR_TRY(read(*access, rule.access));
        if (rule.access.empty()) {
            rule.access = "rwm";
        }
        // Only r, w and m mean something (the kernel's devices.allow takes no other). runc
        // drops any other letter and runs the config ("rwa" is seen in the wild, and in
        // runc's own tests); so does mini-run, saying so.
        if (rule.access.find_first_not_of("rwm") != std::string::npos) {
            std::string kept;
            for (char letter : std::string_view("rwm")) {
                if (rule.access.find(letter) != std::string::npos) {
                    kept.push_back(letter);
                }
            }
            log::warning(cat(access->path(), ": only r, w and m are device access, got ",
                             quoted(rule.access), "; using ", quoted(kept)));
            rule.access = kept;
        }
    }
    return {};
}

Status parse_memory(const Node& node, MemoryResources& memory) {
    MR_TRY(expect_object(node));
    MR_TRY(field(node, "limit", memory.limit));
    MR_TRY(field(node, "reservation", memory.reservation));
    MR_TRY(field(node, "swap", memory.swap));
    MR_TRY(field(node, "kernel", memory.kernel));
    MR_TRY(field(node, "kernelTCP", memory.kernel_tcp));
    if (auto swappiness = member(node, "swappiness")) {
        const Json& value = swappiness->json();
        // Docker writes "unset" as -1, which Go marshals into the uint64 as 2^64-1; runc reads
        // both as "leave the kernel default", and so do we.
        bool unset = (value.is_number_integer() && !value.is_number_unsigned() &&
                      value.get<int64_t>() == -1) ||
                     (value.is_number_unsigned() && value.get<uint64_t>() == UINT64_MAX);
        if (!unset) {
            MR_TRY(read(*swappiness, memory.swappiness));
            // vm.swappiness / memory.swappiness accept 0..100 only.
            if (*memory.swappiness > 100) {
                return swappiness->error(
                    cat("must be between 0 and 100, got ", *memory.swappiness));
            }
        }
    }
    MR_TRY(field(node, "disableOOMKiller", memory.disable_oom_killer));
    MR_TRY(field(node, "useHierarchy", memory.use_hierarchy));
    return field(node, "checkBeforeUpdate", memory.check_before_update);
}

Status parse_cpu(const Node& node, CpuResources& cpu) {
    MR_TRY(expect_object(node));
    MR_TRY(field(node, "shares", cpu.shares));
    MR_TRY(field(node, "quota", cpu.quota));
    if (auto burst = member(node, "burst")) {
        MR_TRY(read(*burst, cpu.burst));
        // The spec: burst MUST be no larger than a positive quota.
        if (cpu.quota && *cpu.quota > 0 && *cpu.burst > static_cast<uint64_t>(*cpu.quota)) {
            return burst->error(
                cat("must not be larger than quota (", *cpu.quota, "), got ", *cpu.burst));
        }
    }
    MR_TRY(field(node, "period", cpu.period));
    MR_TRY(field(node, "realtimeRuntime", cpu.realtime_runtime));
    MR_TRY(field(node, "realtimePeriod", cpu.realtime_period));
    MR_TRY(field(node, "cpus", cpu.cpus));
    MR_TRY(field(node, "mems", cpu.mems));
    if (auto idle = member(node, "idle")) {
        MR_TRY(read(*idle, cpu.idle));
        // cpu.idle takes 0 (normal) or 1 (SCHED_IDLE).
        if (*cpu.idle != 0 && *cpu.idle != 1) {
            return idle->error(cat("must be 0 or 1, got ", *cpu.idle));
        }
    }
    return {};
}

Status parse_pids(const Node& node, PidsResources& pids) {
    MR_TRY(expect_object(node));
    // Optional since runtime-spec 1.3 (a config with `"pids": {}` sets nothing).
    return field(node, "limit", pids.limit);
}

// blkio.weight / io.bfq.weight range. 0 is accepted as "not set": runc and Docker use it so.
Status read_blkio_weight(const Node& node, std::optional<uint16_t>& weight) {
    MR_TRY(read(node, weight));
    if (*weight == 0) {
        weight.reset();
    } else if (*weight < 10 || *weight > 1000) {
        return node.error(cat("must be between 10 and 1000, got ", *weight));
    }
    return {};
}

Status parse_weight_device(const Node& node, BlockIoDeviceWeight& device) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field(node, "major", device.major));
    MR_TRY(required_field(node, "minor", device.minor));
    auto weight = member(node, "weight");
    auto leaf_weight = member(node, "leafWeight");
    // The spec: at least one of weight and leafWeight MUST be given.
    if (!weight && !leaf_weight) {
        return node.error("needs weight or leafWeight");
    }
    // Per device, 0 is meaningful (it removes the device's own weight), so it is kept.
    for (auto [child, out] :
         {std::pair{weight, &device.weight}, std::pair{leaf_weight, &device.leaf_weight}}) {
        if (child) {
            MR_TRY(read(*child, *out));
            if (**out != 0 && (**out < 10 || **out > 1000)) {
                return child->error(cat("must be 0 or between 10 and 1000, got ", **out));
            }
        }
    }
    return {};
}

Status parse_throttle_device(const Node& node, BlockIoDeviceThrottle& device) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field(node, "major", device.major));
    MR_TRY(required_field(node, "minor", device.minor));
    return required_field(node, "rate", device.rate);
}

Status parse_block_io(const Node& node, BlockIoResources& block_io) {
    MR_TRY(expect_object(node));
    MR_TRY(field_with(node, "weight", block_io.weight, read_blkio_weight));
    MR_TRY(field_with(node, "leafWeight", block_io.leaf_weight, read_blkio_weight));
    MR_TRY(field_with(node, "weightDevice", block_io.weight_device, parse_weight_device));
    MR_TRY(field_with(node, "throttleReadBpsDevice", block_io.throttle_read_bps_device,
                      parse_throttle_device));
    MR_TRY(field_with(node, "throttleWriteBpsDevice", block_io.throttle_write_bps_device,
                      parse_throttle_device));
    MR_TRY(field_with(node, "throttleReadIOPSDevice", block_io.throttle_read_iops_device,
                      parse_throttle_device));
    return field_with(node, "throttleWriteIOPSDevice", block_io.throttle_write_iops_device,
                      parse_throttle_device);
}

// The spec's <size><unit-prefix>B ("64KB", "2MB", "1GB"). It becomes part of a cgroup file
// name (hugetlb.2MB.max), so nothing else may get through.
bool is_page_size(std::string_view size) {
    size_t digits = size.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos) {
        return false;
    }
    std::string_view unit = size.substr(digits);
    return unit == "B" || unit == "KB" || unit == "MB" || unit == "GB" || unit == "TB" ||
           unit == "PB";
}

Status parse_hugepage_limit(const Node& node, HugepageLimit& limit) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node page_size, required_member(node, "pageSize"));
    MR_TRY(read(page_size, limit.page_size));
    if (!is_page_size(limit.page_size)) {
        return page_size.error(cat("expected a size like \"2MB\", got ", quoted(limit.page_size)));
    }
    return required_field(node, "limit", limit.limit);
}

Status parse_network_priority(const Node& node, NetworkPriority& priority) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field(node, "name", priority.name));
    return required_field(node, "priority", priority.priority);
}

Status parse_network(const Node& node, NetworkResources& network) {
    MR_TRY(expect_object(node));
    MR_TRY(field(node, "classID", network.class_id));
    return field_with(node, "priorities", network.priorities, parse_network_priority);
}

Status parse_rdma_limit(const Node& node, RdmaLimit& limit) {
    MR_TRY(expect_object(node));
    MR_TRY(field(node, "hcaHandles", limit.hca_handles));
    MR_TRY(field(node, "hcaObjects", limit.hca_objects));
    // The spec: at least one of the two MUST be given.
    if (!limit.hca_handles && !limit.hca_objects) {
        return node.error("needs hcaHandles or hcaObjects");
    }
    return {};
}

Status parse_unified(const Node& node, std::map<std::string, std::string>& unified) {
    MR_TRY(read(node, unified));
    // Each key names a file in the container's cgroup directory; a '/' or a dot-only name
    // would write somewhere else in the hierarchy.
    for (const auto& [key, value] : unified) {
        if (key.empty() || key == "." || key == ".." || key.find('/') != std::string::npos) {
            return Error(cat(node.entry_path(key), ": not a cgroup file name"));
        }
    }
    return {};
}

} // namespace

Status parse_resources(const Node& node, Resources& resources) {
    MR_TRY(expect_object(node));
    MR_TRY(field_with(node, "devices", resources.devices, parse_device_rule));
    MR_TRY(field_with(node, "memory", resources.memory, parse_memory));
    MR_TRY(field_with(node, "cpu", resources.cpu, parse_cpu));
    MR_TRY(field_with(node, "pids", resources.pids, parse_pids));
    MR_TRY(field_with(node, "blockIO", resources.block_io, parse_block_io));
    MR_TRY(field_with(node, "hugepageLimits", resources.hugepage_limits, parse_hugepage_limit));
    MR_TRY(field_with(node, "network", resources.network, parse_network));
    if (auto rdma = member(node, "rdma")) {
        MR_TRY(reader::read_map_with(*rdma, resources.rdma, parse_rdma_limit));
    }
    if (auto unified = member(node, "unified")) {
        MR_TRY(parse_unified(*unified, resources.unified));
    }
    return {};
}

} // namespace minirun::spec::sections
