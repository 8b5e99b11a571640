// config.json -> spec::Spec: type checks and single-field value checks, in one pass over the
// document. The rules that relate several fields live in spec_validate.cpp.
#include "minirun/fd.hpp"
#include "minirun/log.hpp"
#include "minirun/spec.hpp"
#include "spec_reader.hpp"
#include "spec_rules.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::spec {

namespace reader {

Error Node::error(std::string_view problem) const {
    return Error(cat(path_, ": ", problem));
}

std::string Node::child_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : cat(path_, ".", key);
}

std::string Node::element_path(size_t index) const {
    return cat(path_, "[", index, "]");
}

std::string Node::entry_path(std::string_view key) const {
    return cat(path_, ".", quoted(key));
}

std::string describe(const Json& value) {
    if (value.is_number()) {
        return value.dump();
    }
    return value.type_name();
}

Status expect_object(const Node& node) {
    if (!node.json().is_object()) {
        return node.error(cat("expected an object, got ", describe(node.json())));
    }
    return {};
}

Status expect_array(const Node& node) {
    if (!node.json().is_array()) {
        return node.error(cat("expected an array, got ", describe(node.json())));
    }
    return {};
}

std::optional<Node> member(const Node& object, std::string_view key) {
    const Json& json = object.json();
    auto found = json.find(key);
    if (found == json.end() || found->is_null()) {
        return std::nullopt;
    }
    return Node(*found, object.child_path(key));
}

Result<Node> required_member(const Node& object, std::string_view key) {
    if (auto child = member(object, key)) {
        return *child;
    }
    return Error(cat(object.child_path(key), ": is required"));
}

Status read(const Node& node, std::string& out) {
    if (!node.json().is_string()) {
        return node.error(cat("expected a string, got ", describe(node.json())));
    }
    const auto& text = node.json().get_ref<const std::string&>();
    // Strings end up as C strings in syscalls; an embedded NUL would silently cut them.
    if (text.find('\0') != std::string::npos) {
        return node.error("must not contain a NUL byte");
    }
    out = text;
    return {};
}

Status read(const Node& node, bool& out) {
    if (!node.json().is_boolean()) {
        return node.error(cat("expected a boolean, got ", describe(node.json())));
    }
    out = node.json().get<bool>();
    return {};
}

} // namespace reader

namespace {

using reader::expect_object;
using reader::field;
using reader::field_with;
using reader::Json;
using reader::member;
using reader::Node;
using reader::read;
using reader::read_with;
using reader::required_field;
using reader::required_field_with;
using reader::required_member;

// The kernel's limit for sethostname(2) and setdomainname(2) (__NEW_UTS_LEN).
constexpr size_t max_uts_name = 64;

Status check_absolute(const Node& node, const std::string& path) {
    if (path.empty() || path.front() != '/') {
        return node.error(cat("must be an absolute path, got ", quoted(path)));
    }
    return {};
}

Status read_absolute(const Node& node, std::string& out) {
    MR_TRY(read(node, out));
    return check_absolute(node, out);
}

// environ(7) entries are NAME=value; without '=' execve passes the string but getenv never
// finds it, which is never what the config meant.
Status read_env_entry(const Node& node, std::string& out) {
    MR_TRY(read(node, out));
    size_t equals = out.find('=');
    if (equals == std::string::npos || equals == 0) {
        return node.error(cat("expected NAME=value, got ", quoted(out)));
    }
    return {};
}

Status read_non_empty_key_map(const Node& node, std::map<std::string, std::string>& out) {
    MR_TRY(read(node, out));
    if (out.count("") != 0) {
        return Error(cat(node.entry_path(""), ": key must not be empty"));
    }
    return {};
}

// ---- process ----

Status parse_user(const Node& node, User& user) {
    MR_TRY(expect_object(node));
    // uid and gid are REQUIRED by the spec, but runc reads a missing one as 0 and generated
    // configs rely on that; so do we.
    MR_TRY(field(node, "uid", user.uid));
    MR_TRY(field(node, "gid", user.gid));
    if (auto umask = member(node, "umask")) {
        MR_TRY(read(*umask, user.umask));
        if (*user.umask > 0777) {
            return umask->error(cat("must be at most 0777 (511), got ", *user.umask));
        }
    }
    return field(node, "additionalGids", user.additional_gids);
}

Status parse_console_size(const Node& node, ConsoleSize& size) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field(node, "height", size.height));
    return required_field(node, "width", size.width);
}

