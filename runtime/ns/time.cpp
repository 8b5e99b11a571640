#include "ns/time.hpp"

#include "minirun/explain.hpp"
#include "minirun/fd.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>

namespace minirun::runtime::time_ns {

Status enter_new_time_namespace(const Plan& plan, const procfs::Handle* proc, Syscalls& sys) {
    MR_TRY_WRAP(procfs::Handle::usable(proc), "linux.timeOffsets");
    if (explain::enabled()) {
        explain::step(cat("unshare(CLONE_NEWTIME), write timens_offsets ",
                          quoted(plan.time_offsets), ", setns(time_for_children)"));
    }
    MR_TRY(checked(sys.unshare(CLONE_NEWTIME), "unshare time namespace"));
    if (!plan.time_offsets.empty()) {
        // The init is non-dumpable, which makes its /proc files belong to the host's root:
        // inside a user namespace it could not open its own timens_offsets. Dumpable only
        // for this write; nothing of the container runs yet to take advantage.
        MR_TRY(checked(sys.prctl(PR_SET_DUMPABLE, 1),
                       "linux.timeOffsets: make the init dumpable to write its timens_offsets"));
        auto written = sys.write_proc(*proc, "self/timens_offsets", plan.time_offsets);
        // Failing to become non-dumpable again outweighs a failed write: the container's
        // processes would inherit a dumpable init.
        MR_TRY(checked(sys.prctl(PR_SET_DUMPABLE, 0),
                       "linux.timeOffsets: make the init non-dumpable again"));
        if (!written) {
            return written.error().wrap("linux.timeOffsets");
        }
    }
    // Through the handle too: a joined mount namespace's /proc is whatever its maker left
    // there. The ns files are magic links, which the handle does not follow: their
    // directory comes from it, the link is followed from there.
    MR_ASSIGN(UniqueFd ns_dir, proc->open_file("self/ns", O_PATH | O_DIRECTORY));
    UniqueFd ns(::openat(ns_dir.get(), "time_for_children", O_RDONLY | O_CLOEXEC));
    if (!ns) {
        return Error::from_errno("open /proc/self/ns/time_for_children");
    }
    return checked(sys.setns(ns.get(), CLONE_NEWTIME), "enter time namespace");
}

} // namespace minirun::runtime::time_ns
