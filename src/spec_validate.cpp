// Value rules for config.json: known names, sysctl scoping, and cross-field consistency.
#include "fs.hpp"
#include "proc_mounts.hpp"
#include "spec_rules.hpp"

#include <seccomp.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <utility>

namespace minirun::spec::rules {

namespace {

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// The IPC-namespace sysctls (ipc_namespaces(7)); fs.mqueue.* is matched by prefix.
constexpr std::array<std::string_view, 8> ipc_sysctls = {
    "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
    "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced",
};

constexpr std::array<std::pair<std::string_view, int>, 16> rlimits = {{
    {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_CORE", RLIMIT_CORE},
    {"RLIMIT_CPU", RLIMIT_CPU},
    {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
    {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_NPROC", RLIMIT_NPROC},
    {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
    {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_STACK", RLIMIT_STACK},
}};

// The actions the spec lists as of libseccomp 2.5.
constexpr std::array<std::string_view, 9> seccomp_actions = {
    "SCMP_ACT_KILL",  "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
    "SCMP_ACT_TRAP",  "SCMP_ACT_ERRNO",        "SCMP_ACT_TRACE",
    "SCMP_ACT_ALLOW", "SCMP_ACT_LOG",          "SCMP_ACT_NOTIFY",
};

constexpr std::array<std::string_view, 4> seccomp_flags = {
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

constexpr std::array<std::string_view, 7> seccomp_operators = {
    "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",        "SCMP_CMP_EQ",
    "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ",
};

constexpr std::array<std::string_view, 9> propagations = {
    "", "private", "rprivate", "slave", "rslave", "shared", "rshared", "unbindable", "runbindable",
};

bool overlaps(uint32_t first_a, uint32_t first_b, uint32_t size_a, uint32_t size_b) {
    uint64_t end_a = uint64_t{first_a} + size_a;
    uint64_t end_b = uint64_t{first_b} + size_b;
    return first_a < end_b && first_b < end_a;
}

// user_namespaces(7): the kernel refuses a map whose ranges overlap on either side, with a
// bare EINVAL; name the two entries instead.
Status check_mappings(const std::vector<IdMapping>& mappings, std::string_view path) {
    for (size_t i = 0; i < mappings.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
            const IdMapping& a = mappings[i];
            const IdMapping& b = mappings[j];
            if (overlaps(a.container_id, b.container_id, a.size, b.size) ||
                overlaps(a.host_id, b.host_id, a.size, b.size)) {
                return Error(cat(path, "[", i, "]: overlaps ", path, "[", j, "]"));
            }
        }
    }
    return {};
}

Status check_user_namespace(const Spec& spec) {
    const Linux& linux = spec.linux;
    const Namespace* user = linux.find_namespace(NamespaceType::user);
    if (user == nullptr) {
        // Mappings are written to the new user namespace's uid_map/gid_map; without one they
        // would be silently ignored (runc refuses them too).
        if (!linux.uid_mappings.empty()) {
            return Error("linux.uidMappings: mappings need a user namespace in linux.namespaces");
        }
        if (!linux.gid_mappings.empty()) {
            return Error("linux.gidMappings: mappings need a user namespace in linux.namespaces");
        }
    } else if (user->path.empty()) {
        // A new user namespace with no mapping leaves every id unmapped (nobody/65534):
        // the container could not even own its own files.
        if (linux.uid_mappings.empty()) {
            return Error("linux.uidMappings: a new user namespace needs uid mappings");
        }
        if (linux.gid_mappings.empty()) {
            return Error("linux.gidMappings: a new user namespace needs gid mappings");
        }
    }
    MR_TRY(check_mappings(linux.uid_mappings, "linux.uidMappings"));
    return check_mappings(linux.gid_mappings, "linux.gidMappings");
}

// mounts[].uidMappings/gidMappings (runtime-spec 1.2): each MUST come with the other, and
// like the user namespace's they become a uid_map/gid_map, which refuses overlaps. Whether
// the mount may be idmapped at all (a bind, a user namespace to borrow mappings from)
// depends on its options, and is the plan's to decide (runtime/plan.cpp).
Status check_mount_mappings(const Spec& spec) {
    for (size_t i = 0; i < spec.mounts.size(); ++i) {
        const Mount& mount = spec.mounts[i];
        std::string path = cat("mounts[", i, "]");
        if (mount.uid_mappings.empty() != mount.gid_mappings.empty()) {
            return Error(cat(path, mount.uid_mappings.empty() ? ".gidMappings" : ".uidMappings",
                             ": must be given together with ",
                             mount.uid_mappings.empty() ? "uidMappings" : "gidMappings"));
        }
        MR_TRY(check_mappings(mount.uid_mappings, path + ".uidMappings"));
        MR_TRY(check_mappings(mount.gid_mappings, path + ".gidMappings"));
    }
    return {};
}

// Mount destinations under /proc (proc_mounts.hpp, runc 1.3's checkProcMount), on the clean
// destination, before anything exists; the runtime checks the resolved one again at mount
// time (a symlink in the rootfs), and there the source of a bind onto /proc itself.
Status check_proc_mounts(const Spec& spec) {
    for (size_t i = 0; i < spec.mounts.size(); ++i) {
        const Mount& mount = spec.mounts[i];
        bool bind = mount.type == "bind" ||
                    std::any_of(mount.options.begin(), mount.options.end(),
                                [](const std::string& o) { return o == "bind" || o == "rbind"; });
        if (auto problem = proc_mounts::destination_problem(mount.destination, mount.type, bind)) {
            return Error(cat("mounts[", i, "].destination: ", *problem));
        }
    }
    return {};
}

Status check_sysctls(const Spec& spec) {
    const Linux& linux = spec.linux;
    for (const auto& [name, value] : linux.sysctl) {
        std::string path = cat("linux.sysctl.", quoted(name));
        switch (classify_sysctl(name)) {
        case SysctlScope::network:
            if (linux.find_namespace(NamespaceType::network) == nullptr) {
                return Error(cat(path, ": needs a private network namespace"));
            }
            break;
        case SysctlScope::ipc:
            if (linux.find_namespace(NamespaceType::ipc) == nullptr) {
                return Error(cat(path, ": needs a private IPC namespace"));
            }
            break;
        case SysctlScope::uts: {
            // Namespaced, and runc accepts kernel.domainname in a private UTS namespace. A
            // value that disagrees with the dedicated field would make the result depend on
            // which one is written last: only an equal one (or one alone) is accepted.
            if (linux.find_namespace(NamespaceType::uts) == nullptr) {
                return Error(cat(path, ": needs a private UTS namespace"));
            }
            bool host = name.find("hostname") != std::string::npos;
            const std::string& field = host ? spec.hostname : spec.domainname;
            if (!field.empty() && field != value) {
                return Error(cat(path, ": ", quoted(value), " conflicts with ",
                                 host ? "hostname " : "domainname ", quoted(field)));
            }
            break;
        }
        case SysctlScope::user: {
            // The limits under /proc/sys/user belong to the writer's user namespace (the
            // kernel's ucounts); runc 1.4 accepts them with a user namespace. Only a new one
            // is the container's own: a joined one's limits are its owner's, and without one
            // they are the host's.
            const Namespace* user = linux.find_namespace(NamespaceType::user);
            if (user == nullptr) {
                return Error(cat(path, ": needs a private user namespace"));
            }
            if (!user->path.empty()) {
                return Error(cat(path, ": needs a new user namespace, not a joined one (whose "
                                       "limits are not the container's)"));
            }
            break;
        }
        case SysctlScope::not_private:
            return Error(cat(path, ": not a namespaced sysctl"));
        }
    }
    return {};
}

Status check_seccomp(const Seccomp& seccomp) {
    // The spec: listenerMetadata MUST NOT be set without listenerPath.
    if (!seccomp.listener_metadata.empty() && seccomp.listener_path.empty()) {
        return Error("linux.seccomp.listenerMetadata: set without linux.seccomp.listenerPath");
    }
    if (!seccomp.listener_path.empty()) {
        return {};
    }
    // SCMP_ACT_NOTIFY hands syscalls to an agent; with no listener socket to pass the
    // notify fd to, every such syscall would hang forever.
    constexpr std::string_view notify = "SCMP_ACT_NOTIFY";
    if (seccomp.default_action == notify) {
        return Error("linux.seccomp.defaultAction: SCMP_ACT_NOTIFY needs "
                     "linux.seccomp.listenerPath");
    }
    for (size_t i = 0; i < seccomp.syscalls.size(); ++i) {
        if (seccomp.syscalls[i].action == notify) {
            return Error(cat("linux.seccomp.syscalls[", i,
                             "].action: SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath"));
        }
    }
    return {};
}

// runtime-spec "Network Devices": the devices go into the container's network namespace,
// so there must be one; and two devices cannot end up with the same name in it.
Status check_net_devices(const Linux& linux) {
    if (linux.net_devices.empty()) {
        return {};
    }
    if (linux.find_namespace(NamespaceType::network) == nullptr) {
        return Error("linux.netDevices: moving network devices needs a network namespace in "
                     "linux.namespaces (without one they would stay in the host's)");
    }
    std::map<std::string, std::string> taken; // name in the container -> host name
    for (const auto& [host_name, device] : linux.net_devices) {
        const std::string& inside = device.name.empty() ? host_name : device.name;
        if (inside.find('%') != std::string::npos) {
            continue; // a template: the kernel picks a free name
        }
        auto [other, fresh] = taken.emplace(inside, host_name);
        if (!fresh) {
            return Error(cat("linux.netDevices.", quoted(host_name), ": the name ", quoted(inside),
                             " in the container is linux.netDevices.", quoted(other->second),
                             "'s too"));
        }
    }
    return {};
}

} // namespace

std::optional<std::string> interface_name_problem(std::string_view name, bool allow_template) {
    constexpr size_t max_length = 15; // IFNAMSIZ - 1
    if (name.empty()) {
        return "must not be empty";
    }
    if (name.size() > max_length) {
        return cat("must be at most ", max_length, " bytes (IFNAMSIZ), got ", name.size(), ": ",
                   quoted(name));
    }
    if (name == "." || name == "..") {
        return cat("not a valid interface name: ", quoted(name));
    }
    for (char c : name) {
        if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)) != 0) {
            return cat("not a valid interface name (no '/', ':' or white space): ", quoted(name));
        }
    }
    size_t percent = name.find('%');
    if (percent != std::string_view::npos) {
        bool one_template = name.substr(percent, 2) == "%d" &&
                            name.find('%', percent + 1) == std::string_view::npos;
        if (!allow_template || !one_template) {
            return cat(allow_template ? "a name template has one \"%d\" and no other '%': "
                                      : "a host device name has no '%': ",
                       quoted(name));
        }
    }
    return std::nullopt;
}

SysctlScope classify_sysctl(std::string_view name) {
    // sysctl(8) accepts '/' as the separator too ("net/ipv4/ip_forward").
    std::string dotted(name);
    std::replace(dotted.begin(), dotted.end(), '/', '.');
    std::string_view key = dotted;
    if (key.starts_with("net.")) {
        return SysctlScope::network;
    }
    if (contains(ipc_sysctls, key) || key.starts_with("fs.mqueue.")) {
        return SysctlScope::ipc;
    }
    if (key == "kernel.hostname" || key == "kernel.domainname") {
        return SysctlScope::uts;
    }
    if (key.starts_with("user.")) {
        return SysctlScope::user;
    }
    return SysctlScope::not_private;
}

std::optional<int> rlimit_resource(std::string_view name) {
    for (const auto& [known, resource] : rlimits) {
        if (known == name) {
            return resource;
        }
    }
    return std::nullopt;
}

bool is_seccomp_action(std::string_view name) {
    return contains(seccomp_actions, name);
}

namespace {

// Every architecture name libseccomp has had (2.6); the ones the linked library resolves are
// the ones mini-run accepts.
constexpr std::array<std::string_view, 23> seccomp_arch_candidates = {
    "SCMP_ARCH_X86",         "SCMP_ARCH_X86_64",      "SCMP_ARCH_X32",    "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64",     "SCMP_ARCH_LOONGARCH64", "SCMP_ARCH_M68K",   "SCMP_ARCH_MIPS",
    "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",   "SCMP_ARCH_MIPSEL", "SCMP_ARCH_MIPSEL64",
    "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",         "SCMP_ARCH_PPC64",  "SCMP_ARCH_PPC64LE",
    "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",       "SCMP_ARCH_PARISC", "SCMP_ARCH_PARISC64",
    "SCMP_ARCH_RISCV64",     "SCMP_ARCH_SHEB",        "SCMP_ARCH_SH",
};

} // namespace

std::span<const std::string_view> seccomp_action_names() {
    return seccomp_actions;
}
std::span<const std::string_view> seccomp_operator_names() {
    return seccomp_operators;
}
std::span<const std::string_view> seccomp_flag_names() {
    return seccomp_flags;
}
std::vector<std::string> seccomp_arch_names() {
    std::vector<std::string> names;
    for (std::string_view name : seccomp_arch_candidates) {
        if (is_seccomp_arch(name)) {
            names.emplace_back(name);
        }
    }
    return names;
}

bool is_seccomp_arch(std::string_view name) {
    constexpr std::string_view prefix = "SCMP_ARCH_";
    if (!name.starts_with(prefix) || name.size() == prefix.size()) {
        return false;
    }
    // libseccomp names architectures in lower case without the prefix ("x86_64").
    std::string lower(name.substr(prefix.size()));
    for (char& c : lower) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return seccomp_arch_resolve_name(lower.c_str()) != 0;
}

bool is_seccomp_flag(std::string_view name) {
    return contains(seccomp_flags, name);
}

bool is_seccomp_operator(std::string_view name) {
    return contains(seccomp_operators, name);
}

bool is_rootfs_propagation(std::string_view value) {
    return contains(propagations, value);
}

std::string normalize_destination(std::string_view destination) {
    // clean_path reads every path from "/", so "proc" becomes "/proc" and ".." stops at "/".
    return fs::clean_path(destination);
}

std::optional<std::string> oci_version_problem(std::string_view version) {
    if (version.empty()) {
        return "must not be empty";
    }
    size_t digits = version.find_first_not_of("0123456789");
    std::string_view major = version.substr(0, digits);
    if (major.empty() || (digits != std::string_view::npos && version[digits] != '.')) {
        return cat("not a version: ", quoted(version), " (expected 1.x.y)");
    }
    // Major versions may break compatibility; mini-run implements runtime-spec 1.x.
    if (major != "1") {
        return cat("unsupported major version in ", quoted(version),
                   " (mini-run implements runtime-spec 1.x)");
    }
    return std::nullopt;
}

namespace {

// Without a mount namespace the container's mounts are made in the caller's one, as runc
// makes them (mount.hpp). A user namespace could not do that: mounting needs CAP_SYS_ADMIN
// in the user namespace that owns the mount namespace, the caller's.
Status check_namespace_set(const Spec& spec) {
    const Linux& linux = spec.linux;
    if (linux.find_namespace(NamespaceType::mount) == nullptr &&
        linux.find_namespace(NamespaceType::user) != nullptr) {
        return Error("linux.namespaces: a user namespace needs a mount namespace too: the "
                     "container's mounts would be made in the caller's mount namespace, "
                     "which a user namespace may not change");
    }
    return {};
}

// sethostname(2) outside a private UTS namespace would rename the host.
Status check_uts_names(const Spec& spec) {
    bool has_uts = spec.linux.find_namespace(NamespaceType::uts) != nullptr;
    if (!spec.hostname.empty() && !has_uts) {
        return Error("hostname: setting a hostname needs a private UTS namespace");
    }
    if (!spec.domainname.empty() && !has_uts) {
        return Error("domainname: setting a domainname needs a private UTS namespace");
    }
    return {};
}

// Offsets can only be written to a time namespace nobody has entered yet: a new one.
Status check_time_offsets(const Spec& spec) {
    const Linux& linux = spec.linux;
    if (!linux.time_offsets.empty()) {
        const Namespace* time = linux.find_namespace(NamespaceType::time);
        if (time == nullptr || !time->path.empty()) {
            return Error("linux.timeOffsets: time offsets need a new time namespace "
                         "(a \"time\" entry in linux.namespaces without a path)");
        }
    }
    return {};
}

Status check_spec_net_devices(const Spec& spec) {
    return check_net_devices(spec.linux);
}

Status check_spec_seccomp(const Spec& spec) {
    return spec.linux.seccomp ? check_seccomp(*spec.linux.seccomp) : Status{};
}

// In the order they run: the namespace set first, since most rules depend on it.
constexpr std::array<CrossCheck, 9> cross_checks = {{
    {"namespace set", check_namespace_set},
    {"user namespace", check_user_namespace},
    {"mount id mappings", check_mount_mappings},
    {"mounts under /proc", check_proc_mounts},
    {"hostname and domainname", check_uts_names},
    {"time offsets", check_time_offsets},
    {"sysctl", check_sysctls},
    {"network devices", check_spec_net_devices},
    {"seccomp", check_spec_seccomp},
}};

} // namespace

std::span<const CrossCheck> cross_reference_checks() {
    return cross_checks;
}

Status validate_cross_references(const Spec& spec) {
    for (const CrossCheck& check : cross_checks) {
        MR_TRY(check.check(spec));
    }
    return {};
}

} // namespace minirun::spec::rules
