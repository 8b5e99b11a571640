// start: releasing a created container (exec.fifo, or run's start socket) and its poststart
// hooks; and the init's side of exec.fifo, its wait for the start byte.
#include "create.hpp"
#include "lifecycle.hpp"
#include "process/hooks.hpp"
#include "process/signals.hpp"
#include "process/systemd.hpp"
#include "process/terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>

namespace minirun {
namespace {

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

} // namespace

Status runtime::start_created(Opened& container, const spec::Spec& spec, UniqueFd start_socket) {
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

Status start_container(const std::string& root, const std::string& id,
                       const std::string& notify_socket) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id));
    MR_ASSIGN(spec::Spec spec, runtime::saved_spec_for(container.dir, {"poststart"}));
    // As runc's start (notify_socket.go): the container's socket is bound before its
    // process can run, so that no READY=1 is lost. Only for a container created with a
    // NOTIFY_SOCKET (its notify directory exists): one created without has no
    // NOTIFY_SOCKET inside and could never answer (runc fails to bind then).
    std::optional<runtime::systemd::NotifyRelay> notify;
    std::string notify_dir = runtime::systemd::notify_dir(root, id);
    if (!notify_socket.empty() && container.status == state::Status::created &&
        ::access(notify_dir.c_str(), F_OK) == 0) {
        MR_ASSIGN(notify, runtime::systemd::NotifyRelay::open(notify_socket, notify_dir));
    }
    MR_TRY(runtime::start_created(container, spec));
    if (!notify) {
        return {};
    }
    // The wait may be long: other commands (state, kill, delete) must get the lock.
    container.dir = state::StateDir();
    const state::Record& record = container.record;
    auto init = runtime::open_process({record.pid, record.pid_start_time});
    if (!init) {
        return {}; // the init is gone already: nothing will be ready
    }
    return notify->wait(init->get(), record.pid);
}

// The fifo was opened non-blocking (so that the open itself did not wait for a writer);
// poll() sleeps until the byte arrives.
Status runtime::wait_for_start(int fifo) {
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

} // namespace minirun
