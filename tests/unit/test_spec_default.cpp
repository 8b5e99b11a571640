// default_spec_json(), load_spec() and the value rules behind the parser.
#include "minirun/spec.hpp"
#include "spec_rules.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using Catch::Matchers::StartsWith;
using minirun::spec::default_spec_json;
using minirun::spec::load_spec;
using minirun::spec::NamespaceType;
using minirun::spec::parse_spec;
using minirun::spec::Spec;

namespace {

Spec parse_default(bool rootless, uint32_t uid = 1000, uint32_t gid = 1000) {
    auto result = parse_spec(default_spec_json(rootless, uid, gid));
    INFO((result.ok() ? std::string() : result.error().message()));
    REQUIRE(result.ok());
    return std::move(result).value();
}

std::vector<NamespaceType> namespace_types(const Spec& spec) {
    std::vector<NamespaceType> types;
    for (const auto& ns : spec.linux.namespaces) {
        types.push_back(ns.type);
        CHECK(ns.path.empty());
    }
    return types;
}

std::vector<std::string> destinations(const Spec& spec) {
    std::vector<std::string> out;
    for (const auto& mount : spec.mounts) {
        out.push_back(mount.destination);
    }
    return out;
}

const minirun::spec::Mount& mount_at(const Spec& spec, const std::string& destination) {
    auto found = std::find_if(spec.mounts.begin(), spec.mounts.end(),
                              [&](const auto& mount) { return mount.destination == destination; });
    REQUIRE(found != spec.mounts.end());
    return *found;
}

const std::vector<std::string> default_caps = {"CAP_AUDIT_WRITE", "CAP_KILL",
                                               "CAP_NET_BIND_SERVICE"};

const std::vector<std::string> masked_paths = {
    "/proc/acpi",          "/proc/asound",     "/proc/kcore",       "/proc/keys",
    "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
    "/sys/firmware",       "/proc/scsi",
};

const std::vector<std::string> readonly_paths = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                                 "/proc/sysrq-trigger"};

// A scratch directory, removed with its (flat) contents at the end of the test: what write()
// made, and a config.json directory a test may make by hand.
class TempDir {
public:
    TempDir() {
        std::string pattern = "/tmp/minirun-spec-test.XXXXXX";
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path_ = pattern;
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        names_.emplace_back("config.json");
        for (const std::string& name : names_) {
            std::string entry = path_ + "/" + name;
            if (::unlink(entry.c_str()) < 0 && errno == EISDIR) {
                ::rmdir(entry.c_str());
            }
        }
        ::rmdir(path_.c_str());
    }
    [[nodiscard]] const std::string& path() const { return path_; }

    void write(const std::string& name, const std::string& content) {
        names_.push_back(name);
        std::string file = path_ + "/" + name;
        int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        REQUIRE(fd >= 0);
        REQUIRE(::write(fd, content.data(), content.size()) ==
                static_cast<ssize_t>(content.size()));
        ::close(fd);
    }

private:
    std::string path_;
    std::vector<std::string> names_;
};

} // namespace

