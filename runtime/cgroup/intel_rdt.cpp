#include "cgroup/intel_rdt.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"
#include "minirun/fd.hpp"
#include "minirun/file.hpp"
#include "minirun/log.hpp"
#include "mountinfo.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>

namespace minirun::runtime::intel_rdt {
namespace {

constexpr std::string_view kField = "linux.intelRdt";

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
        text.remove_suffix(1);
    }
    return text;
}

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> lines;
    for (std::string_view line : fs::split(text, '\n')) {
        if (!trim(line).empty()) {
            lines.push_back(trim(line));
        }
    }
    return lines;
}

// One schemata line, "L3:0=7f0;1=1f": its resource and each domain's value. Cache
// bitmasks (L2*, L3*) are hex numbers, compared as numbers.
struct SchemaLine {
    std::string resource;
    std::map<std::string, std::string> domains;
};

std::optional<SchemaLine> parse_line(std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
        return std::nullopt;
    }
    SchemaLine parsed;
    parsed.resource = std::string(trim(line.substr(0, colon)));
    bool bitmask = parsed.resource.starts_with("L2") || parsed.resource.starts_with("L3");
    for (std::string_view token : fs::split(line.substr(colon + 1), ';')) {
        if (trim(token).empty()) {
            continue;
        }
        size_t equals = token.find('=');
        if (equals == std::string_view::npos) {
            return std::nullopt;
        }
        std::string id(trim(token.substr(0, equals)));
        std::string value(trim(token.substr(equals + 1)));
        if (bitmask) {
            char* end = nullptr;
            unsigned long long number = std::strtoull(value.c_str(), &end, 16);
            if (value.empty() || *end != '\0') {
                return std::nullopt;
            }
            value = cat(std::hex, number);
        }
        parsed.domains[id] = value;
    }
    return parsed;
}

// The config's l3CacheSchema and memBwSchema lines, as written to a new group.
std::vector<std::string_view> schema_lines(const spec::IntelRdt& rdt) {
    std::vector<std::string_view> lines;
    for (std::string_view line : lines_of(rdt.l3_cache_schema)) {
        // The spec: with memBwSchema set, l3CacheSchema's MB: lines give way to it.
        if (!rdt.mem_bw_schema.empty() && line.starts_with("MB:")) {
            continue;
        }
        lines.push_back(line);
    }
    if (!rdt.mem_bw_schema.empty()) {
        lines.push_back(rdt.mem_bw_schema);
    }
    return lines;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// resctrl makes a group's files with the directory; O_CREAT only matters to a plain
// directory standing in for it (the tests).
Status write_to(const std::string& path, std::string_view content) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) {
        return Error::from_errno(cat(kField, ": open ", path));
    }
    std::string text(content);
    if (!text.ends_with('\n')) {
        text += '\n';
    }
    // One write: the kernel parses the whole schemata at once, and refuses it whole.
    ssize_t written = ::write(fd.get(), text.data(), text.size());
    if (written < 0) {
        return Error::from_errno(cat(kField, ": write ", quoted(trim(content)), " to ", path));
    }
    if (static_cast<size_t>(written) != text.size()) {
        return Error(EIO, cat(kField, ": short write to ", path));
    }
    return {};
}

Status make_dir(const std::string& path) {
    if (::mkdir(path.c_str(), 0755) < 0) {
        return Error::from_errno(cat(kField, ": mkdir ", path));
    }
    return {};
}

Status remove_dir(const std::string& path) {
    if (::rmdir(path.c_str()) < 0 && errno != ENOENT) {
        return Error::from_errno(cat(kField, ": remove ", path));
    }
    return {};
}

std::string group_dir(const std::string& root, const spec::IntelRdt& rdt, const std::string& id) {
    return cat(root, "/", rdt.clos_id.empty() ? id : rdt.clos_id);
}

} // namespace

std::string find_root(const std::string& mountinfo_path) {
    auto mounts = fs::read_mountinfo(mountinfo_path);
    if (!mounts) {
        return {};
    }
    for (const fs::MountInfo& mount : *mounts) {
        if (mount.fs_type == "resctrl") {
            return mount.mount_point;
        }
    }
    return {};
}

std::vector<std::string> schemata_writes(const spec::IntelRdt& rdt) {
    std::vector<std::string> writes;
    std::string joint;
    for (std::string_view line : schema_lines(rdt)) {
        joint += cat(joint.empty() ? "" : "\n", line);
    }
    if (!joint.empty()) {
        writes.push_back(joint);
    }
    // The spec: schemata is written last, after the two fields above.
    std::string lines;
    for (const std::string& line : rdt.schemata) {
        if (!trim(line).empty()) {
            lines += cat(lines.empty() ? "" : "\n", line);
        }
    }
    if (!lines.empty()) {
        writes.push_back(lines);
    }
    return writes;
}

