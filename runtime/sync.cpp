#include "sync.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace minirun::runtime {
namespace {

struct Header {
    uint32_t message;
    int32_t error_number;
};

constexpr size_t kMaxFrame = 4096;

SyncEvent end_of_stream() {
    SyncEvent event;
    event.eof = true;
    return event;
}

} // namespace

Result<std::pair<SyncSocket, SyncSocket>> SyncSocket::create_pair() {
    std::array<int, 2> fds{};
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds.data()) < 0) {
        return Error::from_errno("socketpair");
    }
    return std::pair{SyncSocket(UniqueFd(fds[0])), SyncSocket(UniqueFd(fds[1]))};
}

Status SyncSocket::send(SyncMessage message) {
    Header header{static_cast<uint32_t>(message), 0};
    for (;;) {
        if (::send(fd_.get(), &header, sizeof(header), MSG_NOSIGNAL) >= 0) {
            return {};
        }
        if (errno != EINTR) {
            return Error::from_errno("sync socket: send");
        }
    }
}

void SyncSocket::send_error(const Error& error) {
    std::array<char, kMaxFrame> frame{};
    Header header{static_cast<uint32_t>(SyncMessage::kError), error.errno_value()};
    std::memcpy(frame.data(), &header, sizeof(header));
    size_t length = std::min(error.message().size(), frame.size() - sizeof(header));
    std::memcpy(frame.data() + sizeof(header), error.message().data(), length);
    while (::send(fd_.get(), frame.data(), sizeof(header) + length, MSG_NOSIGNAL) < 0 &&
           errno == EINTR) {
    }
}

Result<SyncEvent> SyncSocket::receive() {
    std::array<char, kMaxFrame> frame{};
    ssize_t got = 0;
    do {
        got = ::recv(fd_.get(), frame.data(), frame.size(), 0);
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
    if (static_cast<size_t>(got) < sizeof(Header)) {
        return Error(EPROTO, "sync socket: short frame");
    }
    Header header{};
    std::memcpy(&header, frame.data(), sizeof(header));
    SyncEvent event;
    event.message = static_cast<SyncMessage>(header.message);
    if (event.message == SyncMessage::kError) {
        event.error =
            Error(header.error_number, std::string(frame.data() + sizeof(header),
                                                   static_cast<size_t>(got) - sizeof(header)));
    }
    return event;
}

Status SyncSocket::expect(SyncMessage expected) {
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
    return {};
}

} // namespace minirun::runtime