TEST_CASE("default_spec_json: the runc-like default config", "[spec][default]") {
    std::string text = default_spec_json(false, 1000, 1000);
    REQUIRE_FALSE(text.empty());
    CHECK(text.back() == '\n');
    CHECK(text.find("\n\t\"ociVersion\"") != std::string::npos); // pretty-printed

    Spec spec = parse_default(false);
    CHECK(spec.oci_version == "1.2.1");
    CHECK(spec.root.path == "rootfs");
    CHECK(spec.root.readonly);
    CHECK(spec.hostname == "mini-run");

    REQUIRE(spec.process);
    CHECK(spec.process->terminal);
    CHECK(spec.process->args == std::vector<std::string>{"sh"});
    CHECK(spec.process->env ==
          std::vector<std::string>{
              "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"});
    CHECK(spec.process->cwd == "/");
    CHECK(spec.process->user.uid == 0);
    CHECK(spec.process->user.gid == 0);
    CHECK(spec.process->no_new_privileges);
    REQUIRE(spec.process->capabilities);
    CHECK(spec.process->capabilities->bounding == default_caps);
    CHECK(spec.process->capabilities->effective == default_caps);
    CHECK(spec.process->capabilities->permitted == default_caps);
    CHECK(spec.process->capabilities->inheritable.empty());
    CHECK(spec.process->capabilities->ambient.empty());
    REQUIRE(spec.process->rlimits.size() == 1);
    CHECK(spec.process->rlimits[0].resource == RLIMIT_NOFILE);
    CHECK(spec.process->rlimits[0].soft == 1024);
    CHECK(spec.process->rlimits[0].hard == 1024);

    CHECK(namespace_types(spec) ==
          std::vector<NamespaceType>{NamespaceType::pid, NamespaceType::network, NamespaceType::ipc,
                                     NamespaceType::uts, NamespaceType::mount});
    CHECK(spec.linux.uid_mappings.empty());
    CHECK(spec.linux.gid_mappings.empty());

    CHECK(destinations(spec) == std::vector<std::string>{"/proc", "/dev", "/dev/pts", "/dev/shm",
                                                         "/dev/mqueue", "/sys", "/sys/fs/cgroup"});
    CHECK(mount_at(spec, "/proc").type == "proc");
    CHECK(mount_at(spec, "/proc").options.empty());
    CHECK(mount_at(spec, "/dev").options ==
          std::vector<std::string>{"nosuid", "strictatime", "mode=755", "size=65536k"});
    CHECK(mount_at(spec, "/dev/pts").options ==
          std::vector<std::string>{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
                                   "gid=5"});
    CHECK(mount_at(spec, "/dev/shm").source == "shm");
    CHECK(mount_at(spec, "/dev/shm").options ==
          std::vector<std::string>{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"});
    CHECK(mount_at(spec, "/dev/mqueue").type == "mqueue");
    CHECK(mount_at(spec, "/sys").type == "sysfs");
    CHECK(mount_at(spec, "/sys").options ==
          std::vector<std::string>{"nosuid", "noexec", "nodev", "ro"});
    CHECK(mount_at(spec, "/sys/fs/cgroup").type == "cgroup");
    CHECK(mount_at(spec, "/sys/fs/cgroup").options ==
          std::vector<std::string>{"nosuid", "noexec", "nodev", "relatime", "ro"});

    CHECK(spec.linux.masked_paths == masked_paths);
    CHECK(spec.linux.readonly_paths == readonly_paths);
    REQUIRE(spec.linux.resources);
    REQUIRE(spec.linux.resources->devices.size() == 1);
    CHECK_FALSE(spec.linux.resources->devices[0].allow);
    CHECK(spec.linux.resources->devices[0].access == "rwm");
}

TEST_CASE("default_spec_json: the rootless variant", "[spec][default]") {
    Spec spec = parse_default(true, 1234, 5678);

    CHECK(namespace_types(spec) ==
          std::vector<NamespaceType>{NamespaceType::pid, NamespaceType::ipc, NamespaceType::uts,
                                     NamespaceType::mount, NamespaceType::user});
    REQUIRE(spec.linux.uid_mappings.size() == 1);
    CHECK(spec.linux.uid_mappings[0].container_id == 0);
    CHECK(spec.linux.uid_mappings[0].host_id == 1234);
    CHECK(spec.linux.uid_mappings[0].size == 1);
    REQUIRE(spec.linux.gid_mappings.size() == 1);
    CHECK(spec.linux.gid_mappings[0].container_id == 0);
    CHECK(spec.linux.gid_mappings[0].host_id == 5678);
    CHECK(spec.linux.gid_mappings[0].size == 1);

    CHECK(destinations(spec) ==
          std::vector<std::string>{"/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys"});
    const auto& devpts = mount_at(spec, "/dev/pts").options;
    CHECK(std::find(devpts.begin(), devpts.end(), "gid=5") == devpts.end());
    const auto& sys = mount_at(spec, "/sys");
    CHECK(sys.type == "none");
    CHECK(sys.source == "/sys");
    CHECK(sys.options == std::vector<std::string>{"rbind", "nosuid", "noexec", "nodev", "ro"});

    CHECK_FALSE(spec.linux.resources);
    CHECK(spec.linux.masked_paths == masked_paths);
    CHECK(spec.linux.readonly_paths == readonly_paths);
    CHECK(spec.process->capabilities->ambient.empty());
    CHECK(spec.process->capabilities->inheritable.empty());
    CHECK(spec.process->terminal);
}

TEST_CASE("default_spec_json: large ids map as unsigned", "[spec][default]") {
    Spec spec = parse_default(true, 4294967294U, 0);
    CHECK(spec.linux.uid_mappings[0].host_id == 4294967294U);
    CHECK(spec.linux.gid_mappings[0].host_id == 0);
}

TEST_CASE("default_spec_json: with_seccomp adds the default profile", "[spec][default]") {
    CHECK_FALSE(parse_default(false).linux.seccomp);
    CHECK_FALSE(parse_default(true).linux.seccomp);

    for (bool rootless : {false, true}) {
        INFO("rootless " << rootless);
        auto result = parse_spec(default_spec_json(rootless, 1000, 1000, true));
        INFO((result.ok() ? std::string() : result.error().message()));
        REQUIRE(result.ok());
        const auto& seccomp = result->linux.seccomp;
        REQUIRE(seccomp);
        CHECK(seccomp->default_action == "SCMP_ACT_ALLOW");
        CHECK_FALSE(seccomp->default_errno_ret);
        CHECK(seccomp->architectures ==
              std::vector<std::string>{"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
                                       "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"});
        CHECK(seccomp->flags.empty());
        CHECK(seccomp->listener_path.empty());
        REQUIRE(seccomp->syscalls.size() == 1);
        const auto& denied = seccomp->syscalls[0];
        CHECK(denied.action == "SCMP_ACT_ERRNO");
        CHECK(denied.errno_ret == std::optional<uint32_t>(EPERM));
        CHECK(denied.args.empty());
        for (const char* name : {"init_module",
                                 "finit_module",
                                 "delete_module",
                                 "kexec_load",
                                 "kexec_file_load",
                                 "reboot",
                                 "open_by_handle_at",
                                 "bpf",
                                 "perf_event_open",
                                 "userfaultfd",
                                 "keyctl",
                                 "add_key",
                                 "request_key",
                                 "settimeofday",
                                 "clock_settime",
                                 "swapon",
                                 "iopl",
                                 "ioperm",
                                 "syslog",
                                 "process_vm_writev"}) {
            INFO(name);
            CHECK(std::find(denied.names.begin(), denied.names.end(), name) != denied.names.end());
        }
        // What a root container with capabilities legitimately does stays allowed.
        for (const char* name : {"mount", "umount2", "pivot_root", "unshare", "setns", "ptrace",
                                 "name_to_handle_at", "personality", "chroot", "clone"}) {
            INFO(name);
            CHECK(std::find(denied.names.begin(), denied.names.end(), name) == denied.names.end());
        }
        // The rest of the config is unchanged.
        CHECK(result->linux.namespaces.size() == 5U);
    }
}

TEST_CASE("default_seccomp_json: a linux.seccomp object", "[spec][default]") {
    std::string text = minirun::spec::default_seccomp_json();
    REQUIRE_FALSE(text.empty());
    CHECK(text.front() == '{');
    CHECK(text.back() == '}');
    // The same object default_spec_json embeds.
    std::string spec_text = default_spec_json(false, 0, 0, true);
    std::string indented = text;
    for (size_t at = indented.find('\n'); at != std::string::npos;
         at = indented.find('\n', at + 1)) {
        indented.insert(at + 1, "\t\t");
    }
    CHECK(spec_text.find("\"seccomp\": " + indented) != std::string::npos);
}

TEST_CASE("load_spec reads <bundle>/config.json", "[spec][load]") {
    SECTION("a missing bundle") {
        auto result = load_spec("/nonexistent/mini-run-bundle");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().message() ==
              R"(bundle "/nonexistent/mini-run-bundle": No such file or directory)");
        CHECK(result.error().errno_value() == ENOENT);
    }
    SECTION("a bundle that is a file") {
        TempDir dir;
        dir.write("file", "x");
        auto result = load_spec(dir.path() + "/file");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().message() ==
              "bundle " + minirun::quoted(dir.path() + "/file") + ": Not a directory");
        CHECK(result.error().errno_value() == ENOTDIR);
    }
    SECTION("no config.json") {
        TempDir dir;
        auto result = load_spec(dir.path());
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().message() == dir.path() + "/config.json: No such file or directory");
        CHECK(result.error().errno_value() == ENOENT);
    }
    SECTION("config.json is a directory") {
        TempDir dir;
        REQUIRE(::mkdir((dir.path() + "/config.json").c_str(), 0755) == 0);
        auto result = load_spec(dir.path());
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().message() == dir.path() + "/config.json: Is a directory");
    }
    SECTION("malformed config.json names the file") {
        TempDir dir;
        dir.write("config.json", "{\"ociVersion\": ");
        auto result = load_spec(dir.path());
        REQUIRE_FALSE(result.ok());
        REQUIRE_THAT(result.error().message(),
                     StartsWith(dir.path() + "/config.json: parse error at line 1, column "));
    }
    SECTION("an invalid config.json reports the JSON path") {
        TempDir dir;
        dir.write("config.json", R"({"ociVersion": "1.0.0", "root": {"path": ""}})");
        auto result = load_spec(dir.path());
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().message() == "root.path: must not be empty");
    }
    SECTION("--config names another file, relative to the bundle or absolute") {
        TempDir dir;
        dir.write("other.json", default_spec_json(false, 0, 0));
        dir.write("config.json", "{}"); // not read
        auto relative = load_spec(dir.path(), nullptr, "other.json");
        INFO((relative.ok() ? std::string() : relative.error().message()));
        REQUIRE(relative.ok());
        CHECK(relative->root.path == "rootfs");
        auto absolute = load_spec("/", nullptr, dir.path() + "/other.json");
        REQUIRE(absolute.ok());
        auto missing = load_spec(dir.path(), nullptr, "none.json");
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().message() == dir.path() + "/none.json: No such file or directory");
    }
    SECTION("a valid bundle, with or without a trailing slash") {
        TempDir dir;
        dir.write("config.json", default_spec_json(false, 0, 0));
        for (const std::string& bundle : {dir.path(), dir.path() + "/"}) {
            auto result = load_spec(bundle);
            INFO((result.ok() ? std::string() : result.error().message()));
            REQUIRE(result.ok());
            CHECK(result->hostname == "mini-run");
            CHECK(result->mounts.size() == 7);
        }
    }
}

