// The warning rules of `mini-run check` (minirun/check.hpp): one function per risk and one
// table that gives each its id, message, reason and fix. Each looks at a config that
// parsed; runtime/check/check.cpp finds the errors and calls warnings_for() on what is left.
#include "minirun/check.hpp"

#include "fs.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace minirun::check {

namespace {

using spec::NamespaceType;

bool owns(const spec::Spec& spec, NamespaceType type) {
    return spec.linux.find_namespace(type) != nullptr;
}

template <NamespaceType type>
std::vector<Hit> host_namespace(const spec::Spec& spec) {
    if (owns(spec, type)) {
        return {};
    }
    return {{"linux.namespaces", ""}};
}

// Each lets a process act on the host kernel or on what no namespace separates, or is the
// usual first step of an escape:
//   SYS_ADMIN        mount, setns, bpf, quotas...: most of root's powers in one
//   SYS_MODULE       loads code into the host kernel
//   SYS_RAWIO        iopl/ioperm, /dev/mem and raw disk access
//   SYS_PTRACE       reads and writes other processes' memory, defeats seccomp on them
//   SYS_BOOT         kexec_load replaces the host kernel; reboot
//   SYS_TIME         sets the host's clock (no namespace covers CLOCK_REALTIME)
//   NET_ADMIN        routes, firewall, interfaces; in the host's network namespace, the host's
//   DAC_READ_SEARCH  open_by_handle_at(2) opens host files by handle ("shocker")
//   BPF, PERFMON     BPF programs and perf events: kernel memory and attack surface
//   MAC_ADMIN, MAC_OVERRIDE  changes or bypasses the AppArmor/SELinux/Smack policy
//   SYSLOG           the kernel log and kernel addresses (defeats KASLR)
//   AUDIT_CONTROL    the host's audit rules and log, not namespaced
// Not listed: what Docker grants by default (CHOWN, NET_RAW, MKNOD, SETUID, ...): a
// warning for every ordinary container would hide the ones that matter.
constexpr std::array<std::string_view, 14> kDangerousCapabilities = {
    "CAP_SYS_ADMIN", "CAP_SYS_MODULE",   "CAP_SYS_RAWIO",       "CAP_SYS_PTRACE",    "CAP_SYS_BOOT",
    "CAP_SYS_TIME",  "CAP_NET_ADMIN",    "CAP_DAC_READ_SEARCH", "CAP_BPF",           "CAP_PERFMON",
    "CAP_MAC_ADMIN", "CAP_MAC_OVERRIDE", "CAP_SYSLOG",          "CAP_AUDIT_CONTROL",
};

std::vector<Hit> dangerous_capabilities(const spec::Spec& spec) {
    if (!spec.process || !spec.process->capabilities) {
        return {};
    }
    const spec::Capabilities& caps = *spec.process->capabilities;
    std::vector<Hit> hits;
    // The bounding set limits what any exec can gain; effective and permitted are what the
    // process has now.
    for (const auto& [name, set] :
         {std::pair{"bounding", &caps.bounding}, std::pair{"effective", &caps.effective},
          std::pair{"permitted", &caps.permitted}}) {
        std::string found;
        for (std::string_view dangerous : kDangerousCapabilities) {
            if (std::find(set->begin(), set->end(), dangerous) != set->end()) {
                found += cat(found.empty() ? "" : ", ", dangerous);
            }
        }
        if (!found.empty()) {
            hits.push_back({cat("process.capabilities.", name), found});
        }
    }
    return hits;
}

std::vector<Hit> no_seccomp(const spec::Spec& spec) {
    if (spec.linux.seccomp) {
        return {};
    }
    return {{"linux.seccomp", ""}};
}

std::vector<Hit> root_without_userns(const spec::Spec& spec) {
    if (!spec.process || spec.process->user.uid != 0 || owns(spec, NamespaceType::user)) {
        return {};
    }
    return {{"process.user.uid", ""}};
}

// `path` is read-only (or masked) through linux.readonlyPaths or linux.maskedPaths, itself
// or one of its parents.
bool protected_path(const spec::Spec& spec, std::string_view path) {
    auto covers = [&](const std::string& entry) {
        return fs::at_or_below(fs::clean_path(entry), path);
    };
    return std::any_of(spec.linux.readonly_paths.begin(), spec.linux.readonly_paths.end(),
                       covers) ||
           std::any_of(spec.linux.masked_paths.begin(), spec.linux.masked_paths.end(), covers);
}

bool read_only_mount(const spec::Mount& mount) {
    return std::find(mount.options.begin(), mount.options.end(), "ro") != mount.options.end();
}

// What `runc spec` writes: /proc/sys in readonlyPaths (proc itself cannot be mounted
// read-only, the container needs its own /proc/self).
std::vector<Hit> writable_proc_sys(const spec::Spec& spec) {
    for (size_t i = 0; i < spec.mounts.size(); ++i) {
        const spec::Mount& mount = spec.mounts[i];
        if (mount.type == "proc" && fs::clean_path(mount.destination) == "/proc" &&
            !read_only_mount(mount) && !protected_path(spec, "/proc/sys")) {
            return {{"linux.readonlyPaths", ""}};
        }
    }
    return {};
}

// What `runc spec` writes: sysfs mounted "ro" (rootless: the host's /sys bound "ro").
std::vector<Hit> writable_sys(const spec::Spec& spec) {
    std::vector<Hit> hits;
    for (size_t i = 0; i < spec.mounts.size(); ++i) {
        const spec::Mount& mount = spec.mounts[i];
        bool is_sys = mount.type == "sysfs" || fs::clean_path(mount.source) == "/sys";
        if (is_sys && !read_only_mount(mount) &&
            !protected_path(spec, fs::clean_path(mount.destination))) {
            hits.push_back({cat("mounts[", i, "]"), ""});
        }
    }
    return hits;
}

std::vector<Hit> no_masked_paths(const spec::Spec& spec) {
    if (!spec.linux.masked_paths.empty()) {
        return {};
    }
    return {{"linux.maskedPaths", ""}};
}

// The last matching rule decides (runtime/cgroup/cgroup_devices.cpp): an allow-all rule matters
// unless a deny rule comes after it.
std::vector<Hit> all_devices_allowed(const spec::Spec& spec) {
    if (!spec.linux.resources) {
        return {};
    }
    const auto& rules = spec.linux.resources->devices;
    for (size_t i = rules.size(); i-- > 0;) {
        const spec::DeviceCgroupRule& rule = rules[i];
        if (!rule.allow) {
            return {};
        }
        if ((rule.type == "a" || rule.type.empty()) && !rule.major && !rule.minor) {
            return {{cat("linux.resources.devices[", i, "]"), ""}};
        }
    }
    return {};
}

std::vector<Hit> no_memory_limit(const spec::Spec& spec) {
    const auto& resources = spec.linux.resources;
    if (resources && resources->memory && resources->memory->limit &&
        *resources->memory->limit > 0) {
        return {};
    }
    return {{"linux.resources.memory.limit", ""}};
}

std::vector<Hit> no_pids_limit(const spec::Spec& spec) {
    const auto& resources = spec.linux.resources;
    if (resources && resources->pids && resources->pids->limit.value_or(-1) >= 0) {
        return {};
    }
    return {{"linux.resources.pids.limit", ""}};
}

std::vector<Hit> shared_propagation(const spec::Spec& spec) {
    const std::string& propagation = spec.linux.rootfs_propagation;
    if (propagation != "shared" && propagation != "rshared") {
        return {};
    }
    return {{"linux.rootfsPropagation", propagation}};
}

std::vector<Hit> new_privileges(const spec::Spec& spec) {
    if (!spec.process || spec.process->no_new_privileges) {
        return {};
    }
    return {{"process.noNewPrivileges", ""}};
}

// One rule per risk. Not a rule: root.readonly false. A writable rootfs is what most
// images expect, and it lets the container change only its own files; the rules above
// are about reaching the host.
constexpr std::array<Rule, 14> kRules = {{
    {"host-pid-namespace", "no pid namespace of its own: the container shares the host's",
     "it sees every host process, and with the capabilities to do so can signal or trace them",
     R"(add {"type": "pid"} to linux.namespaces)", host_namespace<NamespaceType::pid>},
    {"host-network-namespace", "no network namespace of its own: the container shares the host's",
     "it can bind the host's ports, reach services on the host's loopback and abstract unix "
     "sockets (container runtimes, X11, D-Bus)",
     R"(add {"type": "network"} to linux.namespaces)", host_namespace<NamespaceType::network>},
    {"host-ipc-namespace", "no ipc namespace of its own: the container shares the host's",
     "it can read and change the host's SysV shared memory, semaphores and message queues",
     R"(add {"type": "ipc"} to linux.namespaces)", host_namespace<NamespaceType::ipc>},
    {"dangerous-capabilities", "capabilities that reach past the container",
     "each of them acts on the host kernel or host-wide state, or is the usual first step of an "
     "escape",
     "drop them; keep the sets `mini-run spec` writes and add only what the program needs",
     dangerous_capabilities},
    {"no-seccomp", "no seccomp filter",
     "every system call is open, including those that act on the host kernel (modules, kexec, "
     "keyring, bpf, clocks) and the ones most kernel exploits go through",
     "add a linux.seccomp profile: `mini-run spec --seccomp` writes one", no_seccomp},
    {"root-without-user-namespace", "uid 0 without a user namespace",
     "the container's root is the host's root: any way out (a kernel bug, a host path mounted "
     "in) is a way to full root on the host",
     "add a user namespace with linux.uidMappings and linux.gidMappings, or run as a non-zero "
     "process.user.uid",
     root_without_userns},
    {"writable-proc-sys", "/proc/sys is writable",
     "most sysctls there are not namespaced: writing them changes the host kernel's settings "
     "(kernel.core_pattern runs a program as host root)",
     "add \"/proc/sys\" to linux.readonlyPaths", writable_proc_sys},
    {"writable-sys", "sysfs is mounted writable",
     "/sys controls the host's devices, kernel parameters and firmware",
     "add \"ro\" to the mount's options", writable_sys},
    {"no-masked-paths", "linux.maskedPaths is empty",
     "files such as /proc/kcore, /proc/keys, /proc/timer_list and /sys/firmware expose the "
     "host kernel's memory, keys and state",
     "mask runc's list: the linux.maskedPaths `mini-run spec` writes", no_masked_paths},
    {"all-devices-allowed", "every device is allowed in the device cgroup",
     "with CAP_MKNOD (or a device node in the rootfs) the container can read and write the "
     "host's disks and memory (/dev/sda, /dev/mem)",
     R"(deny all ({"allow": false, "access": "rwm"}) and allow only the devices needed)",
     all_devices_allowed},
    {"no-memory-limit", "no memory limit",
     "one container can take all the host's memory and bring the OOM killer onto host "
     "processes",
     "set linux.resources.memory.limit (bytes)", no_memory_limit},
    {"no-pids-limit", "no pids limit",
     "a fork bomb exhausts the host-wide pid space: nothing on the host can start a process",
     "set linux.resources.pids.limit", no_pids_limit},
    {"shared-rootfs-propagation", "the rootfs propagation is shared",
     "mounts made in the container propagate to the host's mount namespace, and the host's into "
     "the container",
     R"(use "rprivate" (the default) or "rslave")", shared_propagation},
    {"new-privileges-allowed", "process.noNewPrivileges is false",
     "setuid binaries and file capabilities in the rootfs can raise the process's privileges "
     "past those the config gives",
     "set process.noNewPrivileges to true", new_privileges},
}};

} // namespace

std::span<const Rule> check_rules() {
    return kRules;
}

std::vector<Warning> warnings_for(const spec::Spec& spec) {
    std::vector<Warning> warnings;
    for (const Rule& rule : kRules) {
        for (Hit& hit : rule.test(spec)) {
            std::string message(rule.message);
            if (!hit.detail.empty()) {
                message += cat(": ", hit.detail);
            }
            warnings.push_back({std::string(rule.id), std::move(hit.path), std::move(message),
                                std::string(rule.why), std::string(rule.fix)});
        }
    }
    return warnings;
}

} // namespace minirun::check
