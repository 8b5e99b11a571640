// The init's recipe: every step between clone() and execve(), in order.
//
// The order is the point of this file. Each step says why it sits where it does.
#include "init.hpp"

#include "hooks.hpp"
#include "limits.hpp"
#include "minirun/log.hpp"
#include "mount.hpp"
#include "net.hpp"
#include "process.hpp"
#include "syscalls.hpp"
#include "terminal.hpp"
#include "time.hpp"
#include "user.hpp"
#include "uts.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

namespace minirun::runtime {
namespace {

using spec::NamespaceType;

// Blocks until `start` writes to exec.fifo. The fifo was opened non-blocking (so that the
// open itself did not wait for a writer); poll() sleeps until the byte arrives.
Status wait_for_start(int fifo) {
    pollfd entry{fifo, POLLIN, 0};
    for (;;) {
        int ready = ::poll(&entry, 1, -1);
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready < 0) {
            return Error::from_errno("wait for start");
        }
        char byte = 0;
        ssize_t got = ::read(fifo, &byte, 1);
        if (got == 1) {
            return {};
        }
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            continue;
        }
        return Error(EPIPE, "wait for start: exec.fifo closed without a start");
    }
}

std::string hook_state(const InitContext& context, state::Status status) {
    return state::oci_state_json(context.record, status);
}

