#include "sync.hpp"

#include "fd_passing.hpp"
#include "minirun/log.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

namespace minirun::runtime {
namespace {

using Header = SyncFrameHeader;
constexpr size_t kMaxFrame = kMaxSyncFrame;

} // namespace

void send_log_line(int socket, std::string_view line) noexcept {
    Header header{static_cast<uint32_t>(ToParent::kLog), 0};
    line = line.substr(0, kMaxFrame - sizeof(header));
    std::array<iovec, 2> parts{
        {{&header, sizeof(header)}, {const_cast<char*>(line.data()), line.size()}}}; // NOLINT
    msghdr message{};
    message.msg_iov = parts.data();
    message.msg_iovlen = parts.size();
    ssize_t sent = 0;
    do {
        sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
}

void forward_log(const InitEnd& end) {
    log::forward_to(end.fd(), send_log_line);
}

void log_after_created(bool a_parent_listens) {
    if (!a_parent_listens) {
        log::file_only();
    }
}

Result<std::pair<ParentEnd, InitEnd>> create_sync_pair() {
    std::array<int, 2> fds{};
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds.data()) < 0) {
        return Error::from_errno("socketpair");
    }
    return std::pair{ParentEnd(UniqueFd(fds[0])), InitEnd(UniqueFd(fds[1]))};
}

Status SyncChannel::send(uint32_t message, std::string_view payload, int fd) {
    std::array<char, kMaxFrame> frame{};
    Header header{message, 0};
    std::memcpy(frame.data(), &header, sizeof(header));
    size_t length = std::min(payload.size(), frame.size() - sizeof(header));
    if (length > 0) { // an empty string_view may have a null data()
        std::memcpy(frame.data() + sizeof(header), payload.data(), length);
    }
    if (send_with_fd(fd_.get(), frame.data(), sizeof(header) + length, fd) < 0) {
        return Error::from_errno("sync socket: send");
    }
    return {};
}

void SyncChannel::send_error(const Error& error) {
    std::array<char, kMaxFrame> frame{};
    Header header{static_cast<uint32_t>(ToParent::kError), error.errno_value()};
    std::memcpy(frame.data(), &header, sizeof(header));
    size_t length = std::min(error.message().size(), frame.size() - sizeof(header));
    std::memcpy(frame.data() + sizeof(header), error.message().data(), length);
    (void)send_with_fd(fd_.get(), frame.data(), sizeof(header) + length, -1);
}

Result<SyncEvent<uint32_t>> SyncChannel::receive(std::initializer_list<uint32_t> accepted) {
    std::array<char, kMaxFrame> frame{};
    iovec iov{frame.data(), frame.size()};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    ssize_t got = 0;
    bool reset_seen = false;
    for (;;) {
        got = ::recvmsg(fd_.get(), &message, MSG_CMSG_CLOEXEC);
        if (got >= 0) {
            break;
        }
        if (errno == EINTR) {
            continue;
        }
        // ECONNRESET: the peer closed its end with a frame of ours unread (an init that
        // failed before it read kParentReady). The kernel reports that once, and *before*
        // the frames still queued for us (sock_error() comes first in the datagram receive),
        // and the init's kError may be one of them: read again, which gives them, then the
        // end of stream.
        if (errno == ECONNRESET && !reset_seen) {
            reset_seen = true;
            continue;
        }
        break;
    }
    SyncEvent<uint32_t> event;
    if (got < 0) {
        // ECONNRESET again: an end of stream too.
        if (errno == ECONNRESET) {
            event.eof = true;
            return event;
        }
        return Error::from_errno("sync socket: receive");
    }
    if (got == 0) {
        event.eof = true;
        return event;
    }
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
         header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(header), sizeof(int));
            event.fd.reset(fd);
        }
    }
    if (static_cast<size_t>(got) < sizeof(Header)) {
        return Error(EPROTO, "sync socket: short frame");
    }
    Header header{};
    std::memcpy(&header, frame.data(), sizeof(header));
    if (std::find(accepted.begin(), accepted.end(), header.message) == accepted.end()) {
        return Error(EPROTO, cat("sync socket: unexpected message ", header.message));
    }
    event.message = header.message;
    event.payload.assign(frame.data() + sizeof(header), static_cast<size_t>(got) - sizeof(header));
    if (header.message == static_cast<uint32_t>(ToParent::kError)) {
        event.error = Error(header.error_number, event.payload);
    }
    return event;
}

