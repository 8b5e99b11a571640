// config.json parsing: every field into the model, and every class of error with its path.
#include "minirun/spec.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include <optional>
#include <string>
#include <vector>

using Catch::Matchers::StartsWith;
using minirun::spec::NamespaceType;
using minirun::spec::parse_spec;
using minirun::spec::Spec;
using Json = nlohmann::json;

namespace {

// A config that sets every field mini-run models, with values that differ from the defaults.
const char* const full_config = R"json({
  "ociVersion": "1.1.0",
  "process": {
    "terminal": true,
    "consoleSize": {"height": 25, "width": 80},
    "user": {"uid": 1000, "gid": 1001, "umask": 18, "additionalGids": [5, 6]},
    "args": ["/bin/sh", "-c", "echo hi"],
    "env": ["PATH=/usr/bin:/bin", "EMPTY="],
    "cwd": "/work",
    "capabilities": {
      "bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SYS_ADMIN"],
      "effective": ["CAP_KILL"],
      "permitted": ["CAP_KILL", "CAP_CHOWN"],
      "inheritable": ["CAP_CHOWN"],
      "ambient": ["CAP_NET_RAW"]
    },
    "rlimits": [
      {"type": "RLIMIT_NOFILE", "soft": 1024, "hard": 4096},
      {"type": "RLIMIT_CORE", "soft": 0, "hard": 18446744073709551615}
    ],
    "noNewPrivileges": true,
    "oomScoreAdj": -500,
    "apparmorProfile": "mini-run-default",
    "selinuxLabel": "system_u:system_r:container_t:s0"
  },
  "root": {"path": "rootfs", "readonly": true},
  "hostname": "box",
  "domainname": "example.org",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/data", "type": "bind", "source": "/srv/data", "options": ["rbind", "ro"]},
    {"destination": "tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]},
    {"destination": "/shared", "type": "none", "source": "/srv/shared",
     "options": ["rbind", "ridmap"],
     "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
     "gidMappings": [{"containerID": 0, "hostID": 2000, "size": 2},
                     {"containerID": 10, "hostID": 3000, "size": 5}]}
  ],
  "hooks": {
    "prestart": [{"path": "/usr/bin/fix-mounts", "args": ["fix-mounts", "arg1"],
                  "env": ["KEY=value"], "timeout": 5}],
    "createRuntime": [{"path": "/bin/create-runtime"}],
    "createContainer": [{"path": "/bin/create-container"}],
    "startContainer": [{"path": "/bin/start-container"}],
    "poststart": [{"path": "/bin/poststart"}],
    "poststop": [{"path": "/bin/poststop", "timeout": 1}]
  },
  "annotations": {"com.example.key": "value", "org.empty": ""},
  "linux": {
    "namespaces": [
      {"type": "pid"},
      {"type": "network", "path": "/var/run/netns/test"},
      {"type": "mount"},
      {"type": "ipc"},
      {"type": "uts"},
      {"type": "user"},
      {"type": "cgroup"},
      {"type": "time"}
    ],
    "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
    "gidMappings": [{"containerID": 0, "hostID": 200000, "size": 65536}],
    "timeOffsets": {"monotonic": {"secs": -3600, "nanosecs": 500}, "boottime": {"secs": 86400}},
    "devices": [
      {"type": "c", "path": "/dev/fuse", "major": 10, "minor": 229, "fileMode": 438,
       "uid": 0, "gid": 5},
      {"type": "p", "path": "/dev/myfifo"}
    ],
    "cgroupsPath": "/mini-run/test",
    "resources": {
      "devices": [
        {"allow": false, "access": "rwm"},
        {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rw"}
      ],
      "memory": {"limit": 536870912, "reservation": 268435456, "swap": 1073741824,
                 "kernel": -1, "kernelTCP": -1, "swappiness": 60, "disableOOMKiller": false,
                 "useHierarchy": true, "checkBeforeUpdate": true},
      "cpu": {"shares": 1024, "quota": 1000000, "burst": 500000, "period": 500000,
              "realtimeRuntime": 950000, "realtimePeriod": 1000000, "cpus": "2-3",
              "mems": "0-7", "idle": 1},
      "pids": {"limit": 32771},
      "blockIO": {
        "weight": 10, "leafWeight": 20,
        "weightDevice": [{"major": 8, "minor": 0, "weight": 500, "leafWeight": 300},
                         {"major": 8, "minor": 16, "weight": 500}],
        "throttleReadBpsDevice": [{"major": 8, "minor": 0, "rate": 600}],
        "throttleWriteBpsDevice": [{"major": 8, "minor": 0, "rate": 700}],
        "throttleReadIOPSDevice": [{"major": 8, "minor": 16, "rate": 300}],
        "throttleWriteIOPSDevice": [{"major": 8, "minor": 16, "rate": 400}]
      },
      "hugepageLimits": [{"pageSize": "2MB", "limit": 209715200},
                         {"pageSize": "64KB", "limit": 1000000}],
      "network": {"classID": 1048577, "priorities": [{"name": "eth0", "priority": 500},
                                                     {"name": "eth1", "priority": 1000}]},
      "rdma": {"mlx5_1": {"hcaHandles": 3, "hcaObjects": 10000}, "rxe3": {"hcaObjects": 7}},
      "unified": {"io.max": "259:0 rbps=2097152", "memory.high": "max"}
    },
    "seccomp": {
      "defaultAction": "SCMP_ACT_ERRNO",
      "defaultErrnoRet": 1,
      "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_AARCH64"],
      "flags": ["SECCOMP_FILTER_FLAG_LOG"],
      "listenerPath": "/run/seccomp-agent.sock",
      "listenerMetadata": "meta",
      "syscalls": [
        {"names": ["read", "write", "no_such_syscall"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"},
                  {"index": 1, "value": 255, "valueTwo": 8, "op": "SCMP_CMP_MASKED_EQ"}]},
        {"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
        {"names": ["ioctl"], "action": "SCMP_ACT_NOTIFY"}
      ]
    },
    "maskedPaths": ["/proc/kcore", "/sys/firmware"],
    "readonlyPaths": ["/proc/sys"],
    "rootfsPropagation": "rslave",
    "sysctl": {"net.ipv4.ip_forward": "1", "kernel.shmmax": "8192", "fs.mqueue.msg_max": "20"},
    "mountLabel": "system_u:object_r:container_file_t:s0",
    "personality": {"domain": "LINUX32"}
  }
})json";

const char* const minimal_config = R"json({
  "ociVersion": "1.0.2-dev",
  "root": {"path": "rootfs"},
  "linux": {"namespaces": [{"type": "mount"}]}
})json";

// A JSON-pointer edit: set `value` (JSON text) at `pointer`, or remove it when value is null.
struct Edit {
    std::string pointer;
    const char* value = nullptr;
};

void apply(Json& document, const Edit& edit) {
    Json::json_pointer pointer(edit.pointer);
    if (edit.value != nullptr) {
        document[pointer] = Json::parse(edit.value);
        return;
    }
    Json& parent = document[pointer.parent_pointer()];
    if (parent.is_array()) {
        parent.erase(std::stoul(pointer.back()));
    } else {
        parent.erase(pointer.back());
    }
}

std::string edited(const char* base, const std::vector<Edit>& edits) {
    Json document = Json::parse(base);
    for (const Edit& edit : edits) {
        apply(document, edit);
    }
    return document.dump();
}

// The error message parse_spec gives for the edited full config ("" if it parses).
std::string error_after(const std::vector<Edit>& edits) {
    auto result = parse_spec(edited(full_config, edits));
    return result.ok() ? std::string() : result.error().message();
}

Spec parse_ok(const std::string& text) {
    auto result = parse_spec(text);
    INFO((result.ok() ? std::string() : result.error().message()));
    REQUIRE(result.ok());
    return std::move(result).value();
}

} // namespace

