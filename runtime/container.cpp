// The parent's side of a container's life, in one place: from config.json to the exit
// status. Each step names the file that owns it.
#include "init.hpp"
#include "ipc.hpp"
#include "minirun/log.hpp"
#include "minirun/runtime.hpp"
#include "namespaces.hpp"
#include "pid.hpp"
#include "plan.hpp"
#include "signals.hpp"
#include "sync.hpp"
#include "user.hpp"

#include <csignal>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace minirun {
namespace {

using runtime::Plan;
using runtime::SyncMessage;
using runtime::SyncSocket;

// The init until it is handed to the caller: on any early return it is killed and
// reaped, so a failed start leaves no process behind (its mounts die with its mount
// namespace).
class ScopedInit {
public:
    ScopedInit() = default;
    ScopedInit(const ScopedInit&) = delete;
    ScopedInit& operator=(const ScopedInit&) = delete;
    ScopedInit(ScopedInit&&) = delete;
    ScopedInit& operator=(ScopedInit&&) = delete;
    ~ScopedInit() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
    }
    void reset(pid_t pid) { pid_ = pid; }
    [[nodiscard]] pid_t get() const { return pid_; }
    pid_t release() { return std::exchange(pid_, -1); }

private:
    pid_t pid_ = -1;
};

// The kernel's struct clone_args, version 0 (64 bytes).
struct CloneArgs {
    uint64_t flags;
    uint64_t pidfd;
    uint64_t child_tid;
    uint64_t parent_tid;
    uint64_t exit_signal;
    uint64_t stack;
    uint64_t stack_size;
    uint64_t tls;
};

// clone() with the plan's namespace flags. Without CLONE_VM and without a new stack the
// child continues on a copy of our memory, like fork(): it reads the plan from there.
Result<pid_t> clone_init(const Plan& plan, runtime::InitContext& context, SyncSocket& parent_end) {
    CloneArgs args{};
    args.flags = plan.clone_flags;
    args.exit_signal = SIGCHLD;
    long pid = ::syscall(SYS_clone3, &args, sizeof(args));
    if (pid < 0 && errno == ENOSYS) {
        pid = ::syscall(SYS_clone, plan.clone_flags | SIGCHLD, nullptr, nullptr, nullptr, 0);
    }
    if (pid < 0) {
        return Error::from_errno("clone the container's init");
    }
    if (pid == 0) {
        // Our copy of the parent's end must go, or the init would never see EOF from a
        // parent that died.
        parent_end.close();
        runtime::run_init(plan, context);
    }
    return static_cast<pid_t>(pid);
}

// After a failed send, the init has usually died with an error frame waiting for us:
// that message says what went wrong, the broken pipe does not.
Error init_error_or(SyncSocket& sync, const Error& fallback) {
    auto event = sync.receive();
    if (event && !event->eof && event->message == SyncMessage::kError) {
        return event->error;
    }
    return fallback;
}

} // namespace

Result<int> run_container(const RunOptions& options) {
    // 1. Everything that can be checked is checked before anything is created.
    MR_TRY(validate_container_id(options.id));
    MR_ASSIGN(spec::Spec spec, spec::load_spec(options.bundle)); // spec_parse.cpp
    MR_ASSIGN(Plan plan, runtime::make_plan(std::move(spec),     // plan.cpp
                                            {options.id, options.bundle, options.preserve_fds}));
    runtime::ipc::warn_if_host_queues_exposed(plan); // ipc.cpp
    if (plan.spec.process->terminal) {
        log::warning("process.terminal: terminals are not supported yet; the container runs "
                     "with mini-run's stdio");
    }
    MR_ASSIGN(auto namespaces, runtime::open_namespaces_to_join(plan)); // namespaces.cpp

    // 2. Signals are blocked before clone() so that none sent meanwhile is lost.
    runtime::SignalForwarder signals;                   // signals.cpp
    MR_ASSIGN(auto sockets, SyncSocket::create_pair()); // sync.cpp
    SyncSocket& sync = sockets.first;
    runtime::InitContext context{std::move(sockets.second), &namespaces, signals.original_mask()};

    // 3. clone() into the new namespaces; the init runs init.cpp from here.
    ScopedInit init;
    {
        MR_ASSIGN(auto in_pid_namespace, runtime::pid::JoinedForChildren::enter(plan)); // pid.cpp
        MR_ASSIGN(pid_t pid, clone_init(plan, context, sync));
        init.reset(pid);
    }
    context.sync.close();

    // 4. The parent's share of the setup, while the init waits.
    if (plan.creates(spec::NamespaceType::user)) {
        if (auto mapped = runtime::user::write_id_maps(init.get(), plan); !mapped) { // user.cpp
            return mapped.error();
        }
    }
    if (plan.wait_for_parent) {
        if (auto sent = sync.send(SyncMessage::kParentReady); !sent) {
            return init_error_or(sync, sent.error());
        }
    }

    // 5. The init either reports an error or execs; its end of the socket is close-on-exec,
    //    so the exec shows here as end of stream.
    MR_ASSIGN(runtime::SyncEvent event, sync.receive());
    if (!event.eof) {
        if (event.message == SyncMessage::kError) {
            return event.error;
        }
        return Error(EPROTO, "unexpected message from the container's init");
    }

    // 6. The container runs: stand in for it until it exits.
    return signals.forward_until_exit(init.release()); // signals.cpp
}

} // namespace minirun
