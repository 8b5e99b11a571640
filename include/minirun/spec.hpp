// The OCI runtime-spec configuration (config.json), as a validated C++ model.
//
// config.json is parsed exactly once, before anything is created, into these structs.
// Parsing checks types and values and reports the first problem with its JSON path
// ("linux.namespaces[2].type: unknown namespace \"foo\""). Unknown properties are ignored,
// as the spec requires. Fields that later parts of mini-run implement (seccomp, cgroups,
// hooks, ...) are parsed and validated here already, so a bad config fails early.
//
// Names follow the spec's JSON names in snake_case. Optional JSON values are std::optional
// where "absent" means something different from any value.
#pragma once

#include "minirun/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::spec {

struct User {
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::optional<uint32_t> umask;
    std::vector<uint32_t> additional_gids;
};

struct ConsoleSize {
    uint32_t height = 0;
    uint32_t width = 0;
};

// Capability names as written in the config ("CAP_SYS_ADMIN"), each checked against the
// names libcap knows.
struct Capabilities {
    std::vector<std::string> bounding;
    std::vector<std::string> effective;
    std::vector<std::string> permitted;
    std::vector<std::string> inheritable;
    std::vector<std::string> ambient;
    // "inheritable" is in the config (an empty list too; absent or null is not): runc's
    // `exec --cap` then adds the capability to the ambient set as well.
    bool inheritable_given = false;
};

struct Rlimit {
    std::string type; // "RLIMIT_NOFILE"
    int resource = 0; // RLIMIT_NOFILE
    uint64_t soft = 0;
    uint64_t hard = 0;
};

// process.scheduler: sched_setattr(2)'s attributes. Names as written, with their values.
struct Scheduler {
    std::string policy;             // "SCHED_BATCH"
    uint32_t policy_value = 0;      // SCHED_BATCH
    int32_t nice = 0;               // -20..19
    int32_t priority = 0;           // SCHED_FIFO and SCHED_RR only, 1..99
    std::vector<std::string> flags; // "SCHED_FLAG_RESET_ON_FORK"
    uint64_t flag_bits = 0;         // SCHED_FLAG_RESET_ON_FORK | ...
    uint64_t runtime = 0;           // ns, SCHED_DEADLINE only, like deadline and period
    uint64_t deadline = 0;
    uint64_t period = 0;
};

// process.ioPriority: ioprio_set(2)'s class and level.
struct IoPriority {
    std::string io_class; // "IOPRIO_CLASS_BE"
    int class_value = 0;  // IOPRIO_CLASS_BE
    int32_t priority = 0; // 0 (highest) .. 7
};

// process.execCPUAffinity: cpu lists as written ("0-3,7") and the cpus they name, sorted.
// Not for the container's init (the spec): for processes `exec` starts.
struct ExecCpuAffinity {
    std::optional<std::string> initial; // the runtime's, before the process joins the cgroup
    std::vector<uint32_t> initial_cpus;
    std::optional<std::string> final; // after it: absent or "" means the cgroup's cpus
    std::vector<uint32_t> final_cpus;
};

struct Process {
    bool terminal = false;
    std::optional<ConsoleSize> console_size;
    User user;
    std::vector<std::string> args; // never empty after validation
    std::vector<std::string> env;  // "KEY=value"
    std::string cwd = "/";         // absolute
    std::optional<Capabilities> capabilities;
    std::vector<Rlimit> rlimits;
    bool no_new_privileges = false;
    std::optional<int> oom_score_adj;
    std::string apparmor_profile;
    std::string selinux_label;
    std::optional<Scheduler> scheduler;
    std::optional<IoPriority> io_priority;
    std::optional<ExecCpuAffinity> exec_cpu_affinity;
};

struct Root {
    std::string path; // as written; relative paths are relative to the bundle
    bool readonly = false;
};

