#include "fd_passing.hpp"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace minirun {

ssize_t send_with_fd(int socket, const void* data, size_t length, int fd) {
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

} // namespace minirun
