#include "ns/cgroup_ns.hpp"

#include <sched.h>

namespace minirun::runtime::cgroup_ns {

void unshare_after_joining(unsigned long& clone_flags, unsigned long& unshare_flags) {
    if ((clone_flags & CLONE_NEWCGROUP) != 0) {
        clone_flags &= ~static_cast<unsigned long>(CLONE_NEWCGROUP);
        unshare_flags |= CLONE_NEWCGROUP;
    }
}

} // namespace minirun::runtime::cgroup_ns