TEST_CASE("rules: sysctl classification", "[spec][rules]") {
    using minirun::spec::rules::classify_sysctl;
    using minirun::spec::rules::SysctlScope;
    struct Case {
        const char* name;
        SysctlScope scope;
    };
    for (const Case& c : std::vector<Case>{
             {"net.ipv4.ip_forward", SysctlScope::network},
             {"net.core.somaxconn", SysctlScope::network},
             {"net/ipv4/ip_forward", SysctlScope::network},
             {"kernel.msgmax", SysctlScope::ipc},
             {"kernel.msgmnb", SysctlScope::ipc},
             {"kernel.msgmni", SysctlScope::ipc},
             {"kernel.sem", SysctlScope::ipc},
             {"kernel.shmall", SysctlScope::ipc},
             {"kernel.shmmax", SysctlScope::ipc},
             {"kernel.shmmni", SysctlScope::ipc},
             {"kernel.shm_rmid_forced", SysctlScope::ipc},
             {"fs.mqueue.msg_max", SysctlScope::ipc},
             {"fs/mqueue/queues_max", SysctlScope::ipc},
             {"kernel.hostname", SysctlScope::uts},
             {"kernel.domainname", SysctlScope::uts},
             {"user.max_user_namespaces", SysctlScope::user},
             {"user/max_net_namespaces", SysctlScope::user},
             {"user.max_inotify_watches", SysctlScope::user},
             {"users.max_user_namespaces", SysctlScope::not_private},
             {"user", SysctlScope::not_private},
             {"vm.swappiness", SysctlScope::not_private},
             {"kernel.pid_max", SysctlScope::not_private},
             {"kernel.shmmaxx", SysctlScope::not_private},
             {"network.x", SysctlScope::not_private},
             {"fs.mqueue", SysctlScope::not_private},
             {"", SysctlScope::not_private},
         }) {
        INFO(c.name);
        CHECK(classify_sysctl(c.name) == c.scope);
    }
}

