#include "ns/namespaces.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"
#include "process/child.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <sstream>

namespace minirun::runtime {

using spec::NamespaceType;

int clone_flag_of(NamespaceType type) {
    return spec::namespace_kind(type).clone_flag;
}

std::string_view proc_ns_name(NamespaceType type) {
    return spec::namespace_kind(type).proc_name;
}

namespace {

Result<UniqueFd> open_checked(const NamespaceToJoin& join) {
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
    return fd;
}

// runc 1.3 (specconv): containerd and CRI-O give a joined user namespace's mappings too;
// they must be the namespace's own, in the same order, or the ids the runtime computes
// (devices' owners, idmapped mounts) would not be the container's.
Status check_joined_map(int proc_dir, const char* file, const std::string& expected,
                        const NamespaceToJoin& user) {
    std::string what = cat("the ", file, " of user namespace ", quoted(user.path));
    UniqueFd fd(::openat(proc_dir, file, O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", what));
    }
    MR_ASSIGN(std::string text, fs::read_all(fd.get(), what));
    std::string actual = normalized_id_map(text);
    if (actual == expected) {
        return {};
    }
    const bool uid = std::string_view(file) == "uid_map";
    return Error(EINVAL, cat(uid ? "linux.uidMappings" : "linux.gidMappings",
                             ": user namespaces enabled, but both namespace path and "
                             "non-matching mapping specified -- you may only provide one (",
                             quoted(user.path), " has ", file, " ", quoted(one_line_id_map(actual)),
                             ", the config ", quoted(one_line_id_map(expected)), ")"));
}

// With a joined user namespace and the config's mappings, a child joins it
// (clone_namespace_holder): its /proc/<pid>/uid_map and gid_map are the namespace's maps as
// the runtime sees them.
Status check_joined_maps(const Plan& plan, const std::vector<OpenNamespace>& opened,
                         Syscalls& sys) {
    auto user = std::find_if(opened.begin(), opened.end(), [](const OpenNamespace& ns) {
        return ns.target.type == NamespaceType::user;
    });
    if (user == opened.end() || (plan.uid_map.empty() && plan.gid_map.empty())) {
        return {};
    }
    const NamespaceToJoin& target = user->target;
    ScopedChild holder; // killed and reaped on the way out
    auto pid = sys.clone_namespace_holder(user->fd.get());
    if (!pid) {
        return pid.error().wrap(cat("linux.namespaces[", target.config_index,
                                    "].path: user namespace ", quoted(target.path)));
    }
    holder.reset(*pid);
    std::string proc = cat("/proc/", *pid);
    UniqueFd proc_dir(::open(proc.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!proc_dir) {
        return Error::from_errno(cat("open ", proc));
    }
    MR_TRY(check_joined_map(proc_dir.get(), "uid_map", plan.uid_map, target));
    return check_joined_map(proc_dir.get(), "gid_map", plan.gid_map, target);
}

} // namespace

std::string normalized_id_map(std::string_view text) {
    std::string out;
    std::istringstream lines{std::string(text)};
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string word;
        std::string joined;
        while (words >> word) {
            joined += cat(joined.empty() ? "" : " ", word);
        }
        if (!joined.empty()) {
            out += joined + "\n";
        }
    }
    return out;
}

std::string one_line_id_map(std::string text) {
    while (!text.empty() && text.back() == '\n') {
        text.pop_back();
    }
    std::replace(text.begin(), text.end(), '\n', ',');
    return text;
}

Result<std::vector<OpenNamespace>> open_namespaces_to_join(const Plan& plan, Syscalls& sys) {
    std::vector<OpenNamespace> opened;
    for (const NamespaceToJoin& join : plan.joins) {
        MR_ASSIGN(UniqueFd fd, open_checked(join));
        opened.push_back({join, std::move(fd)});
    }
    MR_TRY(check_joined_maps(plan, opened, sys));
    return opened;
}

std::vector<NamespaceEntry> entries_of(const std::vector<OpenNamespace>& namespaces,
                                       bool with_pid) {
    std::vector<NamespaceEntry> entries;
    entries.reserve(namespaces.size());
    for (const OpenNamespace& ns : namespaces) {
        if (ns.target.type == NamespaceType::pid && !with_pid) {
            continue; // the parent's, around the clone (pid.hpp)
        }
        entries.push_back({ns.fd.get(), ns.target.clone_flag,
                           cat("join ", spec::namespace_type_name(ns.target.type), " namespace ",
                               quoted(ns.target.path))});
    }
    return entries;
}

Status join_namespaces(const std::vector<NamespaceEntry>& entries, Syscalls& sys) {
    // runc 1.2's two-stage join (nsenter(1) does the same): every namespace but the user
    // namespace first, with the privileges we have, as the host's root may join one that
    // the joined user namespace does not own (a network namespace made outside it: runc
    // issue 4390), which it could not do from inside; then the user namespace; then, with
    // its privileges, those refused before (EPERM: a caller that is not the host's root
    // may join only what the user namespace owns).
    std::vector<const NamespaceEntry*> refused;
    for (const NamespaceEntry& entry : entries) {
        if (entry.clone_flag == CLONE_NEWUSER) {
            continue;
        }
        if (auto joined = sys.setns(entry.fd, entry.clone_flag); !joined) {
            if (joined.error().errno_value() != EPERM) {
                return checked(joined, entry.what);
            }
            refused.push_back(&entry);
        }
    }
    for (const NamespaceEntry& entry : entries) {
        if (entry.clone_flag == CLONE_NEWUSER) {
            MR_TRY(checked(sys.setns(entry.fd, entry.clone_flag), entry.what));
        }
    }
    for (const NamespaceEntry* entry : refused) {
        MR_TRY(checked(sys.setns(entry->fd, entry->clone_flag), entry->what));
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
