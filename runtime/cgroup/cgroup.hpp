// Control groups: where a container's processes are counted and limited.
//
// A host mounts cgroups in one of three layouts. Legacy v1 has one hierarchy per
// controller (/sys/fs/cgroup/memory, /sys/fs/cgroup/cpu,cpuacct, ...). Unified v2 has one
// tree at /sys/fs/cgroup whose directories enable controllers for their children through
// cgroup.subtree_control. Hybrid (this project's CI machine) has the v1 hierarchies plus
// a cgroup2 tree at /sys/fs/cgroup/unified holding whatever controllers v1 left over.
//
// A container gets one directory of the same relative path in every hierarchy. The
// files written there, their v1/v2 names and unit conversions, are in one file per
// controller (cgroup_memory.cpp, cgroup_cpu.cpp, ...), listed in the table of
// controllers.hpp that apply() walks.
//
//   the host's layout, paths   cgroup_host.cpp     Host, detect_host, resolve_path
//   the container's cgroup     cgroup.cpp          Cgroup: create, apply, for_exec; SelfJoin
//   ... running and removed    cgroup_running.cpp  Cgroup: freeze, pids, stats, remove
//   interface files            cgroup_files.cpp    read, write, Places (cgroup_files.hpp)
//   the controllers            controllers.hpp     one row each: its v1 and v2 writers
//   devices                    cgroup_devices.cpp  v1 rules, v2 BPF_CGROUP_DEVICE program
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "minirun/spec.hpp"
#include "mountinfo.hpp"

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::runtime::cgroup {

enum class Layout { legacy, hybrid, unified };

struct Hierarchy {
    bool v2 = false;
    std::string mount_point; // "/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified"
    std::string mount_root;  // the mountinfo root field: "/" unless the host is itself nested
    // v1: the controllers this hierarchy holds ("cpu", "cpuacct"; a named hierarchy is
    // "name=systemd"). v2: the controllers available at its root (cgroup.controllers).
    std::vector<std::string> controllers;
    // The key under which a container's directory in this hierarchy is recorded: the
    // mount point's last component ("cpu,cpuacct", "memory", "unified"), or "" for the
    // v2 tree of a unified host.
    std::string key;
};

struct Host {
    Layout layout = Layout::legacy;
    std::vector<Hierarchy> hierarchies;
    // This process's own cgroup in each hierarchy, by key (from /proc/self/cgroup):
    // relative cgroupsPath values start from here.
    std::map<std::string, std::string> own_paths;
    // v1 or hybrid: each cgroup mount directly below /sys/fs/cgroup is one of
    // `hierarchies` (none hidden by a later mount, none a second mount of one, none
    // without controllers), so they are what a container's "cgroup" mount entry shows.
    bool mounts_are_hierarchies = false;
};

// A cgroup or cgroup2 mount directly below /sys/fs/cgroup ("/sys/fs/cgroup/memory"): a
// hierarchy of a v1 or hybrid host, and what a container's "cgroup" mount entry binds
// (mount_cgroup.cpp uses the same test, so that planned binds and its own look agree).
bool is_hierarchy_mount(const fs::MountInfo& mount);
// The cgroup2 mount at /sys/fs/cgroup itself: the one tree of a unified host.
bool is_unified_root(const fs::MountInfo& mount);

// The layout from mountinfo entries, /proc/self/cgroup text and the text of the v2
// root's cgroup.controllers (read by the caller: this stays pure for unit tests).
// Only cgroup hierarchies mounted directly below /sys/fs/cgroup (or the cgroup2 mount at
// /sys/fs/cgroup itself) count.
Host host_from(const std::vector<fs::MountInfo>& mounts, std::string_view proc_self_cgroup,
               std::string_view v2_root_controllers);
// The same, from this machine's /proc/self/mountinfo and /proc/self/cgroup.
Result<Host> detect_host();

// The container's cgroup path, relative to a hierarchy root, as runc reads
// linux.cgroupsPath:
//   ""            -> "/<id>" (crun's default; runc's on a host without systemd)
//   "/a/b"        -> "/a/b"
//   "a/b"         -> own_path + "/a/b" (relative to the runtime's own cgroup)
//   systemd mode, "slice:prefix:name" -> "/<expanded slice>/<prefix>-<name>.scope", the
//   slice "a-b.slice" expanding to "/a.slice/a-b.slice" as systemd nests them, and an
//   empty slice meaning "system.slice" (runc's default).
// Errors name linux.cgroupsPath: ".." components, a systemd path not of three fields.
Result<std::string> resolve_path(std::string_view cgroups_path, std::string_view id, bool systemd,
                                 std::string_view own_path);

// A controller that linux.resources asks for, and the JSON path of the setting that does.
struct RequestedController {
    std::string path;       // "linux.resources.memory"
    std::string controller; // "memory"
};
// What a container's limits need (cgroup_rootless.cpp); device rules are not limits here.
std::vector<RequestedController> requested_controllers(const spec::Resources& resources);

// runc 1.3.2+'s (and crun 1.23+'s) conversion of cpu shares (v1, 2..262144) to cpu.weight
// (v2, 1..10000): 1024 -> 100 (cgroup_cpu.cpp).
uint64_t shares_to_weight(uint64_t shares);
// runc's conversion of a blkio weight (v1, 10..1000) to io.weight (v2, 1..10000)
// (cgroup_blkio.cpp).
uint64_t blkio_weight_to_io_weight(uint64_t weight);

// The container's cgroup: one directory per hierarchy (per key), absolute paths.
// Movable, not copyable; it does not remove anything on destruction (a created container
// keeps its cgroups until delete): callers that must undo a failed create call remove().
// A process joining the container's cgroups by itself: it writes "0" (= the writer) to
// each hierarchy's file. The files are opened by the runtime, still the host's root in the
// host's namespaces; the child may already sit in a new user namespace in which it could
// not open them (v1 checks the opener's credentials, not the writer's).
//
// Why the child moves itself: a write of a pid to cgroup.procs takes the kernel's global
// cgroup threadgroup lock for writing, and that waits for an RCU grace period (10-20 ms on
// this VM when nothing else migrated just before; runc and crun pay it on every v1
// create). A thread moving itself through v1 `tasks` needs no threadgroup stability, so
// the kernel skips that lock (kernel/cgroup/cgroup.c, cgroup_procs_write_start: only a
// pid or a whole thread group takes it). The child is single-threaded, so its thread is
// the whole process. cgroup2 has no such file for domain cgroups (cgroup.threads only
// moves within one), which is why the init is born in its cgroup2 directory instead
// (clone3 CLONE_INTO_CGROUP) and writes cgroup.procs only where the kernel refused that.
class SelfJoin {
public:
    // Moves the calling single-threaded process into every directory; with `born_in_v2`,
    // into the v1 ones only. The files are closed afterwards.
    Status join(bool born_in_v2);

private:
    friend class Cgroup;
    struct Target {
        std::string dir;
        bool v2 = false;
        UniqueFd file; // v1 tasks, v2 cgroup.procs; O_WRONLY|O_CLOEXEC
    };
    std::vector<Target> targets_;
};

class Cgroup {
public:
    Cgroup() = default; // no directories: every operation does nothing
    // The directories of `relative_path` in every hierarchy of `host`. `fs_prefix` is
    // prepended to every mount point: unit tests point it at a fake cgroupfs directory.
    static Cgroup for_path(const Host& host, const std::string& relative_path,
                           const std::string& fs_prefix = "");
    // From directories recorded in state.json (key -> absolute directory).
    static Cgroup from_paths(std::map<std::string, std::string> paths);

    // key -> absolute directory. The keys "" (unified host) and "unified" (hybrid host)
    // are cgroup2 directories, every other key a v1 hierarchy's.
    [[nodiscard]] const std::map<std::string, std::string>& paths() const { return paths_; }
    [[nodiscard]] bool empty() const { return paths_.empty(); }

    // mkdir -p in every hierarchy (v1 cpuset: cpus and mems copied down from the parent
    // when empty, or nothing could join; v2: the needed controllers enabled in every
    // ancestor's cgroup.subtree_control). An existing cgroup is used only when it is empty
    // and not frozen; otherwise, in runc 1.3's words, "container's cgroup is not empty: N
    // process(es) found" or "container's cgroup unexpectedly frozen", and what this call
    // made is removed again.
    Status create();
    // Writes every value `resources` sets, devices included when the list is not empty
    // (callers pass effective_device_rules() at create; `update` leaves devices alone).
    // `updating`: called by `update` on a running
    // container (v1 memory limit and swap are then written in the order that keeps
    // memory.limit <= memsw.limit valid).
    Status apply(const spec::Resources& resources, bool updating = false);
    // The cgroups an `exec --cgroup [controller[,controller...]:]path` process joins: each
    // request moves the named v1 hierarchies (all of them, and the cgroup2 one, without
    // names) to `path` below the container's cgroup. Errors, in runc's words: a path that
    // leaves it (" .. is not a sub cgroup path"), an unknown controller, a missing sub-cgroup
    // (exec joins cgroups, it never makes them).
    [[nodiscard]] Result<Cgroup> for_exec(const std::vector<std::string>& requests) const;
    // The files through which a process moves itself into the container's cgroups;
    // opened by the runtime before clone(), written by the child (see SelfJoin).
    [[nodiscard]] Result<SelfJoin> open_self_join() const;
    // O_PATH|O_DIRECTORY|O_CLOEXEC fd of the v2 directory (for clone3 CLONE_INTO_CGROUP),
    // ENOENT when there is no v2 directory.
    [[nodiscard]] Result<UniqueFd> open_v2_dir() const;

    // Freezes (v1 freezer.state FROZEN, v2 cgroup.freeze 1) and waits until the kernel
    // reports every task frozen; thaw undoes it.
    Status freeze() const;
    Status thaw() const;
    [[nodiscard]] Result<bool> frozen() const;

    // Every pid in the container's cgroups (cgroup.procs of the directory and its
    // descendants), from the freezer/pids/memory (v1) or v2 directory.
    [[nodiscard]] Result<std::vector<pid_t>> pids() const;

    // runc's `events --stats` "data" object: cpu, memory, pids, blkio, hugetlb (fields it
    // cannot read are left out or zero, as runc does), with the cgroup2 directory's
    // pressure stall information as cpu.psi, memory.psi and blkio.psi where it has them.
    [[nodiscard]] Result<nlohmann::json> stats() const;
    // How many times the OOM killer killed a process in the cgroup (v1 memory.oom_control
    // oom_kill, v2 memory.events oom_kill).
    [[nodiscard]] Result<uint64_t> oom_kill_count() const;

    // Kills every process left (v2 cgroup.kill where the kernel has it, otherwise SIGKILL
    // to each pid until none is left, thawing a frozen cgroup first) and removes every
    // directory, children first; retries rmdir while EBUSY for a short while. Idempotent:
    // missing directories are fine.
    Status remove() const;
    // For a container that shared its cgroup with others: removes the directories only
    // when no process is left in them, and never kills one.
    Status remove_if_unused() const;

private:
    explicit Cgroup(std::map<std::string, std::string> paths) : paths_(std::move(paths)) {}
    std::map<std::string, std::string> paths_;
};

// A rootless container's cgroup (cgroup_rootless.cpp): the cgroup2 directory of
// `relative_path` where a v2 subtree is delegated to the caller; else none (said at debug
// level only, as runc says nothing), or an error naming the first limit `resources` sets,
// or linux.cgroupsPath when the config gave one (`explicit_path`): both cannot be applied.
Result<Cgroup> rootless_cgroup(const Host& host, const std::string& relative_path,
                               const std::optional<spec::Resources>& resources,
                               const std::string& fs_prefix = "", bool explicit_path = false);

} // namespace minirun::runtime::cgroup
