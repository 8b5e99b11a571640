#include "pid.hpp"

#include "minirun/log.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>

namespace minirun::runtime::pid {

Result<JoinedForChildren> JoinedForChildren::enter(const Plan& plan) {
    JoinedForChildren joined;
    for (const NamespaceToJoin& join : plan.joins) {
        if (join.type != spec::NamespaceType::pid) {
            continue;
        }
        std::string where = cat("linux.namespaces[", join.config_index, "].path");
        UniqueFd target(::open(join.path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!target) {
            return Error::from_errno(cat(where, ": open ", quoted(join.path)));
        }
        if (::ioctl(target.get(), NS_GET_NSTYPE) != CLONE_NEWPID) {
            return Error(EINVAL, cat(where, ": ", quoted(join.path), " is not a pid namespace"));
        }
        joined.own_.reset(::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC));
        if (!joined.own_) {
            return Error::from_errno("open /proc/self/ns/pid");
        }
        if (::setns(target.get(), CLONE_NEWPID) < 0) {
            return Error::from_errno(cat("join pid namespace ", quoted(join.path)));
        }
    }
    return joined;
}

JoinedForChildren::~JoinedForChildren() {
    // Returning to our own active namespace is always allowed (it is an ancestor of, or
    // equal to, every namespace we could have joined).
    if (own_ && ::setns(own_.get(), CLONE_NEWPID) < 0) {
        log::warning("could not return to the runtime's own pid namespace");
    }
}

} // namespace minirun::runtime::pid
