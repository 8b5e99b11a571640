// run: create + start, then in the foreground wait for the process, forwarding signals and
// relaying the terminal, and delete the container when it exits.
#include "create.hpp"
#include "lifecycle.hpp"
#include "process/signals.hpp"
#include "process/terminal.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

namespace minirun {
namespace {

using runtime::Created;
using runtime::CreateMode;
using runtime::ToParent;
using SyncEvent = runtime::SyncEvent<ToParent>;

// `run`'s start found the init gone. The init may have failed after it reported created
// (its seccomp filter, a Ctrl-C of --explain=step) and said why on the socket before it
// exited: that is the error to show, not "container not running". A dead init's message
// is already in the socket, so this does not wait.
Error why_start_failed(runtime::ParentEnd& sync, Error start_error) {
    auto event = sync.receive_within(std::chrono::milliseconds(0)); // past its log lines
    if (event && *event && !(*event)->eof && (*event)->message == ToParent::kError) {
        return std::move((*event)->error);
    }
    return start_error;
}

// `run --detach` with NOTIFY_SOCKET: returns once the container said READY=1 (relayed,
// with the init's pid as MAINPID), or its init is gone, as runc's.
Result<int> wait_until_ready(runtime::systemd::NotifyRelay& notify, pid_t init) {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, init, 0))); // our child
    if (!pidfd) {
        return Error::from_errno("NOTIFY_SOCKET: pidfd_open the init");
    }
    MR_TRY(notify.wait(pidfd.get(), init));
    return 0;
}

} // namespace

Result<int> run_container(const RunOptions& options) {
    // Signals are blocked before clone() so that none sent meanwhile is lost.
    runtime::SignalForwarder signals; // signals.cpp
    CreateMode mode;
    mode.exec_mask = signals.original_mask();
    mode.relay_terminal = !options.detach && options.console_socket.empty();
    mode.parent_waits_for_exec = !options.detach;
    mode.start_through_socket = true;
    MR_ASSIGN(Created created, runtime::create_internal(options, mode, linux_syscalls()));

    runtime::Opened container{std::move(created.dir), created.record, state::Status::created};
    if (auto started =
            runtime::start_created(container, created.spec, std::move(created.start_socket));
        !started) {
        (void)runtime::destroy(container, created.spec, true);
        return why_start_failed(created.sync, started.error());
    }
    // While the container runs, other commands (kill, exec, state) must get the lock.
    container.dir = state::StateDir();
    if (options.detach) {
        return created.notify ? wait_until_ready(*created.notify, created.pid) : 0;
    }

    // The init either reports a late error (a startContainer hook, execve) or execs; its
    // end of the socket is close-on-exec, so the exec shows here as end of stream.
    MR_ASSIGN(SyncEvent event, created.sync.receive());
    std::optional<Error> failed;
    if (!event.eof) {
        failed = event.message == ToParent::kError
                     ? event.error
                     : Error(EPROTO, "unexpected message from the container's init");
    }
    std::optional<runtime::terminal::Relay> relay;
    if (created.console_master) {
        relay.emplace(std::move(created.console_master));
    }
    // In the foreground the READY=1 is relayed with our own pid as MAINPID, as runc's: we
    // are the process that lives as long as the container and passes its signals on.
    MR_ASSIGN(int exit_code,
              signals.forward_until_exit(created.pid, relay ? &*relay : nullptr,
                                         created.notify ? &*created.notify : nullptr));
    relay.reset();

    if (!options.keep) {
        auto reopened = runtime::open_container(options.root, options.id);
        if (reopened) {
            // The config saved at create is the one this run parsed: no need to read it back.
            MR_TRY(runtime::destroy(*reopened, created.spec, true));
        }
    }
    if (failed && failed->message().starts_with("exec ")) {
        // The container's execve failed (process.cpp or the exec gate: "exec <path>:
        // <reason>"). runc's init writes that line as it is to the container's stderr, which
        // a foreground run shares, and runc adds nothing (runc#4171; run.bats "execve
        // error" reads exactly one line): the same here, with the exit status of a failure.
        std::string line = failed->message() + "\n";
        (void)!::write(STDERR_FILENO, line.data(), line.size());
        return exit_code != 0 ? exit_code : 1;
    }
    if (failed) {
        return *failed;
    }
    return exit_code;
}

} // namespace minirun
