#include "ns/pid.hpp"

#include "minirun/log.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <csignal>

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

Result<JoinedForChildren> JoinedForChildren::enter(const Plan& plan,
                                                   const std::vector<OpenNamespace>& namespaces,
                                                   Syscalls& sys) {
    if (plan.pid_joined_by_init) {
        return JoinedForChildren();
    }
    for (const OpenNamespace& ns : namespaces) {
        if (ns.target.type != spec::NamespaceType::pid) {
            continue;
        }
        auto joined = enter_fd(ns.fd.get(), sys);
        if (!joined) {
            return joined.error().wrap(
                cat("linux.namespaces[", ns.target.config_index, "]: ", quoted(ns.target.path)));
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

Status continue_as_pid_1(const Plan& plan, InitEnd& sync, Syscalls& sys) {
    if (!plan.init_forks_into_pid_namespace()) {
        return {};
    }
    if (plan.new_pid_namespace_in_joined_user) {
        MR_TRY(checked(sys.unshare(CLONE_NEWPID), "unshare a pid namespace in the user namespace"));
    } // else joined with the others (join_namespaces): for the children, as unshare() would be
    // Like fork(), but the child's parent is ours (mini-run): its exit is mini-run's to see.
    long pid = ::syscall(SYS_clone, CLONE_PARENT, nullptr, nullptr, nullptr, 0);
    if (pid < 0) {
        return Error::from_errno("clone the init into its pid namespace");
    }
    if (pid == 0) {
        // Pid 1 now. The parent death signal is not inherited; should mini-run be gone
        // already, the sync socket's end of stream ends this process at its next step.
        return checked(sys.prctl(PR_SET_PDEATHSIG, SIGKILL), "set parent death signal");
    }
    if (auto sent = sync.send(ToParent::kForked, cat(pid)); !sent) {
        ::kill(static_cast<pid_t>(pid), SIGKILL);
        return sent.error().wrap("report the init's second stage");
    }
    ::_exit(0);
}

Status take_second_stage(const Plan& plan, ParentEnd& sync, ScopedChild& init) {
    if (!plan.init_forks_into_pid_namespace()) {
        return {};
    }
    MR_ASSIGN(auto forked, sync.expect(ToParent::kForked));
    const std::string& text = forked.payload;
    pid_t pid = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (error != std::errc{} || end != text.data() + text.size() || pid <= 0) {
        return Error(EPROTO, cat("the init's first stage sent ", quoted(text), " for its pid"));
    }
    ScopedChild second(pid); // ours (CLONE_PARENT): killed and reaped should this fail
    MR_TRY_WRAP(init.reap(), "reap the init's first stage");
    init.reset(second.release());
    return {};
}

} // namespace minirun::runtime::pid
