// The privilege drop: every step that takes power away from the container's process, in
// one place and in the one order that works (see docs/security.md for the reasons).
//
// The parent prepares a ProcessSecurity before clone() (capability names resolved, the
// seccomp filter compiled, LSM availability checked), so a bad config fails before
// anything exists and the init only carries the steps out. The init and every process
// `exec` starts go through the same two functions.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "minirun/spec.hpp"
#include "procfs.hpp"
#include "security/capabilities.hpp"
#include "security/seccomp.hpp"
#include "syscalls.hpp"

#include <string>
#include <string_view>

namespace minirun::runtime::security {

struct ProcessSecurity {
    // process.capabilities; without it, none at all: runc (finalizeNamespace starts from an
    // empty set) and crun drop every capability then, not keep all of root's.
    caps::CapabilitySets capabilities;
    int last_cap = 0;
    seccomp::Filter seccomp;
    std::string seccomp_listener; // linux.seccomp.listenerPath
    std::string seccomp_metadata;
    bool no_new_privileges = false;
    std::string apparmor_profile; // only when AppArmor is enabled on this host
    std::string selinux_label;    // only when SELinux is enabled on this host
};

// In the parent, before clone(). Warns once when an LSM setting cannot be honoured here.
Result<ProcessSecurity> prepare(const spec::Process& process, const spec::Linux& linux);

// The LSMs this host has: AppArmor (/sys/module/apparmor/parameters/enabled is "Y") and
// SELinux (selinuxfs at /sys/fs/selinux), as prepare() checks the config's labels.
struct HostLsms {
    bool apparmor = false;
    bool selinux = false;
};
HostLsms host_lsms();

// exec --apparmor / --process-label: `apparmor_profile` and `process_label`, when not empty,
// replace the process's process.apparmorProfile and process.selinuxLabel. One the host
// cannot apply is refused here, naming the option ("exec --apparmor: AppArmor is not
// enabled on this host"), before the exec makes anything.
Status apply_exec_labels(std::string_view apparmor_profile, std::string_view process_label,
                         const HostLsms& host, spec::Process& process);

// The seccomp listener, connected while its host path is still reachable (before
// pivot_root or setns into the container's mount namespace). Invalid if not needed.
Result<UniqueFd> connect_seccomp_listener(const ProcessSecurity& security);

// What the seccomp listener is told about the process (runtime-spec).
struct ListenerState {
    int socket = -1;
    std::string_view oci_version;
    pid_t pid = 0;
    std::string_view state_json;
};

// From full privileges to the process's own, in order: LSM labels for the exec, seccomp
// (here when no_new_privs is off: loading then needs CAP_SYS_ADMIN), bounding set,
// keep-caps, groups/gid/uid, capset and ambient, no_new_privs. The labels are written
// through `proc` (procfs.hpp), which only a process with a label needs; it is closed
// once they are (nullptr: none).
Status drop_privileges(const ProcessSecurity& security, const spec::User& user, Syscalls& sys,
                       const ListenerState& listener, procfs::Handle* proc);

// Right before execve: the seccomp filter when no_new_privs is on, so that none of
// mini-run's own work runs under it. `then` is the exec's --explain line, printed first.
Status before_exec(const ProcessSecurity& security, const ListenerState& listener, Syscalls& sys,
                   std::string_view then = {});

} // namespace minirun::runtime::security
