#include "ns/namespaces.hpp"

#include "minirun/explain.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>

namespace minirun::runtime {

using spec::NamespaceType;

int clone_flag_of(NamespaceType type) {
    return spec::namespace_kind(type).clone_flag;
}

std::string_view proc_ns_name(NamespaceType type) {
    return spec::namespace_kind(type).proc_name;
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

std::vector<NamespaceEntry> entries_of(const std::vector<OpenNamespace>& namespaces) {
    std::vector<NamespaceEntry> entries;
    entries.reserve(namespaces.size());
    for (const OpenNamespace& ns : namespaces) {
        entries.push_back({ns.fd.get(), ns.target.clone_flag,
                           cat("join ", spec::namespace_type_name(ns.target.type), " namespace ",
                               quoted(ns.target.path))});
    }
    return entries;
}

Status join_namespaces(const std::vector<NamespaceEntry>& entries, Syscalls& sys) {
    for (const NamespaceEntry& entry : entries) {
        MR_TRY(checked(sys.setns(entry.fd, entry.clone_flag), entry.what));
    }
    return {};
}

Status unshare_remaining(const Plan& plan, Syscalls& sys) {
    if (plan.unshare_flags == 0) {
        return {};
    }
    if (explain::enabled()) {
        explain::step(cat("unshare(", explain::clone_flag_names(plan.unshare_flags), ")"));
    }
    return checked(sys.unshare(plan.unshare_flags), "unshare the container's namespaces");
}

} // namespace minirun::runtime