namespace {

template <typename Message>
SyncEvent<Message> typed(SyncEvent<uint32_t>&& raw) {
    return {raw.eof, static_cast<Message>(raw.message), std::move(raw.payload), std::move(raw.fd),
            std::move(raw.error)};
}

uint32_t wire(auto message) {
    return static_cast<uint32_t>(message);
}

// One frame of the messages `Receive` lists (for the parent: kLog too).
template <typename Receive>
Result<SyncEvent<uint32_t>> receive_frame(SyncChannel& channel) {
    if constexpr (std::is_same_v<Receive, ToParent>) {
        return channel.receive({wire(ToParent::kRunHooks), wire(ToParent::kConsole),
                                wire(ToParent::kCreated), wire(ToParent::kError),
                                wire(ToParent::kLog), wire(ToParent::kMountSource),
                                wire(ToParent::kForked)});
    } else {
        return channel.receive(
            {wire(ToInit::kParentReady), wire(ToInit::kHooksDone), wire(ToInit::kMountSource)});
    }
}

// A kLog frame goes to our stderr as it is, the child's line as if ours: true for one.
bool forwarded_log(const SyncEvent<uint32_t>& raw) {
    if (raw.eof || raw.message != wire(ToParent::kLog)) {
        return false;
    }
    log::write_forwarded(raw.payload);
    return true;
}

} // namespace

template <typename Send, typename Receive>
Result<SyncEvent<Receive>> SyncEnd<Send, Receive>::receive() {
    for (;;) {
        MR_ASSIGN(auto raw, receive_frame<Receive>(channel_));
        if (!forwarded_log(raw)) {
            return typed<Receive>(std::move(raw));
        }
    }
}

template <typename Send, typename Receive>
Result<std::optional<SyncEvent<Receive>>>
SyncEnd<Send, Receive>::receive_within(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd ready{channel_.fd(), POLLIN, 0};
        int polled = ::poll(&ready, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
        if (polled < 0 && errno == EINTR) {
            continue;
        }
        if (polled <= 0) {
            return std::optional<SyncEvent<Receive>>();
        }
        MR_ASSIGN(auto raw, receive_frame<Receive>(channel_));
        if (!forwarded_log(raw)) {
            return std::optional<SyncEvent<Receive>>(typed<Receive>(std::move(raw)));
        }
    }
}

template <typename Send, typename Receive>
Result<SyncEvent<Receive>> SyncEnd<Send, Receive>::expect(Receive expected) {
    MR_ASSIGN(SyncEvent<Receive> event, receive());
    if (event.eof) {
        return Error(EPIPE, "the other side of the sync socket went away");
    }
    if constexpr (std::is_same_v<Receive, ToParent>) {
        if (event.message == ToParent::kError) {
            return event.error;
        }
    }
    if (event.message != expected) {
        return Error(EPROTO, cat("sync socket: expected message ", static_cast<int>(expected),
                                 ", got ", static_cast<int>(event.message)));
    }
    return event;
}

template class SyncEnd<ToInit, ToParent>;
template class SyncEnd<ToParent, ToInit>;

Status send_fd(int socket, int fd, std::string_view payload) {
    if (payload.empty()) {
        payload = " ";
    }
    if (send_with_fd(socket, payload.data(), payload.size(), fd) < 0) {
        return Error::from_errno("send fd");
    }
    return {};
}

} // namespace minirun::runtime
