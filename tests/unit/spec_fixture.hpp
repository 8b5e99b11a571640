// What the config.json parsing unit tests share (test_spec*.cpp): a config that sets every
// field mini-run models, a minimal one, and JSON-pointer edits of them.
#pragma once

#include "minirun/spec.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include <optional>
#include <string>
#include <vector>

namespace spec_test {

using minirun::spec::parse_spec;
using minirun::spec::Spec;
using Json = nlohmann::json;

// A config that sets every field mini-run models, with values that differ from the defaults.
inline const char* const full_config = R"json({
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

inline const char* const minimal_config = R"json({
  "ociVersion": "1.0.2-dev",
  "root": {"path": "rootfs"},
  "linux": {"namespaces": [{"type": "mount"}]}
})json";

// A JSON-pointer edit: set `value` (JSON text) at `pointer`, or remove it when value is null.
struct Edit {
    std::string pointer;
    const char* value = nullptr;
};

inline void apply(Json& document, const Edit& edit) {
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

inline std::string edited(const char* base, const std::vector<Edit>& edits) {
    Json document = Json::parse(base);
    for (const Edit& edit : edits) {
        apply(document, edit);
    }
    return document.dump();
}

// The error message parse_spec gives for the edited full config ("" if it parses).
inline std::string error_after(const std::vector<Edit>& edits) {
    auto result = parse_spec(edited(full_config, edits));
    return result.ok() ? std::string() : result.error().message();
}

inline Spec parse_ok(const std::string& text) {
    auto result = parse_spec(text);
    INFO((result.ok() ? std::string() : result.error().message()));
    REQUIRE(result.ok());
    return std::move(result).value();
}

} // namespace spec_test
