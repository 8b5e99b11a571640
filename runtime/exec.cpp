// exec: a new process inside a running container.
//
// The new process must end up in every namespace of the container's init. setns()
// moves the caller into a namespace, with one exception: a PID namespace only applies to
// the caller's future children. So the parent enters the init's PID namespace just
// around clone() (pid.cpp), and the child joins the others itself, the user namespace
// first (its privileges decide whether the rest may be joined), before it takes the
// process's identity and execs. Namespaces the container shares with us are skipped:
// setns() into one's own user namespace is an error, and into the others a no-op.
#include "cgroup.hpp"
#include "child.hpp"
#include "lifecycle.hpp"
#include "limits.hpp"
#include "minirun/log.hpp"
#include "minirun/runtime.hpp"
#include "mount.hpp"
#include "namespaces.hpp"
#include "pid.hpp"
#include "process.hpp"
#include "security.hpp"
#include "signals.hpp"
#include "sync.hpp"
#include "syscalls.hpp"
#include "terminal.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <optional>

namespace minirun {
namespace {

using runtime::SyncMessage;
using runtime::SyncSocket;
using spec::NamespaceType;

struct JoinTarget {
    NamespaceType type;
    UniqueFd fd;
};

ino_t inode_of(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

// The init's namespaces that differ from ours, the user namespace first and the PID
// namespace apart.
Status open_init_namespaces(pid_t init, std::vector<JoinTarget>& joins, UniqueFd& pid_ns) {
    constexpr std::array kOrder = {
        NamespaceType::user,    NamespaceType::mount,  NamespaceType::ipc,  NamespaceType::uts,
        NamespaceType::network, NamespaceType::cgroup, NamespaceType::time, NamespaceType::pid};
    for (NamespaceType type : kOrder) {
        std::string name(runtime::proc_ns_name(type));
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
        if (type == NamespaceType::pid) {
            pid_ns = std::move(fd);
        } else {
            joins.push_back({type, std::move(fd)});
        }
    }
    return {};
}

struct ExecChild {
    const ExecOptions* options = nullptr;
    const std::vector<JoinTarget>* joins = nullptr;
    int root = -1; // the init's root, when its mount namespace is ours (no setns sets it)
    const runtime::security::ProcessSecurity* security = nullptr;
    std::string oci_version;
    std::string state_json; // the container's, for the seccomp listener
    pid_t init = 0;
    runtime::cgroup::SelfJoin cgroup_join; // the container's cgroups
    bool born_in_v2_cgroup = false;        // clone3 CLONE_INTO_CGROUP took it
    SyncSocket sync;
    sigset_t exec_mask{};
};

Status exec_steps(ExecChild& child) {
    Syscalls& sys = linux_syscalls();
    const spec::Process& process = child.options->process;
    // runc's words for the milestones, as in init.cpp.
    log::debug("child process in init(): the exec'd process joins the container");
    MR_TRY(check_syscall(::prctl(PR_SET_PDEATHSIG, SIGKILL), "set parent death signal"));
    // Until exec this is a copy of mini-run inside the container's PID namespace: its
    // /proc/<pid>/exe must not be reachable from there (CVE-2019-5736 class).
    MR_TRY(check_syscall(::prctl(PR_SET_DUMPABLE, 0), "set non-dumpable"));
    // The container's limits and freezer cover this process too (cgroup.hpp, SelfJoin).
    MR_TRY_WRAP(child.cgroup_join.join(child.born_in_v2_cgroup), "join the container's cgroups");
    {
        std::vector<int> keep = {child.sync.fd(), log::file_descriptor(), child.root};
        for (const JoinTarget& join : *child.joins) {
            keep.push_back(join.fd.get());
        }
        MR_TRY(runtime::process::close_inherited_fds(child.options->preserve_fds, std::move(keep)));
    }
    // As for the init: while still the host's root in the host's namespaces.
    MR_TRY(runtime::limits::apply_rlimits(process.rlimits));
    MR_ASSIGN(UniqueFd listener, runtime::security::connect_seccomp_listener(*child.security));
    for (const JoinTarget& join : *child.joins) {
        if (::setns(join.fd.get(), runtime::clone_flag_of(join.type)) < 0) {
            return Error::from_errno(
                cat("join the container's ", spec::namespace_type_name(join.type), " namespace"));
        }
    }
    if (child.root >= 0) {
        // A container without a mount namespace (mount.hpp): its init chroot()ed into the
        // rootfs, and so does this process, or it would run on the host's "/".
        MR_TRY(runtime::mount::chroot_into(child.root, sys));
    }
    if (process.terminal) {
        // A session of its own, so that the pty can become its controlling terminal.
        MR_TRY(check_syscall(::setsid() < 0 ? -1 : 0, "setsid"));
        MR_ASSIGN(runtime::terminal::Pty pty, runtime::terminal::open_pty(process.console_size));
        MR_TRY(runtime::terminal::attach_stdio(pty, process.user.uid));
        MR_TRY(child.sync.send(SyncMessage::kConsole, "", pty.master.get()));
    }
    // The same order as the init's (init.cpp): cwd while privileged, the drop, the exec made
    // ready, and only then the filter.
    MR_ASSIGN(bool in_cwd, runtime::process::try_enter_cwd(process));
    std::string home = runtime::process::missing_home(process); // as the init's (init.cpp)
    runtime::security::ListenerState listener_info{listener.get(), child.oci_version, child.init,
                                                   child.state_json};
    MR_TRY(runtime::security::drop_privileges(*child.security, process.user, sys, listener_info));
    sys.umask(process.user.umask.value_or(022));
    if (!in_cwd) {
        MR_TRY(runtime::process::enter_cwd(process));
    }
    MR_ASSIGN(std::string executable, runtime::process::find_executable(process));
    // A detached exec outlives this mini-run; the parent-death signal would survive execve.
    MR_TRY(check_syscall(::prctl(PR_SET_PDEATHSIG, 0), "clear parent death signal"));
    runtime::process::PreparedExec exec;
    MR_TRY(exec.prepare(executable, process, child.options->preserve_fds, home));
    if (log::enabled(log::Level::debug)) {
        log::debug(cat("setns_init: about to exec ", quoted(executable)));
    }
    ::sigprocmask(SIG_SETMASK, &child.exec_mask, nullptr);
    MR_TRY(runtime::security::before_exec(*child.security, listener_info, exec.explanation()));
    return exec.run();
}

[[noreturn]] void run_exec_child(ExecChild& child) noexcept {
    Status status;
    try {
        status = exec_steps(child);
    } catch (const std::exception& exception) {
        status = Error(ENOMEM, exception.what());
    }
    child.sync.send_error(status.error());
    ::_exit(1);
}

} // namespace

Result<int> exec_in_container(const ExecOptions& options) {
    const spec::Process& process = options.process;
    if (process.args.empty()) {
        return Error(EINVAL, "exec: no command given");
    }
    if (process.terminal && options.console_socket.empty() && options.detach) {
        return Error(EINVAL, "exec --tty --detach needs --console-socket");
    }
    if (!process.terminal && !options.console_socket.empty()) {
        return Error(EINVAL, "--console-socket given without --tty");
    }

    std::vector<JoinTarget> joins;
    UniqueFd pid_ns;
    UniqueFd root;
    pid_t init = 0;
    runtime::cgroup::Cgroup cgroup;
    runtime::security::ProcessSecurity security;
    std::string oci_version;
    std::string state_json;
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
        MR_ASSIGN(security, runtime::security::prepare(process, spec.linux));
        oci_version = spec.oci_version;
        state_json = state::oci_state_json(container.record, container.status);
        MR_TRY(open_init_namespaces(init, joins, pid_ns));
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
    }

