// The plan: everything the container's init does, decided in the parent before clone().
//
// config.json -> spec::Spec -> Plan -> clone() -> init steps -> execve.
// make_plan() is pure (no system calls besides resolving the bundle and rootfs paths), so
// every decision it takes is unit-tested, and it is final: no step changes the plan after
// it, and the init reads the plan, never the spec (the parent's own steps read the spec:
// cgroups, hooks it runs itself, the state record). What only exists once create has made
// it (the cgroups, the sync socket, the opened namespaces) reaches the init through its
// process plan (process_plan.hpp). Because the init is a clone of the parent (no CLONE_VM),
// it reads both from its own copy of the parent's memory: nothing is serialised.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "mount/mount_options.hpp"

#include <map>
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
    std::string id;
    std::string bundle; // absolute
    std::string rootfs; // absolute, symlinks resolved

    // New namespaces clone() creates for the init.
    unsigned long clone_flags = 0;
    // New namespaces the init creates with unshare() after joining others: used when a
    // user namespace is joined, so that they are owned by it.
    unsigned long unshare_flags = 0;
    bool new_time_namespace = false; // needs unshare + offsets + setns, see time.cpp
    // A new PID namespace with a joined user namespace: the parent makes it in that user
    // namespace, which must own it, and clones the init into it as if it were joined (pid.hpp).
    bool new_pid_namespace_in_joined_user = false;
    // A PID namespace joined by path together with a joined user namespace: the init joins
    // it after the user namespace (a caller that is not the host's root may join only what
    // that user namespace owns: rootless, runc's kill.bats "shared pidns"), then clones its
    // second stage into it (pid.hpp), as runc's nsexec does; the parent does not join it.
    bool pid_joined_by_init = false;
    // Either of the two above: the init's first stage forks the process that stays.
    [[nodiscard]] bool init_forks_into_pid_namespace() const {
        return new_pid_namespace_in_joined_user || pid_joined_by_init;
    }
    std::vector<NamespaceToJoin> joins; // user namespace first

    // "0 100000 65536\n": written by the parent into a new user namespace; with a joined
    // one, what the config says its maps are, checked against them (namespaces.cpp).
    std::string uid_map;
    std::string gid_map;
    std::string time_offsets; // "monotonic 5 0\n"

    unsigned long root_propagation = 0; // MS_PRIVATE|MS_REC by default
    std::vector<MountStep> mounts;
    bool setup_dev = false; // /dev is ours (a tmpfs from mounts[]): add the default devices

    std::vector<spec::Device> devices;       // linux.devices, made besides the defaults
    std::vector<std::string> masked_paths;   // linux.maskedPaths
    std::vector<std::string> readonly_paths; // linux.readonlyPaths
    bool root_readonly = false;              // root.readonly

    // The container's process, with socket activation's LISTEN_FDS and LISTEN_PID added
    // when the caller passed sockets (PlanInput::listen_fds).
    spec::Process process;
    int preserve_fds = 0; // --preserve-fds, and the LISTEN_FDS sockets after them
    std::string oci_version;
    std::string hostname;
    std::string domainname;
    std::map<std::string, std::string> sysctls;
    std::optional<spec::Personality> personality;
    std::optional<spec::MemoryPolicy> memory_policy;
    // Hooks the init runs itself (the parent runs prestart, createRuntime, poststart and
    // poststop from the spec).
    std::vector<spec::Hook> create_container_hooks;
    std::vector<spec::Hook> start_container_hooks;

    // The parent has something for the init right after clone(): the id maps, and the
    // init's host pid (hooks the init runs get it in their state JSON). create may also ask
    // for the wait for a reason of its own (InitPlan::wait_for_parent).
    bool wait_for_parent = false;
    // prestart/createRuntime hooks exist: the init stops before pivot_root for the parent
    // to run them.
    bool runtime_hooks = false;

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
    // Socket activation (sd_listen_fds): LISTEN_FDS sockets the caller passed at fd 3
    // onwards, after the preserved fds; they are the container's process's (0: none).
    int listen_fds = 0;
    // The caller's NOTIFY_SOCKET is relayed (process/systemd.hpp): the host directory of
    // the container's notify socket, bound read-only at /run/notify after the config's
    // mounts, with NOTIFY_SOCKET=/run/notify/notify.sock in the process's env (empty: none).
    std::string notify_dir{};
};

Result<Plan> make_plan(const spec::Spec& spec, const PlanInput& input);

// Pieces of make_plan, exposed for tests.
Result<MountStep> plan_mount(const spec::Mount& mount, const std::string& bundle);
// The idmap of mounts[] entry `mount` (planned as `step`), if it has one; errors name no
// path (the caller adds "mounts[N]").
Result<std::optional<MountIdMap>> plan_idmap(const spec::Mount& mount, const MountStep& step,
                                             const spec::Spec& spec);
std::string id_map_text(const std::vector<spec::IdMapping>& mappings);

} // namespace minirun::runtime
