#include "exec_gate.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

// The stub's bytes, embedded at build time (scripts/embed-binary.cmake); size 0 when this
// build has none.
extern const unsigned char kExecGateStub[];
extern const std::size_t kExecGateStubSize;

namespace minirun::runtime::exec_gate {
namespace {

#ifndef MFD_EXEC
constexpr unsigned int MFD_EXEC = 0x0010U; // Linux 6.3: executable memfd, explicitly
#endif

// Whether a filter built from `seccomp` lets `name` through, whatever its arguments.
bool seccomp_allows(const spec::Seccomp& seccomp, std::string_view name) {
    bool named = false;
    for (const spec::SeccompSyscall& rule : seccomp.syscalls) {
        if (std::find(rule.names.begin(), rule.names.end(), name) == rule.names.end()) {
            continue;
        }
        // Any rule on it that is not a plain allow (an errno, a notify, a condition on its
        // arguments) may stop the gate.
        if (rule.action != "SCMP_ACT_ALLOW" || !rule.args.empty()) {
            return false;
        }
        named = true;
    }
    return named || seccomp.default_action == "SCMP_ACT_ALLOW";
}

// What the gate calls once the filter is loaded (exec_gate/stub.cpp), on its way to a
// successful exec: entering it, waiting for start, marking fds close-on-exec.
constexpr std::array<std::string_view, 4> kGateSyscalls = {"execveat", "ppoll", "read", "fcntl"};

} // namespace

std::string unusable_because(const Plan& plan) {
    if (kExecGateStubSize == 0) {
        return "this build has no exec gate (x86-64 only)";
    }
    if (!plan.creates(spec::NamespaceType::pid)) {
        return "no new PID namespace: other processes may see the init";
    }
    const spec::Hooks& hooks = plan.spec.hooks;
    if (!hooks.create_container.empty() || !hooks.start_container.empty()) {
        return "createContainer/startContainer hooks run as copies of the init";
    }
    const spec::Process& process = *plan.spec.process;
    if (!process.apparmor_profile.empty() || !process.selinux_label.empty()) {
        return "an LSM label applies at the next execve, which would be the gate's";
    }
    if (plan.spec.linux.seccomp) {
        for (std::string_view name : kGateSyscalls) {
            if (!seccomp_allows(*plan.spec.linux.seccomp, name)) {
                return cat("linux.seccomp may refuse ", name, ", which the gate needs");
            }
        }
    }
    return "";
}

Result<UniqueFd> open_gate() {
    if (kExecGateStubSize == 0) {
        return Error(ENOTSUP, "this build has no exec gate");
    }
    UniqueFd gate(static_cast<int>(::syscall(SYS_memfd_create, "mini-run-exec-gate",
                                             MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC)));
    if (!gate && errno == EINVAL) { // before Linux 6.3: no MFD_EXEC, memfds are executable
        gate.reset(static_cast<int>(
            ::syscall(SYS_memfd_create, "mini-run-exec-gate", MFD_CLOEXEC | MFD_ALLOW_SEALING)));
    }
    if (!gate) {
        return Error::from_errno("memfd_create for the exec gate");
    }
    if (::write(gate.get(), kExecGateStub, kExecGateStubSize) !=
        static_cast<ssize_t>(kExecGateStubSize)) {
        return Error::from_errno("write the exec gate");
    }
    // Every seal: nobody, not even we, can change it from now on.
    if (::fcntl(gate.get(), F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) <
        0) {
        return Error::from_errno("seal the exec gate");
    }
    return gate;
}

} // namespace minirun::runtime::exec_gate
