#include "sync.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace minirun::runtime {
namespace {

using Header = SyncFrameHeader;
constexpr size_t kMaxFrame = kMaxSyncFrame;

SyncEvent end_of_stream() {
    SyncEvent event;
    event.eof = true;
    return event;
}

// sendmsg with an optional fd, retried on EINTR, never raising SIGPIPE.
ssize_t send_frame(int socket, const void* data, size_t length, int fd) {
    iovec iov{const_cast<void*>(data), length}; // NOLINT(cppcoreguidelines-pro-type-const-cast)
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
    if (fd >= 0) {
        message.msg_control = control.data();
        message.msg_controllen = control.size();
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    ssize_t sent = 0;
    do {
        sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

} // namespace

Result<std::pair<SyncSocket, SyncSocket>> SyncSocket::create_pair() {
    std::array<int, 2> fds{};
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds.data()) < 0) {
        return Error::from_errno("socketpair");
    }
    return std::pair{SyncSocket(UniqueFd(fds[0])), SyncSocket(UniqueFd(fds[1]))};
}

Status SyncSocket::send(SyncMessage message, std::string_view payload, int fd) {
    std::array<char, kMaxFrame> frame{};
    Header header{static_cast<uint32_t>(message), 0};
    std::memcpy(frame.data(), &header, sizeof(header));
    size_t length = std::min(payload.size(), frame.size() - sizeof(header));
    if (length > 0) { // an empty string_view may have a null data()
        std::memcpy(frame.data() + sizeof(header), payload.data(), length);
    }
    if (send_frame(fd_.get(), frame.data(), sizeof(header) + length, fd) < 0) {
        return Error::from_errno("sync socket: send");
    }
    return {};
}

void SyncSocket::send_error(const Error& error) {
    std::array<char, kMaxFrame> frame{};
    Header header{static_cast<uint32_t>(SyncMessage::kError), error.errno_value()};
    std::memcpy(frame.data(), &header, sizeof(header));
    size_t length = std::min(error.message().size(), frame.size() - sizeof(header));
    std::memcpy(frame.data() + sizeof(header), error.message().data(), length);
    (void)send_frame(fd_.get(), frame.data(), sizeof(header) + length, -1);
}

Result<SyncEvent> SyncSocket::receive() {
    std::array<char, kMaxFrame> frame{};
    iovec iov{frame.data(), frame.size()};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    ssize_t got = 0;
    do {
        got = ::recvmsg(fd_.get(), &message, MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        // ECONNRESET: the peer died with a frame unread; that is an end of stream too.
        if (errno == ECONNRESET) {
            return end_of_stream();
        }
        return Error::from_errno("sync socket: receive");
    }
    if (got == 0) {
        return end_of_stream();
    }
    SyncEvent event;
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
    event.message = static_cast<SyncMessage>(header.message);
    event.payload.assign(frame.data() + sizeof(header), static_cast<size_t>(got) - sizeof(header));
    if (event.message == SyncMessage::kError) {
        event.error = Error(header.error_number, event.payload);
    }
    return event;
}

Result<SyncEvent> SyncSocket::expect(SyncMessage expected) {
    MR_ASSIGN(SyncEvent event, receive());
    if (event.eof) {
        return Error(EPIPE, "the other side of the sync socket went away");
    }
    if (event.message == SyncMessage::kError) {
        return event.error;
    }
    if (event.message != expected) {
        return Error(EPROTO, cat("sync socket: expected message ", static_cast<int>(expected),
                                 ", got ", static_cast<int>(event.message)));
    }
    return event;
}

Status send_fd(int socket, int fd, std::string_view payload) {
    if (payload.empty()) {
        payload = " ";
    }
    if (send_frame(socket, payload.data(), payload.size(), fd) < 0) {
        return Error::from_errno("send fd");
    }
    return {};
}

} // namespace minirun::runtime
