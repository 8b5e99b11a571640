#include "security/exec_gate.hpp"

#include "minirun/log.hpp"
#include "security/sealed_exe.hpp"
#include "state.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
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

constexpr const char* kNoGate = "this build has no exec gate (x86-64 only)";

// What the gate calls once the filter is loaded (exec_gate/stub.cpp), on its way to a
// successful exec: entering it, waiting for start, marking fds close-on-exec. An exec'd
// process's gate does not wait (no ppoll, no read), but one list keeps the rule one.
constexpr std::array<std::string_view, 4> kGateSyscalls = {"execveat", "ppoll", "read", "fcntl"};

// What rules the gate out for the init and an exec'd process alike: a build without it, a
// label for the next execve, a filter that may stop the gate.
std::string unusable_for_any(const spec::Process& process,
                             const std::optional<spec::Seccomp>& seccomp) {
    if (kExecGateStubSize == 0) {
        return kNoGate;
    }
    if (!process.apparmor_profile.empty() || !process.selinux_label.empty()) {
        return "an LSM label applies at the next execve, which would be the gate's";
    }
    if (seccomp) {
        for (std::string_view name : kGateSyscalls) {
            if (!seccomp_allows(*seccomp, name)) {
                return cat("linux.seccomp may refuse ", name, ", which the gate needs");
            }
        }
    }
    return "";
}

bool names_ptrace(const std::vector<std::string>& set) {
    return std::find(set.begin(), set.end(), "CAP_SYS_PTRACE") != set.end();
}

bool makes_own_pid_namespace(const spec::Spec& spec) {
    return std::any_of(spec.linux.namespaces.begin(), spec.linux.namespaces.end(),
                       [](const spec::Namespace& ns) {
                           return ns.type == spec::NamespaceType::pid && ns.path.empty();
                       });
}

// Whether `pid` lives in the PID namespace whose nsfs file is `ns`.
bool in_namespace(pid_t pid, const struct stat& ns) {
    struct stat theirs {};
    return pid > 0 && ::stat(cat("/proc/", pid, "/ns/pid").c_str(), &theirs) == 0 &&
           theirs.st_ino == ns.st_ino && theirs.st_dev == ns.st_dev;
}

} // namespace

std::string unusable_because(const spec::Spec& spec) {
    if (kExecGateStubSize == 0) {
        return kNoGate;
    }
    if (!makes_own_pid_namespace(spec)) {
        return "no new PID namespace: other processes may see the init";
    }
    const spec::Hooks& hooks = spec.hooks;
    if (!hooks.create_container.empty() || !hooks.start_container.empty()) {
        return "createContainer/startContainer hooks run as copies of the init";
    }
    return unusable_for_any(*spec.process, spec.linux.seccomp);
}

bool may_hold_ptrace(const spec::Process& process) {
    if (!process.capabilities) {
        return false; // none at all (security.hpp)
    }
    const spec::Capabilities& caps = *process.capabilities;
    return names_ptrace(caps.bounding) || names_ptrace(caps.effective) ||
           names_ptrace(caps.permitted) || names_ptrace(caps.inheritable) ||
           names_ptrace(caps.ambient);
}

std::string unusable_for_exec_because(const spec::Spec& spec, const spec::Process& process,
                                      const ExecFacts& facts) {
    if (std::string reason = unusable_for_any(process, spec.linux.seccomp); !reason.empty()) {
        return reason;
    }
    if (!makes_own_pid_namespace(spec)) {
        return "the container's PID namespace is not its own: processes of others see this one";
    }
    if (facts.paused) {
        return "the container is paused";
    }
    if (facts.suid_dumpable_user) {
        return "fs.suid_dumpable is 1: the process would be dumpable once it is the user";
    }
    if (!facts.own_user_namespace) {
        if (spec.process && may_hold_ptrace(*spec.process)) {
            return "the container's process may hold CAP_SYS_PTRACE";
        }
        if (may_hold_ptrace(process)) {
            return "this process may hold CAP_SYS_PTRACE";
        }
        if (facts.ptrace_marked) {
            return "a process that may hold CAP_SYS_PTRACE shares the container's PID namespace";
        }
    }
    return "";
}

Status mark_joined_pid_namespace(const spec::Spec& spec, const std::string& root) {
    const spec::Namespace* pid = nullptr;
    const spec::Namespace* user = nullptr;
    for (const spec::Namespace& ns : spec.linux.namespaces) {
        if (ns.type == spec::NamespaceType::pid) {
            pid = &ns;
        } else if (ns.type == spec::NamespaceType::user) {
            user = &ns;
        }
    }
    if (pid == nullptr || pid->path.empty() || !may_hold_ptrace(*spec.process)) {
        return {};
    }
    struct stat joined {};
    struct stat ours {};
    if (user != nullptr &&
        (user->path.empty() || ::stat(user->path.c_str(), &joined) != 0 ||
         ::stat("/proc/self/ns/user", &ours) != 0 || joined.st_ino != ours.st_ino)) {
        return {}; // a user namespace not ours: no capability in ours
    }
    if (::stat(pid->path.c_str(), &joined) != 0) {
        return {}; // the clone reports it
    }
    auto ids = state::list_ids(root);
    if (!ids) {
        return {};
    }
    for (const std::string& id : *ids) {
        auto dir = state::StateDir::open(root, id);
        if (!dir) {
            continue;
        }
        auto record = dir->load();
        if (!record || !in_namespace(record->pid, joined)) {
            continue;
        }
        MR_TRY(dir->lock());
        MR_TRY(dir->add_mark(kPtraceMark));
    }
    return {};
}

Result<UniqueFd> protect_runtime_binary(const Protection& protection) {
    const std::string& reason = protection.ruled_out;
    if (runs_from_protected_view()) {
        // Said here, after the re-exec, so that it is said (and a step numbered) once.
        protection.say(reason.empty()
                           ? "mini-run runs from a read-only view or sealed copy of itself"
                           : cat("no exec gate (", reason,
                                 "): mini-run runs from a read-only view of itself"));
        return UniqueFd();
    }
    if (reason.empty()) {
        auto gate = open_gate();
        if (gate) {
            protection.say(protection.gate_text);
            return std::move(*gate);
        }
        log::debug(cat("exec gate: ", gate.error().message(), "; re-executing instead"));
    }
    if (protection.reexec_argv == nullptr) {
        return UniqueFd();
    }
    if (protection.reexec_mask != nullptr) {
        ::sigprocmask(SIG_SETMASK, protection.reexec_mask, nullptr);
    }
    MR_TRY(ensure_sealed_binary(protection.reexec_argv));
    return UniqueFd();
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
