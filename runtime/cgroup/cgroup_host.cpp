// The host's cgroup layout (which hierarchies are mounted where) and the container's
// cgroup path in them (linux.cgroupsPath, read as runc reads it).
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_files.hpp"
#include "fs.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace minirun::runtime::cgroup {
namespace {

constexpr std::string_view kCgroupRoot = "/sys/fs/cgroup";

// The v1 controllers the kernel knows. A v1 mount's superblock options also carry flags
// (rw, clone_children, noprefix, release_agent=..., xattr): those are not controllers.
constexpr std::array<std::string_view, 15> kV1Controllers = {
    "cpu",   "cpuacct",    "cpuset",  "memory", "devices", "freezer", "net_cls", "net_prio",
    "blkio", "perf_event", "hugetlb", "pids",   "rdma",    "misc",    "debug"};

std::vector<std::string> v1_controllers(std::string_view super_options) {
    std::vector<std::string> out;
    for (std::string_view option : fs::split(super_options, ',')) {
        if (option.starts_with("name=") || std::find(kV1Controllers.begin(), kV1Controllers.end(),
                                                     option) != kV1Controllers.end()) {
            out.emplace_back(option);
        }
    }
    return out;
}

bool counts(const fs::MountInfo& mount) {
    return is_unified_root(mount) || is_hierarchy_mount(mount);
}

// Our own path in a v1 hierarchy: the /proc/self/cgroup line listing exactly its
// controllers (the kernel prints a hierarchy's whole list, "cpu,cpuacct").
std::string own_v1_path(const Hierarchy& hierarchy,
                        const std::vector<fs::CgroupMembership>& memberships) {
    const auto& wanted = hierarchy.controllers;
    for (const auto& membership : memberships) {
        if (membership.hierarchy_id == 0) {
            continue;
        }
        // The same controllers, in any order (a hierarchy names each one once).
        std::vector<std::string_view> listed = fs::split(membership.controllers, ',');
        if (listed.size() == wanted.size() &&
            std::all_of(listed.begin(), listed.end(), [&](std::string_view controller) {
                return std::find(wanted.begin(), wanted.end(), controller) != wanted.end();
            })) {
            return membership.path;
        }
    }
    return "/";
}

bool valid_component(std::string_view part) {
    return part != ".." && part != "." && part.find('/') == std::string_view::npos;
}

// systemd's nesting of slices, as runc's ExpandSlice: "a-b.slice" lives in "a.slice".
Result<std::string> expand_slice(std::string_view slice, std::string_view cgroups_path) {
    constexpr std::string_view kSuffix = ".slice";
    auto invalid = [&] {
        return Error(EINVAL, cat("linux.cgroupsPath ", quoted(cgroups_path),
                                 ": invalid slice name ", quoted(slice)));
    };
    if (slice.size() <= kSuffix.size() || !slice.ends_with(kSuffix) ||
        slice.find('/') != std::string_view::npos) {
        return invalid();
    }
    std::string_view name = slice.substr(0, slice.size() - kSuffix.size());
    if (name == "-") {
        return std::string("/");
    }
    std::string path;
    std::string prefix;
    for (std::string_view component : fs::split(name, '-')) {
        // "a--b.slice" and "-a.slice" name no slice systemd would make.
        if (component.empty()) {
            return invalid();
        }
        path += cat("/", prefix, component, kSuffix);
        prefix += cat(component, "-");
    }
    return path;
}

Result<std::string> resolve_systemd(std::string_view cgroups_path, std::string_view id) {
    std::string slice = "system.slice";
    std::string prefix = "mini-run";
    std::string name(id);
    if (!cgroups_path.empty()) {
        auto fields = fs::split(cgroups_path, ':');
        if (fields.size() != 3) {
            return Error(EINVAL, cat("linux.cgroupsPath ", quoted(cgroups_path),
                                     ": expected \"slice:prefix:name\" for systemd cgroups"));
        }
        if (!fields[0].empty()) {
            slice = fields[0];
        }
        prefix = fields[1];
        name = fields[2];
    }
    if (name.empty() || !valid_component(name) || !valid_component(prefix)) {
        return Error(EINVAL, cat("linux.cgroupsPath ", quoted(cgroups_path),
                                 ": invalid unit name in \"slice:prefix:name\""));
    }
    MR_ASSIGN(std::string parent, expand_slice(slice, cgroups_path));
    // As runc: a name that is itself a slice is the unit; anything else gets a scope.
    std::string unit = name.ends_with(".slice") ? name
                       : prefix.empty()         ? cat(name, ".scope")
                                                : cat(prefix, "-", name, ".scope");
    return fs::clean_path(cat(parent, "/", unit));
}

// The cgroup mounts that are still visible: a later mount on the same point or above it
// hides the earlier ones, whatever its type (engines-test.sh puts a tmpfs over
// /sys/fs/cgroup/unified so that crun 1.8.1 runs; the covered cgroup2 is not a hierarchy).
std::vector<const fs::MountInfo*> visible_cgroup_mounts(const std::vector<fs::MountInfo>& mounts) {
    std::vector<const fs::MountInfo*> visible;
    for (const auto& mount : mounts) {
        std::erase_if(visible, [&](const fs::MountInfo* seen) {
            return fs::at_or_below(mount.mount_point, seen->mount_point);
        });
        if (counts(mount)) {
            visible.push_back(&mount);
        }
    }
    return visible;
}

} // namespace

