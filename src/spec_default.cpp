// The config.json `mini-run spec` writes: the same shape as `runc spec` (and `runc spec
// --rootless`), so bundles move between the two runtimes unchanged.
#include "minirun/spec.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace minirun::spec {

namespace {

// ordered_json keeps the keys in runc's order, which makes the file easy to compare.
using Json = nlohmann::ordered_json;

Json capability_set() {
    return Json::array({"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"});
}

Json default_process() {
    return {
        // As runc: a terminal, so that `run` of the default bundle is an interactive shell.
        {"terminal", true},
        {"user", {{"uid", 0}, {"gid", 0}}},
        {"args", {"sh"}},
        {"env",
         {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"}},
        {"cwd", "/"},
        // runc 1.3's sets: no inheritable and no ambient set (runc 1.2 dropped the ambient
        // set of its example, which without the inheritable one was skipped anyway).
        {"capabilities",
         {{"bounding", capability_set()},
          {"effective", capability_set()},
          {"permitted", capability_set()}}},
        {"rlimits", Json::array({{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 1024}}})},
        {"noNewPrivileges", true},
    };
}

Json mount(const char* destination, const char* type, const char* source, Json options) {
    Json entry = {{"destination", destination}, {"type", type}, {"source", source}};
    if (!options.empty()) {
        entry["options"] = std::move(options);
    }
    return entry;
}

Json default_mounts(bool rootless) {
    Json devpts_options = {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"};
    // In a user namespace with only the caller's gid mapped, gid 5 (tty) does not exist
    // and devpts refuses the option.
    if (!rootless) {
        devpts_options.push_back("gid=5");
    }
    Json mounts = Json::array({
        mount("/proc", "proc", "proc", Json::array()),
        mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
        mount("/dev/pts", "devpts", "devpts", std::move(devpts_options)),
        mount("/dev/shm", "tmpfs", "shm",
              {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}),
        mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
    });
    if (rootless) {
        // sysfs can only be mounted by the owner of the network namespace, and a rootless
        // container keeps the host's; bind the host's /sys read-only instead. The cgroup
        // mount goes too: without a cgroup namespace of its own an unprivileged user
        // cannot mount cgroupfs.
        mounts.push_back(
            mount("/sys", "none", "/sys", {"rbind", "nosuid", "noexec", "nodev", "ro"}));
    } else {
        mounts.push_back(mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}));
        mounts.push_back(mount("/sys/fs/cgroup", "cgroup", "cgroup",
                               {"nosuid", "noexec", "nodev", "relatime", "ro"}));
    }
    return mounts;
}

Json default_linux(bool rootless, uint32_t host_uid, uint32_t host_gid, bool cgroup_namespace) {
    Json linux = Json::object();
    Json namespaces = Json::array();
    if (rootless) {
        linux["uidMappings"] =
            Json::array({{{"containerID", 0}, {"hostID", host_uid}, {"size", 1}}});
        linux["gidMappings"] =
            Json::array({{{"containerID", 0}, {"hostID", host_gid}, {"size", 1}}});
        // No network namespace (an unprivileged user could not give it any connectivity) and
        // no cgroup namespace (a rootless container gets no cgroup of its own to root it at).
        // The cgroup namespace on cgroup v2, as runc's ToRootless keeps it: the init's own
        // cgroup is its root.
        for (const char* type : {"pid", "ipc", "uts", "mount"}) {
            namespaces.push_back({{"type", type}});
        }
        if (cgroup_namespace) {
            namespaces.push_back({{"type", "cgroup"}});
        }
        namespaces.push_back({{"type", "user"}});
    } else {
        // Deny all device access in the cgroup; the runtime allows the default devices.
        linux["resources"] = {
            {"devices", Json::array({{{"allow", false}, {"access", "rwm"}}})},
        };
        // runc's list; runc 1.3 adds a cgroup namespace where the host has cgroup v2 alone.
        for (const char* type : {"pid", "network", "ipc", "uts", "mount"}) {
            namespaces.push_back({{"type", type}});
        }
        if (cgroup_namespace) {
            namespaces.push_back({{"type", "cgroup"}});
        }
    }
    linux["namespaces"] = std::move(namespaces);
    linux["maskedPaths"] = {
        "/proc/acpi",          "/proc/asound",     "/proc/kcore",       "/proc/keys",
        "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
        "/sys/firmware",       "/proc/scsi",
    };
    linux["readonlyPaths"] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
    };
    return linux;
}

