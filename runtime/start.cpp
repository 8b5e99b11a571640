// start and run: releasing a created container, and run's create + start + wait.
#include "create.hpp"
#include "lifecycle.hpp"
#include "process/hooks.hpp"
#include "process/signals.hpp"
#include "process/terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>

namespace minirun {
namespace {

using runtime::Created;
using runtime::CreateMode;
using runtime::ToParent;
using SyncEvent = runtime::SyncEvent<ToParent>;

Error not_running(const runtime::Opened& container, int error) {
    return Error::from_errno(error,
                             cat("start ", quoted(container.record.id), ": container not running"));
}

// The start byte through exec.fifo; a fifo without a reader means the init died since we
// looked.
Result<UniqueFd> start_through_fifo(const runtime::Opened& container) {
    std::string fifo_path = container.dir.fifo_path();
    UniqueFd fifo(::open(fifo_path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fifo) {
        return not_running(container, errno == ENXIO ? ESRCH : errno);
    }
    if (::write(fifo.get(), "0", 1) != 1) {
        return Error::from_errno("start: write exec.fifo");
    }
    ::unlink(fifo_path.c_str());
    return fifo;
}

// `run`'s own start: the byte through its socket (create.hpp, start_through_socket). A
// peer gone is a dead init; MSG_NOSIGNAL, as the signals run forwards are blocked and a
// pending SIGPIPE would end run once they are not.
Status start_through_socket(const runtime::Opened& container, int socket) {
    while (::send(socket, "0", 1, MSG_NOSIGNAL) != 1) {
        if (errno == EINTR) {
            continue;
        }
        return not_running(container, errno == EPIPE || errno == ECONNRESET ? ESRCH : errno);
    }
    return {};
}

// Releases the init through exec.fifo or run's socket, then runs the poststart hooks.
Status start_created(runtime::Opened& container, const spec::Spec& spec,
                     UniqueFd start_socket = {}) {
    if (container.status != state::Status::created) {
        return Error(EINVAL, cat("cannot start container ", quoted(container.record.id), ": it is ",
                                 state::status_name(container.status), ", not created"));
    }
    UniqueFd fifo;
    if (start_socket) {
        MR_TRY(start_through_socket(container, start_socket.get()));
        fifo = std::move(start_socket);
    } else {
        MR_ASSIGN(fifo, start_through_fifo(container));
    }
    // poststart hooks must run after the user's process has been exec'd. The init's end of
    // the fifo (or socket) is close-on-exec, so it loses its last reader exactly then (or
    // when the init dies), and the writer's end polls POLLERR (POLLHUP) at that moment.
    pollfd entry{fifo.get(), 0, 0};
    while (::poll(&entry, 1, -1) < 0 && errno == EINTR) {
    }
    fifo.reset();

    if (spec.hooks.poststart.empty()) {
        return {};
    }
    std::string state = state::oci_state_json(container.record, state::Status::running);
    if (auto hooks = runtime::hooks::run_hooks("poststart", spec.hooks.poststart, state); !hooks) {
        // runtime-spec: a failing poststart hook stops the container.
        (void)runtime::kill_all_and_wait(container.record);
        return hooks.error();
    }
    return {};
}

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

} // namespace

Status start_container(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id));
    MR_ASSIGN(spec::Spec spec, runtime::saved_spec_for(container.dir, {"poststart"}));
    return start_created(container, spec);
}

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
    if (auto started = start_created(container, created.plan.spec, std::move(created.start_socket));
        !started) {
        (void)runtime::destroy(container, created.plan.spec, true);
        return why_start_failed(created.sync, started.error());
    }
    if (options.detach) {
        return 0;
    }
    // While the container runs, other commands (kill, exec, state) must get the lock.
    container.dir = state::StateDir();

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
    MR_ASSIGN(int exit_code, signals.forward_until_exit(created.pid, relay ? &*relay : nullptr));
    relay.reset();

    if (!options.keep) {
        auto reopened = runtime::open_container(options.root, options.id);
        if (reopened) {
            // The config saved at create is the one this run parsed: no need to read it back.
            MR_TRY(runtime::destroy(*reopened, created.plan.spec, true));
        }
    }
    if (failed) {
        return *failed;
    }
    return exit_code;
}

} // namespace minirun