Status parse_capabilities(const Node& node, Capabilities& caps) {
    MR_TRY(expect_object(node));
    // Names are only type-checked here: runtime-spec 1.1 and later make a capability that
    // cannot be granted (unknown to libcap or to the kernel) a warning, not an error, and
    // runtime/capabilities.cpp warns and skips it when the container is made.
    MR_TRY(field(node, "bounding", caps.bounding));
    MR_TRY(field(node, "effective", caps.effective));
    MR_TRY(field(node, "permitted", caps.permitted));
    MR_TRY(field(node, "inheritable", caps.inheritable));
    return field(node, "ambient", caps.ambient);
}

Status parse_rlimit(const Node& node, Rlimit& limit) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node type, required_member(node, "type"));
    MR_TRY(read(type, limit.type));
    auto resource = rules::rlimit_resource(limit.type);
    if (!resource) {
        return type.error(cat("unknown rlimit ", quoted(limit.type)));
    }
    limit.resource = *resource;
    MR_TRY(required_field(node, "soft", limit.soft));
    MR_TRY(required_field(node, "hard", limit.hard));
    // setrlimit(2) fails with EINVAL for this; say which entry is wrong instead.
    if (limit.soft > limit.hard) {
        return node.error(cat("soft limit ", limit.soft, " is above the hard limit ", limit.hard));
    }
    return {};
}

Status parse_rlimits(const Node& node, std::vector<Rlimit>& limits) {
    MR_TRY(read_with(node, limits, parse_rlimit));
    // The spec: "Each type MUST be unique" (a second entry would silently override the first).
    for (size_t i = 0; i < limits.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
            if (limits[i].resource == limits[j].resource) {
                return Error(cat(node.element_path(i), ".type: duplicate rlimit ",
                                 quoted(limits[i].type), " (also at ", node.element_path(j), ")"));
            }
        }
    }
    return {};
}

Status parse_process_object(const Node& node, Process& process) {
    MR_TRY(expect_object(node));
    MR_TRY(field(node, "terminal", process.terminal));
    MR_TRY(field_with(node, "consoleSize", process.console_size, parse_console_size));
    MR_TRY(field_with(node, "user", process.user, parse_user));

    MR_ASSIGN(Node args, required_member(node, "args"));
    MR_TRY(read(args, process.args));
    // The spec extends execve's argv: at least one entry is REQUIRED (the program to run).
    if (process.args.empty()) {
        return args.error("must not be empty");
    }

    MR_TRY(field_with(node, "env", process.env, read_env_entry));

    // cwd is REQUIRED and absolute per the spec. Missing (or "", which Go generators emit for
    // an unset cwd) is read leniently as "/"; a relative one is an error, since there is no
    // meaningful base to resolve it against.
    if (auto cwd = member(node, "cwd")) {
        MR_TRY(read(*cwd, process.cwd));
        if (process.cwd.empty()) {
            process.cwd = "/";
        }
        MR_TRY(check_absolute(*cwd, process.cwd));
    }

    MR_TRY(field_with(node, "capabilities", process.capabilities, parse_capabilities));
    MR_TRY(field_with(node, "rlimits", process.rlimits, parse_rlimits));
    MR_TRY(field(node, "noNewPrivileges", process.no_new_privileges));
    if (auto adj = member(node, "oomScoreAdj")) {
        MR_TRY(read(*adj, process.oom_score_adj));
        // The range /proc/<pid>/oom_score_adj accepts.
        if (*process.oom_score_adj < -1000 || *process.oom_score_adj > 1000) {
            return adj->error(cat("must be between -1000 and 1000, got ", *process.oom_score_adj));
        }
    }
    MR_TRY(field(node, "apparmorProfile", process.apparmor_profile));
    return field(node, "selinuxLabel", process.selinux_label);
}

// ---- root, mounts, hooks ----

Status parse_root(const Node& node, Root& root) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node path, required_member(node, "path"));
    MR_TRY(read(path, root.path));
    if (root.path.empty()) {
        return path.error("must not be empty");
    }
    return field(node, "readonly", root.readonly);
}

Status parse_mount(const Node& node, Mount& mount) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node destination, required_member(node, "destination"));
    MR_TRY(read(destination, mount.destination));
    if (mount.destination.empty()) {
        return destination.error("must not be empty");
    }
    // The spec wants an absolute destination, but runc accepts a relative one as relative to
    // "/", and configs in the wild depend on that. The lexical clean-up keeps ".." from
    // naming anything above the container's "/"; symlinks are dealt with at mount time.
    mount.destination = rules::normalize_destination(mount.destination);
    MR_TRY(field(node, "type", mount.type));
    MR_TRY(field(node, "source", mount.source));
    return field(node, "options", mount.options);
}