// A deny-list: everything is allowed except what lets a process reach past its container.
// These syscalls act on the host kernel or on state no namespace separates, and most of
// them need a capability the default container lacks anyway; the filter still stops them
// for a container that is given such capabilities, and it cuts the kernel code the
// container can reach (the syscalls below have had their share of exploitable bugs).
Json default_seccomp() {
    Json names = Json::array({
        // Loading, removing or listing kernel modules: code in the host kernel.
        "init_module",
        "finit_module",
        "delete_module",
        "create_module",
        "query_module",
        "get_kernel_syms",
        // Replacing or restarting the host kernel.
        "kexec_load",
        "kexec_file_load",
        "reboot",
        // The host's clocks: no time namespace covers CLOCK_REALTIME. (adjtimex also fails
        // for plain queries, which few programs in a container make.)
        "settimeofday",
        "clock_settime",
        "clock_adjtime",
        "adjtimex",
        "stime",
        // The kernel keyring is not namespaced: keys would be shared with the host.
        "add_key",
        "request_key",
        "keyctl",
        // Large kernel attack surface: eBPF programs, perf events, userfaultfd (a favourite
        // for winning kernel races).
        "bpf",
        "perf_event_open",
        "userfaultfd",
        // Opening files by handle bypasses the mount namespace: the classic escape
        // (name_to_handle_at only makes handles and stays allowed).
        "open_by_handle_at",
        // Host-wide state: swap, process accounting, quotas, the kernel log, NFS server
        // control, hanging up terminals, raw I/O port access.
        "swapon",
        "swapoff",
        "acct",
        "quotactl",
        "syslog",
        "nfsservctl",
        "vhangup",
        "iopl",
        "ioperm",
        // Obsolete interfaces kept only for old binaries: nothing in a container needs
        // them, and they expose kernel internals.
        "lookup_dcookie",
        "sysfs",
        "_sysctl",
        "uselib",
        "ustat",
        // Reading or writing another process's memory or comparing its kernel objects:
        // without CAP_SYS_PTRACE a container has no business with these.
        "kcmp",
        "process_vm_readv",
        "process_vm_writev",
    });
    return {
        {"defaultAction", "SCMP_ACT_ALLOW"},
        // A filter treats a syscall made through an architecture it does not list as an
        // error (libseccomp kills the thread). The 32-bit entry points (x86 and x32 on
        // x86_64, arm on aarch64) are listed so that 32-bit programs run and are filtered
        // too; the others never match on a given machine and cost nothing, and keep the
        // bundle portable between x86 and arm hosts.
        {"architectures",
         {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64",
          "SCMP_ARCH_ARM"}},
        {"syscalls",
         Json::array(
             {{{"names", std::move(names)}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", 1}}})},
    };
}

} // namespace

std::string default_seccomp_json() {
    return default_seccomp().dump(1, '\t');
}

std::string default_spec_json(bool rootless, uint32_t host_uid, uint32_t host_gid,
                              bool with_seccomp, bool cgroup_namespace) {
    Json spec = {
        // runc 1.3's: the runtime-spec it is built with (specs.Version, v1.2.1).
        {"ociVersion", "1.2.1"},
        {"process", default_process()},
        {"root", {{"path", "rootfs"}, {"readonly", true}}},
        {"hostname", "mini-run"},
        {"mounts", default_mounts(rootless)},
        {"linux", default_linux(rootless, host_uid, host_gid, cgroup_namespace)},
    };
    if (with_seccomp) {
        spec["linux"]["seccomp"] = default_seccomp();
    }
    return spec.dump(1, '\t') + "\n";
}

} // namespace minirun::spec