TEST_CASE("the full config parses into every field of the model", "[spec]") {
    Spec spec = parse_ok(full_config);

    CHECK(spec.oci_version == "1.1.0");
    CHECK(spec.root.path == "rootfs");
    CHECK(spec.root.readonly);
    CHECK(spec.hostname == "box");
    CHECK(spec.domainname == "example.org");

    REQUIRE(spec.process);
    const auto& process = *spec.process;
    CHECK(process.terminal);
    REQUIRE(process.console_size);
    CHECK(process.console_size->height == 25);
    CHECK(process.console_size->width == 80);
    CHECK(process.user.uid == 1000);
    CHECK(process.user.gid == 1001);
    CHECK(process.user.umask == std::optional<uint32_t>(18));
    CHECK(process.user.additional_gids == std::vector<uint32_t>{5, 6});
    CHECK(process.args == std::vector<std::string>{"/bin/sh", "-c", "echo hi"});
    CHECK(process.env == std::vector<std::string>{"PATH=/usr/bin:/bin", "EMPTY="});
    CHECK(process.cwd == "/work");
    REQUIRE(process.capabilities);
    CHECK(process.capabilities->bounding == std::vector<std::string>{"CAP_CHOWN", "CAP_KILL",
                                                                     "CAP_NET_BIND_SERVICE",
                                                                     "CAP_SYS_ADMIN"});
    CHECK(process.capabilities->effective == std::vector<std::string>{"CAP_KILL"});
    CHECK(process.capabilities->permitted == std::vector<std::string>{"CAP_KILL", "CAP_CHOWN"});
    CHECK(process.capabilities->inheritable == std::vector<std::string>{"CAP_CHOWN"});
    CHECK(process.capabilities->ambient == std::vector<std::string>{"CAP_NET_RAW"});
    REQUIRE(process.rlimits.size() == 2);
    CHECK(process.rlimits[0].type == "RLIMIT_NOFILE");
    CHECK(process.rlimits[0].resource == RLIMIT_NOFILE);
    CHECK(process.rlimits[0].soft == 1024);
    CHECK(process.rlimits[0].hard == 4096);
    CHECK(process.rlimits[1].resource == RLIMIT_CORE);
    CHECK(process.rlimits[1].soft == 0);
    CHECK(process.rlimits[1].hard == UINT64_MAX);
    CHECK(process.no_new_privileges);
    CHECK(process.oom_score_adj == std::optional<int>(-500));
    CHECK(process.apparmor_profile == "mini-run-default");
    CHECK(process.selinux_label == "system_u:system_r:container_t:s0");

    REQUIRE(spec.mounts.size() == 4);
    CHECK(spec.mounts[0].destination == "/proc");
    CHECK(spec.mounts[0].type == "proc");
    CHECK(spec.mounts[0].source == "proc");
    CHECK(spec.mounts[0].options.empty());
    CHECK(spec.mounts[1].destination == "/data");
    CHECK(spec.mounts[1].type == "bind");
    CHECK(spec.mounts[1].source == "/srv/data");
    CHECK(spec.mounts[1].options == std::vector<std::string>{"rbind", "ro"});
    CHECK(spec.mounts[2].destination == "/tmp");
    CHECK(spec.mounts[0].uid_mappings.empty());
    REQUIRE(spec.mounts[3].uid_mappings.size() == 1);
    CHECK(spec.mounts[3].uid_mappings[0].host_id == 1000);
    REQUIRE(spec.mounts[3].gid_mappings.size() == 2);
    CHECK(spec.mounts[3].gid_mappings[1].container_id == 10);
    CHECK(spec.mounts[3].gid_mappings[1].host_id == 3000);
    CHECK(spec.mounts[3].gid_mappings[1].size == 5);

    REQUIRE(spec.hooks.prestart.size() == 1);
    CHECK(spec.hooks.prestart[0].path == "/usr/bin/fix-mounts");
    CHECK(spec.hooks.prestart[0].args == std::vector<std::string>{"fix-mounts", "arg1"});
    CHECK(spec.hooks.prestart[0].env == std::vector<std::string>{"KEY=value"});
    CHECK(spec.hooks.prestart[0].timeout == std::optional<int>(5));
    REQUIRE(spec.hooks.create_runtime.size() == 1);
    CHECK(spec.hooks.create_runtime[0].path == "/bin/create-runtime");
    CHECK_FALSE(spec.hooks.create_runtime[0].timeout);
    REQUIRE(spec.hooks.create_container.size() == 1);
    CHECK(spec.hooks.create_container[0].path == "/bin/create-container");
    REQUIRE(spec.hooks.start_container.size() == 1);
    CHECK(spec.hooks.start_container[0].path == "/bin/start-container");
    REQUIRE(spec.hooks.poststart.size() == 1);
    CHECK(spec.hooks.poststart[0].path == "/bin/poststart");
    REQUIRE(spec.hooks.poststop.size() == 1);
    CHECK(spec.hooks.poststop[0].timeout == std::optional<int>(1));

    CHECK(spec.annotations ==
          std::map<std::string, std::string>{{"com.example.key", "value"}, {"org.empty", ""}});

    const auto& linux = spec.linux;
    REQUIRE(linux.namespaces.size() == 8);
    std::vector<NamespaceType> types;
    for (const auto& ns : linux.namespaces) {
        types.push_back(ns.type);
    }
    CHECK(types == std::vector<NamespaceType>{NamespaceType::pid, NamespaceType::network,
                                              NamespaceType::mount, NamespaceType::ipc,
                                              NamespaceType::uts, NamespaceType::user,
                                              NamespaceType::cgroup, NamespaceType::time});
    CHECK(linux.namespaces[0].path.empty());
    CHECK(linux.namespaces[1].path == "/var/run/netns/test");

    REQUIRE(linux.uid_mappings.size() == 1);
    CHECK(linux.uid_mappings[0].container_id == 0);
    CHECK(linux.uid_mappings[0].host_id == 100000);
    CHECK(linux.uid_mappings[0].size == 65536);
    REQUIRE(linux.gid_mappings.size() == 1);
    CHECK(linux.gid_mappings[0].host_id == 200000);

    REQUIRE(linux.time_offsets.size() == 2);
    CHECK(linux.time_offsets.at("monotonic").secs == -3600);
    CHECK(linux.time_offsets.at("monotonic").nanosecs == 500);
    CHECK(linux.time_offsets.at("boottime").secs == 86400);
    CHECK(linux.time_offsets.at("boottime").nanosecs == 0);

    REQUIRE(linux.devices.size() == 2);
    CHECK(linux.devices[0].type == 'c');
    CHECK(linux.devices[0].path == "/dev/fuse");
    CHECK(linux.devices[0].major == 10);
    CHECK(linux.devices[0].minor == 229);
    CHECK(linux.devices[0].file_mode == std::optional<uint32_t>(438));
    CHECK(linux.devices[0].uid == std::optional<uint32_t>(0));
    CHECK(linux.devices[0].gid == std::optional<uint32_t>(5));
    CHECK(linux.devices[1].type == 'p');
    CHECK(linux.devices[1].path == "/dev/myfifo");
    CHECK_FALSE(linux.devices[1].file_mode);

    CHECK(linux.cgroups_path == "/mini-run/test");

    REQUIRE(linux.resources);
    const auto& resources = *linux.resources;
    REQUIRE(resources.devices.size() == 2);
    CHECK_FALSE(resources.devices[0].allow);
    CHECK(resources.devices[0].type == "a");
    CHECK_FALSE(resources.devices[0].major);
    CHECK_FALSE(resources.devices[0].minor);
    CHECK(resources.devices[0].access == "rwm");
    CHECK(resources.devices[1].allow);
    CHECK(resources.devices[1].type == "c");
    CHECK(resources.devices[1].major == std::optional<int64_t>(10));
    CHECK(resources.devices[1].minor == std::optional<int64_t>(229));
    CHECK(resources.devices[1].access == "rw");

    REQUIRE(resources.memory);
    CHECK(resources.memory->limit == std::optional<int64_t>(536870912));
    CHECK(resources.memory->reservation == std::optional<int64_t>(268435456));
    CHECK(resources.memory->swap == std::optional<int64_t>(1073741824));
    CHECK(resources.memory->kernel == std::optional<int64_t>(-1));
    CHECK(resources.memory->kernel_tcp == std::optional<int64_t>(-1));
    CHECK(resources.memory->swappiness == std::optional<uint64_t>(60));
    CHECK(resources.memory->disable_oom_killer == std::optional<bool>(false));
    CHECK(resources.memory->use_hierarchy == std::optional<bool>(true));
    CHECK(resources.memory->check_before_update == std::optional<bool>(true));

    REQUIRE(resources.cpu);
    CHECK(resources.cpu->shares == std::optional<uint64_t>(1024));
    CHECK(resources.cpu->quota == std::optional<int64_t>(1000000));
    CHECK(resources.cpu->burst == std::optional<uint64_t>(500000));
    CHECK(resources.cpu->period == std::optional<uint64_t>(500000));
    CHECK(resources.cpu->realtime_runtime == std::optional<int64_t>(950000));
    CHECK(resources.cpu->realtime_period == std::optional<uint64_t>(1000000));
    CHECK(resources.cpu->cpus == "2-3");
    CHECK(resources.cpu->mems == "0-7");
    CHECK(resources.cpu->idle == std::optional<int64_t>(1));

    REQUIRE(resources.pids);
    CHECK(resources.pids->limit == 32771);

    REQUIRE(resources.block_io);
    const auto& block_io = *resources.block_io;
    CHECK(block_io.weight == std::optional<uint16_t>(10));
    CHECK(block_io.leaf_weight == std::optional<uint16_t>(20));
    REQUIRE(block_io.weight_device.size() == 2);
    CHECK(block_io.weight_device[0].major == 8);
    CHECK(block_io.weight_device[0].minor == 0);
    CHECK(block_io.weight_device[0].weight == std::optional<uint16_t>(500));
    CHECK(block_io.weight_device[0].leaf_weight == std::optional<uint16_t>(300));
    CHECK(block_io.weight_device[1].minor == 16);
    CHECK_FALSE(block_io.weight_device[1].leaf_weight);
    REQUIRE(block_io.throttle_read_bps_device.size() == 1);
    CHECK(block_io.throttle_read_bps_device[0].rate == 600);
    REQUIRE(block_io.throttle_write_bps_device.size() == 1);
    CHECK(block_io.throttle_write_bps_device[0].rate == 700);
    REQUIRE(block_io.throttle_read_iops_device.size() == 1);
    CHECK(block_io.throttle_read_iops_device[0].minor == 16);
    CHECK(block_io.throttle_read_iops_device[0].rate == 300);
    REQUIRE(block_io.throttle_write_iops_device.size() == 1);
    CHECK(block_io.throttle_write_iops_device[0].rate == 400);

    REQUIRE(resources.hugepage_limits.size() == 2);
    CHECK(resources.hugepage_limits[0].page_size == "2MB");
    CHECK(resources.hugepage_limits[0].limit == 209715200);
    CHECK(resources.hugepage_limits[1].page_size == "64KB");

    REQUIRE(resources.network);
    CHECK(resources.network->class_id == std::optional<uint32_t>(1048577));
    REQUIRE(resources.network->priorities.size() == 2);
    CHECK(resources.network->priorities[1].name == "eth1");
    CHECK(resources.network->priorities[1].priority == 1000);

    REQUIRE(resources.rdma.size() == 2);
    CHECK(resources.rdma.at("mlx5_1").hca_handles == std::optional<uint32_t>(3));
    CHECK(resources.rdma.at("mlx5_1").hca_objects == std::optional<uint32_t>(10000));
    CHECK_FALSE(resources.rdma.at("rxe3").hca_handles);
    CHECK(resources.rdma.at("rxe3").hca_objects == std::optional<uint32_t>(7));
    CHECK(resources.unified == std::map<std::string, std::string>{{"io.max", "259:0 rbps=2097152"},
                                                                  {"memory.high", "max"}});

    REQUIRE(linux.seccomp);
    const auto& seccomp = *linux.seccomp;
    CHECK(seccomp.default_action == "SCMP_ACT_ERRNO");
    CHECK(seccomp.default_errno_ret == std::optional<uint32_t>(1));
    CHECK(seccomp.architectures ==
          std::vector<std::string>{"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_AARCH64"});
    CHECK(seccomp.flags == std::vector<std::string>{"SECCOMP_FILTER_FLAG_LOG"});
    CHECK(seccomp.listener_path == "/run/seccomp-agent.sock");
    CHECK(seccomp.listener_metadata == "meta");
    REQUIRE(seccomp.syscalls.size() == 4);
    CHECK(seccomp.syscalls[0].names ==
          std::vector<std::string>{"read", "write", "no_such_syscall"});
    CHECK(seccomp.syscalls[0].action == "SCMP_ACT_ALLOW");
    CHECK_FALSE(seccomp.syscalls[0].errno_ret);
    REQUIRE(seccomp.syscalls[1].args.size() == 2);
    CHECK(seccomp.syscalls[1].args[0].index == 0);
    CHECK(seccomp.syscalls[1].args[0].value == 8);
    CHECK(seccomp.syscalls[1].args[0].value_two == 0);
    CHECK(seccomp.syscalls[1].args[0].op == "SCMP_CMP_EQ");
    CHECK(seccomp.syscalls[1].args[1].index == 1);
    CHECK(seccomp.syscalls[1].args[1].value == 255);
    CHECK(seccomp.syscalls[1].args[1].value_two == 8);
    CHECK(seccomp.syscalls[1].args[1].op == "SCMP_CMP_MASKED_EQ");
    CHECK(seccomp.syscalls[2].errno_ret == std::optional<uint32_t>(38));
    CHECK(seccomp.syscalls[3].action == "SCMP_ACT_NOTIFY");

    CHECK(linux.masked_paths == std::vector<std::string>{"/proc/kcore", "/sys/firmware"});
    CHECK(linux.readonly_paths == std::vector<std::string>{"/proc/sys"});
    CHECK(linux.rootfs_propagation == "rslave");
    CHECK(linux.sysctl == std::map<std::string, std::string>{{"net.ipv4.ip_forward", "1"},
                                                             {"kernel.shmmax", "8192"},
                                                             {"fs.mqueue.msg_max", "20"}});
    CHECK(linux.mount_label == "system_u:object_r:container_file_t:s0");
    REQUIRE(linux.personality);
    CHECK(linux.personality->domain == "LINUX32");
    CHECK(linux.personality->flags.empty());
}

