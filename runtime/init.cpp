// The recipe of a container's processes: every step between clone() and execve(), in order.
//
// One table, process_recipe() below, is the order; the init takes the steps marked
// `init`, a process `exec` starts takes those marked `exec` (runner.hpp). The order is the
// point of this file: each step says why it sits where it does, and the step functions
// above the table are one or two calls each into the file that knows the subject.
#include "init.hpp"

#include "minirun/explain.hpp"
#include "minirun/log.hpp"
#include "mount/mount.hpp"
#include "ns/net.hpp"
#include "ns/time.hpp"
#include "ns/user.hpp"
#include "ns/uts.hpp"
#include "process/hooks.hpp"
#include "process/limits.hpp"
#include "process/memory_policy.hpp"
#include "process/scheduling.hpp"
#include "process/terminal.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <new>

namespace minirun::runtime {
namespace {

using spec::NamespaceType;
using Setup = ProcessSetup;

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

security::ListenerState listener_state(const Setup& s) {
    return {s.listener.get(), s.oci_version, s.container_pid, s.state_json};
}

// ---- the steps, in the order of the table below

Status join_cgroups(Setup& s) {
    if (s.cgroup_join == nullptr) {
        return {};
    }
    MR_TRY_WRAP(s.cgroup_join->join(s.born_in_v2_cgroup), "join the container's cgroups");
    return {};
}

Status set_final_affinity(Setup& s) {
    return scheduling::apply_final_affinity(s.process.exec_cpu_affinity, s.sys);
}

Status close_fds(Setup& s) {
    return process::close_inherited_fds(s.preserve_fds, s.keep_fds, s.sys);
}

Status set_death_signal(Setup& s) {
    return checked(s.sys.prctl(PR_SET_PDEATHSIG, SIGKILL), "set parent death signal");
}

// A caller without the host's root writes the maps into /proc/<pid>/ itself, or has
// newuidmap do it, and a non-dumpable process's /proc/<pid>/ files belong to the host's
// root: such an init stays dumpable until the maps exist. Until then only its own user may
// ptrace it, who owns its user namespace and may do so anyway.
bool maps_written_unprivileged(const Setup& s) {
    return s.plan != nullptr && s.plan->creates(NamespaceType::user) && ::geteuid() != 0;
}

Status set_non_dumpable(Setup& s) {
    if (maps_written_unprivileged(s)) {
        return {};
    }
    return checked(s.sys.prctl(PR_SET_DUMPABLE, 0), "set non-dumpable");
}

Status clear_umask(Setup& s) {
    s.sys.umask(0);
    return {};
}

Status set_rlimits(Setup& s) {
    return limits::apply_rlimits(s.process.rlimits);
}

Status set_memory_policy(Setup& s) {
    return memory_policy::apply(s.memory_policy, s.sys);
}

Status set_oom_score(Setup& s) {
    return limits::set_oom_score_adj(s.process.oom_score_adj);
}

Status set_scheduler(Setup& s) {
    return scheduling::apply_scheduler(s.process.scheduler, s.sys);
}

Status set_io_priority(Setup& s) {
    return scheduling::apply_io_priority(s.process.io_priority, s.sys);
}

Status connect_listener(Setup& s) {
    MR_ASSIGN(s.listener, security::connect_seccomp_listener(s.security));
    return {};
}

Status join_namespaces(Setup& s) {
    return runtime::join_namespaces(s.joins, s.sys);
}

Status wait_for_parent(Setup& s) {
    if (!s.plan->wait_for_parent) {
        return {};
    }
    MR_ASSIGN(auto ready, s.init->sync.expect(ToInit::kParentReady));
    const std::string& text = ready.payload;
    pid_t pid = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (error != std::errc{} || end != text.data() + text.size() || pid <= 0) {
        return Error(EPROTO, cat("the parent sent ", quoted(text), " for the init's pid"));
    }
    s.init->record.pid = pid;
    s.container_pid = pid;
    return {};
}

Status become_user_namespace_root(Setup& s) {
    if (!s.plan->creates(NamespaceType::user)) {
        return {};
    }
    if (maps_written_unprivileged(s)) {
        MR_TRY(checked(s.sys.prctl(PR_SET_DUMPABLE, 0), "set non-dumpable"));
    }
    return user::become_namespace_root(s.sys);
}

Status unshare_namespaces(Setup& s) {
    return unshare_remaining(*s.plan, s.sys);
}

Status enter_time_namespace(Setup& s) {
    if (!s.plan->new_time_namespace) {
        return {};
    }
    return time_ns::enter_new_time_namespace(*s.plan, s.sys);
}

Status new_session(Setup& s) {
    if (!s.new_session) {
        return {};
    }
    return checked(s.sys.setsid(), "setsid");
}

Status bring_up_loopback(Setup& s) {
    if (!s.plan->creates(NamespaceType::network)) {
        return {};
    }
    return net::bring_up_loopback();
}

Status set_hostname(Setup& s) {
    return uts::set_names(s.plan->spec, s.sys);
}

Status set_sysctls(Setup& s) {
    return limits::apply_sysctls(s.plan->spec.linux.sysctl);
}

Status prepare_rootfs(Setup& s) {
    MR_ASSIGN(s.root, mount::prepare_rootfs(*s.plan, *s.init->bind_sources, s.sys));
    return {};
}

Status runtime_hooks(Setup& s) {
    if (!s.plan->runtime_hooks) {
        return {};
    }
    MR_TRY(s.init->sync.send(ToParent::kRunHooks));
    MR_TRY(s.init->sync.expect(ToInit::kHooksDone));
    return {};
}

Status create_container_hooks(Setup& s) {
    const auto& hooks = s.plan->spec.hooks.create_container;
    if (hooks.empty()) {
        return {};
    }
    MR_TRY_WRAP(s.sys.fchdir(s.root.get()), "hooks.createContainer: enter the rootfs");
    return hooks::run_hooks("createContainer", hooks, hook_state(*s.init, state::Status::creating));
}

Status enter_root(Setup& s) {
    MR_TRY(mount::enter_root(*s.plan, s.root.get(), s.sys));
    s.root.reset();
    return {};
}

Status chroot_like_the_init(Setup& s) {
    if (s.exec_root < 0) {
        return {};
    }
    return mount::chroot_into(s.exec_root, s.sys);
}

Status finalize_root(Setup& s) {
    return mount::finalize_root(*s.plan, s.sys);
}

Status mask_paths(Setup& s) {
    return mount::mask_paths(*s.plan, s.sys);
}

Status readonly_paths(Setup& s) {
    return mount::make_paths_readonly(*s.plan, s.sys);
}

Status open_terminal(Setup& s) {
    if (!s.process.terminal) {
        return {};
    }
    MR_ASSIGN(terminal::Pty pty, terminal::open_pty(s.process.console_size));
    if (s.bind_console) {
        MR_TRY(terminal::bind_console(pty));
    }
    MR_TRY(terminal::attach_stdio(pty, s.process.user.uid));
    return s.sync.send(ToParent::kConsole, "", pty.master.get());
}

Status set_personality(Setup& s) {
    return limits::set_personality(s.plan->spec.linux.personality);
}

Status enter_cwd_privileged(Setup& s) {
    MR_ASSIGN(s.in_cwd, process::try_enter_cwd(s.process, s.sys));
    return {};
}

Status find_home(Setup& s) {
    s.home = process::missing_home(s.process);
    return {};
}

Status drop_privileges(Setup& s) {
    if (s.init != nullptr) {
        // The listener gets the state as it is now, with the init's host pid.
        s.state_json = hook_state(*s.init, state::Status::creating);
    }
    return security::drop_privileges(s.security, s.process.user, s.sys, listener_state(s));
}

Status set_umask(Setup& s) {
    s.sys.umask(s.process.user.umask.value_or(022));
    return {};
}

Status enter_cwd_as_user(Setup& s) {
    if (s.in_cwd) {
        return {};
    }
    return process::enter_cwd(s.process, s.sys);
}

Status find_executable(Setup& s) {
    MR_ASSIGN(s.executable, process::find_executable(s.process));
    return {};
}

Status clear_death_signal(Setup& s) {
    return checked(s.sys.prctl(PR_SET_PDEATHSIG, 0), "clear parent death signal");
}

Status report_created(Setup& s) {
    log::debug("init: closing the pipe to signal completion: created, waiting for start");
    MR_TRY(s.init->sync.send(ToParent::kCreated));
    s.init->created_sent = true;
    log_after_created(s.init->parent_waits_for_exec || s.init->exec_gate >= 0); // sync.hpp
    explain::created_reported(s.init->exec_gate >= 0); // --explain=step: explain.hpp
    return {};
}

Status wait_for_start_here(Setup& s) {
    if (s.init->exec_gate >= 0 || s.init->exec_fifo < 0) {
        return {}; // the gate waits itself, or `run` starts at once
    }
    return wait_for_start(s.init->exec_fifo);
}

Status prepare_exec(Setup& s) {
    process::ExecGate gate;
    if (s.exec_gate >= 0) {
        // `exec` always listens until the exec; its process starts at once.
        bool listened = s.init == nullptr || s.init->parent_waits_for_exec;
        gate = {s.exec_gate, listened ? s.sync.fd() : -1,
                s.init != nullptr ? s.init->exec_fifo : -1};
    }
    MR_TRY(s.exec.prepare(s.executable, s.process, s.preserve_fds, s.home, s.sys, gate));
    if (s.init == nullptr && log::enabled(log::Level::debug)) {
        log::debug(cat("setns_init: about to exec ", quoted(s.executable)));
    }
    return {};
}

Status restore_signal_mask(Setup& s) {
    s.sys.set_signal_mask(s.exec_signal_mask);
    return {};
}

Status load_seccomp(Setup& s) {
    return security::before_exec(s.security, listener_state(s), s.sys, s.exec.explanation());
}

Status start_container_hooks(Setup& s) {
    if (s.init->exec_gate >= 0) {
        return {}; // plan: never both (a hook would have to run before the gate's exec)
    }
    return hooks::run_hooks("startContainer", s.plan->spec.hooks.start_container,
                            hook_state(*s.init, state::Status::created));
}

Status exec_process(Setup& s) {
    return s.exec.run(s.sys);
}

constexpr auto kInit = Taker::init;
constexpr auto kExec = Taker::exec;
constexpr auto kBoth = Taker::both;

// The recipe. An exec'd process takes the `both` and `exec` steps, the init the `both` and
// `init` ones; each process's own order is this order.
constexpr std::array<Step<Setup>, 45> kRecipe = {{
    {"join cgroups",
     "first, so that everything the process does is counted, and before a cgroup namespace "
     "is unshared (its root is the cgroup its creator is in)",
     kBoth, join_cgroups},
    {"exec CPU affinity",
     "process.execCPUAffinity.final, once in the container's cgroup (runtime-spec); the exec'd "
     "process was born on `initial`, which mini-run took on around the clone. Not the init's "
     "(the spec)",
     kExec, set_final_affinity},
    {"close inherited fds",
     "only mini-run's own fds survive (the state directory's, and with it the lock, goes too)",
     kBoth, close_fds},
    {"parent death signal", "if mini-run dies during setup, a half-made container must not live on",
     kBoth, set_death_signal},
    {"non-dumpable",
     "until exec this is a copy of mini-run: nothing in the container may read its memory or "
     "open /proc/<pid>/exe to reach the runtime binary (CVE-2019-5736 class); a rootless "
     "init only once its maps are written (docs/rootless.md)",
     kBoth, set_non_dumpable},
    {"umask 0", "what we create (dirs, devices) gets exactly the mode we ask for", kInit,
     clear_umask},
    {"rlimits",
     "still the host's root in the host's user namespace: raising a hard limit needs "
     "CAP_SYS_RESOURCE there",
     kBoth, set_rlimits},
    {"memory policy",
     "linux.memoryPolicy, kept by everything the process forks and execs; after joining the "
     "cgroups, whose cpuset bounds the nodes the kernel takes, and while /proc/self is still "
     "the host's, to name the allowed nodes when it refuses",
     kBoth, set_memory_policy},
    {"oom_score_adj",
     "lowering it needs CAP_SYS_RESOURCE in the host's user namespace, and a non-dumpable "
     "process's /proc/self belongs to the host's root",
     kInit, set_oom_score},
    {"scheduler",
     "process.scheduler: sched_setattr checks CAP_SYS_NICE in the host's user namespace (a "
     "real-time policy, a lower nice), so before any other is joined; after the affinity, which "
     "a SCHED_DEADLINE process may no longer change",
     kBoth, set_scheduler},
    {"I/O priority",
     "process.ioPriority: IOPRIO_CLASS_RT needs CAP_SYS_NICE in the host's user namespace too; "
     "what the process starts later inherits it",
     kBoth, set_io_priority},
    {"connect the seccomp listener",
     "linux.seccomp.listenerPath is a host path: connect while the host's file system and "
     "namespaces are still ours",
     kBoth, connect_listener},
    {"join namespaces",
     "namespaces named by path (the init) or the container's (exec), the user namespace first: "
     "its privileges decide whether the others may be joined, and own what is created below",
     kBoth, join_namespaces},
    {"wait for the parent",
     "in a new user namespace our ids mean nothing until the parent has written the maps; the "
     "message also carries our host pid, for the hooks' state",
     kInit, wait_for_parent},
    {"become root in the user namespace",
     "the maps exist now: uid and gid 0 inside (rootless: non-dumpable only now, the "
     "parent wrote our /proc/<pid>/uid_map)",
     kInit, become_user_namespace_root},
    {"unshare namespaces",
     "the namespaces a joined user namespace must own, and a cgroup namespace rooted at the "
     "cgroups joined above",
     kInit, unshare_namespaces},
    {"time namespace",
     "offsets can only be written before a process lives in it: unshare, write, then setns", kInit,
     enter_time_namespace},
    {"new session",
     "not in the caller's process group (a terminal's Ctrl-C reaches mini-run, which forwards "
     "it once); a session leader can take the pty as its controlling terminal",
     kBoth, new_session},
    {"loopback up", "a new network namespace starts with lo down", kInit, bring_up_loopback},
    {"hostname", "in the container's UTS namespace, now ours", kInit, set_hostname},
    {"sysctls",
     "they belong to the writer's namespaces, now the container's; the host's /proc is still "
     "mounted here and is a procfs we can trust",
     kInit, set_sysctls},
    {"prepare the rootfs",
     "rootfs, mounts[], devices while the host's paths (bind sources, /dev nodes) are visible",
     kInit, prepare_rootfs},
    {"prestart and createRuntime hooks",
     "runtime-spec: once the environment exists, before pivot_root, in the runtime's "
     "namespaces: the parent runs them while the init waits",
     kInit, runtime_hooks},
    {"createContainer hooks",
     "in the container's namespaces, before pivot_root, in the container's root (as runc: a "
     "hook may name paths inside relatively)",
     kInit, create_container_hooks},
    {"enter the root",
     "pivot_root (chroot without a mount namespace of its own); the host's tree is detached", kInit,
     enter_root},
    {"chroot like the init",
     "a container without a mount namespace: its init chroot()ed into the rootfs, and so does "
     "this process, or it would run on the host's /",
     kExec, chroot_like_the_init},
    {"root read-only", "only after pivot_root: setup wrote into the root", kInit, finalize_root},
    {"masked paths", "the container's own /proc and /sys are in place only now", kInit, mask_paths},
    {"read-only paths", "as masked paths", kInit, readonly_paths},
    {"terminal", "the pty comes from the container's own devpts, so only after pivot_root", kBoth,
     open_terminal},
    {"personality", "execution domain of the process", kInit, set_personality},
    {"cwd while privileged",
     "as runc: the user may start in a directory only root could reach; refused even to root "
     "(an unmapped owner), it is tried again as the user",
     kBoth, enter_cwd_privileged},
    {"HOME from /etc/passwd",
     "when the config has none (runc); read while root, the user may not be able to", kBoth,
     find_home},
    {"drop privileges",
     "LSM labels, seccomp (when no_new_privs is off), bounding set, keep-caps, groups/gid/uid, "
     "capset and ambient, no_new_privs: in that order (security.cpp); nothing above would be "
     "allowed after it",
     kBoth, drop_privileges},
    {"umask", "process.user.umask, now that mini-run creates nothing more", kBoth, set_umask},
    {"cwd as the user", "if root was refused it", kBoth, enter_cwd_as_user},
    {"find the executable",
     "as the final user, whose permissions decide whether it is usable: a missing one is "
     "reported by create, not later",
     kBoth, find_executable},
    {"clear the parent death signal",
     "create exits after this, and the process must outlive it (the signal would survive "
     "execve)",
     kBoth, clear_death_signal},
    {"report created", "create's wait ends here: the container is created", kInit, report_created},
    {"wait for start", "until `start` writes exec.fifo (with the exec gate, the gate waits)", kInit,
     wait_for_start_here},
    {"prepare the exec",
     "argv, env, fds marked close-on-exec: everything of ours before the filter", kBoth,
     prepare_exec},
    {"signal mask", "the mask the user's process starts with", kBoth, restore_signal_mask},
    {"seccomp filter",
     "as late as possible, so that none of mini-run's own work runs under it; from here on "
     "the only system call of ours is the exec",
     kBoth, load_seccomp, true},
    {"startContainer hooks",
     "at start, in the container, under its filter (as runc: a hook gets no more than the "
     "process would)",
     kInit, start_container_hooks},
    {"exec", "the container's process replaces mini-run", kBoth, exec_process},
}};

Status fail_from(const std::exception& exception) {
    // Not expected: still reported in its own words, never unwound across clone().
    if (dynamic_cast<const std::bad_alloc*>(&exception) != nullptr) {
        return Error(ENOMEM, cat("out of memory: ", exception.what()));
    }
    return Error(exception.what());
}

} // namespace

std::span<const Step<ProcessSetup>> process_recipe() {
    return kRecipe;
}

void run_init(const Plan& plan, InitContext& context, Syscalls& sys) noexcept {
    forward_log(context.sync); // not to our stderr, the container's: sync.hpp
    Status status;
    try {
        // --debug names its milestones in runc's words ("child process in init()", ...), so
        // that what reads runc's debug output finds them in ours.
        log::debug("child process in init(): the container's init sets it up");
        ProcessSetup setup{sys, *plan.spec.process, plan.preserve_fds, context.sync,
                           *context.security};
        setup.cgroup_join = context.cgroup_join;
        setup.born_in_v2_cgroup = context.born_in_v2_cgroup;
        setup.keep_fds = {context.sync.fd(), context.exec_fifo, log::file_descriptor(),
                          context.exec_gate, explain::stepping_fd()};
        setup.joins = entries_of(*context.namespaces);
        for (const NamespaceEntry& join : setup.joins) {
            setup.keep_fds.push_back(join.fd);
        }
        for (const UniqueFd& source : *context.bind_sources) {
            setup.keep_fds.push_back(source.get());
        }
        setup.exec_signal_mask = context.exec_signal_mask;
        setup.exec_gate = context.exec_gate;
        setup.oci_version = plan.spec.oci_version;
        setup.container_pid = context.record.pid;
        setup.plan = &plan;
        setup.init = &context;
        if (plan.spec.linux.memory_policy) {
            setup.memory_policy = &*plan.spec.linux.memory_policy;
        }
        status = run_recipe(process_recipe(), Taker::init, setup);
    } catch (const std::exception& exception) {
        status = fail_from(exception);
    }
    // After `create` has exited nobody reads the socket any more: the --log file (if any:
    // log_after_created) is then the only place the failure can go.
    context.sync.send_error(status.error());
    if (context.created_sent && !context.parent_waits_for_exec) {
        log::error(status.error().message());
    }
    ::_exit(1);
}

void run_exec_setup(ProcessSetup& setup) noexcept {
    forward_log(setup.sync); // not to our stderr, the container's: sync.hpp
    Status status;
    try {
        log::debug("child process in init(): the exec'd process joins the container");
        status = run_recipe(process_recipe(), Taker::exec, setup);
    } catch (const std::exception& exception) {
        status = fail_from(exception);
    }
    setup.sync.send_error(status.error());
    ::_exit(1);
}

} // namespace minirun::runtime