Status parse_hook(const Node& node, Hook& hook) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node path, required_member(node, "path"));
    // The spec extends execv(3)'s path: it MUST be absolute.
    MR_TRY(read_absolute(path, hook.path));
    MR_TRY(field(node, "args", hook.args));
    if (auto env = member(node, "env")) {
        MR_TRY(read_with(*env, hook.env.emplace(), read_env_entry));
    }
    if (auto timeout = member(node, "timeout")) {
        MR_TRY(read(*timeout, hook.timeout));
        if (*hook.timeout <= 0) {
            return timeout->error(cat("must be greater than zero, got ", *hook.timeout));
        }
    }
    return {};
}

Status parse_hooks(const Node& node, Hooks& hooks) {
    MR_TRY(expect_object(node));
    MR_TRY(field_with(node, "prestart", hooks.prestart, parse_hook));
    MR_TRY(field_with(node, "createRuntime", hooks.create_runtime, parse_hook));
    MR_TRY(field_with(node, "createContainer", hooks.create_container, parse_hook));
    MR_TRY(field_with(node, "startContainer", hooks.start_container, parse_hook));
    MR_TRY(field_with(node, "poststart", hooks.poststart, parse_hook));
    return field_with(node, "poststop", hooks.poststop, parse_hook);
}

// ---- linux: namespaces, id mappings, time offsets, devices ----

Status parse_namespace(const Node& node, Namespace& ns) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node type, required_member(node, "type"));
    std::string name;
    MR_TRY(read(type, name));
    auto parsed = namespace_type_from_name(name);
    if (!parsed) {
        return type.error(cat("unknown namespace ", quoted(name)));
    }
    ns.type = *parsed;
    if (auto path = member(node, "path")) {
        MR_TRY(read(*path, ns.path));
        // The spec: the path MUST be absolute. "" is how Go configs say "no path": new namespace.
        if (!ns.path.empty()) {
            MR_TRY(check_absolute(*path, ns.path));
        }
    }
    return {};
}

Status parse_namespaces(const Node& node, std::vector<Namespace>& namespaces) {
    MR_TRY(read_with(node, namespaces, parse_namespace));
    // The spec: duplicated namespace types MUST be an error.
    for (size_t i = 0; i < namespaces.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
            if (namespaces[i].type == namespaces[j].type) {
                return Error(cat(node.element_path(i), ".type: duplicate namespace ",
                                 quoted(namespace_type_name(namespaces[i].type)), " (also at ",
                                 node.element_path(j), ")"));
            }
        }
    }
    return {};
}

Status parse_id_mapping(const Node& node, IdMapping& mapping) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field(node, "containerID", mapping.container_id));
    MR_TRY(required_field(node, "hostID", mapping.host_id));
    MR_ASSIGN(Node size, required_member(node, "size"));
    MR_TRY(read(size, mapping.size));
    if (mapping.size == 0) {
        return size.error("must be greater than zero");
    }
    // uid_map(5) ranges must stay within 32 bits on both sides, or the kernel says EINVAL.
    uint64_t last = uint64_t{UINT32_MAX} + 1;
    if (mapping.container_id + uint64_t{mapping.size} > last ||
        mapping.host_id + uint64_t{mapping.size} > last) {
        return size.error(cat("the range of ", mapping.size, " ids overflows 32 bits"));
    }
    return {};
}

Status parse_time_offset(const Node& node, TimeOffset& offset) {
    MR_TRY(expect_object(node));
    MR_TRY(field(node, "secs", offset.secs));
    if (auto nanosecs = member(node, "nanosecs")) {
        MR_TRY(read(*nanosecs, offset.nanosecs));
        // timens_offsets(5) rejects a nanosecond part of a full second or more.
        if (offset.nanosecs >= 1'000'000'000) {
            return nanosecs->error(cat("must be below 1000000000, got ", offset.nanosecs));
        }
    }
    return {};
}

Status parse_time_offsets(const Node& node, std::map<std::string, TimeOffset>& offsets) {
    MR_TRY(reader::expect_object(node));
    // Only these two clocks can be offset in a time namespace (time_namespaces(7)).
    for (const auto& [clock, value] : node.json().items()) {
        if (clock != "monotonic" && clock != "boottime") {
            return Error(cat(node.entry_path(clock),
                             R"(: unknown clock (expected "monotonic" or "boottime"))"));
        }
    }
    return reader::read_map_with(node, offsets, parse_time_offset);
}