TEST_CASE("a minimal config parses with the model's defaults", "[spec]") {
    Spec spec = parse_ok(minimal_config);
    CHECK(spec.oci_version == "1.0.2-dev");
    CHECK_FALSE(spec.process);
    CHECK(spec.root.path == "rootfs");
    CHECK_FALSE(spec.root.readonly);
    CHECK(spec.hostname.empty());
    CHECK(spec.mounts.empty());
    CHECK(spec.hooks.prestart.empty());
    CHECK(spec.annotations.empty());
    REQUIRE(spec.linux.namespaces.size() == 1);
    CHECK(spec.linux.namespaces[0].type == NamespaceType::mount);
    CHECK_FALSE(spec.linux.resources);
    CHECK_FALSE(spec.linux.seccomp);
    CHECK_FALSE(spec.linux.personality);
    CHECK(spec.linux.rootfs_propagation.empty());
}

TEST_CASE("process defaults: cwd, user, terminal", "[spec]") {
    SECTION("a missing cwd reads as /") {
        Spec spec = parse_ok(edited(minimal_config, {{"/process", R"({"args": ["sh"]})"}}));
        REQUIRE(spec.process);
        CHECK(spec.process->cwd == "/");
        CHECK(spec.process->user.uid == 0);
        CHECK(spec.process->user.gid == 0);
        CHECK_FALSE(spec.process->user.umask);
        CHECK_FALSE(spec.process->terminal);
        CHECK_FALSE(spec.process->capabilities);
        CHECK_FALSE(spec.process->oom_score_adj);
        CHECK(spec.process->env.empty());
    }
    SECTION("an empty cwd, as Go writes an unset one, reads as /") {
        Spec spec =
            parse_ok(edited(minimal_config, {{"/process", R"({"args": ["sh"], "cwd": ""})"}}));
        CHECK(spec.process->cwd == "/");
    }
}

