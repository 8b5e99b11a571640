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
        // runc writes true; mini-run has no console support yet, so a default bundle must run
        // without one.
        {"terminal", false},
        {"user", {{"uid", 0}, {"gid", 0}}},
        {"args", {"sh"}},
        {"env",
         {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"}},
        {"cwd", "/"},
        // No inheritable or ambient set: those would hand the capabilities on across execve
        // to non-root programs, which the default container has no need for.
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

Json default_linux(bool rootless, uint32_t host_uid, uint32_t host_gid) {
    Json linux = Json::object();
    Json namespaces = Json::array();
    if (rootless) {
        linux["uidMappings"] =
            Json::array({{{"containerID", 0}, {"hostID", host_uid}, {"size", 1}}});
        linux["gidMappings"] =
            Json::array({{{"containerID", 0}, {"hostID", host_gid}, {"size", 1}}});
        // No network namespace (an unprivileged user could not give it any connectivity) and
        // no cgroup namespace (a rootless container gets no cgroup of its own to root it at).
        for (const char* type : {"pid", "ipc", "uts", "mount", "user"}) {
            namespaces.push_back({{"type", type}});
        }
    } else {
        // Deny all device access in the cgroup; the runtime allows the default devices.
        linux["resources"] = {
            {"devices", Json::array({{{"allow", false}, {"access", "rwm"}}})},
        };
        for (const char* type : {"pid", "network", "ipc", "uts", "mount", "cgroup"}) {
            namespaces.push_back({{"type", type}});
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

} // namespace

std::string default_spec_json(bool rootless, uint32_t host_uid, uint32_t host_gid) {
    Json spec = {
        {"ociVersion", "1.0.2-dev"},
        {"process", default_process()},
        {"root", {{"path", "rootfs"}, {"readonly", true}}},
        {"hostname", "mini-run"},
        {"mounts", default_mounts(rootless)},
        {"linux", default_linux(rootless, host_uid, host_gid)},
    };
    return spec.dump(1, '\t') + "\n";
}

} // namespace minirun::spec
