// config.json -> spec::Spec: type checks and single-field value checks, in one pass over the
// document. The rules that relate several fields live in spec_validate.cpp.
//
//   the document, root, mounts, hooks, linux     spec_parse.cpp
//   process                                       spec_parse_process.cpp
//   linux.resources                               spec_parse_resources.cpp
//   linux.seccomp                                 spec_parse_seccomp.cpp
//   linux.memoryPolicy, linux.intelRdt            spec_parse_mempolicy_rdt.cpp
//   the reader: paths, types, shared checks       spec_reader.hpp, spec_reader.cpp
#include "minirun/fd.hpp"
#include "minirun/spec.hpp"
#include "spec_reader.hpp"
#include "spec_rules.hpp"
#include "spec_sections.hpp"

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

namespace {

using reader::check_absolute;
using reader::expect_object;
using reader::field;
using reader::field_with;
using reader::Json;
using reader::member;
using reader::Node;
using reader::read;
using reader::read_absolute;
using reader::read_env_entry;
using reader::read_with;
using reader::required_field;
using reader::required_field_with;
using reader::required_member;
using sections::parse_intel_rdt;
using sections::parse_memory_policy;
using sections::parse_process_object;
using sections::parse_resources;
using sections::parse_seccomp;

// The kernel's limit for sethostname(2) and setdomainname(2) (__NEW_UTS_LEN).
constexpr size_t max_uts_name = 64;

Status read_non_empty_key_map(const Node& node, std::map<std::string, std::string>& out) {
    MR_TRY(read(node, out));
    if (out.count("") != 0) {
        return Error(cat(node.entry_path(""), ": key must not be empty"));
    }
    return {};
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

Status parse_id_mapping(const Node& node, IdMapping& mapping);

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
    MR_TRY(field(node, "options", mount.options));
    // An idmapped mount's mappings, in linux.uidMappings' format (runtime-spec 1.2); the
    // rules that relate them to each other and to the options are in spec_validate.cpp.
    MR_TRY(field_with(node, "uidMappings", mount.uid_mappings, parse_id_mapping));
    return field_with(node, "gidMappings", mount.gid_mappings, parse_id_mapping);
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

Status parse_net_device(const Node& node, NetDevice& device) {
    MR_TRY(expect_object(node));
    if (auto name = member(node, "name")) {
        MR_TRY(read(*name, device.name));
        if (auto problem = rules::interface_name_problem(device.name, true)) {
            return name->error(*problem);
        }
    }
    return {};
}

Status parse_net_devices(const Node& node, std::map<std::string, NetDevice>& devices) {
    MR_TRY(reader::expect_object(node));
    for (const auto& [host_name, value] : node.json().items()) {
        if (auto problem = rules::interface_name_problem(host_name, false)) {
            return Error(cat(node.entry_path(host_name), ": ", *problem));
        }
    }
    return reader::read_map_with(node, devices, parse_net_device);
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
    MR_TRY(field_with(node, "netDevices", linux.net_devices, parse_net_devices));
    MR_TRY(field_with(node, "personality", linux.personality, parse_personality));
    MR_TRY(field_with(node, "memoryPolicy", linux.memory_policy, parse_memory_policy));
    return field_with(node, "intelRdt", linux.intel_rdt, parse_intel_rdt);
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

Status parse_spec_object(const Node& node, Spec& spec, bool cross_references) {
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
    return cross_references ? rules::validate_cross_references(spec) : Status{};
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

Result<Spec> rules::parse_spec_document(const Json& document, std::string_view source_name,
                                        bool cross_references) {
    MR_ASSIGN(Node root, document_root(document, source_name, ""));
    Spec spec;
    MR_TRY(parse_spec_object(root, spec, cross_references));
    return spec;
}

Result<Spec> parse_spec(std::string_view json_text, std::string_view source_name) {
    Json document;
    MR_TRY(parse_json(json_text, source_name, document));
    return rules::parse_spec_document(document, source_name);
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

Result<std::string> rules::read_config(const std::string& bundle_dir,
                                       const std::string& config_file, std::string* path_out) {
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
    if (path_out != nullptr) {
        *path_out = std::move(path);
    }
    return text;
}

Result<Spec> load_spec(const std::string& bundle_dir, std::string* text_out,
                       const std::string& config_file) {
    std::string path;
    MR_ASSIGN(std::string text, rules::read_config(bundle_dir, config_file, &path));
    auto spec = parse_spec(text, path);
    if (spec && text_out != nullptr) {
        *text_out = std::move(text);
    }
    return spec;
}

} // namespace minirun::spec