namespace {

struct ErrorCase {
    std::vector<Edit> edits;
    std::string expected;
};

// One edit of the full config per line, and the exact message it must produce.
const std::vector<ErrorCase> error_cases = {
    // Top level.
    {{{"/ociVersion"}}, "ociVersion: is required"},
    {{{"/ociVersion", "2"}}, "ociVersion: expected a string, got 2"},
    {{{"/ociVersion", R"("")"}}, "ociVersion: must not be empty"},
    {{{"/ociVersion", R"("2.0.0")"}},
     R"(ociVersion: unsupported major version in "2.0.0" (mini-run implements runtime-spec 1.x))"},
    {{{"/ociVersion", R"("10.1")"}},
     R"(ociVersion: unsupported major version in "10.1" (mini-run implements runtime-spec 1.x))"},
    {{{"/ociVersion", R"("v1.0")"}}, R"(ociVersion: not a version: "v1.0" (expected 1.x.y))"},
    {{{"/ociVersion", R"("1x")"}}, R"(ociVersion: not a version: "1x" (expected 1.x.y))"},
    {{{"/root"}}, "root: is required"},
    {{{"/root", R"("rootfs")"}}, "root: expected an object, got string"},
    {{{"/root/path"}}, "root.path: is required"},
    {{{"/root/path", "null"}}, "root.path: is required"},
    {{{"/root/path", R"("")"}}, "root.path: must not be empty"},
    {{{"/root/readonly", R"("yes")"}}, "root.readonly: expected a boolean, got string"},
    {{{"/hostname", "5"}}, "hostname: expected a string, got 5"},
    {{{"/hostname", R"("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")"}},
     "hostname: must be at most 64 bytes, got 65"},
    {{{"/domainname", "[]"}}, "domainname: expected a string, got array"},
    {{{"/annotations", "[]"}}, "annotations: expected an object, got array"},
    {{{"/annotations/com.example.key", "1"}},
     R"(annotations."com.example.key": expected a string, got 1)"},
    {{{"/annotations/", R"("x")"}}, R"(annotations."": key must not be empty)"},

    // process.
    {{{"/process", "[]"}}, "process: expected an object, got array"},
    {{{"/process/args"}}, "process.args: is required"},
    {{{"/process/args", "[]"}}, "process.args: must not be empty"},
    {{{"/process/args", R"("sh")"}}, "process.args: expected an array, got string"},
    {{{"/process/args/1", "7"}}, "process.args[1]: expected a string, got 7"},
    {{{"/process/args/0", R"("a\u0000b")"}}, "process.args[0]: must not contain a NUL byte"},
    {{{"/process/cwd", R"("tmp")"}}, R"(process.cwd: must be an absolute path, got "tmp")"},
    {{{"/process/cwd", "1"}}, "process.cwd: expected a string, got 1"},
    {{{"/process/env/1", R"("FOO")"}}, R"(process.env[1]: expected NAME=value, got "FOO")"},
    {{{"/process/env/0", R"("=x")"}}, R"(process.env[0]: expected NAME=value, got "=x")"},
    {{{"/process/terminal", "1"}}, "process.terminal: expected a boolean, got 1"},
    {{{"/process/consoleSize/width"}}, "process.consoleSize.width: is required"},
    {{{"/process/consoleSize/height", "-1"}},
     "process.consoleSize.height: expected an unsigned 32-bit integer, got -1"},
    {{{"/process/user", "0"}}, "process.user: expected an object, got 0"},
    {{{"/process/user/uid", R"("0")"}},
     "process.user.uid: expected an unsigned 32-bit integer, got string"},
    {{{"/process/user/uid", "-1"}},
     "process.user.uid: expected an unsigned 32-bit integer, got -1"},
    {{{"/process/user/gid", "4294967296"}},
     "process.user.gid: expected an unsigned 32-bit integer, got 4294967296"},
    {{{"/process/user/gid", "1.5"}},
     "process.user.gid: expected an unsigned 32-bit integer, got 1.5"},
    {{{"/process/user/gid", "true"}},
     "process.user.gid: expected an unsigned 32-bit integer, got boolean"},
    {{{"/process/user/umask", "1024"}}, "process.user.umask: must be at most 0777 (511), got 1024"},
    {{{"/process/user/additionalGids/1", "-5"}},
     "process.user.additionalGids[1]: expected an unsigned 32-bit integer, got -5"},
    {{{"/process/capabilities", "[]"}}, "process.capabilities: expected an object, got array"},
    {{{"/process/capabilities/effective", R"("CAP_KILL")"}},
     "process.capabilities.effective: expected an array, got string"},
    {{{"/process/capabilities/permitted/1", "21"}},
     "process.capabilities.permitted[1]: expected a string, got 21"},
    {{{"/process/rlimits/1/type", R"("RLIMIT_FOO")"}},
     R"(process.rlimits[1].type: unknown rlimit "RLIMIT_FOO")"},
    {{{"/process/rlimits/1/type", R"("RLIMIT_NOFILE")"}},
     R"(process.rlimits[1].type: duplicate rlimit "RLIMIT_NOFILE" (also at process.rlimits[0]))"},
    {{{"/process/rlimits/0/type"}}, "process.rlimits[0].type: is required"},
    {{{"/process/rlimits/0/soft", "8192"}},
     "process.rlimits[0]: soft limit 8192 is above the hard limit 4096"},
    {{{"/process/rlimits/0/hard"}}, "process.rlimits[0].hard: is required"},
    {{{"/process/rlimits/0/soft", "-1"}},
     "process.rlimits[0].soft: expected an unsigned 64-bit integer, got -1"},
    {{{"/process/rlimits", "{}"}}, "process.rlimits: expected an array, got object"},
    {{{"/process/noNewPrivileges", R"("true")"}},
     "process.noNewPrivileges: expected a boolean, got string"},
    {{{"/process/oomScoreAdj", "1001"}},
     "process.oomScoreAdj: must be between -1000 and 1000, got 1001"},
    {{{"/process/oomScoreAdj", "-1001"}},
     "process.oomScoreAdj: must be between -1000 and 1000, got -1001"},
    {{{"/process/oomScoreAdj", "3000000000"}},
     "process.oomScoreAdj: expected a 32-bit integer, got 3000000000"},
    {{{"/process/apparmorProfile", "{}"}},
     "process.apparmorProfile: expected a string, got object"},
    {{{"/process/selinuxLabel", "false"}}, "process.selinuxLabel: expected a string, got boolean"},

    // mounts.
    {{{"/mounts", "{}"}}, "mounts: expected an array, got object"},
    {{{"/mounts/1", R"("/data")"}}, "mounts[1]: expected an object, got string"},
    {{{"/mounts/1/destination"}}, "mounts[1].destination: is required"},
    {{{"/mounts/1/destination", R"("")"}}, "mounts[1].destination: must not be empty"},
    {{{"/mounts/2/type", "3"}}, "mounts[2].type: expected a string, got 3"},
    {{{"/mounts/0/source", "[]"}}, "mounts[0].source: expected a string, got array"},
    {{{"/mounts/1/options/0", "false"}}, "mounts[1].options[0]: expected a string, got boolean"},
    {{{"/mounts/1/uidMappings", "{}"}}, "mounts[1].uidMappings: expected an array, got object"},
    {{{"/mounts/1/uidMappings", R"([{"containerID": 0, "hostID": 1000, "size": 0}])"}},
     "mounts[1].uidMappings[0].size: must be greater than zero"},
    {{{"/mounts/1/gidMappings", R"([{"containerID": 0, "size": 1}])"}},
     "mounts[1].gidMappings[0].hostID: is required"},
    {{{"/mounts/1/gidMappings", R"([{"containerID": "0", "hostID": 1, "size": 1}])"}},
     "mounts[1].gidMappings[0].containerID: expected an unsigned 32-bit integer, got string"},
    {{{"/mounts/1/uidMappings", R"([{"containerID": 0, "hostID": 1000, "size": 10}])"}},
     "mounts[1].uidMappings: must be given together with gidMappings"},
    {{{"/mounts/1/gidMappings", R"([{"containerID": 0, "hostID": 1000, "size": 10}])"}},
     "mounts[1].gidMappings: must be given together with uidMappings"},
    {{{"/mounts/1/uidMappings", R"([{"containerID": 0, "hostID": 1000, "size": 10},
                                    {"containerID": 5, "hostID": 5000, "size": 10}])"},
      {"/mounts/1/gidMappings", R"([{"containerID": 0, "hostID": 1000, "size": 10}])"}},
     "mounts[1].uidMappings[1]: overlaps mounts[1].uidMappings[0]"},
    {{{"/mounts/1/uidMappings", R"([{"containerID": 0, "hostID": 1000, "size": 10}])"},
      {"/mounts/1/gidMappings", R"([{"containerID": 0, "hostID": 1000, "size": 10},
                                    {"containerID": 20, "hostID": 1009, "size": 1}])"}},
     "mounts[1].gidMappings[1]: overlaps mounts[1].gidMappings[0]"},

    // hooks.
    {{{"/hooks", "[]"}}, "hooks: expected an object, got array"},
    {{{"/hooks/prestart/0/path", R"("relative")"}},
     R"(hooks.prestart[0].path: must be an absolute path, got "relative")"},
    {{{"/hooks/createRuntime/0/path"}}, "hooks.createRuntime[0].path: is required"},
    {{{"/hooks/createContainer/0/args", R"("x")"}},
     "hooks.createContainer[0].args: expected an array, got string"},
    {{{"/hooks/startContainer", "{}"}}, "hooks.startContainer: expected an array, got object"},
    {{{"/hooks/poststart/0/timeout", R"("5")"}},
     "hooks.poststart[0].timeout: expected a 32-bit integer, got string"},
    {{{"/hooks/poststop/0/timeout", "0"}},
     "hooks.poststop[0].timeout: must be greater than zero, got 0"},
    {{{"/hooks/prestart/0/timeout", "-3"}},
     "hooks.prestart[0].timeout: must be greater than zero, got -3"},
    {{{"/hooks/prestart/0/env/0", R"("NOEQUALS")"}},
     R"(hooks.prestart[0].env[0]: expected NAME=value, got "NOEQUALS")"},