std::optional<std::string> schemata_mismatch(std::string_view existing, const spec::IntelRdt& rdt) {
    std::map<std::string, SchemaLine> have;
    for (std::string_view line : lines_of(existing)) {
        if (auto parsed = parse_line(line)) {
            have[parsed->resource] = std::move(*parsed);
        }
    }
    for (std::string_view line : schema_lines(rdt)) {
        auto wanted = parse_line(line);
        if (!wanted) {
            return cat("cannot read the config's schema line ", quoted(line));
        }
        auto found = have.find(wanted->resource);
        if (found == have.end()) {
            return cat("the group has no ", wanted->resource, " line, the config has ",
                       quoted(line));
        }
        for (const auto& [domain, value] : wanted->domains) {
            auto current = found->second.domains.find(domain);
            if (current == found->second.domains.end()) {
                return cat("the group's ", wanted->resource, " line has no domain ", domain);
            }
            if (current->second != value) {
                return cat(wanted->resource, " domain ", domain, " is ", current->second,
                           " in the group, ", value, " in the config");
            }
        }
    }
    return std::nullopt;
}

Result<Group> prepare(const std::string& root, const spec::IntelRdt& rdt, const std::string& id) {
    Group group;
    group.dir = group_dir(root, rdt, id);
    bool has_schema = !schema_lines(rdt).empty();
    bool has_any = has_schema || !rdt.schemata.empty();
    if (rdt.clos_id.empty()) {
        // The spec: without closID the runtime creates the <container-id> directory; one
        // that is there already is not ours to take over (or to remove at delete).
        if (exists(group.dir)) {
            return Error(EEXIST, cat(kField, ": ", group.dir,
                                     " exists already (without closID the group is the "
                                     "container's own, named after its id)"));
        }
    } else if (!exists(group.dir) && !has_any) {
        // The spec: a closID without schemata names a group that must exist already.
        return Error(ENOENT, cat(kField, ".closID: no resctrl group ", quoted(rdt.clos_id), " (",
                                 group.dir, "): without a schema it must exist already"));
    }
    if (exists(group.dir)) {
        if (has_schema) {
            MR_ASSIGN(std::string current, fs::read_file(group.dir + "/schemata"));
            if (auto mismatch = schemata_mismatch(current, rdt)) {
                return Error(EINVAL, cat(kField, ".closID: group ", quoted(rdt.clos_id),
                                         " exists with other schemata: ", *mismatch));
            }
        }
        if (explain::enabled()) {
            explain::step(cat("join the resctrl group ", group.dir));
        }
    } else {
        if (explain::enabled()) {
            explain::step(cat("mkdir(", quoted(group.dir), "): a resctrl group"));
        }
        MR_TRY(make_dir(group.dir));
        group.created = true;
    }
    std::vector<std::string> writes = schemata_writes(rdt);
    // Joining, the schema fields were compared above; only schemata is written.
    size_t first = group.created ? 0 : (has_schema ? 1 : 0);
    for (size_t i = first; i < writes.size(); ++i) {
        if (explain::enabled()) {
            explain::step(cat("write ", quoted(writes[i]), " to ", group.dir, "/schemata"));
        }
        if (auto written = write_to(group.dir + "/schemata", writes[i]); !written) {
            (void)undo(group);
            return written.error();
        }
    }
    if (rdt.enable_monitoring) {
        group.monitor_dir = cat(group.dir, "/mon_groups/", id);
        if (explain::enabled()) {
            explain::step(
                cat("mkdir(", quoted(group.monitor_dir), "): the container's monitoring"));
        }
        if (auto made = make_dir(group.monitor_dir); !made) {
            (void)undo(group);
            return made.error();
        }
        group.monitor_created = true;
    }
    return group;
}

Status add_process(const Group& group, pid_t pid) {
    if (explain::enabled()) {
        explain::step(cat("write ", pid, " to ", group.dir, "/tasks"));
    }
    MR_TRY(write_to(group.dir + "/tasks", std::to_string(pid)));
    if (!group.monitor_dir.empty()) {
        // A monitoring group takes only tasks of its parent group: after the write above.
        MR_TRY(write_to(group.monitor_dir + "/tasks", std::to_string(pid)));
    }
    return {};
}

Status undo(const Group& group) {
    if (group.monitor_created) {
        MR_TRY(remove_dir(group.monitor_dir));
    }
    if (group.created) {
        MR_TRY(remove_dir(group.dir));
    }
    return {};
}

Group group_of(const std::string& root, const spec::IntelRdt& rdt, const std::string& id) {
    Group group;
    group.dir = group_dir(root, rdt, id);
    // As runc: a closID group is shared, maybe made by someone else; it stays.
    group.created = rdt.clos_id.empty();
    if (rdt.enable_monitoring) {
        group.monitor_dir = cat(group.dir, "/mon_groups/", id);
        group.monitor_created = true;
    }
    return group;
}

Status remove_for_delete(const std::optional<spec::IntelRdt>& rdt, const std::string& id) {
    if (!rdt) {
        return {};
    }
    std::string root = find_root();
    if (root.empty()) {
        return {}; // unmounted since: its groups went with it
    }
    return undo(group_of(root, *rdt, id));
}

Status add_exec_process(const std::optional<spec::IntelRdt>& rdt, const std::string& id,
                        pid_t pid) {
    if (!rdt) {
        return {};
    }
    std::string root = find_root();
    if (root.empty()) {
        return Error(ENODEV, cat(kField, ": the host's resctrl filesystem is no longer mounted"));
    }
    return add_process(group_of(root, *rdt, id), pid);
}

PendingGroup::~PendingGroup() {
    if (committed_) {
        return;
    }
    if (auto undone = undo(group_); !undone) {
        log::warning(cat("undo a failed create: ", undone.error().message()));
    }
}

} // namespace minirun::runtime::intel_rdt
