// The recipe of a container's processes: every step between clone() and execve(), in order.
//
// One table, process_recipe() below, is the order; the init takes the steps marked `init`, a
// process `exec` starts those marked `process` (runner.hpp). The order is the point of this
// file: each step says why it sits where it does, and the step functions above the table are
// one or two calls each into the file that knows the subject, reading the process's plan.
#include "recipe.hpp"

#include "create.hpp"
#include "minirun/explain.hpp"
#include "minirun/log.hpp"
#include "mount/mount.hpp"
#include "ns/net.hpp"
#include "ns/pid.hpp"
#include "ns/time.hpp"
#include "ns/user.hpp"
#include "ns/uts.hpp"
#include "process/hooks.hpp"
#include "process/limits.hpp"
#include "process/memory_policy.hpp"
#include "process/scheduling.hpp"
#include "process/terminal.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <new>

namespace minirun::runtime {
namespace {

using spec::NamespaceType;
using Setup = ProcessSetup;

security::ListenerState listener_state(const Setup& s) {
    return {s.listener.get(), s.plan.oci_version, s.container_pid, s.state_json};
}

// ---- the steps, in the table's order. One both kinds of process take the same way takes a
// ProcessSetup, one the init alone takes (or its own way) an InitSetup (both<>, split()...).

Status join_cgroups(Setup& s) {
    if (s.plan.cgroup_join == nullptr) {
        return {};
    }
    MR_TRY_WRAP(s.plan.cgroup_join->join(s.born_in_v2_cgroup), "join the container's cgroups");
    return {};
}

Status reset_init_affinity(InitSetup& s) {
    scheduling::reset_affinity(s.sys);
    return {};
}

Status set_final_affinity(Setup& s) {
    return scheduling::apply_final_affinity(s.process.exec_cpu_affinity, s.sys);
}

Status close_fds(Setup& s) {
    return process::close_inherited_fds(s.plan.preserve_fds, s.plan.keep_fds, s.sys);
}

Status set_death_signal(Setup& s) {
    return checked(s.sys.prctl(PR_SET_PDEATHSIG, SIGKILL), "set parent death signal");
}

// A caller without the host's root writes the maps (/proc/<pid>/) itself or via newuidmap, and
// a non-dumpable process's /proc/<pid>/ belongs to the host's root: such an init stays dumpable
// until the maps exist; until then only its own user, who owns its user namespace, may ptrace.
bool maps_written_unprivileged(const InitSetup& s) {
    return s.container.creates(NamespaceType::user) && ::geteuid() != 0;
}

Status set_non_dumpable(Setup& s) {
    return checked(s.sys.prctl(PR_SET_DUMPABLE, 0), "set non-dumpable");
}

Status set_init_non_dumpable(InitSetup& s) {
    if (maps_written_unprivileged(s)) {
        return {};
    }
    return set_non_dumpable(s);
}

Status clear_umask(InitSetup& s) {
    s.sys.umask(0);
    return {};
}

Status set_rlimits(Setup& s) {
    return limits::apply_rlimits(s.process.rlimits, s.sys);
}

Status set_memory_policy(Setup& s) {
    return memory_policy::apply(s.plan.memory_policy ? &*s.plan.memory_policy : nullptr, s.sys);
}

Status set_oom_score(InitSetup& s) {
    return limits::set_oom_score_adj(s.process.oom_score_adj, s.plan.procfs, s.sys);
}

Status set_scheduler(Setup& s) {
    return scheduling::apply_scheduler(s.process.scheduler, s.sys);
}

Status set_io_priority(Setup& s) {
    return scheduling::apply_io_priority(s.process.io_priority, s.sys);
}

Status connect_listener(Setup& s) {
    MR_ASSIGN(s.listener, security::connect_seccomp_listener(s.plan.security));
    return {};
}

Status join_namespaces(Setup& s) {
    return runtime::join_namespaces(s.plan.joins, s.sys);
}

Status join_init_namespaces(InitSetup& s) {
    MR_TRY(join_namespaces(s));
    return pid::continue_as_pid_1(s.container, s.sync, s.sys); // a new pid ns in a joined user ns
}

Status wait_for_parent(InitSetup& s) {
    if (!s.init.wait_for_parent) {
        return {};
    }
    MR_ASSIGN(auto ready, s.sync.expect(ToInit::kParentReady));
    const std::string& text = ready.payload;
    pid_t pid = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (error != std::errc{} || end != text.data() + text.size() || pid <= 0) {
        return Error(EPROTO, cat("the parent sent ", quoted(text), " for the init's pid"));
    }
    s.record.pid = pid;
    s.container_pid = pid;
    return {};
}

Status become_user_namespace_root(InitSetup& s) {
    // Also in a joined user namespace (runc's nsexec since 1.2): our host ids are unmapped
    // there, and the kernel refuses to create a file whose owner it cannot map (EOVERFLOW).
    if (!s.container.has_own(NamespaceType::user)) {
        return {};
    }
    if (maps_written_unprivileged(s)) {
        MR_TRY(set_non_dumpable(s));
    }
    return user::become_namespace_root(s.sys);
}

Status unshare_namespaces(InitSetup& s) {
    return unshare_remaining(s.container, s.sys);
}

Status enter_time_namespace(InitSetup& s) {
    if (!s.container.new_time_namespace) {
        return {};
    }
    return time_ns::enter_new_time_namespace(s.container, s.plan.procfs, s.sys);
}

Status new_session(Setup& s) {
    if (!s.plan.new_session) {
        return {};
    }
    return checked(s.sys.setsid(), "setsid");
}

Status bring_up_loopback(InitSetup& s) {
    if (!s.container.creates(NamespaceType::network)) {
        return {};
    }
    return net::bring_up_loopback();
}

Status set_hostname(InitSetup& s) {
    return uts::set_names(s.container.hostname, s.container.domainname, s.sys);
}

Status set_sysctls(InitSetup& s) {
    return limits::apply_sysctls(s.container.sysctls, s.plan.procfs, s.sys);
}

Status prepare_rootfs(InitSetup& s) {
    MR_ASSIGN(s.root, mount::prepare_rootfs(
                          s.container, s.init.bind_sources->fds, s.sys, s.init.cgroup_binds,
                          mount::late_sources_from(s.sync, *s.init.bind_sources)));
    return {};
}

Status runtime_hooks(InitSetup& s) {
    if (!s.container.runtime_hooks) {
        return {};
    }
    MR_TRY(s.sync.send(ToParent::kRunHooks));
    MR_TRY(s.sync.expect(ToInit::kHooksDone));
    return {};
}

Status create_container_hooks(InitSetup& s) {
    const auto& hooks = s.container.create_container_hooks;
    if (hooks.empty()) {
        return {};
    }
    MR_TRY_WRAP(s.sys.fchdir(s.root.get()), "hooks.createContainer: enter the rootfs");
    return hooks::run_hooks("createContainer", hooks,
                            state::oci_state_json(s.record, state::Status::creating));
}

Status enter_root(InitSetup& s) {
    MR_TRY(mount::enter_root(s.container, s.root.get(), s.sys));
    s.root.reset();
    return {};
}

Status chroot_like_the_init(Setup& s) {
    if (s.plan.exec_root < 0) {
        return {};
    }
    return mount::chroot_into(s.plan.exec_root, s.sys);
}

Status reopen_dev_null(InitSetup& s) {
    return mount::reopen_stdio_on_dev_null(s.container);
}

Status finalize_root(InitSetup& s) {
    return mount::finalize_root(s.container, s.sys);
}

Status mask_paths(InitSetup& s) {
    return mount::mask_paths(s.container, s.sys);
}

Status readonly_paths(InitSetup& s) {
    return mount::make_paths_readonly(s.container, s.sys);
}

Status open_terminal(Setup& s) {
    if (!s.process.terminal) {
        return {};
    }
    MR_ASSIGN(terminal::Pty pty,
              terminal::open_pty(s.process.console_size, s.plan.relayed_terminal));
    if (s.plan.bind_console) {
        MR_TRY(terminal::bind_console(pty, s.sys));
    }
    MR_TRY(terminal::attach_stdio(pty, s.process.user.uid));
    return s.sync.send(ToParent::kConsole, "", pty.master.get());
}

Status set_personality(Setup& s) {
    return limits::set_personality(s.plan.personality, s.sys);
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
    return security::drop_privileges(s.plan.security, s.process.user, s.sys, listener_state(s),
                                     s.plan.procfs);
}

Status drop_init_privileges(InitSetup& s) {
    // The listener gets the state as it is now, with the init's host pid.
    s.state_json = state::oci_state_json(s.record, state::Status::creating);
    return drop_privileges(s);
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

Status report_created(InitSetup& s) {
    log::debug("init: closing the pipe to signal completion: created, waiting for start");
    MR_TRY(s.sync.send(ToParent::kCreated));
    s.created_sent = true;
    log_after_created(s.init.parent_waits_for_exec || s.plan.exec_gate >= 0); // sync.hpp
    explain::created_reported(s.plan.exec_gate >= 0); // --explain=step: explain.hpp
    return {};
}

Status wait_for_start_here(InitSetup& s) {
    if (s.plan.exec_gate >= 0 || s.init.exec_fifo < 0) {
        return {}; // the gate waits itself, or `run` starts at once
    }
    return wait_for_start(s.init.exec_fifo);
}

Status prepare_exec_through(Setup& s, const process::ExecGate& gate) {
    return s.exec.prepare(s.executable, s.process, s.plan.preserve_fds, s.home, s.sys, gate);
}

Status prepare_exec(Setup& s) {
    process::ExecGate gate;
    if (s.plan.exec_gate >= 0) {
        // `exec` always listens until the exec; its process starts at once.
        gate = {s.plan.exec_gate, s.sync.fd(), -1};
    }
    MR_TRY(prepare_exec_through(s, gate));
    if (log::enabled(log::Level::debug)) {
        log::debug(cat("setns_init: about to exec ", quoted(s.executable)));
    }
    return {};
}

Status prepare_init_exec(InitSetup& s) {
    process::ExecGate gate;
    if (s.plan.exec_gate >= 0) {
        gate = {s.plan.exec_gate, s.init.parent_waits_for_exec ? s.sync.fd() : -1,
                s.init.exec_fifo};
    }
    return prepare_exec_through(s, gate);
}

Status restore_signal_mask(Setup& s) {
    s.sys.set_signal_mask(s.plan.signal_mask);
    return {};
}

Status load_seccomp(Setup& s) {
    return security::before_exec(s.plan.security, listener_state(s), s.sys, s.exec.explanation());
}

Status start_container_hooks(InitSetup& s) {
    if (s.plan.exec_gate >= 0) {
        return {}; // plan: never both (a hook would have to run before the gate's exec)
    }
    return hooks::run_hooks("startContainer", s.container.start_container_hooks,
                            state::oci_state_json(s.record, state::Status::created),
                            s.exec.environment()); // a hook without env of its own: runc's
}

Status exec_process(Setup& s) {
    return s.exec.run(s.sys);
}

// ---- the table's helpers: which process takes a step, with which function

template <Status (*Step)(Setup&)>
Status as_init(InitSetup& s) {
    return Step(s);
}

template <Status (*Step)(Setup&)>
constexpr ProcessStep both(std::string_view name, std::string_view why, bool seals = false) {
    return {name, why, Taker::both, as_init<Step>, Step, seals};
}

template <Status (*Step)(InitSetup&)>
constexpr ProcessStep init_only(std::string_view name, std::string_view why) {
    return {name, why, Taker::init, Step, nullptr};
}

template <Status (*Step)(Setup&)>
constexpr ProcessStep exec_only(std::string_view name, std::string_view why) {
    return {name, why, Taker::process, nullptr, Step};
}

// Both take it, the init its own way.
constexpr ProcessStep split(std::string_view name, std::string_view why, Status (*init)(InitSetup&),
                            Status (*exec)(Setup&)) {
    return {name, why, Taker::both, init, exec};
}

// The recipe. An exec'd process takes the `both` and `exec` steps, the init the `both` and
// `init` ones; each process's own order is this order.
constexpr std::array<ProcessStep, 46> kRecipe = {{
    both<join_cgroups>(
        "join cgroups",
        "first, so that everything the process does is counted, and before a cgroup namespace "
        "is unshared (its root is the cgroup its creator is in)"),
    split("CPU affinity",
          "once in the container's cgroup: every cpu, which its cpuset narrows, not mini-run's own "
          "(runc 1.3); an exec'd process, born on execCPUAffinity.initial, takes `final`",
          reset_init_affinity, set_final_affinity),
    both<close_fds>(
        "close inherited fds",
        "only mini-run's own fds survive (the state directory's, and with it the lock, goes too)"),
    both<set_death_signal>("parent death signal",
                           "if mini-run dies during setup, a half-made container must not live on"),
    split("non-dumpable",
          "until exec this is a copy of mini-run: nothing in the container may read its memory or "
          "open /proc/<pid>/exe to reach the runtime binary (CVE-2019-5736 class); a rootless "
          "init only once its maps are written (docs/rootless.md)",
          set_init_non_dumpable, set_non_dumpable),
    init_only<clear_umask>("umask 0",
                           "what we create (dirs, devices) gets exactly the mode we ask for"),
    both<set_rlimits>(
        "rlimits", "still the host's root in the host's user namespace: raising a hard limit needs "
                   "CAP_SYS_RESOURCE there"),
    both<set_memory_policy>(
        "memory policy",
        "linux.memoryPolicy, kept by everything the process forks and execs; after joining the "
        "cgroups, whose cpuset bounds the nodes the kernel takes, and while /proc/self is still "
        "the host's, to name the allowed nodes when it refuses"),
    init_only<set_oom_score>(
        "oom_score_adj",
        "lowering it needs CAP_SYS_RESOURCE in the host's user namespace, and a non-dumpable "
        "process's /proc/self belongs to the host's root"),
    both<set_scheduler>(
        "scheduler",
        "process.scheduler: sched_setattr checks CAP_SYS_NICE in the host's user namespace (a "
        "real-time policy, a lower nice), so before any other is joined; after the affinity, which "
        "a SCHED_DEADLINE process may no longer change"),
    both<set_io_priority>(
        "I/O priority",
        "process.ioPriority: IOPRIO_CLASS_RT needs CAP_SYS_NICE in the host's user namespace too; "
        "what the process starts later inherits it"),
    both<connect_listener>(
        "connect the seccomp listener",
        "linux.seccomp.listenerPath is a host path: connect while the host's file system and "
        "namespaces are still ours"),
    split("join namespaces",
          "namespaces named by path (the init) or the container's (exec): the user namespace after "
          "those we may join ourselves, before the rest; it owns what is created below (a new pid "
          "namespace in a joined one: the init goes on as its pid 1, pid.hpp)",
          join_init_namespaces, join_namespaces),
    init_only<wait_for_parent>(
        "wait for the parent",
        "in a new user namespace our ids mean nothing until the parent has written the maps; the "
        "message also carries our host pid, for the hooks' state"),
    init_only<become_user_namespace_root>(
        "become root in the user namespace",
        "the maps exist now (a joined namespace's always did): uid and gid 0 inside, before "
        "anything is created (rootless: non-dumpable only now, the parent wrote our "
        "/proc/<pid>/uid_map)"),
    init_only<unshare_namespaces>(
        "unshare namespaces",
        "the namespaces a joined user namespace must own, and a cgroup namespace rooted at the "
        "cgroups joined above"),
    init_only<enter_time_namespace>(
        "time namespace",
        "offsets can only be written before a process lives in it: unshare, write, then setns"),
    both<new_session>(
        "new session",
        "not in the caller's process group (a terminal's Ctrl-C reaches mini-run, which forwards "
        "it once); a session leader can take the pty as its controlling terminal"),
    init_only<bring_up_loopback>("loopback up", "a new network namespace starts with lo down"),
    init_only<set_hostname>("hostname", "in the container's UTS namespace, now ours"),
    init_only<set_sysctls>(
        "sysctls",
        "they belong to the writer's namespaces, now the container's; written through the "
        "runtime's procfs handle, which no mount can cover (CVE-2025-52881)"),
    init_only<prepare_rootfs>(
        "prepare the rootfs",
        "rootfs, mounts[], devices while the host's paths (bind sources, /dev nodes) are visible"),
    init_only<runtime_hooks>(
        "prestart and createRuntime hooks",
        "runtime-spec: once the environment exists, before pivot_root, in the runtime's "
        "namespaces: the parent runs them while the init waits"),
    init_only<create_container_hooks>(
        "createContainer hooks",
        "in the container's namespaces, before pivot_root, in the container's root (as runc: a "
        "hook may name paths inside relatively)"),
    init_only<enter_root>(
        "enter the root",
        "pivot_root (chroot without a mount namespace of its own); the host's tree is detached"),
    exec_only<chroot_like_the_init>(
        "chroot like the init",
        "a container without a mount namespace: its init chroot()ed into the rootfs, and so does "
        "this process, or it would run on the host's /"),
    init_only<reopen_dev_null>("stdio on /dev/null",
                               "stdio on the caller's null device moves to the container's, "
                               "checked 1:3 (runc): the host's node is not the container's"),
    both<open_terminal>("terminal",
                        "a pty of the container's devpts, so after pivot_root; on /dev/console "
                        "before the read-only root, the masks and read-only paths (runc 1.3.3, "
                        "CVE-2025-52565), which then cover whatever that bind could expose"),
    init_only<finalize_root>("root read-only", "only after pivot_root: setup wrote into the root"),
    init_only<mask_paths>("masked paths",
                          "the container's own /proc and /sys are in place only now"),
    init_only<readonly_paths>("read-only paths", "as masked paths"),
    both<set_personality>("personality", "linux.personality; exec'd processes too (runc 1.3)"),
    both<enter_cwd_privileged>(
        "cwd while privileged",
        "as runc: the user may start in a directory only root could reach; refused even to root "
        "(an unmapped owner), it is tried again as the user"),
    both<find_home>(
        "HOME from /etc/passwd",
        "when the config has none (runc); read while root, the user may not be able to"),
    split("drop privileges",
          "LSM labels, seccomp (when no_new_privs is off: it needs CAP_SYS_ADMIN then), bounding "
          "set, keep-caps, groups/gid/uid, capset and ambient, no_new_privs: in that order "
          "(security.cpp); nothing above would be allowed after it. Under an early filter every "
          "call from here on is one a 2014 profile allows, or falls back (issue 38). The labels "
          "go through the procfs handle, closed right after (CVE-2025-52881)",
          drop_init_privileges, drop_privileges),
    both<set_umask>("umask", "process.user.umask, now that mini-run creates nothing more"),
    both<enter_cwd_as_user>("cwd as the user", "if root was refused it"),
    both<find_executable>(
        "find the executable",
        "as the final user, whose permissions decide whether it is usable: a missing one is "
        "reported by create, not later"),
    both<clear_death_signal>(
        "clear the parent death signal",
        "create exits after this, and the process must outlive it (the signal would survive "
        "execve)"),
    init_only<report_created>("report created",
                              "create's wait ends here: the container is created"),
    init_only<wait_for_start_here>(
        "wait for start", "until `start` writes exec.fifo (with the exec gate, the gate waits)"),
    split("prepare the exec",
          "argv, env, fds marked close-on-exec: everything of ours before the filter; under an "
          "early one, a refused close_range falls back to fcntl on each fd of /proc/self/fd",
          prepare_init_exec, prepare_exec),
    both<restore_signal_mask>("signal mask", "the mask the user's process starts with"),
    both<load_seccomp>(
        "seccomp filter",
        "as late as possible, so that none of mini-run's own work runs under it; from here on "
        "the only system call of ours is the exec (the gate's execveat, or through "
        "/proc/self/fd where the profile refuses execveat)",
        true),
    init_only<start_container_hooks>(
        "startContainer hooks",
        "at start, in the container, under its filter, with its env if the hook has none (as "
        "runc: a hook gets no more than the process would)"),
    both<exec_process>("exec", "the container's process replaces mini-run"),
}};

Status fail_from(const std::exception& exception) {
    // Not expected: still reported in its own words, never unwound across clone().
    if (dynamic_cast<const std::bad_alloc*>(&exception) != nullptr) {
        return Error(ENOMEM, cat("out of memory: ", exception.what()));
    }
    return Error(exception.what());
}

} // namespace

std::span<const ProcessStep> process_recipe() {
    return kRecipe;
}

void run_init(const InitPlan& plan, InitEnd& sync, Syscalls& sys, bool born_in_v2_cgroup) noexcept {
    forward_log(sync); // not to our stderr, the container's: sync.hpp
    Status status;
    bool created_sent = false;
    try {
        // --debug names its milestones in runc's words ("child process in init()", ...), so
        // that what reads runc's debug output finds them in ours.
        log::debug("child process in init(): the container's init sets it up");
        InitSetup setup(sys, plan, sync, born_in_v2_cgroup);
        status = run_recipe(process_recipe(), Taker::init, setup);
        created_sent = setup.created_sent;
    } catch (const std::exception& exception) {
        status = fail_from(exception);
    }
    // After `create` has exited nobody reads the socket any more: the --log file (if any:
    // log_after_created) is then the only place the failure can go.
    sync.send_error(status.error());
    if (created_sent && !plan.parent_waits_for_exec) {
        log::error(status.error().message());
    }
    ::_exit(1);
}

void run_exec_process(const ProcessPlan& plan, InitEnd& sync, Syscalls& sys,
                      bool born_in_v2_cgroup) noexcept {
    forward_log(sync); // not to our stderr, the container's: sync.hpp
    Status status;
    try {
        log::debug("child process in init(): the exec'd process joins the container");
        ProcessSetup setup(sys, plan, sync, born_in_v2_cgroup);
        status = run_recipe(process_recipe(), Taker::process, setup);
    } catch (const std::exception& exception) {
        status = fail_from(exception);
    }
    sync.send_error(status.error());
    ::_exit(1);
}

} // namespace minirun::runtime