    std::optional<runtime::SignalForwarder> signals;
    if (!options.detach) {
        signals.emplace();
    }
    MR_ASSIGN(auto sockets, SyncSocket::create_pair());
    ExecChild child;
    child.options = &options;
    child.joins = &joins;
    child.root = root.get();
    child.sync = std::move(sockets.second);
    child.security = &security;
    child.oci_version = oci_version;
    child.state_json = state_json;
    child.init = init;
    MR_ASSIGN(child.cgroup_join, cgroup.open_self_join());
    auto v2_dir = cgroup.open_v2_dir();
    if (signals) {
        child.exec_mask = signals->original_mask();
    } else {
        ::sigprocmask(SIG_SETMASK, nullptr, &child.exec_mask);
    }
    runtime::ScopedChild scoped;
    {
        std::optional<runtime::pid::JoinedForChildren> in_pid_namespace;
        if (pid_ns) {
            MR_ASSIGN(auto joined, runtime::pid::JoinedForChildren::enter_fd(pid_ns.get()));
            in_pid_namespace.emplace(std::move(joined));
        }
        log::debug(cat("nsexec container setup: clone, then join the namespaces of pid ", init));
        MR_ASSIGN(pid_t pid,
                  runtime::clone_with(0, v2_dir ? v2_dir->get() : -1, &child.born_in_v2_cgroup));
        if (pid == 0) {
            sockets.first.close();
            run_exec_child(child);
        }
        scoped.reset(pid);
    }
    child.sync.close();
    child.cgroup_join = {}; // the child's to write

    UniqueFd master;
    for (;;) {
        MR_ASSIGN(runtime::SyncEvent event, sockets.first.receive());
        if (event.eof) {
            break; // exec'd
        }
        if (event.message == SyncMessage::kConsole) {
            master = std::move(event.fd);
            continue;
        }
        if (event.message == SyncMessage::kError) {
            return event.error;
        }
        return Error(EPROTO, "unexpected message from the exec'd process");
    }
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