bool is_unified_root(const fs::MountInfo& mount) {
    return mount.fs_type == "cgroup2" && mount.mount_point == kCgroupRoot;
}

bool is_hierarchy_mount(const fs::MountInfo& mount) {
    std::string_view point = mount.mount_point;
    return (mount.fs_type == "cgroup" || mount.fs_type == "cgroup2") &&
           point.size() > kCgroupRoot.size() + 1 && point.starts_with(kCgroupRoot) &&
           point[kCgroupRoot.size()] == '/' &&
           point.find('/', kCgroupRoot.size() + 1) == std::string_view::npos;
}

Host host_from(const std::vector<fs::MountInfo>& mounts, std::string_view proc_self_cgroup,
               std::string_view v2_root_controllers) {
    std::vector<const fs::MountInfo*> visible = visible_cgroup_mounts(mounts);
    auto memberships = fs::parse_proc_cgroup(proc_self_cgroup);
    std::string own_v2 = "/";
    for (const auto& membership : memberships) {
        if (membership.hierarchy_id == 0 && membership.controllers.empty()) {
            own_v2 = membership.path;
        }
    }
    auto v2_hierarchy = [&](const fs::MountInfo& mount, std::string key) {
        Hierarchy hierarchy{true, mount.mount_point, mount.root, {}, std::move(key)};
        for (const auto& controller : files::words(v2_root_controllers)) {
            hierarchy.controllers.push_back(controller);
        }
        return hierarchy;
    };

    Host host;
    for (const auto* mount : visible) {
        if (is_unified_root(*mount)) {
            host.layout = Layout::unified;
            host.hierarchies = {v2_hierarchy(*mount, "")};
            host.own_paths = {{"", own_v2}};
            return host;
        }
    }
    std::set<std::vector<std::string>> seen_controllers;
    for (const auto* mount : visible) {
        std::string key = fs::split_parent(mount->mount_point).second;
        if (mount->fs_type == "cgroup2") {
            host.layout = Layout::hybrid;
            host.hierarchies.push_back(v2_hierarchy(*mount, key));
            host.own_paths[key] = own_v2;
            continue;
        }
        Hierarchy hierarchy{false, mount->mount_point, mount->root,
                            v1_controllers(mount->super_options), key};
        // One hierarchy mounted twice is still one hierarchy.
        if (hierarchy.controllers.empty() ||
            !seen_controllers.insert(hierarchy.controllers).second) {
            continue;
        }
        host.own_paths[key] = own_v1_path(hierarchy, memberships);
        host.hierarchies.push_back(std::move(hierarchy));
    }
    host.mounts_are_hierarchies = std::count_if(mounts.begin(), mounts.end(), counts) ==
                                  static_cast<std::ptrdiff_t>(host.hierarchies.size());
    return host;
}

Result<Host> detect_host() {
    MR_ASSIGN(auto mounts, fs::read_mountinfo());
    MR_ASSIGN(std::string proc_cgroup, fs::read_file("/proc/self/cgroup"));
    std::string v2_controllers;
    for (const auto* mount : visible_cgroup_mounts(mounts)) {
        if (mount->fs_type == "cgroup2") {
            MR_ASSIGN(v2_controllers, files::read(mount->mount_point, "cgroup.controllers"));
        }
    }
    return host_from(mounts, proc_cgroup, v2_controllers);
}

Result<std::string> resolve_path(std::string_view cgroups_path, std::string_view id, bool systemd,
                                 std::string_view own_path) {
    if (systemd) {
        return resolve_systemd(cgroups_path, id);
    }
    if (cgroups_path.empty()) {
        // Directly below each hierarchy's root, as crun (and runc, whose default is below its
        // own cgroup, the root on a host without systemd): no shared parent to make for a
        // lone container and to remove after the last one.
        return cat("/", id);
    }
    // runc cleans ".." away lexically; refusing it is plainer, since a path that climbs
    // out of the runtime's own cgroup is a mistake either way.
    for (std::string_view part : fs::split(cgroups_path, '/')) {
        if (part == "..") {
            return Error(EINVAL, cat("linux.cgroupsPath ", quoted(cgroups_path),
                                     ": \"..\" components are not allowed"));
        }
    }
    if (cgroups_path.starts_with('/')) {
        return fs::clean_path(cgroups_path);
    }
    return fs::clean_path(cat(own_path.empty() ? "/" : own_path, "/", cgroups_path));
}

Cgroup Cgroup::for_path(const Host& host, const std::string& relative_path,
                        const std::string& fs_prefix) {
    std::map<std::string, std::string> paths;
    for (const auto& hierarchy : host.hierarchies) {
        // A hierarchy mounted from a subtree (a nested host) shows that subtree as its
        // mount point: the part of our path above it is not visible there.
        std::string relative = relative_path;
        if (hierarchy.mount_root != "/" && !hierarchy.mount_root.empty() &&
            (relative == hierarchy.mount_root ||
             relative.starts_with(hierarchy.mount_root + "/"))) {
            relative = relative.substr(hierarchy.mount_root.size());
        }
        paths[hierarchy.key] =
            fs_prefix + fs::clean_path(cat(hierarchy.mount_point, "/", relative));
    }
    return Cgroup(std::move(paths));
}

Cgroup Cgroup::from_paths(std::map<std::string, std::string> paths) {
    return Cgroup(std::move(paths));
}

} // namespace minirun::runtime::cgroup