Status init_steps(const Plan& plan, InitContext& context) {
    Syscalls& sys = linux_syscalls();
    const spec::Process& process = *plan.spec.process;
    // --debug names its milestones in runc's words ("child process in init()", ...), so
    // that what reads runc's debug output finds them in ours.
    log::debug("child process in init(): the container's init sets it up");
    // Its cgroups first, so that everything the container does is counted, and before a
    // cgroup namespace is unshared, whose root is the cgroup its creator is in.
    if (context.cgroup_join != nullptr) {
        MR_TRY_WRAP(context.cgroup_join->join(context.born_in_v2_cgroup),
                    "join the container's cgroups");
    }
    {
        // Only mini-run's own fds survive: the state directory's (and with it the lock)
        // goes too.
        std::vector<int> keep = {context.sync.fd(), context.exec_fifo, log::file_descriptor(),
                                 context.exec_gate};
        for (const OpenNamespace& ns : *context.namespaces) {
            keep.push_back(ns.fd.get());
        }
        for (const UniqueFd& source : *context.bind_sources) {
            keep.push_back(source.get());
        }
        MR_TRY(process::close_inherited_fds(plan.preserve_fds, std::move(keep)));
    }

    // If mini-run dies during setup, a half-made container must not live on.
    MR_TRY(check_syscall(::prctl(PR_SET_PDEATHSIG, SIGKILL), "set parent death signal"));
    // Until exec this process is a copy of mini-run: nothing in the container may read its
    // memory or open /proc/<pid>/exe to reach the runtime binary (CVE-2019-5736 class).
    MR_TRY(check_syscall(::prctl(PR_SET_DUMPABLE, 0), "set non-dumpable"));
    // Modes of what we create (dirs, devices) must be exactly the ones we ask for;
    // process.user.umask is applied at the end.
    sys.umask(0);
    // Still the host's root here, in the host's user namespace: raising a hard rlimit and
    // lowering oom_score_adj need CAP_SYS_RESOURCE there, which a user namespace would not
    // give us (and /proc/self of a non-dumpable process belongs to the host's root).
    MR_TRY(limits::apply_rlimits(process.rlimits));
    MR_TRY(limits::set_oom_score_adj(process.oom_score_adj));

    // Namespaces named by path are joined first, the user namespace leading, so the
    // ones created below belong to the right owners.
    MR_TRY(join_namespaces(*context.namespaces));

    // In a new user namespace our ids mean nothing until the parent has written the maps;
    // the same message tells us our pid as the host sees it, for the hooks' state.
    if (plan.wait_for_parent) {
        MR_ASSIGN(SyncEvent ready, context.sync.expect(SyncMessage::kParentReady));
        const std::string& text = ready.payload;
        std::from_chars(text.data(), text.data() + text.size(), context.record.pid);
    }
    if (plan.creates(NamespaceType::user)) {
        MR_TRY(user::become_namespace_root(sys));
    }
    MR_TRY(unshare_remaining(plan));
    if (plan.new_time_namespace) {
        MR_TRY(time_ns::enter_new_time_namespace(plan));
    }

    // A session of its own: the container's processes are not in the caller's process
    // group, so a terminal's Ctrl-C reaches mini-run, which forwards it once; and a
    // session leader can take the pty as its controlling terminal below.
    MR_TRY(check_syscall(::setsid() < 0 ? -1 : 0, "setsid"));

    if (plan.creates(NamespaceType::network)) {
        MR_TRY(net::bring_up_loopback());
    }
    MR_TRY(uts::set_names(plan.spec, sys));
    // sysctls belong to the namespaces of the writer, which are now the container's; the
    // host's /proc is still mounted here and is a procfs we can trust.
    MR_TRY(limits::apply_sysctls(plan.spec.linux.sysctl));
    // The seccomp listener's path is a host path: connect while we can still reach it.
    MR_ASSIGN(UniqueFd listener, security::connect_seccomp_listener(*context.security));

    // The file system, while the host's paths are still visible (bind sources, the
    // host's /dev nodes): rootfs, mounts[], devices, cwd. Then pivot_root, and only then
    // remount the root read-only, since setup writes into it.
    {
        MR_ASSIGN(UniqueFd root, mount::prepare_rootfs(plan, *context.bind_sources, sys));
        // runtime-spec: prestart and createRuntime hooks run once the environment exists,
        // before pivot_root, in the runtime's namespaces: the parent runs them.
        if (plan.runtime_hooks) {
            MR_TRY(context.sync.send(SyncMessage::kRunHooks));
            MR_TRY(context.sync.expect(SyncMessage::kHooksDone));
        }
        // createContainer: in the container's namespaces, still before pivot_root, with the
        // container's root as the working directory, as runc runs them (a hook may then
        // name paths inside the container relatively: "touch ./lib/x").
        if (!plan.spec.hooks.create_container.empty()) {
            MR_TRY_WRAP(sys.fchdir(root.get()), "hooks.createContainer: enter the rootfs");
        }
        MR_TRY(hooks::run_hooks("createContainer", plan.spec.hooks.create_container,
                                hook_state(context, state::Status::creating)));
        // pivot_root, or chroot without a mount namespace of its own (mount.hpp).
        MR_TRY(mount::enter_root(plan, root.get(), sys));
    }
    MR_TRY(mount::finalize_root(plan, sys));
    // The container's own /proc and /sys are in place only now.
    MR_TRY(mount::mask_paths(plan, sys));
    MR_TRY(mount::make_paths_readonly(plan, sys));

    // The pty comes from the container's own devpts, so only after pivot_root.
    if (process.terminal) {
        MR_ASSIGN(terminal::Pty pty, terminal::open_pty(process.console_size));
        MR_TRY(terminal::bind_console(pty));
        MR_TRY(terminal::attach_stdio(pty, process.user.uid));
        MR_TRY(context.sync.send(SyncMessage::kConsole, "", pty.master.get()));
    }

    MR_TRY(limits::set_personality(plan.spec.linux.personality));

    // process.cwd while still root with every capability, as runc does: the user may start
    // in a directory only root could reach. The check that it lies inside the container
    // (process.cpp) comes with it. Refused even to root (a user namespace's root facing a
    // directory of an unmapped owner), it is tried again as the user below.
    MR_ASSIGN(bool in_cwd, process::try_enter_cwd(process));
    // HOME from the container's /etc/passwd when the config has none (runc): read while
    // root, since the user may not be able to read it.
    std::string home = process::missing_home(process);

    // The privilege drop, in its one order (security.cpp): after it nothing above would be
    // allowed any more.
    std::string listener_state = hook_state(context, state::Status::creating);
    security::ListenerState listener_info{listener.get(), plan.spec.oci_version, context.record.pid,
                                          listener_state};
    MR_TRY(security::drop_privileges(*context.security, process.user, sys, listener_info));
    sys.umask(process.user.umask.value_or(022));
    if (!in_cwd) {
        MR_TRY(process::enter_cwd(process));
    }

    // As the final user, whose permissions decide whether the executable is usable: a
    // missing one is reported by `create`, not later.
    MR_ASSIGN(std::string executable, process::find_executable(process));

    // `create` exits after kCreated and the init must outlive it.
    MR_TRY(check_syscall(::prctl(PR_SET_PDEATHSIG, 0), "clear parent death signal"));
    log::debug("init: closing the pipe to signal completion: created, waiting for start");
    MR_TRY(context.sync.send(SyncMessage::kCreated));
    context.created_sent = true;
    process::PreparedExec exec;
    if (context.exec_gate >= 0) {
        // The gate waits for `start` itself (exec_gate.hpp): from here on pid 1 is the sealed
        // gate, not a copy of mini-run. So the filter goes on before the wait, not after.
        process::ExecGate gate{context.exec_gate,
                               context.parent_waits_for_exec ? context.sync.fd() : -1,
                               context.exec_fifo};
        MR_TRY(exec.prepare(executable, process, plan.preserve_fds, home, gate));
        ::sigprocmask(SIG_SETMASK, &context.exec_signal_mask, nullptr);
        MR_TRY(security::before_exec(*context.security, listener_info, exec.explanation()));
        return exec.run();
    }
    if (context.exec_fifo >= 0) {
        MR_TRY(wait_for_start(context.exec_fifo));
    }
    // Everything of ours before the filter: from the filter on, only the exec (and the
    // startContainer hooks, which runc too runs under the container's filter: a hook runs
    // in the container and gets no more than its process would).
    MR_TRY(exec.prepare(executable, process, plan.preserve_fds, home));
    ::sigprocmask(SIG_SETMASK, &context.exec_signal_mask, nullptr);
    MR_TRY(security::before_exec(*context.security, listener_info, exec.explanation()));
    // startContainer: at `start`, in the container, before the user's process.
    MR_TRY(hooks::run_hooks("startContainer", plan.spec.hooks.start_container,
                            hook_state(context, state::Status::created)));
    return exec.run();
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
    // After `create` has exited nobody reads the socket any more: the log (or the
    // container's stderr) is then the only place the failure can go.
    context.sync.send_error(status.error());
    if (context.created_sent && !context.parent_waits_for_exec) {
        log::error(status.error().message());
    }
    ::_exit(1);
}

} // namespace minirun::runtime
