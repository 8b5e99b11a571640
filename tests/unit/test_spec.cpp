// config.json parsing: every field into the model, and every class of error with its path.
// This file: the full and the minimal config; the errors in test_spec_errors.cpp, the
// readings of odd input in test_spec_lenient.cpp.
#include "spec_fixture.hpp"

#include <catch2/catch.hpp>

using Catch::Matchers::StartsWith;
using minirun::spec::NamespaceType;
using namespace spec_test;

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

TEST_CASE("linux.resources.pids.limit: optional, 0 kept as a limit (runtime-spec 1.3)",
          "[spec][pids]") {
    auto absent = minirun::spec::parse_resources(R"({"pids": {}})", "resources");
    REQUIRE(absent.ok());
    REQUIRE(absent->pids);
    CHECK_FALSE(absent->pids->limit);
    auto zero = minirun::spec::parse_resources(R"({"pids": {"limit": 0}})", "resources");
    REQUIRE(zero.ok());
    CHECK(zero->pids->limit == std::optional<int64_t>(0));
    auto negative = minirun::spec::parse_resources(R"({"pids": {"limit": -1}})", "resources");
    REQUIRE(negative.ok());
    CHECK(negative->pids->limit == std::optional<int64_t>(-1));
}

TEST_CASE("capabilities: whether an inheritable set is given, as runc's exec --cap asks",
          "[spec]") {
    auto given = [](const char* capabilities) {
        const std::string process =
            std::string(R"({"args": ["sh"], "capabilities": )") + capabilities + "}";
        Spec spec = parse_ok(edited(minimal_config, {{"/process", process.c_str()}}));
        REQUIRE(spec.process);
        REQUIRE(spec.process->capabilities);
        return spec.process->capabilities->inheritable_given;
    };
    CHECK(given(R"({"inheritable": ["CAP_CHOWN"]})"));
    CHECK(given(R"({"inheritable": []})")); // Go: an empty slice, not nil
    CHECK_FALSE(given(R"({"inheritable": null})"));
    CHECK_FALSE(given(R"({"bounding": ["CAP_KILL"]})"));
}