struct Hook {
    std::string path; // absolute
    std::vector<std::string> args;
    // Absent: the runtime's own environment, as runc's hooks get (Go's exec.Cmd with a nil
    // Env); present, even empty: exactly this list.
    std::optional<std::vector<std::string>> env;
    std::optional<int> timeout; // seconds, > 0
};

struct Hooks {
    std::vector<Hook> prestart;
    std::vector<Hook> create_runtime;
    std::vector<Hook> create_container;
    std::vector<Hook> start_container;
    std::vector<Hook> poststart;
    std::vector<Hook> poststop;
};

enum class NamespaceType { pid, network, mount, ipc, uts, user, cgroup, time };

// The namespace table (namespace_table.cpp): one row per type, everything mini-run needs to
// know about a type's name and flag. Rows are in the order namespaces are joined: the user
// namespace first (its privileges decide whether the others may be joined), the PID
// namespace last (setns() into it applies to children only).
struct NamespaceKind {
    NamespaceType type = NamespaceType::pid;
    std::string_view spec_name; // linux.namespaces[].type: "network"
    std::string_view proc_name; // /proc/<pid>/ns/<name>: "net"
    int clone_flag = 0;         // CLONE_NEWNET
};
std::span<const NamespaceKind> namespace_table();
const NamespaceKind& namespace_kind(NamespaceType type);

// The spec's name for a namespace type ("network"), and the reverse.
std::string_view namespace_type_name(NamespaceType type);
std::optional<NamespaceType> namespace_type_from_name(std::string_view name);

struct Namespace {
    NamespaceType type = NamespaceType::pid;
    std::string path; // empty: create a new namespace; otherwise join this one
};

struct IdMapping {
    uint32_t container_id = 0;
    uint32_t host_id = 0;
    uint32_t size = 0; // > 0
};

struct Mount {
    // Absolute inside the container: a relative one is read from the container's "/"
    // ("data/x" -> "/data/x", runtime-spec 1.2), and ".." stops at "/".
    std::string destination;
    std::string type;   // may be empty (bind mounts)
    std::string source; // may be empty
    std::vector<std::string> options;
    // An idmapped mount's own mappings (runtime-spec 1.2): both or neither. Empty with
    // "idmap"/"ridmap": the container's user namespace's.
    std::vector<IdMapping> uid_mappings;
    std::vector<IdMapping> gid_mappings;
};

struct TimeOffset {
    int64_t secs = 0;
    uint32_t nanosecs = 0;
};

struct Device {
    char type = 'c';   // 'c', 'b', 'u' (unbuffered char) or 'p' (fifo)
    std::string path;  // absolute
    int64_t major = 0; // required for c/b/u, ignored for p
    int64_t minor = 0;
    std::optional<uint32_t> file_mode;
    std::optional<uint32_t> uid;
    std::optional<uint32_t> gid;
};

// linux.resources.devices[]: the cgroup device allow-list.
struct DeviceCgroupRule {
    bool allow = false;
    std::string type = "a";       // "a", "c" or "b"
    std::optional<int64_t> major; // absent: any
    std::optional<int64_t> minor;
    std::string access = "rwm"; // subset of "rwm"
};

struct MemoryResources {
    std::optional<int64_t> limit;
    std::optional<int64_t> reservation;
    std::optional<int64_t> swap;
    std::optional<int64_t> kernel;
    std::optional<int64_t> kernel_tcp;
    std::optional<uint64_t> swappiness; // 0..100
    std::optional<bool> disable_oom_killer;
    std::optional<bool> use_hierarchy;
    std::optional<bool> check_before_update;
};

struct CpuResources {
    std::optional<uint64_t> shares;
    std::optional<int64_t> quota;
    std::optional<uint64_t> burst;
    std::optional<uint64_t> period;
    std::optional<int64_t> realtime_runtime;
    std::optional<uint64_t> realtime_period;
    std::string cpus;
    std::string mems;
    std::optional<int64_t> idle;
};

