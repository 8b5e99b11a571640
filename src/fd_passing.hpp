// Passing a file descriptor over a unix socket (SCM_RIGHTS): the sync socket between
// runtime and init, --console-socket, and the seccomp agent's socket.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace minirun {

// One sendmsg(2) of `data`, carrying `fd` as SCM_RIGHTS when it is >= 0, retried on EINTR
// and never raising SIGPIPE (MSG_NOSIGNAL): the bytes sent, or -1 with errno set.
ssize_t send_with_fd(int socket, const void* data, size_t length, int fd = -1);

} // namespace minirun