TEST_CASE("rules: names of rlimits, capabilities and seccomp constants", "[spec][rules]") {
    namespace rules = minirun::spec::rules;
    CHECK(rules::rlimit_resource("RLIMIT_AS") == std::optional<int>(RLIMIT_AS));
    CHECK(rules::rlimit_resource("RLIMIT_CORE") == std::optional<int>(RLIMIT_CORE));
    CHECK(rules::rlimit_resource("RLIMIT_CPU") == std::optional<int>(RLIMIT_CPU));
    CHECK(rules::rlimit_resource("RLIMIT_DATA") == std::optional<int>(RLIMIT_DATA));
    CHECK(rules::rlimit_resource("RLIMIT_FSIZE") == std::optional<int>(RLIMIT_FSIZE));
    CHECK(rules::rlimit_resource("RLIMIT_LOCKS") == std::optional<int>(RLIMIT_LOCKS));
    CHECK(rules::rlimit_resource("RLIMIT_MEMLOCK") == std::optional<int>(RLIMIT_MEMLOCK));
    CHECK(rules::rlimit_resource("RLIMIT_MSGQUEUE") == std::optional<int>(RLIMIT_MSGQUEUE));
    CHECK(rules::rlimit_resource("RLIMIT_NICE") == std::optional<int>(RLIMIT_NICE));
    CHECK(rules::rlimit_resource("RLIMIT_NOFILE") == std::optional<int>(RLIMIT_NOFILE));
    CHECK(rules::rlimit_resource("RLIMIT_NPROC") == std::optional<int>(RLIMIT_NPROC));
    CHECK(rules::rlimit_resource("RLIMIT_RSS") == std::optional<int>(RLIMIT_RSS));
    CHECK(rules::rlimit_resource("RLIMIT_RTPRIO") == std::optional<int>(RLIMIT_RTPRIO));
    CHECK(rules::rlimit_resource("RLIMIT_RTTIME") == std::optional<int>(RLIMIT_RTTIME));
    CHECK(rules::rlimit_resource("RLIMIT_SIGPENDING") == std::optional<int>(RLIMIT_SIGPENDING));
    CHECK(rules::rlimit_resource("RLIMIT_STACK") == std::optional<int>(RLIMIT_STACK));
    CHECK_FALSE(rules::rlimit_resource("NOFILE"));
    CHECK_FALSE(rules::rlimit_resource("rlimit_nofile"));

    for (const char* arch :
         {"SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32", "SCMP_ARCH_ARM",
          "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS", "SCMP_ARCH_MIPS64", "SCMP_ARCH_MIPS64N32",
          "SCMP_ARCH_MIPSEL", "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
          "SCMP_ARCH_PPC64", "SCMP_ARCH_PPC64LE", "SCMP_ARCH_S390", "SCMP_ARCH_S390X",
          "SCMP_ARCH_PARISC", "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64"}) {
        INFO(arch);
        CHECK(rules::is_seccomp_arch(arch));
    }
    CHECK_FALSE(rules::is_seccomp_arch("SCMP_ARCH_NATIVE"));
    CHECK_FALSE(rules::is_seccomp_arch("x86_64"));
    CHECK_FALSE(rules::is_seccomp_arch("SCMP_ARCH_"));

    CHECK(rules::is_seccomp_action("SCMP_ACT_KILL_PROCESS"));
    CHECK_FALSE(rules::is_seccomp_action("SCMP_ACT_kill"));
    CHECK(rules::is_seccomp_operator("SCMP_CMP_MASKED_EQ"));
    CHECK_FALSE(rules::is_seccomp_operator("SCMP_CMP_MASKED_NE"));
    CHECK(rules::is_seccomp_flag("SECCOMP_FILTER_FLAG_SPEC_ALLOW"));
    CHECK_FALSE(rules::is_seccomp_flag("SECCOMP_FILTER_FLAG_NEW_LISTENER"));
}