// runtime-spec 1.3: `limit` is optional (absent: pids.max is left as it is), and every
// value is a limit: 0 is none at all, a negative one "max" (cgroup_pids.cpp says why).
struct PidsResources {
    std::optional<int64_t> limit;
};

struct BlockIoDeviceWeight {
    int64_t major = 0;
    int64_t minor = 0;
    std::optional<uint16_t> weight;
    std::optional<uint16_t> leaf_weight;
};

struct BlockIoDeviceThrottle {
    int64_t major = 0;
    int64_t minor = 0;
    uint64_t rate = 0;
};

struct BlockIoResources {
    std::optional<uint16_t> weight; // 10..1000
    std::optional<uint16_t> leaf_weight;
    std::vector<BlockIoDeviceWeight> weight_device;
    std::vector<BlockIoDeviceThrottle> throttle_read_bps_device;
    std::vector<BlockIoDeviceThrottle> throttle_write_bps_device;
    std::vector<BlockIoDeviceThrottle> throttle_read_iops_device;
    std::vector<BlockIoDeviceThrottle> throttle_write_iops_device;
};

struct HugepageLimit {
    std::string page_size; // "2MB"
    uint64_t limit = 0;
};

struct NetworkPriority {
    std::string name;
    uint32_t priority = 0;
};

struct NetworkResources {
    std::optional<uint32_t> class_id;
    std::vector<NetworkPriority> priorities;
};

struct RdmaLimit {
    std::optional<uint32_t> hca_handles;
    std::optional<uint32_t> hca_objects;
};

struct Resources {
    std::vector<DeviceCgroupRule> devices;
    std::optional<MemoryResources> memory;
    std::optional<CpuResources> cpu;
    std::optional<PidsResources> pids;
    std::optional<BlockIoResources> block_io;
    std::vector<HugepageLimit> hugepage_limits;
    std::optional<NetworkResources> network;
    std::map<std::string, RdmaLimit> rdma;
    std::map<std::string, std::string> unified;
};

struct SeccompArg {
    uint32_t index = 0; // 0..5
    uint64_t value = 0;
    uint64_t value_two = 0;
    std::string op; // SCMP_CMP_NE, SCMP_CMP_LT, SCMP_CMP_LE, SCMP_CMP_EQ, SCMP_CMP_GE, SCMP_CMP_GT,
                    // SCMP_CMP_MASKED_EQ
};

struct SeccompSyscall {
    std::vector<std::string> names; // not empty
    std::string action;             // SCMP_ACT_*
    std::optional<uint32_t> errno_ret;
    std::vector<SeccompArg> args;
};

struct Seccomp {
    std::string default_action; // SCMP_ACT_*
    std::optional<uint32_t> default_errno_ret;
    std::vector<std::string> architectures; // SCMP_ARCH_*
    std::vector<std::string> flags;         // SECCOMP_FILTER_FLAG_*
    bool flags_given = false;               // "flags" is in the config, even if empty
    std::string listener_path;
    std::string listener_metadata;
    std::vector<SeccompSyscall> syscalls;
};

// linux.netDevices entry: a host network device moved into the container's network
// namespace, keyed by its name in the runtime's namespace.
struct NetDevice {
    std::string name; // the name inside the container; empty: the host name. May end in a
                      // "%d" template, which the kernel completes with a free number
};

struct Personality {
    std::string domain; // LINUX or LINUX32
    std::vector<std::string> flags;
};

// linux.memoryPolicy: the NUMA memory policy of the container's processes, as
// set_mempolicy(2) takes it (runtime/process/memory_policy.cpp).
struct MemoryPolicy {
    std::string mode;               // MPOL_DEFAULT, MPOL_BIND, MPOL_INTERLEAVE, ...
    std::string nodes;              // as written: "0-3,7"; empty for MPOL_DEFAULT, MPOL_LOCAL
    std::vector<uint32_t> node_ids; // nodes expanded, ascending, no duplicates
    std::vector<std::string> flags; // MPOL_F_NUMA_BALANCING, MPOL_F_RELATIVE_NODES, ...
};

