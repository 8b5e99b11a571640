// config.json parsing: every class of error, reported with its JSON path.
#include "spec_fixture.hpp"

#include <catch2/catch.hpp>

using Catch::Matchers::StartsWith;
using minirun::spec::NamespaceType;
using namespace spec_test;

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
    // (uid_t)-1: setresuid(2) would keep root (crun CVE-2026-30892's class).
    {{{"/process/user/uid", "4294967295"}},
     "process.user.uid: 4294967295 is (uid_t)-1, not an id (at most 4294967294)"},
    {{{"/process/user/gid", "4294967295"}},
     "process.user.gid: 4294967295 is (uid_t)-1, not an id (at most 4294967294)"},
    {{{"/process/user/additionalGids/1", "4294967295"}},
     "process.user.additionalGids[1]: 4294967295 is (uid_t)-1, not an id (at most 4294967294)"},
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
    // Destinations under /proc (proc_mounts.hpp): runc 1.3's checkProcMount, in its words.
    {{{"/mounts/1/destination", R"("/proc/sys/kernel/domainname")"}},
     R"(mounts[1].destination: "/proc/sys/kernel/domainname" cannot be mounted because it is inside /proc)"},
    {{{"/mounts/1/destination", R"("/proc/self/attr/exec")"}},
     R"(mounts[1].destination: "/proc/self/attr/exec" cannot be mounted because it is inside /proc)"},
    {{{"/mounts/1/destination", R"("proc/./sys/../sysrq-trigger")"}},
     R"(mounts[1].destination: "/proc/sysrq-trigger" cannot be mounted because it is inside /proc)"},
    {{{"/mounts/1/destination", R"("/proc/net/dev")"}},
     R"(mounts[1].destination: "/proc/net/dev" cannot be mounted because it is inside /proc)"},
    {{{"/mounts/2/destination", R"("/proc")"}},
     R"(mounts[2].destination: "/proc" cannot be mounted because it is not of type proc)"},
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
    {{{"/linux/resources/pids/limit", "\"10\""}},
     "linux.resources.pids.limit: expected a 64-bit integer, got string"},
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
    // user.* (the per-user-namespace limits): only in a new user namespace, the container's.
    {{{"/linux/sysctl/user.max_user_namespaces", R"("10")"},
      {"/linux/namespaces/5"},
      {"/linux/uidMappings"},
      {"/linux/gidMappings"}},
     R"(linux.sysctl."user.max_user_namespaces": needs a private user namespace)"},
    {{{"/linux/sysctl/user.max_user_namespaces", R"("10")"},
      {"/linux/namespaces/5/path", R"("/proc/1/ns/user")"},
      {"/linux/uidMappings"},
      {"/linux/gidMappings"}},
     R"(linux.sysctl."user.max_user_namespaces": needs a new user namespace, not a joined one )"
     R"((whose limits are not the container's))"},
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

TEST_CASE("linux.sysctl user.*: accepted in a new user namespace, as runc 1.4", "[spec]") {
    // The fixture has {"type": "user"} with its mappings: the limits are the container's.
    CHECK(error_after({{"/linux/sysctl/user.max_user_namespaces", R"("10")"}}).empty());
    CHECK(error_after({{"/linux/sysctl/user~1max_net_namespaces", R"("5")"}}).empty());
    // A user namespace opens user.* only: other host-wide keys stay refused.
    CHECK(error_after({{"/linux/sysctl/kernel.keys.maxkeys", R"("5")"}}) ==
          R"(linux.sysctl."kernel.keys.maxkeys": not a namespaced sysctl)");
}

TEST_CASE("the first problem is the one reported", "[spec]") {
    // Two problems: process comes before linux in the parse order.
    CHECK(error_after({{"/process/args", "[]"}, {"/linux/namespaces/0/type", R"("foo")"}}) ==
          "process.args: must not be empty");
    // Within an array, the lower index wins.
    CHECK(error_after({{"/mounts/2/destination", "1"}, {"/mounts/0/destination", "2"}}) ==
          "mounts[0].destination: expected a string, got 2");
}
