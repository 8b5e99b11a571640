// exec: a new process inside a running container.
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
#include "init.hpp"
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
#include "security/exec_gate.hpp"
#include "security/security.hpp"
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
                                          const UniqueFd& pid_ns) {
    if (!rootless::active() || !pid_ns) {
        return false;
    }
    if (joins.empty() || joins.front().clone_flag != CLONE_NEWUSER) {
        return true; // the container's user namespace is ours (rootless podman's)
    }
    MR_TRY(check_syscall(::prctl(PR_SET_DUMPABLE, 0), "exec: set non-dumpable"));
    MR_TRY(check_syscall(::setns(joins.front().fd, CLONE_NEWUSER),
                         "exec: join the container's user namespace"));
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

// CVE-2019-5736 for `exec` (exec_gate.hpp): the gate where nothing that can see this
// process may hold CAP_SYS_PTRACE over it, the protected re-exec of mini-run otherwise
// (which starts this process over, and does not return). Returns the gate's fd, or an
// invalid one when the process is to exec directly (mini-run already runs protected).
// First leaves the mark when this process may itself hold CAP_SYS_PTRACE: later execs
// must not take the gate next to it. The caller holds the container's lock.
Result<UniqueFd> protect_runtime_binary(const ExecOptions& options, const spec::Spec& spec,
                                        const spec::Process& process, runtime::Opened& container,
                                        bool own_user_namespace) {
    if (!own_user_namespace && runtime::exec_gate::may_hold_ptrace(process)) {
        MR_TRY(container.dir.add_mark(runtime::exec_gate::kPtraceMark));
    }
    runtime::exec_gate::ExecFacts facts;
    facts.own_user_namespace = own_user_namespace;
    facts.ptrace_marked = container.dir.has_mark(runtime::exec_gate::kPtraceMark);
    facts.suid_dumpable_user = suid_dumpable_user();
    facts.paused = container.status == state::Status::paused;
    runtime::exec_gate::Protection protection;
    protection.ruled_out = runtime::exec_gate::unusable_for_exec_because(spec, process, facts);
    protection.gate_text = "exec gate: the process is exec'd through a sealed 2 KB program; "
                           "until then mini-run is non-dumpable, and nothing that sees it may "
                           "hold CAP_SYS_PTRACE";
    protection.say = [](std::string_view text) {
        log::debug(text);
    };
    protection.reexec_argv = options.reexec_argv;
    return runtime::exec_gate::protect_runtime_binary(protection);
}

// What the options and the process must agree on before anything is done.
Status check_process(const ExecOptions& options, const spec::Process& process) {
    if (process.args.empty()) {
        return Error(EINVAL, "exec: no command given");
    }
    if (process.terminal && options.console_socket.empty() && options.detach) {
        return Error(EINVAL, "exec --tty --detach needs --console-socket");
    }
    if (!process.terminal && !options.console_socket.empty()) {
        return Error(EINVAL, "--console-socket given without --tty");
    }
    return {};
}

} // namespace

