// exec: a new process inside a running container, as one recipe (kExecRecipe) over the
// runner create uses; the process itself takes the process recipe (recipe.cpp), the steps
// marked `process`, with a ProcessPlan built here (plan_the_process), and what exec shares
// with create is in spawn.hpp.
//
// The new process must end up in every namespace of the container's init. setns()
// moves the caller into a namespace, with one exception: a PID namespace only applies to
// the caller's future children. So the parent enters the init's PID namespace just
// around clone() (pid.cpp), and the child joins the others itself, the user namespace
// first (its privileges decide whether the rest may be joined), before it takes the
// process's identity and execs. Namespaces the container shares with us are skipped:
// setns() into one's own user namespace is an error, and into the others a no-op.
#include "cgroup/cgroup.hpp"
#include "cgroup/intel_rdt.hpp"
#include "lifecycle.hpp"
#include "minirun/log.hpp"
#include "minirun/rootless.hpp"
#include "minirun/runtime.hpp"
#include "ns/namespaces.hpp"
#include "ns/pid.hpp"
#include "process/child.hpp"
#include "process/process.hpp"
#include "process/scheduling.hpp"
#include "process/signals.hpp"
#include "process/terminal.hpp"
#include "recipe.hpp"
#include "security/exec_gate.hpp"
#include "security/security.hpp"
#include "spawn.hpp"
#include "sync.hpp"
#include "syscalls.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>