Status parse_device(const Node& node, Device& device) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node type, required_member(node, "type"));
    std::string type_name;
    MR_TRY(read(type, type_name));
    if (type_name != "c" && type_name != "b" && type_name != "u" && type_name != "p") {
        return type.error(
            cat("unknown device type ", quoted(type_name), " (expected c, b, u or p)"));
    }
    device.type = type_name.front();
    MR_ASSIGN(Node path, required_member(node, "path"));
    MR_TRY(read_absolute(path, device.path));
    // major/minor are REQUIRED unless the type is p: a fifo has no device number.
    if (device.type == 'p') {
        MR_TRY(field(node, "major", device.major));
        MR_TRY(field(node, "minor", device.minor));
    } else {
        MR_TRY(required_field(node, "major", device.major));
        MR_TRY(required_field(node, "minor", device.minor));
    }
    MR_TRY(field(node, "fileMode", device.file_mode));
    MR_TRY(field(node, "uid", device.uid));
    return field(node, "gid", device.gid);
}

// ---- linux.resources ----

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
    return required_field(node, "limit", pids.limit);
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

// ---- linux.seccomp ----

Status read_seccomp_action(const Node& node, std::string& action) {
    MR_TRY(read(node, action));
    if (!rules::is_seccomp_action(action)) {
        return node.error(cat("unknown seccomp action ", quoted(action)));
    }
    return {};
}

// The spec: an errno for an action that takes none MUST be an error. SCMP_ACT_TRACE takes
// the value as the tracer's message number.
Status check_errno_allowed(const Node& errno_node, const std::string& action) {
    if (action != "SCMP_ACT_ERRNO" && action != "SCMP_ACT_TRACE") {
        return errno_node.error(
            cat("only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno, not ", action));
    }
    return {};
}

Status parse_seccomp_arg(const Node& node, SeccompArg& arg) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node index, required_member(node, "index"));
    MR_TRY(read(index, arg.index));
    // A syscall has at most six arguments.
    if (arg.index > 5) {
        return index.error(cat("must be between 0 and 5, got ", arg.index));
    }
    MR_TRY(required_field(node, "value", arg.value));
    MR_TRY(field(node, "valueTwo", arg.value_two));
    MR_ASSIGN(Node op, required_member(node, "op"));
    MR_TRY(read(op, arg.op));
    if (!rules::is_seccomp_operator(arg.op)) {
        return op.error(cat("unknown seccomp operator ", quoted(arg.op)));
    }
    return {};
}

Status parse_seccomp_syscall(const Node& node, SeccompSyscall& syscall) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node names, required_member(node, "names"));
    // Names libseccomp does not know are not checked here: the syscall may be missing on this
    // kernel or architecture, and runtimes skip such rules rather than fail.
    MR_TRY(read(names, syscall.names));
    if (syscall.names.empty()) {
        return names.error("must not be empty");
    }
    MR_TRY(required_field_with(node, "action", syscall.action, read_seccomp_action));
    if (auto errno_ret = member(node, "errnoRet")) {
        MR_TRY(read(*errno_ret, syscall.errno_ret));
        MR_TRY(check_errno_allowed(*errno_ret, syscall.action));
    }
    return field_with(node, "args", syscall.args, parse_seccomp_arg);
}

Status parse_seccomp(const Node& node, Seccomp& seccomp) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field_with(node, "defaultAction", seccomp.default_action, read_seccomp_action));
    if (auto errno_ret = member(node, "defaultErrnoRet")) {
        MR_TRY(read(*errno_ret, seccomp.default_errno_ret));
        MR_TRY(check_errno_allowed(*errno_ret, seccomp.default_action));
    }
    MR_TRY(field_with(node, "architectures", seccomp.architectures,
                      [](const Node& element, std::string& arch) -> Status {
                          MR_TRY(read(element, arch));
                          if (!rules::is_seccomp_arch(arch)) {
                              return element.error(cat("unknown architecture ", quoted(arch)));
                          }
                          return {};
                      }));
    MR_TRY(field_with(node, "flags", seccomp.flags,
                      [](const Node& element, std::string& flag) -> Status {
                          MR_TRY(read(element, flag));
                          if (!rules::is_seccomp_flag(flag)) {
                              return element.error(cat("unknown seccomp flag ", quoted(flag)));
                          }
                          return {};
                      }));
    MR_TRY(field(node, "listenerPath", seccomp.listener_path));
    MR_TRY(field(node, "listenerMetadata", seccomp.listener_metadata));
    return field_with(node, "syscalls", seccomp.syscalls, parse_seccomp_syscall);
}

