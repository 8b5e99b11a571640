#include "namespaces.hpp"

#include "minirun/explain.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>

namespace minirun::runtime {

using spec::NamespaceType;

int clone_flag_of(NamespaceType type) {
    switch (type) {
    case NamespaceType::pid:
        return CLONE_NEWPID;
    case NamespaceType::network:
        return CLONE_NEWNET;
    case NamespaceType::mount:
        return CLONE_NEWNS;
    case NamespaceType::ipc:
        return CLONE_NEWIPC;
    case NamespaceType::uts:
        return CLONE_NEWUTS;
    case NamespaceType::user:
        return CLONE_NEWUSER;
    case NamespaceType::cgroup:
        return CLONE_NEWCGROUP;
    case NamespaceType::time:
        return CLONE_NEWTIME;
    }
    return 0;
}

std::string_view proc_ns_name(NamespaceType type) {
    switch (type) {
    case NamespaceType::pid:
        return "pid";
    case NamespaceType::network:
        return "net";
    case NamespaceType::mount:
        return "mnt";
    case NamespaceType::ipc:
        return "ipc";
    case NamespaceType::uts:
        return "uts";
    case NamespaceType::user:
        return "user";
    case NamespaceType::cgroup:
        return "cgroup";
    case NamespaceType::time:
        return "time";
    }
    return "";
}

Result<std::vector<OpenNamespace>> open_namespaces_to_join(const Plan& plan) {
    std::vector<OpenNamespace> opened;
    for (const NamespaceToJoin& join : plan.joins) {
        if (join.type == NamespaceType::pid) {
            continue;
        }
        std::string where = cat("linux.namespaces[", join.config_index, "].path");
        UniqueFd fd(::open(join.path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) {
            return Error::from_errno(cat(where, ": open ", quoted(join.path)));
        }
        int actual = ::ioctl(fd.get(), NS_GET_NSTYPE);
        if (actual < 0) {
            return Error(errno, cat(where, ": ", quoted(join.path), " is not a namespace"));
        }
        if (actual != join.clone_flag) {
            return Error(EINVAL, cat(where, ": ", quoted(join.path), " is not a ",
                                     spec::namespace_type_name(join.type), " namespace"));
        }
        opened.push_back({join, std::move(fd)});
    }
    return opened;
}

Status join_namespaces(const std::vector<OpenNamespace>& namespaces) {
    for (const OpenNamespace& ns : namespaces) {
        if (::setns(ns.fd.get(), ns.target.clone_flag) < 0) {
            return Error::from_errno(cat("join ", spec::namespace_type_name(ns.target.type),
                                         " namespace ", quoted(ns.target.path)));
        }
    }
    return {};
}

Status unshare_remaining(const Plan& plan) {
    if (plan.unshare_flags == 0) {
        return {};
    }
    if (explain::enabled()) {
        explain::step(cat("unshare(", explain::clone_flag_names(plan.unshare_flags), ")"));
    }
    return check_syscall(::unshare(static_cast<int>(plan.unshare_flags)),
                         "unshare the container's namespaces");
}

} // namespace minirun::runtime
