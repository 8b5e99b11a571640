// The cgroup namespace: what a process sees as the root of /proc/self/cgroup and of a
// cgroup mount is the cgroup its creator was in when the namespace was made.
//
// So the namespace must be made once the init is in the container's cgroups. The init joins
// its v1 cgroups itself after clone() (cgroup.hpp, SelfJoin), so clone() cannot make it:
// the plan moves CLONE_NEWCGROUP from the clone flags to the flags the init unshares after
// the "join cgroups" step (recipe.cpp, "unshare namespaces").
#pragma once

namespace minirun::runtime::cgroup_ns {

// Plan side: takes CLONE_NEWCGROUP out of `clone_flags`, if there, into `unshare_flags`.
void unshare_after_joining(unsigned long& clone_flags, unsigned long& unshare_flags);

} // namespace minirun::runtime::cgroup_ns