TEST_CASE("rules: ociVersion", "[spec][rules]") {
    using minirun::spec::rules::oci_version_problem;
    for (const char* ok : {"1.0.0", "1.0.2-dev", "1.1.0", "1.2.0-rc.1", "1.0", "1"}) {
        INFO(ok);
        CHECK_FALSE(oci_version_problem(ok));
    }
    for (const char* bad : {"", "0.9.0", "2.0.0", "10.0", "v1.0.0", "1x", ".1", "one"}) {
        INFO(bad);
        CHECK(oci_version_problem(bad));
    }
}

TEST_CASE("default_spec_json: what `runc spec` 1.3.6 writes, but for the hostname",
          "[spec][default]") {
    // runc 1.3.6's `runc spec` (as Debian's runc 1.3.6 binary writes it on this host), minus
    // "hostname" ("runc" there). Bundles and scripts written for runc start from this config
    // (runc's own integration suite does). Since runc 1.1: no ambient set, the runtime-spec
    // version it is built with, a cgroup namespace on cgroup v2 (example.go).
    const char* runc_spec = R"({
	"ociVersion": "1.2.1",
	"process": {
		"terminal": true,
		"user": {"uid": 0, "gid": 0},
		"args": ["sh"],
		"env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"],
		"cwd": "/",
		"capabilities": {
			"bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
			"effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
			"permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
		},
		"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
		"noNewPrivileges": true
	},
	"root": {"path": "rootfs", "readonly": true},
	"mounts": [
		{"destination": "/proc", "type": "proc", "source": "proc"},
		{"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
		 "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
		{"destination": "/dev/pts", "type": "devpts", "source": "devpts",
		 "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
		{"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
		 "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
		{"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
		 "options": ["nosuid", "noexec", "nodev"]},
		{"destination": "/sys", "type": "sysfs", "source": "sysfs",
		 "options": ["nosuid", "noexec", "nodev", "ro"]},
		{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
		 "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}
	],
	"linux": {
		"resources": {"devices": [{"allow": false, "access": "rwm"}]},
		"namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"},
		               {"type": "mount"}],
		"maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
		                "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
		                "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
		"readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
	}
})";
    nlohmann::json runc = nlohmann::json::parse(runc_spec);
    SECTION("a cgroup v1 or hybrid host") {
        nlohmann::json ours = nlohmann::json::parse(default_spec_json(false, 0, 0));
        CHECK(ours.at("hostname") == "mini-run");
        ours.erase("hostname");
        CHECK(ours == runc);
    }
    SECTION("a cgroup v2 host: a cgroup namespace too") {
        nlohmann::json ours = nlohmann::json::parse(default_spec_json(false, 0, 0, false, true));
        ours.erase("hostname");
        runc["linux"]["namespaces"].push_back({{"type", "cgroup"}});
        CHECK(ours == runc);
    }
    SECTION("rootless on cgroup v2: the cgroup namespace stays, before the user namespace") {
        Spec spec = parse_spec(default_spec_json(true, 1000, 1000, false, true)).value();
        CHECK(namespace_types(spec) ==
              std::vector<NamespaceType>{NamespaceType::pid, NamespaceType::ipc, NamespaceType::uts,
                                         NamespaceType::mount, NamespaceType::cgroup,
                                         NamespaceType::user});
    }
}