// ---- linux ----

Status read_absolute_list(const Node& node, std::vector<std::string>& paths) {
    return read_with(node, paths, read_absolute);
}

Status parse_personality(const Node& node, Personality& personality) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node domain, required_member(node, "domain"));
    MR_TRY(read(domain, personality.domain));
    if (personality.domain != "LINUX" && personality.domain != "LINUX32") {
        return domain.error(
            cat("unknown domain ", quoted(personality.domain), " (expected LINUX or LINUX32)"));
    }
    // The spec: "Currently no flag values are supported"; ignoring one would run the
    // container with a personality it did not ask for.
    return field_with(node, "flags", personality.flags,
                      [](const Node& element, std::string& flag) -> Status {
                          MR_TRY(read(element, flag));
                          return element.error(cat("unsupported personality flag ", quoted(flag)));
                      });
}

Status parse_linux(const Node& node, Linux& linux) {
    MR_TRY(expect_object(node));
    MR_TRY(field_with(node, "namespaces", linux.namespaces, parse_namespaces));
    MR_TRY(field_with(node, "uidMappings", linux.uid_mappings, parse_id_mapping));
    MR_TRY(field_with(node, "gidMappings", linux.gid_mappings, parse_id_mapping));
    MR_TRY(field_with(node, "timeOffsets", linux.time_offsets, parse_time_offsets));
    MR_TRY(field_with(node, "devices", linux.devices, parse_device));
    if (auto cgroups_path = member(node, "cgroupsPath")) {
        MR_TRY(read(*cgroups_path, linux.cgroups_path));
        // The path is joined below a cgroup root; ".." would walk out of it.
        std::string_view rest = linux.cgroups_path;
        while (!rest.empty()) {
            size_t slash = rest.find('/');
            if (rest.substr(0, slash) == "..") {
                return cgroups_path->error(
                    cat("must not contain \"..\", got ", quoted(linux.cgroups_path)));
            }
            rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
        }
    }
    MR_TRY(field_with(node, "resources", linux.resources, parse_resources));
    MR_TRY(field_with(node, "seccomp", linux.seccomp, parse_seccomp));
    MR_TRY(field_with(node, "maskedPaths", linux.masked_paths, read_absolute_list));
    MR_TRY(field_with(node, "readonlyPaths", linux.readonly_paths, read_absolute_list));
    if (auto propagation = member(node, "rootfsPropagation")) {
        MR_TRY(read(*propagation, linux.rootfs_propagation));
        if (!rules::is_rootfs_propagation(linux.rootfs_propagation)) {
            return propagation->error(
                cat("unknown propagation ", quoted(linux.rootfs_propagation),
                    " (expected private, rprivate, slave, rslave, shared, rshared, unbindable "
                    "or runbindable)"));
        }
    }
    MR_TRY(field_with(node, "sysctl", linux.sysctl, read_non_empty_key_map));
    MR_TRY(field(node, "mountLabel", linux.mount_label));
    return field_with(node, "personality", linux.personality, parse_personality);
}

// ---- top level ----

Status read_uts_name(const Node& node, std::string& name) {
    MR_TRY(read(node, name));
    if (name.size() > max_uts_name) {
        return node.error(cat("must be at most ", max_uts_name, " bytes, got ", name.size()));
    }
    return {};
}

// One line: nlohmann's "[json.exception.parse_error.101] " tag dropped, and the "last read"
// excerpt it quotes (raw input) kept from breaking the line.
Status parse_json(std::string_view text, std::string_view source_name, Json& out) {
    try {
        out = Json::parse(text.begin(), text.end());
        return {};
    } catch (const Json::exception& e) {
        std::string_view what = e.what();
        if (what.starts_with("[json.exception.")) {
            if (size_t end = what.find("] "); end != std::string_view::npos) {
                what.remove_prefix(end + 2);
            }
        }
        // Some failures (a number too large for a double) are not parse_errors and carry no
        // position; still say what kind of failure it is.
        std::string message =
            what.starts_with("parse error") ? std::string(what) : cat("parse error: ", what);
        for (char& c : message) {
            if (static_cast<unsigned char>(c) < 0x20) {
                c = ' ';
            }
        }
        return Error(EINVAL, cat(source_name, ": ", message));
    }
}

