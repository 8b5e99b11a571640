// The namespace table and joining namespaces by path.
//
// Each namespace type has a clone flag and a name under /proc/<pid>/ns/. What mini-run does
// with each one lives in its own file: user.cpp, pid.cpp, mount.cpp (and rootfs.cpp),
// net.cpp, ipc.cpp, uts.cpp, cgroup: cgroup_ns.cpp, time.cpp.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "minirun/spec.hpp"
#include "plan.hpp"

#include <string_view>
#include <vector>

namespace minirun::runtime {

int clone_flag_of(spec::NamespaceType type);
// The entry under /proc/<pid>/ns/ ("net" for network, "mnt" for mount).
std::string_view proc_ns_name(spec::NamespaceType type);

// An open namespace file the init will setns() into.
struct OpenNamespace {
    NamespaceToJoin target;
    UniqueFd fd;
};

// Opens every namespace the plan joins and checks that each file really is a namespace of
// the type the config says (NS_GET_NSTYPE), before anything is created. The pid
// namespace is not among them: see pid.cpp.
Result<std::vector<OpenNamespace>> open_namespaces_to_join(const Plan& plan);

// In the init: setns() into the opened namespaces, in the plan's order (user first, so
// the others are joined with the joined user namespace's privileges).
Status join_namespaces(const std::vector<OpenNamespace>& namespaces);

// In the init, after joining: the namespaces that must be owned by a joined user
// namespace are created now.
Status unshare_remaining(const Plan& plan);

} // namespace minirun::runtime