namespace minirun {
namespace {

using runtime::ToParent;
using spec::NamespaceType;

ino_t inode_of(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

// The init's namespaces that differ from ours, in the table's order (user first), the PID
// namespace apart: setns() into it applies to children only (pid.cpp).
Status open_init_namespaces(pid_t init, std::vector<runtime::NamespaceEntry>& joins,
                            std::vector<UniqueFd>& fds, UniqueFd& pid_ns) {
    for (const spec::NamespaceKind& kind : spec::namespace_table()) {
        std::string name(kind.proc_name);
        std::string theirs = cat("/proc/", init, "/ns/", name);
        ino_t their_inode = inode_of(theirs);
        if (their_inode == 0) {
            continue; // a kernel without this namespace type
        }
        if (their_inode == inode_of("/proc/self/ns/" + name)) {
            continue;
        }
        UniqueFd fd(::open(theirs.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) {
            return Error::from_errno(cat("open ", theirs));
        }
        if (kind.type == NamespaceType::pid) {
            pid_ns = std::move(fd);
            continue;
        }
        joins.push_back({fd.get(), kind.clone_flag,
                         cat("join the container's ", kind.spec_name, " namespace")});
        fds.push_back(std::move(fd));
    }
    return {};
}

// setns() into a PID namespace needs CAP_SYS_ADMIN over the user namespace that owns it.
// Without the host's root (rootless) mini-run has that only inside the container's user
// namespace, so it enters that one itself before the PID namespace, and the child, born
// in it, does not join it again. Nothing is lost: without root there were no privileges
// to keep, and the files mini-run still opens it opens as the same host uid. Non-dumpable
// first: a process in there is root of that namespace, and could otherwise ptrace
// mini-run (and reach its protected binary, CVE-2019-5736); the kernel judges a
// non-dumpable process by the namespace it was exec'd in, the host's.
// Returns whether mini-run stays in the container's PID namespace: rootless, it may not
// return to its own, which the host's user namespace owns (pid.hpp, stay()).
Result<bool> enter_user_namespace_for_pid(std::vector<runtime::NamespaceEntry>& joins,
                                          const UniqueFd& pid_ns, Syscalls& sys) {
    if (!rootless::active() || !pid_ns) {
        return false;
    }
    if (joins.empty() || joins.front().clone_flag != CLONE_NEWUSER) {
        return true; // the container's user namespace is ours (rootless podman's)
    }
    MR_TRY(checked(sys.prctl(PR_SET_DUMPABLE, 0), "exec: set non-dumpable"));
    MR_TRY_WRAP(sys.setns(joins.front().fd, CLONE_NEWUSER),
                "exec: join the container's user namespace");
    joins.erase(joins.begin());
    return true;
}

// fs.suid_dumpable = 1 makes a process dumpable again whenever its credentials change, so
// also when the exec'd process takes the user's ids, before its exec.
bool suid_dumpable_user() {
    char value = 0;
    UniqueFd file(::open("/proc/sys/fs/suid_dumpable", O_RDONLY | O_CLOEXEC));
    return !file || ::read(file.get(), &value, 1) != 1 || value == '1';
}

// The facts the exec gate's choice rests on (exec_gate.hpp, unusable_for_exec_because).
runtime::exec_gate::ExecFacts gate_facts(runtime::Opened& container, bool own_user_namespace) {
    runtime::exec_gate::ExecFacts facts;
    facts.own_user_namespace = own_user_namespace;
    facts.ptrace_marked = container.dir.has_mark(runtime::exec_gate::kPtraceMark);
    facts.suid_dumpable_user = suid_dumpable_user();
    facts.paused = container.status == state::Status::paused;
    return facts;
}

// One `exec` as it goes: what the steps below find and make, in that order. On a failure
// the members are destroyed in reverse order, and each undoes what it made: the process is
// killed and reaped, the PID namespace left, the lock released.
struct ExecRun {
    ExecRun(const ExecOptions& options_, Syscalls& sys_) : options(options_), sys(sys_) {}

    const ExecOptions& options;
    Syscalls& sys;
    std::optional<runtime::Opened> container; // locked while it is looked at
    spec::Spec spec;                          // the container's saved config
    spec::Process process;
    pid_t init = 0;
    runtime::cgroup::Cgroup cgroup;
    UniqueFd exec_gate;
    runtime::security::ProcessSecurity security;
    procfs::Handle procfs; // only for an LSM label, the one write under /proc of an exec
    std::vector<runtime::NamespaceEntry> joins;
    std::vector<UniqueFd> join_fds;
    UniqueFd pid_ns;
    UniqueFd root; // without a mount namespace of its own: the init's root
    bool stay_in_pid_namespace = false;
    // With the gate, the lock is held until the process has exec'd: an exec that leaves the
    // CAP_SYS_PTRACE mark waits for it, so no such process appears while this one may
    // still be mini-run (exec_gate.hpp).
    std::optional<state::StateDir> locked_until_exec;
    runtime::cgroup::SelfJoin cgroup_join;
    std::optional<runtime::SignalForwarder> signals;
    runtime::ProcessPlan plan; // decided before the clone (plan_the_process)
    runtime::ParentEnd sync;
    runtime::InitEnd child_end;
    runtime::ScopedChild child;
    UniqueFd master;
};
using Run = ExecRun;

// ---- the steps, in the order of the table below

Status open_the_container(Run& r) {
    const ExecOptions& options = r.options;
    MR_ASSIGN(r.container, runtime::open_container(options.root, options.id));
    state::Status status = r.container->status;
    // runc's words: "cannot exec in a paused container" (use --ignore-paused).
    if (status == state::Status::paused && !options.ignore_paused) {
        return Error(EBUSY, cat("container ", quoted(options.id),
                                ": cannot exec in a paused container (use --ignore-paused)"));
    }
    if (status != state::Status::running && status != state::Status::created &&
        status != state::Status::paused) {
        return Error(
            ESRCH, cat("cannot exec in container ", quoted(options.id), ": container not running"));
    }
    r.init = r.container->record.pid;
    // The container's seccomp filter applies to every process in it (runtime-spec).
    MR_ASSIGN(r.spec, runtime::saved_spec(r.container->dir));
    MR_ASSIGN(r.process, options.make_process(r.spec.process ? &*r.spec.process : nullptr));
    return {};
}

Status check_the_process(Run& r) {
    if (r.process.args.empty()) {
        return Error(EINVAL, "exec: no command given");
    }
    const ExecOptions& options = r.options;
    if (!options.apparmor_profile.empty() || !options.process_label.empty()) {
        MR_TRY(runtime::security::apply_exec_labels(options.apparmor_profile, options.process_label,
                                                    runtime::security::host_lsms(), r.process));
    }
    return runtime::check_terminal_options(r.process.terminal,
                                           r.options.console_socket, // spawn.cpp
                                           !r.options.detach, "--tty");
}

Status protect_binary(Run& r) {
    runtime::Opened& container = *r.container;
    bool own_user_namespace =
        inode_of(cat("/proc/", r.init, "/ns/user")) != inode_of("/proc/self/ns/user");
    // First the mark, when this process may itself hold CAP_SYS_PTRACE: later execs must not
    // take the gate next to it. The lock is held.
    if (!own_user_namespace && runtime::exec_gate::may_hold_ptrace(r.process)) {
        MR_TRY(container.dir.add_mark(runtime::exec_gate::kPtraceMark));
    }
    MR_ASSIGN(r.exec_gate,
              runtime::protect_runtime_binary(
                  runtime::exec_gate::unusable_for_exec_because(
                      r.spec, r.process, gate_facts(container, own_user_namespace)),
                  "exec gate: the process is exec'd through a sealed 2 KB program; until then "
                  "mini-run is non-dumpable, and nothing that sees it may hold CAP_SYS_PTRACE",
                  r.options.reexec_argv, nullptr));
    if (r.exec_gate) {
        // Non-dumpable from the clone on, as the child inherits it: it is in the
        // container's PID namespace from birth.
        MR_TRY(checked(r.sys.prctl(PR_SET_DUMPABLE, 0), "exec: set non-dumpable"));
    }
    return {};
}

Status prepare_security(Run& r) {
    MR_ASSIGN(r.security, runtime::security::prepare(r.process, r.spec.linux));
    // An exec'd process writes under /proc only its LSM labels, after joining the
    // container's mount namespace, whose /proc the container may have shaped
    // (CVE-2025-52881): through a handle made here, before any namespace is entered.
    MR_ASSIGN(r.procfs, runtime::open_procfs_handle(!r.security.apparmor_profile.empty() ||
                                                    !r.security.selinux_label.empty()));
    return {};
}

Status open_namespaces(Run& r) {
    MR_TRY(open_init_namespaces(r.init, r.joins, r.join_fds, r.pid_ns));
    MR_ASSIGN(r.stay_in_pid_namespace, enter_user_namespace_for_pid(r.joins, r.pid_ns, r.sys));
    if (inode_of(cat("/proc/", r.init, "/ns/mnt")) == inode_of("/proc/self/ns/mnt")) {
        r.root.reset(
            ::open(cat("/proc/", r.init, "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!r.root) {
            return Error::from_errno(cat("container ", quoted(r.options.id), ": open its root"));
        }
    }
    // The namespaces were opened by pid: make sure that pid still was the init.
    auto started = state::process_start_time(r.init);
    if (!started || *started != r.container->record.pid_start_time) {
        return Error(ESRCH, cat("container ", quoted(r.options.id), ": container not running"));
    }
    return {};
}

Status open_cgroup_files(Run& r) {
    MR_ASSIGN(r.cgroup, runtime::cgroup::Cgroup::from_paths(r.container->record.cgroup_paths)
                            .for_exec(r.options.cgroups));
    MR_ASSIGN(r.cgroup_join, r.cgroup.open_self_join());
    return {};
}

Status release_the_container(Run& r) {
    if (r.exec_gate) {
        r.locked_until_exec.emplace(std::move(r.container->dir));
    }
    r.plan.state_json = state::oci_state_json(r.container->record, r.container->status);
    r.container.reset();
    return {};
}

Status forward_signals(Run& r) {
    if (!r.options.detach) {
        r.signals.emplace();
    }
    return {};
}

// Everything the process gets, in one place, before the clone.
Status plan_the_process(Run& r) {
    MR_ASSIGN(auto sockets, runtime::create_sync_pair());
    r.sync = std::move(sockets.first);
    r.child_end = std::move(sockets.second);
    runtime::ProcessPlan& plan = r.plan;
    plan.process = r.process;
    plan.preserve_fds = r.options.preserve_fds;
    plan.security = std::move(r.security);
    plan.joins = std::move(r.joins);
    plan.cgroup_join = &r.cgroup_join;
    if (r.signals) {
        plan.signal_mask = r.signals->original_mask();
    } else {
        ::sigprocmask(SIG_SETMASK, nullptr, &plan.signal_mask);
    }
    // The container's NUMA policy too: this process is forked from mini-run, not from the
    // init, so it does not inherit the init's.
    plan.memory_policy = r.spec.linux.memory_policy;
    plan.personality = r.spec.linux.personality;
    plan.exec_gate = r.exec_gate.get();
    plan.new_session = r.process.terminal;
    plan.bind_console = false;
    plan.relayed_terminal = !r.options.detach && r.options.console_socket.empty();
    plan.exec_root = r.root.get();
    plan.oci_version = r.spec.oci_version;
    plan.container_pid = r.init;
    plan.procfs = &r.procfs;
    plan.keep_fds = {r.child_end.fd(), log::file_descriptor(), r.root.get(), r.exec_gate.get(),
                     r.procfs.fd()};
    for (const runtime::NamespaceEntry& join : plan.joins) {
        plan.keep_fds.push_back(join.fd);
    }
    return {};
}

Status clone_the_process(Run& r) {
    auto v2_dir = r.cgroup.open_v2_dir();
    std::optional<runtime::pid::JoinedForChildren> in_pid_namespace;
    if (r.pid_ns) {
        MR_ASSIGN(auto joined, runtime::pid::JoinedForChildren::enter_fd(r.pid_ns.get(), r.sys));
        in_pid_namespace.emplace(std::move(joined));
    }
    // process.execCPUAffinity.initial: mini-run's own cpus until the clone, which is born
    // with them; the process takes `final` once in the cgroup (the recipe).
    runtime::scheduling::InitialAffinity initial_cpus;
    MR_TRY(initial_cpus.apply(r.process.exec_cpu_affinity, r.sys));
    log::debug(cat("nsexec container setup: clone, then join the namespaces of pid ", r.init));
    bool born_in_v2 = false;
    MR_ASSIGN(pid_t pid, runtime::clone_process( // spawn.hpp; the child runs recipe.cpp
                             0, v2_dir ? v2_dir->get() : -1, r.sync, &born_in_v2, [&r](bool born) {
                                 runtime::run_exec_process(r.plan, r.child_end, r.sys, born);
                             }));
    r.child.reset(pid);
    MR_TRY(runtime::intel_rdt::add_exec_process(r.spec.linux.intel_rdt, r.options.id, pid));
    if (in_pid_namespace && r.stay_in_pid_namespace) {
        in_pid_namespace->stay();
    } else if (in_pid_namespace) {
        MR_TRY_WRAP(in_pid_namespace->leave(), "exec");
    }
    r.child_end.close();
    r.cgroup_join = {}; // the child's to write
    return {};
}

Status serve_the_process(Run& r) {
    for (;;) {
        MR_ASSIGN(auto event, r.sync.receive());
        if (event.eof) {
            break; // exec'd
        }
        if (event.message == ToParent::kConsole) {
            r.master = std::move(event.fd);
            continue;
        }
        if (event.message == ToParent::kError) {
            return event.error;
        }
        return Error(EPROTO, "unexpected message from the exec'd process");
    }
    r.locked_until_exec.reset();
    return {};
}

Status hand_over_terminal(Run& r) {
    return runtime::hand_over_terminal(r.options.console_socket, r.master); // spawn.cpp
}

Status hand_over_pidfd(Run& r) {
    return runtime::hand_over_pidfd(r.options.pidfd_socket, r.child.get()); // spawn.cpp
}

Status write_pid_file(Run& r) {
    if (r.options.pid_file.empty()) {
        return {};
    }
    return runtime::write_pid_file(r.options.pid_file, r.child.get());
}

constexpr auto kExec = runtime::Taker::exec;

// exec's recipe: what can be checked first, then what the process joins is opened (the
// container's namespaces, its cgroup files), then the process is planned and cloned.
constexpr std::array<runtime::Step<Run>, 14> kExecRecipe = {{
    {"open the container",
     "locked while it is looked at: its state, its saved config (whose seccomp filter and "
     "limits apply to every process in it) and the process to run",
     kExec, open_the_container},
    {"check the process",
     "a command, --console-socket and --tty agree, --apparmor and --process-label name an "
     "LSM this host has, before anything is made",
     kExec, check_the_process},
    {"protect the runtime binary",
     "CVE-2019-5736: the exec gate where nothing that sees the process may hold "
     "CAP_SYS_PTRACE, a sealed re-exec of mini-run otherwise (which starts over)",
     kExec, protect_binary},
    {"prepare security",
     "capabilities resolved, the seccomp filter compiled, LSM settings checked: errors now, "
     "not in the process; for an LSM label, the procfs handle it is written through, before "
     "any namespace is entered (CVE-2025-52881)",
     kExec, prepare_security},
    {"open the container's namespaces",
     "by the init's pid, then checked to still be the init's; rootless, the user namespace "
     "is entered here, as a PID namespace may only be entered with its owner's privileges",
     kExec, open_namespaces},
    {"open the cgroup files",
     "the container's cgroups (or --cgroup's sub-cgroup), which the process writes itself "
     "into first",
     kExec, open_cgroup_files},
    {"release the container",
     "the lock goes, unless the gate needs it until the exec; the state the listener gets is "
     "taken now",
     kExec, release_the_container},
    {"forward signals",
     "in the foreground, from now on a signal to mini-run is for the process (blocked until "
     "it exists)",
     kExec, forward_signals},
    {"plan the process",
     "everything the process gets, decided before the clone: its process, namespaces to "
     "join, cgroup files, prepared security, the fds it keeps, the gate, the signal mask",
     kExec, plan_the_process},
    {"clone the process",
     "through the container's PID namespace (setns applies to children only), straight into "
     "the cgroup2 directory",
     kExec, clone_the_process},
    {"serve the process until exec", "take the pty; its end of stream is the exec", kExec,
     serve_the_process},
    {"hand over the terminal", "to --console-socket", kExec, hand_over_terminal},
    {"hand over a pidfd", "to --pidfd-socket, while the process is still our unreaped child", kExec,
     hand_over_pidfd},
    {"write the pid file", "last: a pid file means the process runs", kExec, write_pid_file},
}};

} // namespace

namespace runtime {

std::vector<StepOutline> exec_recipe_outline() {
    return outline_of(std::span<const Step<ExecRun>>(kExecRecipe));
}

} // namespace runtime

Result<int> runtime::exec_in_container(const ExecOptions& options, Syscalls& sys) {
    ExecRun run(options, sys);
    MR_TRY(runtime::run_recipe(std::span<const runtime::Step<Run>>(kExecRecipe),
                               runtime::Taker::exec, run));
    pid_t pid = run.child.release();
    if (options.detach) {
        return 0;
    }
    std::optional<runtime::terminal::Relay> relay;
    if (run.master) {
        relay.emplace(std::move(run.master));
    }
    return run.signals->forward_until_exit(pid, relay ? &*relay : nullptr);
}

Result<int> exec_in_container(const ExecOptions& options) {
    return runtime::exec_in_container(options, linux_syscalls());
}

} // namespace minirun
