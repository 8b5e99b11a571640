#include "user.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"

#include <unistd.h>

namespace minirun::runtime::user {

Status write_id_maps(pid_t init_pid, const Plan& plan) {
    std::string proc = cat("/proc/", init_pid, "/");
    // An unprivileged writer may only map its own gid after denying setgroups(2), or it
    // could drop a group that denies it access (CVE-2014-8989). Root has CAP_SETGID in
    // the parent namespace and keeps setgroups usable for additionalGids.
    if (::geteuid() != 0) {
        MR_TRY_WRAP(fs::write_file(proc + "setgroups", "deny"), "user namespace");
    }
    if (explain::enabled()) {
        explain::step(cat("write ", proc, "gid_map: ", quoted(plan.gid_map)));
    }
    MR_TRY_WRAP(fs::write_file(proc + "gid_map", plan.gid_map), "linux.gidMappings");
    if (explain::enabled()) {
        explain::step(cat("write ", proc, "uid_map: ", quoted(plan.uid_map)));
    }
    MR_TRY_WRAP(fs::write_file(proc + "uid_map", plan.uid_map), "linux.uidMappings");
    return {};
}

Status become_namespace_root(Syscalls& sys) {
    MR_TRY_WRAP(sys.setresgid(0), "become root in the user namespace");
    MR_TRY_WRAP(sys.setresuid(0), "become root in the user namespace");
    return {};
}

Status apply_process_identity(const spec::User& user, Syscalls& sys) {
    // Always set the groups, even to none: otherwise the container inherits the runtime
    // caller's supplementary groups.
    std::vector<gid_t> groups(user.additional_gids.begin(), user.additional_gids.end());
    if (auto status = sys.setgroups(groups); !status) {
        // Where setgroups is denied (a user namespace made without privileges), an empty
        // list is what the process has anyway.
        if (!(groups.empty() && status.error().errno_value() == EPERM)) {
            return status.error().wrap("process.user.additionalGids");
        }
    }
    if (explain::enabled()) {
        explain::step(cat("setgroups(", groups.size(), " groups), setresgid(", user.gid,
                          "), setresuid(", user.uid, ")"));
    }
    MR_TRY_WRAP(sys.setresgid(user.gid), "process.user.gid");
    MR_TRY_WRAP(sys.setresuid(user.uid), "process.user.uid");
    return {};
}

} // namespace minirun::runtime::user
