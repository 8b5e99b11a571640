#include "security/security.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"
#include "ns/user.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace minirun::runtime::security {
namespace {

bool apparmor_enabled() {
    auto enabled = fs::read_file("/sys/module/apparmor/parameters/enabled");
    return enabled && enabled->starts_with("Y");
}

bool selinux_enabled() {
    struct statfs info {};
    return ::statfs("/sys/fs/selinux", &info) == 0 && info.f_type == SELINUX_MAGIC;
}

// The label applies at the next execve. Written through the procfs handle (procfs.hpp),
// after the config's mounts: the attack of CVE-2025-52881 binds another procfs file
// (/proc/self/sched: the label is silently not applied; /proc/sysrq-trigger) over
// /proc/self/attr/exec, which an "is it procfs" check lets through; the handle's file is
// on a procfs nothing was mounted on, checked by its mount id. "thread-self": the
// attributes are the calling thread's (the kernel lets only a task write its own).
Status apply_lsm_labels(const ProcessSecurity& security, const procfs::Handle* proc,
                        Syscalls& sys) {
    if (security.apparmor_profile.empty() && security.selinux_label.empty()) {
        return {};
    }
    MR_TRY_WRAP(procfs::Handle::usable(proc), "LSM labels");
    if (!security.apparmor_profile.empty()) {
        std::string request = "exec " + security.apparmor_profile;
        auto written = sys.write_proc(*proc, "thread-self/attr/apparmor/exec", request);
        if (!written && written.error().errno_value() == ENOENT) {
            // Kernels before 5.8 have only the shared attribute file.
            written = sys.write_proc(*proc, "thread-self/attr/exec", request);
        }
        if (!written) {
            return written.error().wrap("process.apparmorProfile");
        }
    }
    if (!security.selinux_label.empty()) {
        MR_TRY_WRAP(sys.write_proc(*proc, "thread-self/attr/exec", security.selinux_label),
                    "process.selinuxLabel");
    }
    return {};
}

// `then`: the --explain line of the step after the filter (the exec), printed before the
// filter goes on, since after it nothing but the exec is ours to call.
Status load_seccomp(const ProcessSecurity& security, const ListenerState& listener, Syscalls& sys,
                    std::string_view then = {}) {
    if (security.seccomp.empty()) {
        if (!then.empty()) {
            explain::step(then);
        }
        return {};
    }
    if (explain::enabled()) {
        size_t rules = security.seccomp.rule_count();
        explain::step(cat("seccomp(SECCOMP_SET_MODE_FILTER): load the filter, ", rules,
                          rules == 1 ? " rule" : " rules"));
        if (!then.empty()) {
            explain::step(then);
        }
    }
    MR_ASSIGN(UniqueFd notify, security.seccomp.load(sys));
    if (notify && listener.socket >= 0) {
        MR_TRY_WRAP(seccomp::send_to_listener(listener.socket, notify.get(), listener.oci_version,
                                              listener.pid, security.seccomp_metadata,
                                              listener.state_json),
                    "linux.seccomp.listenerPath");
    }
    return {};
}

} // namespace