    // linux: namespaces and id mappings.
    {{{"/linux", "[]"}}, "linux: expected an object, got array"},
    {{{"/linux/namespaces", "{}"}}, "linux.namespaces: expected an array, got object"},
    {{{"/linux/namespaces/2/type", R"("foo")"}},
     R"(linux.namespaces[2].type: unknown namespace "foo")"},
    {{{"/linux/namespaces/0/type", R"("PID")"}},
     R"(linux.namespaces[0].type: unknown namespace "PID")"},
    {{{"/linux/namespaces/0/type"}}, "linux.namespaces[0].type: is required"},
    {{{"/linux/namespaces/3/type", R"("pid")"}},
     R"(linux.namespaces[3].type: duplicate namespace "pid" (also at linux.namespaces[0]))"},
    {{{"/linux/namespaces/1/path", R"("netns")"}},
     R"(linux.namespaces[1].path: must be an absolute path, got "netns")"},
    {{{"/linux/namespaces/1/path", "7"}}, "linux.namespaces[1].path: expected a string, got 7"},
    {{{"/linux/namespaces/2"}},
     "linux.namespaces: a user namespace needs a mount namespace too: the container's mounts "
     "would be made in the caller's mount namespace, which a user namespace may not change"},
    {{{"/linux/uidMappings", "[]"}}, "linux.uidMappings: a new user namespace needs uid mappings"},
    {{{"/linux/gidMappings"}}, "linux.gidMappings: a new user namespace needs gid mappings"},
    {{{"/linux/namespaces/5"}},
     "linux.uidMappings: mappings need a user namespace in linux.namespaces"},
    {{{"/linux/namespaces/5"}, {"/linux/uidMappings"}},
     "linux.gidMappings: mappings need a user namespace in linux.namespaces"},
    {{{"/linux/uidMappings/0/size", "0"}}, "linux.uidMappings[0].size: must be greater than zero"},
    {{{"/linux/uidMappings/0/hostID"}}, "linux.uidMappings[0].hostID: is required"},
    {{{"/linux/gidMappings/0/containerID", "-1"}},
     "linux.gidMappings[0].containerID: expected an unsigned 32-bit integer, got -1"},
    {{{"/linux/uidMappings/0/hostID", "4294967295"}},
     "linux.uidMappings[0].size: the range of 65536 ids overflows 32 bits"},
    {{{"/linux/uidMappings/-", R"({"containerID": 1000, "hostID": 300000, "size": 10})"}},
     "linux.uidMappings[1]: overlaps linux.uidMappings[0]"},
    {{{"/linux/gidMappings/-", R"({"containerID": 70000, "hostID": 200010, "size": 10})"}},
     "linux.gidMappings[1]: overlaps linux.gidMappings[0]"},

    // linux: time offsets, devices, cgroupsPath.
    {{{"/linux/timeOffsets", "[]"}}, "linux.timeOffsets: expected an object, got array"},
    {{{"/linux/timeOffsets/realtime", R"({"secs": 1})"}},
     R"(linux.timeOffsets."realtime": unknown clock (expected "monotonic" or "boottime"))"},
    {{{"/linux/timeOffsets/monotonic/nanosecs", "1000000000"}},
     R"(linux.timeOffsets."monotonic".nanosecs: must be below 1000000000, got 1000000000)"},
    {{{"/linux/timeOffsets/boottime/secs", R"("1")"}},
     R"(linux.timeOffsets."boottime".secs: expected a 64-bit integer, got string)"},
    {{{"/linux/namespaces/7"}},
     R"(linux.timeOffsets: time offsets need a new time namespace (a "time" entry in linux.namespaces without a path))"},
    {{{"/linux/namespaces/7/path", R"("/proc/1/ns/time")"}},
     R"(linux.timeOffsets: time offsets need a new time namespace (a "time" entry in linux.namespaces without a path))"},
    {{{"/linux/devices/0/type", R"("x")"}},
     R"(linux.devices[0].type: unknown device type "x" (expected c, b, u or p))"},
    {{{"/linux/devices/0/type"}}, "linux.devices[0].type: is required"},
    {{{"/linux/devices/0/path", R"("dev/fuse")"}},
     R"(linux.devices[0].path: must be an absolute path, got "dev/fuse")"},
    {{{"/linux/devices/0/major"}}, "linux.devices[0].major: is required"},
    {{{"/linux/devices/0/minor", R"("229")"}},
     "linux.devices[0].minor: expected a 64-bit integer, got string"},
    {{{"/linux/devices/0/fileMode", "-1"}},
     "linux.devices[0].fileMode: expected an unsigned 32-bit integer, got -1"},
    {{{"/linux/devices/1/uid", "1.0"}},
     "linux.devices[1].uid: expected an unsigned 32-bit integer, got 1.0"},
    {{{"/linux/cgroupsPath", R"("/a/../../b")"}},
     R"(linux.cgroupsPath: must not contain "..", got "/a/../../b")"},
    {{{"/linux/cgroupsPath", R"("..")"}}, R"(linux.cgroupsPath: must not contain "..", got "..")"},
    {{{"/linux/cgroupsPath", "1"}}, "linux.cgroupsPath: expected a string, got 1"},