// linux.intelRdt: the container's resctrl group (runtime/cgroup/intel_rdt.cpp).
struct IntelRdt {
    std::string clos_id;               // the group's name; empty: the container's id
    std::string l3_cache_schema;       // "L3:0=ffff0;1=3ff" (may hold several lines)
    std::string mem_bw_schema;         // "MB:0=20;1=70", one line
    std::vector<std::string> schemata; // lines written as they are, after the two above
    bool enable_monitoring = false;    // a monitoring group of its own (mon_groups/<id>)
    bool enable_cmt = false;           // before runtime-spec 1.3: statistics only
    bool enable_mbm = false;
};

struct Linux {
    std::vector<Namespace> namespaces;
    std::vector<IdMapping> uid_mappings;
    std::vector<IdMapping> gid_mappings;
    std::map<std::string, TimeOffset> time_offsets; // "monotonic", "boottime"
    std::vector<Device> devices;
    std::string cgroups_path;
    std::optional<Resources> resources;
    std::optional<Seccomp> seccomp;
    std::vector<std::string> masked_paths;   // absolute
    std::vector<std::string> readonly_paths; // absolute
    std::string rootfs_propagation;          // empty or one of private/rprivate/slave/...
    std::map<std::string, std::string> sysctl;
    std::string mount_label;
    std::optional<Personality> personality;
    std::map<std::string, NetDevice> net_devices; // host name -> device
    std::optional<MemoryPolicy> memory_policy;
    std::optional<IntelRdt> intel_rdt;

    [[nodiscard]] const Namespace* find_namespace(NamespaceType type) const;
};

struct Spec {
    std::string oci_version;
    std::optional<Process> process;
    Root root;
    std::string hostname;
    std::string domainname;
    std::vector<Mount> mounts;
    Hooks hooks;
    std::map<std::string, std::string> annotations;
    Linux linux; // an absent "linux" object reads as an empty one
};

// Parses and validates config.json text. `source_name` names the file in messages about
// malformed JSON ("config.json: parse error at line 3, column 5: ...").
Result<Spec> parse_spec(std::string_view json_text, std::string_view source_name = "config.json");

// Reads <bundle>/config.json and parses it. Errors name the file. With `text_out`, the
// file's exact bytes are handed back too (create keeps them, so that later edits of the
// bundle's config have no effect on the container). `config_file` (crun's --config) names
// another file instead, relative to the bundle unless absolute; root.path stays relative to
// the bundle.
Result<Spec> load_spec(const std::string& bundle_dir, std::string* text_out = nullptr,
                       const std::string& config_file = "");

// Parses a standalone process object (as `exec --process` takes), with the same rules as
// config.json's "process"; paths in messages start at "process".
Result<Process> parse_process(std::string_view json_text, std::string_view source_name);

// Parses a standalone LinuxResources object (as `update --resources` takes); paths in
// messages start at "resources".
Result<Resources> parse_resources(std::string_view json_text, std::string_view source_name);

// The default config.json `mini-run spec` writes: like runc's, running "sh" in a busybox
// rootfs at "rootfs". `rootless` adds a user namespace mapping the caller's uid and gid;
// `with_seccomp` adds default_seccomp_json() as linux.seccomp; `cgroup_namespace` (a host
// on cgroup v2 alone, as runc's IsCgroup2UnifiedMode decides) adds a cgroup namespace.
std::string default_spec_json(bool rootless, uint32_t host_uid, uint32_t host_gid,
                              bool with_seccomp = false, bool cgroup_namespace = false);

// A linux.seccomp object (JSON text): allow everything but the syscalls that act on the
// host kernel or on host-wide state (modules, kexec, clocks, keyring, bpf, ...), which fail
// with EPERM.
std::string default_seccomp_json();

} // namespace minirun::spec
