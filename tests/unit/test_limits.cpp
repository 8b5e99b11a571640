// Per-process settings (process/limits.hpp) against the recording fake: which rlimits,
// which /proc writes, which execution domain, and their errors.
#include "fake_syscalls.hpp"
#include "process/limits.hpp"

#include <sys/personality.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;

TEST_CASE("rlimits: one setrlimit per entry, in order", "[rlimit]") {
    FakeSyscalls sys;
    std::vector<spec::Rlimit> rlimits = {{"RLIMIT_NOFILE", RLIMIT_NOFILE, 1024, 4096},
                                         {"RLIMIT_CORE", RLIMIT_CORE, 0, 0}};
    REQUIRE(limits::apply_rlimits(rlimits, sys).ok());
    CHECK(sys.calls == std::vector<std::string>{cat("setrlimit ", RLIMIT_NOFILE, " 1024 4096"),
                                                cat("setrlimit ", RLIMIT_CORE, " 0 0")});
}

TEST_CASE("rlimits: a refused limit names its entry", "[rlimit]") {
    FakeSyscalls sys;
    std::vector<spec::Rlimit> rlimits = {{"RLIMIT_NOFILE", RLIMIT_NOFILE, 1024, 4096},
                                         {"RLIMIT_NPROC", RLIMIT_NPROC, 10, 10}};
    sys.fail_call(2, EPERM);
    auto applied = limits::apply_rlimits(rlimits, sys);
    REQUIRE_FALSE(applied.ok());
    CHECK(applied.error().errno_value() == EPERM);
    CHECK(applied.error().message() == "process.rlimits[1] RLIMIT_NPROC: Operation not permitted");
}

TEST_CASE("oom_score_adj: written below the procfs handle's self, only when set", "[rlimit]") {
    FakeSyscalls sys;
    auto proc = procfs::Handle::host_proc();
    REQUIRE(proc);
    REQUIRE(limits::set_oom_score_adj(std::nullopt, &*proc, sys).ok());
    CHECK(sys.calls.empty());
    REQUIRE(limits::set_oom_score_adj(-500, &*proc, sys).ok());
    CHECK(sys.calls == std::vector<std::string>{"write_proc /proc/self/oom_score_adj -500"});
    sys.fail("write_proc", EACCES);
    auto written = limits::set_oom_score_adj(10, &*proc, sys);
    REQUIRE_FALSE(written.ok());
    CHECK(written.error().errno_value() == EACCES);
    CHECK_THAT(written.error().message(), Catch::StartsWith("process.oomScoreAdj: "));
    // A value and no handle to write it through: refused, never written some other way.
    FakeSyscalls none;
    auto refused = limits::set_oom_score_adj(10, nullptr, none);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message() == "process.oomScoreAdj: no procfs handle to write it through");
    CHECK(none.calls.empty());
}

TEST_CASE("sysctls: each key below the handle's sys, dots made slashes", "[rlimit]") {
    FakeSyscalls sys;
    auto proc = procfs::Handle::host_proc();
    REQUIRE(proc);
    REQUIRE(limits::apply_sysctls({}, &*proc, sys).ok());
    CHECK(sys.calls.empty());
    std::map<std::string, std::string> sysctls = {{"net.ipv4.ip_forward", "1"},
                                                  {"kernel.shmmax", "65536"}};
    REQUIRE(limits::apply_sysctls(sysctls, &*proc, sys).ok());
    CHECK(sys.calls == std::vector<std::string>{"write_proc /proc/sys/kernel/shmmax 65536",
                                                "write_proc /proc/sys/net/ipv4/ip_forward 1"});
    sys.fail("write_proc", EROFS);
    auto applied = limits::apply_sysctls({{"net.ipv4.ip_forward", "1"}}, &*proc, sys);
    REQUIRE_FALSE(applied.ok());
    CHECK(applied.error().errno_value() == EROFS);
    CHECK_THAT(applied.error().message(),
               Catch::StartsWith("linux.sysctl.\"net.ipv4.ip_forward\": "));
}

TEST_CASE("personality: the execution domain, only when set", "[rlimit]") {
    FakeSyscalls sys;
    REQUIRE(limits::set_personality(std::nullopt, sys).ok());
    CHECK(sys.calls.empty());
    REQUIRE(limits::set_personality(spec::Personality{"LINUX32", {}}, sys).ok());
    REQUIRE(limits::set_personality(spec::Personality{"LINUX", {}}, sys).ok());
    CHECK(sys.calls ==
          std::vector<std::string>{cat("personality ", static_cast<unsigned long>(PER_LINUX32)),
                                   cat("personality ", static_cast<unsigned long>(PER_LINUX))});
    sys.fail("personality", EINVAL);
    auto set = limits::set_personality(spec::Personality{"LINUX32", {}}, sys);
    REQUIRE_FALSE(set.ok());
    CHECK(set.error().message() == "linux.personality: Invalid argument");
}
