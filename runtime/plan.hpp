// The plan: everything the init needs, decided in the parent before clone().
//
// config.json -> spec::Spec -> Plan -> clone() -> init steps -> execve.
// make_plan() is pure (no system calls besides resolving the bundle and rootfs paths), so
// every decision it takes is unit-tested; the init only carries the plan out. Because the
// init is a clone of the parent (no CLONE_VM), it reads the plan from its own copy of the
// parent's memory: nothing is serialised.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "mount/mount_options.hpp"

#include <optional>
#include <string>
#include <vector>

namespace minirun::runtime {

// The user namespace an idmapped bind maps its ids through (mount_setattr(2)
// MOUNT_ATTR_IDMAP): a file owned by id N on disk appears as the id N maps to.
struct MountIdMap {
    bool recursive = false; // "ridmap": every mount of the tree, not only its top
    // uid_map(5)/gid_map(5) text of a user namespace made for the mount: its own
    // mappings, or with none the container's new user namespace's.
    std::string uid_map;
    std::string gid_map;
    // With no mappings of its own in a joined user namespace: that namespace.
    std::string userns_path;
};

// One entry of mounts[], ready for the kernel.
struct MountStep {
    std::string destination; // clean absolute path inside the rootfs
    std::string source;      // for binds: an absolute host path
    std::string fs_type;     // empty for binds
    MountOptions options;
    bool is_cgroup = false; // "cgroup": mini-run assembles the hierarchy view itself
    std::optional<MountIdMap> idmap;
};

// One hierarchy of the "cgroup" mount entry on a v1 or hybrid host: the container's
// directory `source` (a host path), bound at `name` in the entry's tmpfs.
struct CgroupBind {
    std::string name;   // "memory", "cpu,cpuacct", "unified"
    std::string source; // "/sys/fs/cgroup/memory/<id>"
};

// A namespace the config names by path: the init joins it with setns().
struct NamespaceToJoin {
    spec::NamespaceType type = spec::NamespaceType::pid;
    int clone_flag = 0;
    std::string path;
    size_t config_index = 0; // position in linux.namespaces, for messages
};

struct Plan {
    spec::Spec spec;
    std::string id;
    std::string bundle; // absolute
    std::string rootfs; // absolute, symlinks resolved

    // New namespaces clone() creates for the init.
    unsigned long clone_flags = 0;
    // New namespaces the init creates with unshare() after joining others: used when a
    // user namespace is joined, so that they are owned by it.
    unsigned long unshare_flags = 0;
    bool new_time_namespace = false;    // needs unshare + offsets + setns, see time.cpp
    std::vector<NamespaceToJoin> joins; // user namespace first

    std::string uid_map; // "0 100000 65536\n", written by the parent
    std::string gid_map;
    std::string time_offsets; // "monotonic 5 0\n"

    unsigned long root_propagation = 0; // MS_PRIVATE|MS_REC by default
    std::vector<MountStep> mounts;
    bool setup_dev = false; // /dev is ours (a tmpfs from mounts[]): add the default devices

    int preserve_fds = 0;
    // The parent has something for the init right after clone(): the id maps, and the
    // init's host pid (hooks the init runs get it in their state JSON).
    bool wait_for_parent = false;
    // prestart/createRuntime hooks exist: the init stops before pivot_root for the parent
    // to run them.
    bool runtime_hooks = false;
    // The "cgroup" entry's binds, worked out by `create` once the cgroups are known
    // (mount::planned_cgroup_binds), so that the init need not read mountinfo and
    // /proc/self/cgroup again; empty: the init finds them itself.
    std::vector<CgroupBind> cgroup_binds;

    [[nodiscard]] bool creates(spec::NamespaceType type) const;
    [[nodiscard]] bool joins_namespace(spec::NamespaceType type) const;
    // Created or joined: the container does not share the host's.
    [[nodiscard]] bool has_own(spec::NamespaceType type) const {
        return creates(type) || joins_namespace(type);
    }
};

struct PlanInput {
    std::string id;
    std::string bundle; // as given on the command line
    int preserve_fds = 0;
};

Result<Plan> make_plan(spec::Spec spec, const PlanInput& input);

// Pieces of make_plan, exposed for tests.
Result<MountStep> plan_mount(const spec::Mount& mount, const std::string& bundle);
// The idmap of mounts[] entry `mount` (planned as `step`), if it has one; errors name no
// path (the caller adds "mounts[N]").
Result<std::optional<MountIdMap>> plan_idmap(const spec::Mount& mount, const MountStep& step,
                                             const spec::Spec& spec);
std::string id_map_text(const std::vector<spec::IdMapping>& mappings);

} // namespace minirun::runtime