    // linux.resources.
    {{{"/linux/resources", "[]"}}, "linux.resources: expected an object, got array"},
    {{{"/linux/resources/devices/0/allow"}}, "linux.resources.devices[0].allow: is required"},
    {{{"/linux/resources/devices/0/allow", R"("no")"}},
     "linux.resources.devices[0].allow: expected a boolean, got string"},
    {{{"/linux/resources/devices/1/type", R"("x")"}},
     R"(linux.resources.devices[1].type: unknown device type "x" (expected a, c or b))"},
    {{{"/linux/resources/memory/swappiness", "101"}},
     "linux.resources.memory.swappiness: must be between 0 and 100, got 101"},
    {{{"/linux/resources/memory/swappiness", "-2"}},
     "linux.resources.memory.swappiness: expected an unsigned 64-bit integer, got -2"},
    {{{"/linux/resources/memory/limit", R"("1G")"}},
     "linux.resources.memory.limit: expected a 64-bit integer, got string"},
    {{{"/linux/resources/memory/limit", "9223372036854775808"}},
     "linux.resources.memory.limit: expected a 64-bit integer, got 9223372036854775808"},
    {{{"/linux/resources/memory/disableOOMKiller", "0"}},
     "linux.resources.memory.disableOOMKiller: expected a boolean, got 0"},
    {{{"/linux/resources/cpu/burst", "2000000"}},
     "linux.resources.cpu.burst: must not be larger than quota (1000000), got 2000000"},
    {{{"/linux/resources/cpu/shares", "-2"}},
     "linux.resources.cpu.shares: expected an unsigned 64-bit integer, got -2"},
    {{{"/linux/resources/cpu/idle", "2"}}, "linux.resources.cpu.idle: must be 0 or 1, got 2"},
    {{{"/linux/resources/cpu/cpus", "3"}}, "linux.resources.cpu.cpus: expected a string, got 3"},
    {{{"/linux/resources/pids/limit"}}, "linux.resources.pids.limit: is required"},
    {{{"/linux/resources/pids", "5"}}, "linux.resources.pids: expected an object, got 5"},
    {{{"/linux/resources/blockIO/weight", "5"}},
     "linux.resources.blockIO.weight: must be between 10 and 1000, got 5"},
    {{{"/linux/resources/blockIO/leafWeight", "1001"}},
     "linux.resources.blockIO.leafWeight: must be between 10 and 1000, got 1001"},
    {{{"/linux/resources/blockIO/weight", "70000"}},
     "linux.resources.blockIO.weight: expected an unsigned 16-bit integer, got 70000"},
    {{{"/linux/resources/blockIO/weightDevice/1/weight"}},
     "linux.resources.blockIO.weightDevice[1]: needs weight or leafWeight"},
    {{{"/linux/resources/blockIO/weightDevice/0/leafWeight", "5"}},
     "linux.resources.blockIO.weightDevice[0].leafWeight: must be 0 or between 10 and 1000, got 5"},
    {{{"/linux/resources/blockIO/weightDevice/0/major"}},
     "linux.resources.blockIO.weightDevice[0].major: is required"},
    {{{"/linux/resources/blockIO/throttleReadBpsDevice/0/major", R"("8")"}},
     "linux.resources.blockIO.throttleReadBpsDevice[0].major: expected a 64-bit integer, got "
     "string"},
    {{{"/linux/resources/blockIO/throttleWriteBpsDevice/0/minor"}},
     "linux.resources.blockIO.throttleWriteBpsDevice[0].minor: is required"},
    {{{"/linux/resources/blockIO/throttleReadIOPSDevice/0/rate", "-1"}},
     "linux.resources.blockIO.throttleReadIOPSDevice[0].rate: expected an unsigned 64-bit "
     "integer, got -1"},
    {{{"/linux/resources/blockIO/throttleWriteIOPSDevice/0/rate"}},
     "linux.resources.blockIO.throttleWriteIOPSDevice[0].rate: is required"},
    {{{"/linux/resources/hugepageLimits/0/pageSize", R"("2M")"}},
     R"(linux.resources.hugepageLimits[0].pageSize: expected a size like "2MB", got "2M")"},
    {{{"/linux/resources/hugepageLimits/1/pageSize", R"("../2MB")"}},
     R"(linux.resources.hugepageLimits[1].pageSize: expected a size like "2MB", got "../2MB")"},
    {{{"/linux/resources/hugepageLimits/1/limit"}},
     "linux.resources.hugepageLimits[1].limit: is required"},
    {{{"/linux/resources/network/classID", "-1"}},
     "linux.resources.network.classID: expected an unsigned 32-bit integer, got -1"},
    {{{"/linux/resources/network/priorities/1/name"}},
     "linux.resources.network.priorities[1].name: is required"},
    {{{"/linux/resources/network/priorities/0/priority", R"("high")"}},
     "linux.resources.network.priorities[0].priority: expected an unsigned 32-bit integer, got "
     "string"},
    {{{"/linux/resources/rdma", "[]"}}, "linux.resources.rdma: expected an object, got array"},
    {{{"/linux/resources/rdma/rxe3", "{}"}},
     R"(linux.resources.rdma."rxe3": needs hcaHandles or hcaObjects)"},
    {{{"/linux/resources/rdma/mlx5_1/hcaHandles", R"("3")"}},
     R"(linux.resources.rdma."mlx5_1".hcaHandles: expected an unsigned 32-bit integer, got string)"},
    {{{"/linux/resources/unified/..~1x", R"("1")"}},
     R"(linux.resources.unified."../x": not a cgroup file name)"},
    {{{"/linux/resources/unified/..", R"("1")"}},
     R"(linux.resources.unified."..": not a cgroup file name)"},
    {{{"/linux/resources/unified/io.max", "5"}},
     R"(linux.resources.unified."io.max": expected a string, got 5)"},

    // linux.seccomp.
    {{{"/linux/seccomp", "[]"}}, "linux.seccomp: expected an object, got array"},
    {{{"/linux/seccomp/defaultAction"}}, "linux.seccomp.defaultAction: is required"},
    {{{"/linux/seccomp/defaultAction", R"("SCMP_ACT_FOO")"}},
     R"(linux.seccomp.defaultAction: unknown seccomp action "SCMP_ACT_FOO")"},
    {{{"/linux/seccomp/defaultAction", R"("SCMP_ACT_ALLOW")"}},
     "linux.seccomp.defaultErrnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno, not "
     "SCMP_ACT_ALLOW"},
    {{{"/linux/seccomp/defaultErrnoRet", "-1"}},
     "linux.seccomp.defaultErrnoRet: expected an unsigned 32-bit integer, got -1"},
    {{{"/linux/seccomp/architectures/1", R"("SCMP_ARCH_Z80")"}},
     R"(linux.seccomp.architectures[1]: unknown architecture "SCMP_ARCH_Z80")"},
    {{{"/linux/seccomp/architectures/0", R"("x86_64")"}},
     R"(linux.seccomp.architectures[0]: unknown architecture "x86_64")"},
    {{{"/linux/seccomp/architectures/0", R"("SCMP_ARCH_")"}},
     R"(linux.seccomp.architectures[0]: unknown architecture "SCMP_ARCH_")"},
    {{{"/linux/seccomp/flags/0", R"("SECCOMP_FILTER_FLAG_NEW_LISTENER")"}},
     R"(linux.seccomp.flags[0]: unknown seccomp flag "SECCOMP_FILTER_FLAG_NEW_LISTENER")"},
    {{{"/linux/seccomp/listenerPath", "1"}},
     "linux.seccomp.listenerPath: expected a string, got 1"},
    {{{"/linux/seccomp/syscalls", "{}"}}, "linux.seccomp.syscalls: expected an array, got object"},
    {{{"/linux/seccomp/syscalls/0/names", "[]"}},
     "linux.seccomp.syscalls[0].names: must not be empty"},
    {{{"/linux/seccomp/syscalls/0/names"}}, "linux.seccomp.syscalls[0].names: is required"},
    {{{"/linux/seccomp/syscalls/0/names/2", "5"}},
     "linux.seccomp.syscalls[0].names[2]: expected a string, got 5"},
    {{{"/linux/seccomp/syscalls/0/action"}}, "linux.seccomp.syscalls[0].action: is required"},
    {{{"/linux/seccomp/syscalls/0/action", R"("ALLOW")"}},
     R"(linux.seccomp.syscalls[0].action: unknown seccomp action "ALLOW")"},
    {{{"/linux/seccomp/syscalls/0/errnoRet", "1"}},
     "linux.seccomp.syscalls[0].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno, "
     "not SCMP_ACT_ALLOW"},
    {{{"/linux/seccomp/syscalls/1/args/1/index", "6"}},
     "linux.seccomp.syscalls[1].args[1].index: must be between 0 and 5, got 6"},
    {{{"/linux/seccomp/syscalls/1/args/0/op", R"("SCMP_CMP_FOO")"}},
     R"(linux.seccomp.syscalls[1].args[0].op: unknown seccomp operator "SCMP_CMP_FOO")"},
    {{{"/linux/seccomp/syscalls/1/args/0/op"}},
     "linux.seccomp.syscalls[1].args[0].op: is required"},
    {{{"/linux/seccomp/syscalls/1/args/0/value"}},
     "linux.seccomp.syscalls[1].args[0].value: is required"},
    {{{"/linux/seccomp/syscalls/1/args/1/valueTwo", "-8"}},
     "linux.seccomp.syscalls[1].args[1].valueTwo: expected an unsigned 64-bit integer, got -8"},
    {{{"/linux/seccomp/listenerPath"}},
     "linux.seccomp.listenerMetadata: set without linux.seccomp.listenerPath"},
    {{{"/linux/seccomp/listenerPath"}, {"/linux/seccomp/listenerMetadata"}},
     "linux.seccomp.syscalls[3].action: SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath"},
    {{{"/linux/seccomp/listenerPath"},
      {"/linux/seccomp/listenerMetadata"},
      {"/linux/seccomp/defaultErrnoRet"},
      {"/linux/seccomp/defaultAction", R"("SCMP_ACT_NOTIFY")"}},
     "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath"},