Result<int> exec_in_container(const ExecOptions& options) {
    Syscalls& sys = linux_syscalls();
    spec::Process process;
    std::vector<runtime::NamespaceEntry> joins;
    std::vector<UniqueFd> join_fds;
    UniqueFd pid_ns;
    UniqueFd root;
    pid_t init = 0;
    runtime::cgroup::Cgroup cgroup;
    runtime::security::ProcessSecurity security;
    std::string oci_version;
    std::string state_json;
    std::optional<spec::MemoryPolicy> memory_policy;
    std::optional<spec::IntelRdt> intel_rdt;
    bool stay_in_pid_namespace = false;
    UniqueFd exec_gate;
    // With the gate, the lock is held until the process has exec'd: an exec that leaves the
    // CAP_SYS_PTRACE mark waits for it, so no such process appears while this one may still
    // be mini-run (exec_gate.hpp).
    std::optional<state::StateDir> locked_until_exec;
    {
        // Held only while the container is looked at, not while the process runs.
        MR_ASSIGN(runtime::Opened container, runtime::open_container(options.root, options.id));
        // runc's words: "cannot exec in a paused container" (use --ignore-paused).
        if (container.status == state::Status::paused && !options.ignore_paused) {
            return Error(EBUSY, cat("container ", quoted(options.id),
                                    ": cannot exec in a paused container (use --ignore-paused)"));
        }
        if (container.status != state::Status::running &&
            container.status != state::Status::created &&
            container.status != state::Status::paused) {
            return Error(ESRCH, cat("cannot exec in container ", quoted(options.id),
                                    ": container not running"));
        }
        init = container.record.pid;
        MR_ASSIGN(cgroup, runtime::cgroup::Cgroup::from_paths(container.record.cgroup_paths)
                              .for_exec(options.cgroups));
        // The container's seccomp filter applies to every process in it (runtime-spec).
        MR_ASSIGN(spec::Spec spec, runtime::saved_spec(container.dir));
        MR_ASSIGN(process, options.make_process(spec.process ? &*spec.process : nullptr));
        MR_TRY(check_process(options, process));
        // Before the rest: the protected re-exec, where needed, starts over from here.
        bool own_user_namespace =
            inode_of(cat("/proc/", init, "/ns/user")) != inode_of("/proc/self/ns/user");
        MR_ASSIGN(exec_gate,
                  protect_runtime_binary(options, spec, process, container, own_user_namespace));
        if (exec_gate) {
            // Non-dumpable from the clone on, as the child inherits it: it is in the
            // container's PID namespace from birth.
            MR_TRY(check_syscall(::prctl(PR_SET_DUMPABLE, 0), "exec: set non-dumpable"));
        }
        MR_ASSIGN(security, runtime::security::prepare(process, spec.linux));
        oci_version = spec.oci_version;
        // The container's NUMA policy too: this process is forked from mini-run, not from
        // the init, so it does not inherit the init's.
        memory_policy = spec.linux.memory_policy;
        intel_rdt = spec.linux.intel_rdt; // and its resctrl group
        state_json = state::oci_state_json(container.record, container.status);
        MR_TRY(open_init_namespaces(init, joins, join_fds, pid_ns));
        MR_ASSIGN(stay_in_pid_namespace, enter_user_namespace_for_pid(joins, pid_ns));
        if (inode_of(cat("/proc/", init, "/ns/mnt")) == inode_of("/proc/self/ns/mnt")) {
            root.reset(
                ::open(cat("/proc/", init, "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!root) {
                return Error::from_errno(cat("container ", quoted(options.id), ": open its root"));
            }
        }
        // The namespaces were opened by pid: make sure that pid still was the init.
        auto started = state::process_start_time(init);
        if (!started || *started != container.record.pid_start_time) {
            return Error(ESRCH, cat("container ", quoted(options.id), ": container not running"));
        }
        if (exec_gate) {
            locked_until_exec.emplace(std::move(container.dir));
        }
    }

    std::optional<runtime::SignalForwarder> signals;
    if (!options.detach) {
        signals.emplace();
    }
    MR_ASSIGN(auto sockets, runtime::create_sync_pair());
    // The recipe's state for the child (init.hpp): the same steps as the init's, those
    // marked `exec`.
    runtime::ProcessSetup child{sys, process, options.preserve_fds, sockets.second, security};
    MR_ASSIGN(auto cgroup_join, cgroup.open_self_join());
    child.cgroup_join = &cgroup_join;
    child.joins = std::move(joins);
    child.keep_fds = {sockets.second.fd(), log::file_descriptor(), root.get()};
    for (const runtime::NamespaceEntry& join : child.joins) {
        child.keep_fds.push_back(join.fd);
    }
    child.exec_gate = exec_gate.get();
    child.keep_fds.push_back(exec_gate.get());
    child.exec_root = root.get();
    child.new_session = process.terminal;
    child.bind_console = false;
    child.oci_version = oci_version;
    child.state_json = state_json;
    child.container_pid = init;
    child.memory_policy = memory_policy ? &*memory_policy : nullptr;
    auto v2_dir = cgroup.open_v2_dir();
    if (signals) {
        child.exec_signal_mask = signals->original_mask();
    } else {
        ::sigprocmask(SIG_SETMASK, nullptr, &child.exec_signal_mask);
    }
    runtime::ScopedChild scoped;
    {
        std::optional<runtime::pid::JoinedForChildren> in_pid_namespace;
        if (pid_ns) {
            MR_ASSIGN(auto joined, runtime::pid::JoinedForChildren::enter_fd(pid_ns.get()));
            in_pid_namespace.emplace(std::move(joined));
        }
        // process.execCPUAffinity.initial: mini-run's own cpus until the clone, which is born
        // with them; the process takes `final` once in the cgroup (the recipe).
        runtime::scheduling::InitialAffinity initial_cpus;
        MR_TRY(initial_cpus.apply(process.exec_cpu_affinity, sys));
        log::debug(cat("nsexec container setup: clone, then join the namespaces of pid ", init));
        MR_ASSIGN(pid_t pid,
                  runtime::clone_with(0, v2_dir ? v2_dir->get() : -1, &child.born_in_v2_cgroup));
        if (pid == 0) {
            sockets.first.close();
            runtime::run_exec_setup(child);
        }
        scoped.reset(pid);
        MR_TRY(runtime::intel_rdt::add_exec_process(intel_rdt, options.id, pid));
        if (in_pid_namespace && stay_in_pid_namespace) {
            in_pid_namespace->stay();
        } else if (in_pid_namespace) {
            MR_TRY_WRAP(in_pid_namespace->leave(), "exec");
        }
    }
    sockets.second.close();
    cgroup_join = {}; // the child's to write

    UniqueFd master;
    for (;;) {
        MR_ASSIGN(auto event, sockets.first.receive());
        if (event.eof) {
            break; // exec'd
        }
        if (event.message == ToParent::kConsole) {
            master = std::move(event.fd);
            continue;
        }
        if (event.message == ToParent::kError) {
            return event.error;
        }
        return Error(EPROTO, "unexpected message from the exec'd process");
    }
    locked_until_exec.reset();
    if (!options.console_socket.empty()) {
        MR_TRY(runtime::terminal::send_to_console_socket(options.console_socket, master.get()));
        master.reset();
    }
    if (!options.pid_file.empty()) {
        MR_TRY(runtime::write_pid_file(options.pid_file, scoped.get()));
    }
    pid_t pid = scoped.release();
    if (options.detach) {
        return 0;
    }
    std::optional<runtime::terminal::Relay> relay;
    if (master) {
        relay.emplace(std::move(master));
    }
    return signals->forward_until_exit(pid, relay ? &*relay : nullptr);
}

} // namespace minirun