Result<ProcessSecurity> prepare(const spec::Process& process, const spec::Linux& linux) {
    ProcessSecurity security;
    security.last_cap = caps::kernel_last_cap();
    MR_ASSIGN(
        security.capabilities,
        caps::resolve(process.capabilities.value_or(spec::Capabilities{}), security.last_cap));
    if (linux.seccomp) {
        MR_ASSIGN(security.seccomp, seccomp::Filter::build(*linux.seccomp));
        security.seccomp_listener = linux.seccomp->listener_path;
        security.seccomp_metadata = linux.seccomp->listener_metadata;
    }
    security.no_new_privileges = process.no_new_privileges;
    // runtime.md (create): a property that cannot be applied is an error. Running the
    // process unconfined because the host lacks the LSM is the worse failure; engines ask
    // for a profile only where the host has the LSM (Docker, podman check first).
    if (!process.apparmor_profile.empty()) {
        if (!apparmor_enabled()) {
            return Error(ENOTSUP, cat("process.apparmorProfile: cannot apply ",
                                      quoted(process.apparmor_profile),
                                      ": AppArmor is not enabled on this host"));
        }
        security.apparmor_profile = process.apparmor_profile;
    }
    if (!process.selinux_label.empty()) {
        if (!selinux_enabled()) {
            return Error(ENOTSUP,
                         cat("process.selinuxLabel: cannot apply ", quoted(process.selinux_label),
                             ": SELinux is not enabled on this host"));
        }
        security.selinux_label = process.selinux_label;
    }
    if (!linux.mount_label.empty()) {
        return Error(ENOTSUP,
                     cat("linux.mountLabel: cannot apply ", quoted(linux.mount_label), ": ",
                         selinux_enabled() ? "mini-run does not set SELinux mount labels"
                                           : "SELinux is not enabled on this host"));
    }
    return security;
}

HostLsms host_lsms() {
    return HostLsms{.apparmor = apparmor_enabled(), .selinux = selinux_enabled()};
}

Status apply_exec_labels(std::string_view apparmor_profile, std::string_view process_label,
                         const HostLsms& host, spec::Process& process) {
    // runc's exec sets them on the process it builds; its --process file path ignores
    // them, mini-run applies them over the file's too rather than drop an option silently.
    if (!apparmor_profile.empty() && !host.apparmor) {
        return Error(ENOTSUP, "exec --apparmor: AppArmor is not enabled on this host");
    }
    if (!process_label.empty() && !host.selinux) {
        return Error(ENOTSUP, "exec --process-label: SELinux is not enabled on this host");
    }
    if (!apparmor_profile.empty()) {
        process.apparmor_profile = apparmor_profile;
    }
    if (!process_label.empty()) {
        process.selinux_label = process_label;
    }
    return {};
}

Result<UniqueFd> connect_seccomp_listener(const ProcessSecurity& security) {
    if (!security.seccomp.uses_notify() || security.seccomp_listener.empty()) {
        return UniqueFd();
    }
    return seccomp::connect_listener(security.seccomp_listener);
}

Status drop_privileges(const ProcessSecurity& security, const spec::User& user, Syscalls& sys,
                       const ListenerState& listener, procfs::Handle* proc) {
    // LSM labels take effect at execve; writing them needs the privileges we still have.
    MR_TRY(apply_lsm_labels(security, proc, sys));
    // The last write under /proc is done: the handle goes now, not at the exec (it is
    // close-on-exec too), so that it is not open while the init waits for `start` or runs
    // the startContainer hooks.
    if (proc != nullptr) {
        proc->close();
    }
    // Without no_new_privs, loading a filter needs CAP_SYS_ADMIN: last chance is now.
    if (!security.no_new_privileges) {
        MR_TRY(load_seccomp(security, listener, sys));
    }
    // Dropping from the bounding set needs CAP_SETPCAP, which the uid switch may take.
    MR_TRY(caps::drop_bounding(security.capabilities, security.last_cap, sys));
    // Without keep-caps, setresuid() to a non-root uid clears the permitted set.
    MR_TRY(caps::keep_across_uid_switch(sys));
    MR_TRY(user::apply_process_identity(user, sys));
    MR_TRY(caps::apply(security.capabilities, sys));
    if (security.no_new_privileges) {
        explain::step("prctl(PR_SET_NO_NEW_PRIVS, 1): no exec can gain privileges");
        MR_TRY(checked(sys.prctl(PR_SET_NO_NEW_PRIVS, 1), "process.noNewPrivileges"));
    }
    return {};
}

Status before_exec(const ProcessSecurity& security, const ListenerState& listener, Syscalls& sys,
                   std::string_view then) {
    if (security.no_new_privileges) {
        return load_seccomp(security, listener, sys, then);
    }
    if (!then.empty()) {
        explain::step(then);
    }
    return {};
}

} // namespace minirun::runtime::security
