#include "ns/pid.hpp"

#include "minirun/log.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>

namespace minirun::runtime::pid {

Result<JoinedForChildren> JoinedForChildren::enter_fd(int namespace_fd, Syscalls& sys) {
    JoinedForChildren joined;
    joined.sys_ = &sys;
    joined.own_.reset(::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC));
    if (!joined.own_) {
        return Error::from_errno("open /proc/self/ns/pid");
    }
    if (auto entered = sys.setns(namespace_fd, CLONE_NEWPID); !entered) {
        joined.own_.reset();
        return checked(entered, "join pid namespace").error();
    }
    return joined;
}

Result<JoinedForChildren> JoinedForChildren::enter(const Plan& plan, Syscalls& sys) {
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
        auto joined = enter_fd(target.get(), sys);
        if (!joined) {
            return joined.error().wrap(where);
        }
        return joined;
    }
    return JoinedForChildren();
}

JoinedForChildren JoinedForChildren::returning_to(UniqueFd own, Syscalls& sys) {
    JoinedForChildren joined;
    joined.own_ = std::move(own);
    joined.sys_ = &sys;
    return joined;
}

Status JoinedForChildren::leave() {
    if (!own_) {
        return {};
    }
    // Returning to our own active namespace is always allowed (it is an ancestor of, or
    // equal to, every namespace we could have joined): a failure is a broken invariant.
    UniqueFd own = std::move(own_); // leaves own_ empty: done once, even if it fails
    return checked(sys_->setns(own.get(), CLONE_NEWPID),
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