    // linux: paths, propagation, sysctl, personality.
    {{{"/linux/maskedPaths/1", R"("sys/firmware")"}},
     R"(linux.maskedPaths[1]: must be an absolute path, got "sys/firmware")"},
    {{{"/linux/readonlyPaths", R"("/proc/sys")"}},
     "linux.readonlyPaths: expected an array, got string"},
    {{{"/linux/readonlyPaths/0", R"("")"}},
     R"(linux.readonlyPaths[0]: must be an absolute path, got "")"},
    {{{"/linux/rootfsPropagation", R"("rshared2")"}},
     R"(linux.rootfsPropagation: unknown propagation "rshared2" (expected private, rprivate, slave, rslave, shared, rshared, unbindable or runbindable))"},
    {{{"/linux/sysctl", "[]"}}, "linux.sysctl: expected an object, got array"},
    {{{"/linux/sysctl/vm.swappiness", R"("10")"}},
     R"(linux.sysctl."vm.swappiness": not a namespaced sysctl)"},
    {{{"/linux/sysctl/kernel.hostname", R"("x")"}},
     R"(linux.sysctl."kernel.hostname": "x" conflicts with hostname "box")"},
    {{{"/linux/sysctl/kernel.domainname", R"("x")"}},
     R"(linux.sysctl."kernel.domainname": "x" conflicts with domainname "example.org")"},
    {{{"/linux/sysctl/kernel.domainname", R"("a.org")"},
      {"/linux/namespaces/4"},
      {"/hostname"},
      {"/domainname"}},
     R"(linux.sysctl."kernel.domainname": needs a private UTS namespace)"},
    {{{"/linux/sysctl/net.core.somaxconn", "1"}},
     R"(linux.sysctl."net.core.somaxconn": expected a string, got 1)"},
    {{{"/linux/namespaces/1"}},
     R"(linux.sysctl."net.ipv4.ip_forward": needs a private network namespace)"},
    {{{"/linux/namespaces/3"}},
     R"(linux.sysctl."fs.mqueue.msg_max": needs a private IPC namespace)"},
    {{{"/linux/namespaces/4"}}, "hostname: setting a hostname needs a private UTS namespace"},
    {{{"/linux/namespaces/4"}, {"/hostname"}},
     "domainname: setting a domainname needs a private UTS namespace"},
    {{{"/linux/mountLabel", "1"}}, "linux.mountLabel: expected a string, got 1"},
    {{{"/linux/personality", R"("LINUX")"}}, "linux.personality: expected an object, got string"},
    {{{"/linux/personality/domain"}}, "linux.personality.domain: is required"},
    {{{"/linux/personality/domain", R"("LINUX64")"}},
     R"(linux.personality.domain: unknown domain "LINUX64" (expected LINUX or LINUX32))"},
    {{{"/linux/personality/flags", R"(["ADDR_NO_RANDOMIZE"])"}},
     R"(linux.personality.flags[0]: unsupported personality flag "ADDR_NO_RANDOMIZE")"},
};

} // namespace

TEST_CASE("each invalid value is reported with its JSON path", "[spec]") {
    for (const ErrorCase& error_case : error_cases) {
        std::string edits;
        for (const Edit& edit : error_case.edits) {
            edits += edit.pointer +
                     (edit.value != nullptr ? std::string(" = ") + edit.value
                                            : std::string(" removed")) +
                     "; ";
        }
        INFO("edits: " << edits);
        CHECK(error_after(error_case.edits) == error_case.expected);
    }
}

TEST_CASE("linux.sysctl kernel.domainname: accepted when it agrees with domainname", "[spec]") {
    // runc accepts it in a private UTS namespace; the dedicated field must not disagree.
    CHECK(error_after({{"/linux/sysctl/kernel.domainname", R"("example.org")"}}).empty());
    CHECK(error_after({{"/domainname"}, {"/linux/sysctl/kernel.domainname", R"("alone.org")"}})
              .empty());
    CHECK(error_after({{"/linux/sysctl/kernel.hostname", R"("box")"}}).empty());
}

TEST_CASE("the first problem is the one reported", "[spec]") {
    // Two problems: process comes before linux in the parse order.
    CHECK(error_after({{"/process/args", "[]"}, {"/linux/namespaces/0/type", R"("foo")"}}) ==
          "process.args: must not be empty");
    // Within an array, the lower index wins.
    CHECK(error_after({{"/mounts/2/destination", "1"}, {"/mounts/0/destination", "2"}}) ==
          "mounts[0].destination: expected a string, got 2");
}

TEST_CASE("malformed JSON gives a one-line parse error with line and column", "[spec]") {
    SECTION("a syntax error") {
        auto result = parse_spec("{\n  \"ociVersion\": \"1.0.0\",\n  oops\n}");
        REQUIRE_FALSE(result.ok());
        const std::string& message = result.error().message();
        REQUIRE_THAT(message, StartsWith("config.json: parse error at line 3, column 3: "));
        CHECK(message.find('\n') == std::string::npos);
        CHECK(message.find("[json.exception") == std::string::npos);
    }
    SECTION("empty input") {
        auto result = parse_spec("");
        REQUIRE_FALSE(result.ok());
        REQUIRE_THAT(result.error().message(),
                     StartsWith("config.json: parse error at line 1, column 1: "));
    }
    SECTION("truncated input names the given source") {
        auto result = parse_spec(R"({"ociVersion": "1.0.0", "root": {)", "/b/config.json");
        REQUIRE_FALSE(result.ok());
        REQUIRE_THAT(result.error().message(), StartsWith("/b/config.json: parse error at line 1"));
    }
    SECTION("a raw newline inside a string does not break the message") {
        auto result = parse_spec("{\"ociVersion\": \"1.0\n\"}");
        REQUIRE_FALSE(result.ok());
        REQUIRE_THAT(result.error().message(), StartsWith("config.json: parse error at line "));
        CHECK(result.error().message().find('\n') == std::string::npos);
    }
    SECTION("the top level must be an object") {
        for (const char* text : {"[]", "\"config\"", "42", "null"}) {
            auto result = parse_spec(text);
            REQUIRE_FALSE(result.ok());
            REQUIRE_THAT(result.error().message(),
                         StartsWith("config.json: expected a JSON object, got "));
        }
        CHECK(parse_spec("[1]").error().message() ==
              "config.json: expected a JSON object, got array");
    }
}

TEST_CASE("unknown properties are ignored at every level", "[spec]") {
    std::string text = edited(full_config, {
                                               {"/x-vendor", R"({"anything": [1, 2]})"},
                                               {"/process/futureSetting", R"({"class": 1})"},
                                               {"/process/user/username", R"("bob")"},
                                               {"/root/unknown", "1"},
                                               {"/mounts/0/future", "[]"},
                                               {"/hooks/unknownHook", "[1]"},
                                               {"/linux/intelRdt", R"({"closID": "x"})"},
                                               {"/linux/namespaces/0/extra", "true"},
                                               {"/linux/resources/memory/future", "1"},
                                               {"/linux/seccomp/syscalls/0/comment", "1"},
                                               {"/windows", "{}"},
                                           });
    Spec with_extras = parse_ok(text);
    Spec plain = parse_ok(full_config);
    CHECK(with_extras.process->user.uid == plain.process->user.uid);
    CHECK(with_extras.linux.namespaces.size() == plain.linux.namespaces.size());
    CHECK(with_extras.linux.resources->memory->limit == plain.linux.resources->memory->limit);
    CHECK(with_extras.mounts.size() == plain.mounts.size());
}

TEST_CASE("null reads as absent, like Go's omitted fields", "[spec]") {
    Spec spec = parse_ok(edited(full_config, {
                                                 {"/process/env", "null"},
                                                 {"/process/capabilities", "null"},
                                                 {"/hooks", "null"},
                                                 {"/linux/seccomp", "null"},
                                                 {"/linux/resources/memory", "null"},
                                                 {"/annotations", "null"},
                                             }));
    CHECK(spec.process->env.empty());
    CHECK_FALSE(spec.process->capabilities);
    CHECK(spec.hooks.prestart.empty());
    CHECK_FALSE(spec.linux.seccomp);
    CHECK_FALSE(spec.linux.resources->memory);
    CHECK(spec.annotations.empty());
}

TEST_CASE("mount destinations are made absolute and lexically clean", "[spec]") {
    struct Case {
        const char* destination;
        const char* expected;
    };
    for (const Case& c : std::vector<Case>{
             {"/proc", "/proc"},
             {"proc", "/proc"},
             {"tmp/x", "/tmp/x"},
             {"/a/../b", "/b"},
             {"/../../etc", "/etc"},
             {"../../../etc/passwd", "/etc/passwd"},
             {"a/./b//c/", "/a/b/c"},
             {"..", "/"},
             {"data/x", "/data/x"},
             {"data/../../x", "/x"},
             {"./data/x/..", "/data"},
             {"/", "/"},
             {"/dev/shm/", "/dev/shm"},
         }) {
        Json document = Json::parse(minimal_config);
        document["mounts"] = Json::array({{{"destination", c.destination}, {"type", "tmpfs"}}});
        Spec spec = parse_ok(document.dump());
        INFO("destination " << c.destination);
        REQUIRE(spec.mounts.size() == 1);
        CHECK(spec.mounts[0].destination == c.expected);
    }
}

