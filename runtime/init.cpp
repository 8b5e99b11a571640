// The init's recipe: every step between clone() and execve(), in order.
//
// The order is the point of this file. Each step says why it sits where it does.
#include "init.hpp"

#include "mount.hpp"
#include "net.hpp"
#include "process.hpp"
#include "syscalls.hpp"
#include "time.hpp"
#include "user.hpp"
#include "uts.hpp"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace minirun::runtime {
namespace {

using spec::NamespaceType;

Status init_steps(const Plan& plan, InitContext& context) {
    Syscalls& sys = linux_syscalls();
    const spec::Process& process = *plan.spec.process;

    // If mini-run dies during setup, a half-made container must not live on.
    MR_TRY(check_syscall(::prctl(PR_SET_PDEATHSIG, SIGKILL), "set parent death signal"));
    // Until exec this process is a copy of mini-run: nothing in the container may read its
    // memory or open /proc/<pid>/exe to reach the runtime binary (CVE-2019-5736 class).
    MR_TRY(check_syscall(::prctl(PR_SET_DUMPABLE, 0), "set non-dumpable"));
    // Modes of what we create (dirs, devices) must be exactly the ones we ask for;
    // process.user.umask is applied at the end.
    sys.umask(0);

    // Namespaces named by path are joined first, the user namespace leading, so the
    // ones created below belong to the right owners.
    MR_TRY(join_namespaces(*context.namespaces));

    // In a new user namespace our ids mean nothing until the parent has written the maps.
    if (plan.wait_for_parent) {
        MR_TRY_WRAP(context.sync.expect(SyncMessage::kParentReady), "wait for the runtime");
    }
    if (plan.creates(NamespaceType::user)) {
        MR_TRY(user::become_namespace_root(sys));
    }
    MR_TRY(unshare_remaining(plan));
    if (plan.new_time_namespace) {
        MR_TRY(time_ns::enter_new_time_namespace(plan));
    }

    // A session of its own: the container's processes are not in the caller's process
    // group, so a terminal's Ctrl-C reaches mini-run, which forwards it once.
    MR_TRY(check_syscall(::setsid() < 0 ? -1 : 0, "setsid"));

    if (plan.creates(NamespaceType::network)) {
        MR_TRY(net::bring_up_loopback());
    }
    MR_TRY(uts::set_names(plan.spec, sys));

    // The file system, while the host's paths are still visible (bind sources, the
    // host's /dev nodes): rootfs, mounts[], devices, cwd. Then pivot_root, and only then
    // remount the root read-only, since setup writes into it.
    {
        MR_ASSIGN(UniqueFd root, mount::prepare_rootfs(plan, sys));
        MR_TRY_WRAP(mount::pivot_into(root.get(), sys), "pivot_root");
    }
    MR_TRY(mount::finalize_root(plan, sys));

    // Identity last among the privileged steps: after setresuid() to a non-root user
    // nothing above would be allowed any more.
    MR_TRY(user::apply_process_identity(process.user, sys));
    sys.umask(process.user.umask.value_or(022));

    // As the final user: their permissions decide whether cwd and executable are usable.
    MR_TRY(process::enter_cwd(process));
    MR_ASSIGN(std::string executable, process::find_executable(process));

    if (::prctl(PR_SET_PDEATHSIG, 0) < 0) {
        return Error::from_errno("clear parent death signal");
    }
    ::sigprocmask(SIG_SETMASK, &context.exec_signal_mask, nullptr);
    return process::exec(executable, process, plan.preserve_fds);
}

} // namespace

void run_init(const Plan& plan, InitContext& context) noexcept {
    Status status;
    try {
        status = init_steps(plan, context);
    } catch (const std::exception& exception) {
        // Not expected (allocation failure): still reported, never unwound across clone().
        status = Error(ENOMEM, exception.what());
    }
    context.sync.send_error(status.error());
    ::_exit(1);
}

} // namespace minirun::runtime