Result<Node> document_root(const Json& document, std::string_view source_name, std::string path) {
    if (!document.is_object()) {
        return Error(
            EINVAL, cat(source_name, ": expected a JSON object, got ", reader::describe(document)));
    }
    return Node(document, std::move(path));
}

Status parse_spec_object(const Node& node, Spec& spec) {
    MR_ASSIGN(Node version, required_member(node, "ociVersion"));
    MR_TRY(read(version, spec.oci_version));
    if (auto problem = rules::oci_version_problem(spec.oci_version)) {
        return version.error(*problem);
    }
    MR_TRY(field_with(node, "process", spec.process, parse_process_object));
    // root is OPTIONAL in the spec in general but REQUIRED on Linux.
    MR_TRY(required_field_with(node, "root", spec.root, parse_root));
    MR_TRY(field_with(node, "hostname", spec.hostname, read_uts_name));
    MR_TRY(field_with(node, "domainname", spec.domainname, read_uts_name));
    MR_TRY(field_with(node, "mounts", spec.mounts, parse_mount));
    MR_TRY(field_with(node, "hooks", spec.hooks, parse_hooks));
    MR_TRY(field_with(node, "annotations", spec.annotations, read_non_empty_key_map));
    MR_TRY(field_with(node, "linux", spec.linux, parse_linux));
    return rules::validate_cross_references(spec);
}

// One open, one fstat, one read (the file is not expected to change under us; if it does,
// keep reading until EOF).
Result<std::string> read_config_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd) {
        return Error::from_errno(path);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) < 0) {
        return Error::from_errno(path);
    }
    if (S_ISDIR(st.st_mode)) {
        return Error::from_errno(EISDIR, path);
    }
    // A fifo or device would block or never end; config.json is a file.
    if (!S_ISREG(st.st_mode)) {
        return Error(EINVAL, cat(path, ": not a regular file"));
    }
    std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
    size_t used = 0;
    for (;;) {
        if (used == text.size()) {
            text.resize(text.size() * 2);
        }
        ssize_t got = ::read(fd.get(), text.data() + used, text.size() - used);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno(path);
        }
        if (got == 0) {
            break;
        }
        used += static_cast<size_t>(got);
    }
    text.resize(used);
    return text;
}

} // namespace

const Namespace* Linux::find_namespace(NamespaceType type) const {
    for (const Namespace& ns : namespaces) {
        if (ns.type == type) {
            return &ns;
        }
    }
    return nullptr;
}

Result<Spec> parse_spec(std::string_view json_text, std::string_view source_name) {
    Json document;
    MR_TRY(parse_json(json_text, source_name, document));
    MR_ASSIGN(Node root, document_root(document, source_name, ""));
    Spec spec;
    MR_TRY(parse_spec_object(root, spec));
    return spec;
}

Result<Process> parse_process(std::string_view json_text, std::string_view source_name) {
    Json document;
    MR_TRY(parse_json(json_text, source_name, document));
    MR_ASSIGN(Node root, document_root(document, source_name, "process"));
    Process process;
    MR_TRY(parse_process_object(root, process));
    return process;
}

Result<Resources> parse_resources(std::string_view json_text, std::string_view source_name) {
    Json document;
    MR_TRY(parse_json(json_text, source_name, document));
    MR_ASSIGN(Node root, document_root(document, source_name, "resources"));
    Resources resources;
    MR_TRY(parse_resources(root, resources));
    return resources;
}

Result<Spec> load_spec(const std::string& bundle_dir, std::string* text_out,
                       const std::string& config_file) {
    struct stat st {};
    if (::stat(bundle_dir.c_str(), &st) < 0) {
        return Error::from_errno(cat("bundle ", quoted(bundle_dir)));
    }
    if (!S_ISDIR(st.st_mode)) {
        return Error::from_errno(ENOTDIR, cat("bundle ", quoted(bundle_dir)));
    }
    std::string path;
    if (!config_file.starts_with('/')) {
        path = bundle_dir;
        if (path.back() != '/') {
            path += '/';
        }
    }
    path += config_file.empty() ? std::string("config.json") : config_file;
    MR_ASSIGN(std::string text, read_config_file(path));
    auto spec = parse_spec(text, path);
    if (spec && text_out != nullptr) {
        *text_out = std::move(text);
    }
    return spec;
}

} // namespace minirun::spec