TEST_CASE("lenient readings of Go-isms and kernel defaults", "[spec]") {
    SECTION("swappiness -1 or 2^64-1 means unset") {
        for (const char* value : {"-1", "18446744073709551615"}) {
            Spec spec =
                parse_ok(edited(full_config, {{"/linux/resources/memory/swappiness", value}}));
            CHECK_FALSE(spec.linux.resources->memory->swappiness);
        }
    }
    SECTION("blkio weight 0 means unset") {
        Spec spec = parse_ok(edited(full_config, {{"/linux/resources/blockIO/weight", "0"}}));
        CHECK_FALSE(spec.linux.resources->block_io->weight);
    }
    SECTION("device rule type and access default to all") {
        Spec spec = parse_ok(edited(full_config, {{"/linux/resources/devices/1/type", R"("")"},
                                                  {"/linux/resources/devices/1/access", R"("")"}}));
        CHECK(spec.linux.resources->devices[1].type == "a");
        CHECK(spec.linux.resources->devices[1].access == "rwm");
    }
    SECTION("device access letters other than r, w and m are dropped, as runc does") {
        Spec spec =
            parse_ok(edited(full_config, {{"/linux/resources/devices/1/access", R"("rwa")"}}));
        CHECK(spec.linux.resources->devices[1].access == "rw");
        Spec mknod =
            parse_ok(edited(full_config, {{"/linux/resources/devices/1/access", R"("xm")"}}));
        CHECK(mknod.linux.resources->devices[1].access == "m");
    }
    SECTION("unknown capability names are kept for the runtime to warn about and skip") {
        Spec spec =
            parse_ok(edited(full_config, {{"/process/capabilities/bounding/0", R"("CAP_FOO")"}}));
        CHECK(spec.process->capabilities->bounding.front() == "CAP_FOO");
    }
    SECTION("an empty namespace path means a new namespace") {
        Spec spec = parse_ok(edited(full_config, {{"/linux/namespaces/1/path", R"("")"}}));
        CHECK(spec.linux.namespaces[1].path.empty());
    }
    SECTION("a joined user namespace needs no mappings") {
        Spec spec =
            parse_ok(edited(full_config, {{"/linux/namespaces/5/path", R"("/proc/1/ns/user")"},
                                          {"/linux/uidMappings"},
                                          {"/linux/gidMappings"}}));
        CHECK(spec.linux.uid_mappings.empty());
    }
    SECTION("a hostname with a joined UTS namespace is fine") {
        Spec spec =
            parse_ok(edited(full_config, {{"/linux/namespaces/4/path", R"("/proc/1/ns/uts")"}}));
        CHECK(spec.hostname == "box");
    }
    SECTION("net.* sysctls are fine in a joined network namespace") {
        Spec spec = parse_ok(full_config);
        CHECK(spec.linux.namespaces[1].path == "/var/run/netns/test");
        CHECK(spec.linux.sysctl.count("net.ipv4.ip_forward") == 1);
    }
    SECTION("sysctl names may use / as the separator") {
        Spec spec =
            parse_ok(edited(full_config, {{"/linux/sysctl/net~1core~1somaxconn", R"("1")"}}));
        CHECK(spec.linux.sysctl.at("net/core/somaxconn") == "1");
    }
    SECTION("SCMP_ACT_TRACE takes an errno") {
        Spec spec = parse_ok(
            edited(full_config, {{"/linux/seccomp/syscalls/0/action", R"("SCMP_ACT_TRACE")"},
                                 {"/linux/seccomp/syscalls/0/errnoRet", "3"}}));
        CHECK(spec.linux.seccomp->syscalls[0].errno_ret == std::optional<uint32_t>(3));
    }
    SECTION("every spec'd seccomp action, operator, flag and propagation is accepted") {
        for (const char* action : {"SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
                                   "SCMP_ACT_TRAP", "SCMP_ACT_ERRNO", "SCMP_ACT_TRACE",
                                   "SCMP_ACT_ALLOW", "SCMP_ACT_LOG", "SCMP_ACT_NOTIFY"}) {
            INFO(action);
            CHECK(parse_spec(edited(full_config, {{"/linux/seccomp/syscalls/0/action",
                                                   Json(action).dump().c_str()}}))
                      .ok());
        }
        for (const char* op : {"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ",
                               "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ"}) {
            INFO(op);
            CHECK(parse_spec(edited(full_config, {{"/linux/seccomp/syscalls/1/args/0/op",
                                                   Json(op).dump().c_str()}}))
                      .ok());
        }
        for (const char* flag :
             {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
              "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"}) {
            INFO(flag);
            CHECK(parse_spec(
                      edited(full_config, {{"/linux/seccomp/flags/0", Json(flag).dump().c_str()}}))
                      .ok());
        }
        for (const char* propagation : {"", "private", "rprivate", "slave", "rslave", "shared",
                                        "rshared", "unbindable", "runbindable"}) {
            INFO(propagation);
            CHECK(parse_spec(edited(full_config, {{"/linux/rootfsPropagation",
                                                   Json(propagation).dump().c_str()}}))
                      .ok());
        }
    }
}

TEST_CASE("parse_process reads a standalone process object", "[spec]") {
    using minirun::spec::parse_process;
    SECTION("valid") {
        auto result = parse_process(
            R"({"args": ["ps", "aux"], "env": ["A=1"], "cwd": "/tmp", "user": {"uid": 7},
                "capabilities": {"bounding": ["CAP_KILL"]}, "unknown": 1})",
            "process.json");
        REQUIRE(result.ok());
        CHECK(result->args == std::vector<std::string>{"ps", "aux"});
        CHECK(result->env == std::vector<std::string>{"A=1"});
        CHECK(result->cwd == "/tmp");
        CHECK(result->user.uid == 7);
        CHECK(result->capabilities->bounding == std::vector<std::string>{"CAP_KILL"});
    }
    SECTION("errors have paths starting at process") {
        CHECK(parse_process(R"({"args": []})", "p.json").error().message() ==
              "process.args: must not be empty");
        CHECK(parse_process(R"({"cwd": "/"})", "p.json").error().message() ==
              "process.args: is required");
        CHECK(parse_process(R"({"args": ["sh"], "cwd": "tmp"})", "p.json").error().message() ==
              R"(process.cwd: must be an absolute path, got "tmp")");
        CHECK(parse_process(R"({"args": ["sh"], "rlimits": [{"type": "RLIMIT_X", "soft": 1,
                                "hard": 1}]})",
                            "p.json")
                  .error()
                  .message() == R"(process.rlimits[0].type: unknown rlimit "RLIMIT_X")");
    }
    SECTION("malformed or non-object input names the source") {
        REQUIRE_THAT(parse_process("{", "p.json").error().message(),
                     StartsWith("p.json: parse error at line 1, column 2: "));
        CHECK(parse_process("[]", "p.json").error().message() ==
              "p.json: expected a JSON object, got array");
    }
}

TEST_CASE("namespace type names round-trip", "[spec]") {
    using minirun::spec::namespace_type_from_name;
    using minirun::spec::namespace_type_name;
    for (const char* name : {"pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time"}) {
        auto type = namespace_type_from_name(name);
        REQUIRE(type);
        CHECK(namespace_type_name(*type) == name);
    }
    CHECK_FALSE(namespace_type_from_name("net"));
    CHECK_FALSE(namespace_type_from_name(""));
    CHECK_FALSE(namespace_type_from_name("Mount"));
}

TEST_CASE("Linux::find_namespace finds the entry of a type", "[spec]") {
    Spec spec = parse_ok(full_config);
    const auto* network = spec.linux.find_namespace(NamespaceType::network);
    REQUIRE(network != nullptr);
    CHECK(network->path == "/var/run/netns/test");
    Spec minimal = parse_ok(minimal_config);
    CHECK(minimal.linux.find_namespace(NamespaceType::mount) != nullptr);
    CHECK(minimal.linux.find_namespace(NamespaceType::user) == nullptr);
}

TEST_CASE("a namespace not listed is inherited: no mount namespace is valid", "[spec]") {
    // config-linux.md; the mounts are then made in the caller's mount namespace.
    CHECK(parse_spec(edited(minimal_config, {{"/linux/namespaces", "[]"}})).ok());
    CHECK(parse_spec(edited(minimal_config, {{"/linux"}})).ok());
    // Without mount and user namespaces (and the user namespace's mappings).
    CHECK(parse_spec(edited(full_config, {{"/linux/namespaces/2"},
                                          {"/linux/namespaces/4"},
                                          {"/linux/uidMappings"},
                                          {"/linux/gidMappings"}}))
              .ok());
}

TEST_CASE("a number too large for a double is a parse error", "[spec]") {
    auto result = parse_spec(R"({"ociVersion": "1.0.0", "x": 1e999})");
    REQUIRE_FALSE(result.ok());
    REQUIRE_THAT(result.error().message(), StartsWith("config.json: parse error: "));
}
