// What the security tests share (security_*test.cpp): capability names and masks, reading
// /proc/self/status, running a container that must succeed or be refused.
#pragma once

#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace security_test {

using namespace it;

constexpr const char* loop = "while true; do sleep 0.1; done";

// Capability numbers, as in <linux/capability.h>.
inline const std::vector<std::string>& capability_names() {
    static const std::vector<std::string> names{"CAP_CHOWN",
                                                "CAP_DAC_OVERRIDE",
                                                "CAP_DAC_READ_SEARCH",
                                                "CAP_FOWNER",
                                                "CAP_FSETID",
                                                "CAP_KILL",
                                                "CAP_SETGID",
                                                "CAP_SETUID",
                                                "CAP_SETPCAP",
                                                "CAP_LINUX_IMMUTABLE",
                                                "CAP_NET_BIND_SERVICE",
                                                "CAP_NET_BROADCAST",
                                                "CAP_NET_ADMIN",
                                                "CAP_NET_RAW",
                                                "CAP_IPC_LOCK",
                                                "CAP_IPC_OWNER",
                                                "CAP_SYS_MODULE",
                                                "CAP_SYS_RAWIO",
                                                "CAP_SYS_CHROOT",
                                                "CAP_SYS_PTRACE",
                                                "CAP_SYS_PACCT",
                                                "CAP_SYS_ADMIN",
                                                "CAP_SYS_BOOT",
                                                "CAP_SYS_NICE",
                                                "CAP_SYS_RESOURCE",
                                                "CAP_SYS_TIME",
                                                "CAP_SYS_TTY_CONFIG",
                                                "CAP_MKNOD",
                                                "CAP_LEASE",
                                                "CAP_AUDIT_WRITE",
                                                "CAP_AUDIT_CONTROL",
                                                "CAP_SETFCAP",
                                                "CAP_MAC_OVERRIDE",
                                                "CAP_MAC_ADMIN",
                                                "CAP_SYSLOG",
                                                "CAP_WAKE_ALARM",
                                                "CAP_BLOCK_SUSPEND",
                                                "CAP_AUDIT_READ",
                                                "CAP_PERFMON",
                                                "CAP_BPF",
                                                "CAP_CHECKPOINT_RESTORE"};
    return names;
}

// The test's own bounding set: a runtime cannot give what it does not have (this VM's root
// lacks CAP_SYS_RESOURCE, for one).
inline uint64_t own_bounding() {
    for (const auto& line : split_lines(read_file("/proc/self/status").value_or(""))) {
        if (line.rfind("CapBnd:", 0) == 0) {
            return std::stoull(split_words(line.substr(7)).front(), nullptr, 16);
        }
    }
    return 0;
}

inline bool have_capability(int number) {
    return ((own_bounding() >> number) & 1U) != 0;
}

// Every capability in the test's bounding set (and that this test has a name for).
inline std::vector<std::string> all_capabilities() {
    const auto& names = capability_names();
    const uint64_t bounding = own_bounding();
    std::vector<std::string> caps;
    for (size_t number = 0; number < names.size(); ++number) {
        if (((bounding >> number) & 1U) != 0) {
            caps.push_back(names[number]);
        }
    }
    return caps;
}

inline uint64_t mask_of(const std::vector<std::string>& caps) {
    uint64_t mask = 0;
    const auto& names = capability_names();
    for (const auto& cap : caps) {
        auto found = std::find(names.begin(), names.end(), cap);
        REQUIRE(found != names.end());
        mask |= uint64_t{1} << (found - names.begin());
    }
    return mask;
}

inline std::string hex(uint64_t value) {
    std::ostringstream text;
    text << std::setw(16) << std::setfill('0') << std::hex << value;
    return text.str();
}

// "Key:<tab>value" of a /proc/<pid>/status printed by the container; "<Key missing>" when
// it is not there.
inline std::string status_value(const std::string& status, const std::string& key) {
    for (const auto& line : split_lines(status)) {
        if (line.rfind(key + ":", 0) == 0) {
            auto words = split_words(line.substr(key.size() + 1));
            return words.empty() ? std::string() : words.front();
        }
    }
    return "<" + key + " missing>";
}

struct CapSets {
    std::string inh, prm, eff, bnd, amb; // 16 hex digits each, as the kernel prints them
};

inline CapSets caps_in(const std::string& status) {
    return {status_value(status, "CapInh"), status_value(status, "CapPrm"),
            status_value(status, "CapEff"), status_value(status, "CapBnd"),
            status_value(status, "CapAmb")};
}

inline void check_caps(const CapSets& got, uint64_t inh, uint64_t prm, uint64_t eff, uint64_t bnd,
                       uint64_t amb) {
    CHECK(got.inh == hex(inh));
    CHECK(got.prm == hex(prm));
    CHECK(got.eff == hex(eff));
    CHECK(got.bnd == hex(bnd));
    CHECK(got.amb == hex(amb));
}

// A tmpfs on /tmp, so that the container can write with the read-only example root.
inline void writable_tmp(TempBundle& bundle) {
    bundle.config["mounts"].push_back({{"destination", "/tmp"},
                                       {"type", "tmpfs"},
                                       {"source", "tmpfs"},
                                       {"options", {"nosuid", "nodev", "mode=1777"}}});
}

// Runs the bundle in the foreground and requires exit code 0.
inline RunResult run_ok(TempBundle& bundle) {
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    return result;
}

// Runs the bundle and expects it to fail before the process runs: a non-zero exit, the
// marker never printed, stderr naming each of `words`, nothing left behind.
inline void check_refused(TempBundle& bundle, std::initializer_list<std::string_view> words) {
    bundle.set_shell("echo it-process-ran");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK_FALSE(result.timed_out);
    CHECK_FALSE(contains(result.out, "it-process-ran"));
    for (auto word : words) {
        INFO("expected in stderr: " << word);
        CHECK(contains(result.err, word));
    }
    check_no_leftovers(bundle);
}

inline std::string seccomp_line(const std::string& status) {
    return status_value(status, "Seccomp");
}

// A running container (run --detach) to exec into; deleted by the Runtime.
struct Running {
    TempBundle bundle;
    Runtime runtime;
    pid_t init = -1;

    explicit Running(std::string_view name, void (*configure)(TempBundle&) = nullptr)
        : bundle(name) {
        if (configure != nullptr) {
            configure(bundle);
        }
        bundle.set_shell(loop);
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid.has_value());
        init = *pid;
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    }

    RunResult exec(const std::vector<std::string>& flags,
                   const std::vector<std::string>& args) const {
        std::vector<std::string> full{"exec"};
        full.insert(full.end(), flags.begin(), flags.end());
        full.push_back(bundle.id());
        full.insert(full.end(), args.begin(), args.end());
        return runtime(full);
    }
};

} // namespace security_test
