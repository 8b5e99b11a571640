#include "ns/pid.hpp"

#include "minirun/log.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>

namespace minirun::runtime::pid {

Result<JoinedForChildren> JoinedForChildren::enter_fd(int namespace_fd) {
    JoinedForChildren joined;
    joined.own_.reset(::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC));
    if (!joined.own_) {
        return Error::from_errno("open /proc/self/ns/pid");
    }
    if (::setns(namespace_fd, CLONE_NEWPID) < 0) {
        joined.own_.reset();
        return Error::from_errno("join pid namespace");
    }
    return joined;
}

Result<JoinedForChildren> JoinedForChildren::enter(const Plan& plan) {
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
        auto joined = enter_fd(target.get());
        if (!joined) {
            return joined.error().wrap(where);
        }
        return joined;
    }
    return JoinedForChildren();
}

JoinedForChildren JoinedForChildren::returning_to(UniqueFd own) {
    JoinedForChildren joined;
    joined.own_ = std::move(own);
    return joined;
}

Status JoinedForChildren::leave() {
    if (!own_) {
        return {};
    }
    // Returning to our own active namespace is always allowed (it is an ancestor of, or
    // equal to, every namespace we could have joined): a failure is a broken invariant.
    UniqueFd own = std::move(own_); // leaves own_ empty: done once, even if it fails
    return check_syscall(::setns(own.get(), CLONE_NEWPID),
                         "return to the runtime's own pid namespace (setns)");
}

JoinedForChildren::~JoinedForChildren() {
    if (!own_) {
        return;
    }
    if (auto left = leave(); !left) {
        log::error(cat(left.error().message(),
                       "; the runtime's next children would be created in the joined one"));
    }
}

} // namespace minirun::runtime::pid
