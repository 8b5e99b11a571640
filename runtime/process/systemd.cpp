// LISTEN_FDS and NOTIFY_SOCKET passed on to the container (systemd.hpp).
#include "process/systemd.hpp"

#include "fd_passing.hpp"
#include "minirun/log.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace minirun::runtime::systemd {
namespace {

constexpr const char* kSocketName = "notify.sock";
// sd_notify_barrier(3): how long the caller may take to close the pipe sent with BARRIER=1
// (runc's wait, after which it goes on with a warning).
constexpr int kBarrierTimeoutMs = 30'000;

// Connects a datagram socket to the caller's NOTIFY_SOCKET: a path, or "@name" for an
// abstract one (as sd_notify(3) reads it).
Result<UniqueFd> connect_host(const std::string& host) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (host.size() >= sizeof(address.sun_path)) {
        return Error(ENAMETOOLONG, cat("NOTIFY_SOCKET ", quoted(host), ": path too long"));
    }
    std::memcpy(address.sun_path, host.data(), host.size());
    socklen_t length = offsetof(sockaddr_un, sun_path) + host.size();
    if (host.starts_with('@')) {
        address.sun_path[0] = '\0';
    } else {
        ++length; // the path's NUL
    }
    UniqueFd socket(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!socket) {
        return Error::from_errno("NOTIFY_SOCKET: socket");
    }
    if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), // NOLINT
                  length) < 0) {
        return Error::from_errno(cat("NOTIFY_SOCKET ", quoted(host), ": connect"));
    }
    return socket;
}

// Binds a datagram socket at `dir`/notify.sock, through the directory's fd: no path
// length limit (a long --root or id), no symlink followed on the way.
Result<UniqueFd> bind_in(const std::string& dir) {
    UniqueFd dir_fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir_fd) {
        return Error::from_errno(cat("NOTIFY_SOCKET: open ", dir));
    }
    // Left by a start that failed after binding it.
    ::unlinkat(dir_fd.get(), kSocketName, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::string path = cat("/proc/self/fd/", dir_fd.get(), "/", kSocketName);
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    UniqueFd socket(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!socket) {
        return Error::from_errno("NOTIFY_SOCKET: socket");
    }
    if (::bind(socket.get(), reinterpret_cast<const sockaddr*>(&address), // NOLINT
               sizeof(address)) < 0) {
        return Error::from_errno(cat("NOTIFY_SOCKET: bind ", dir, "/", kSocketName));
    }
    if (::fchmodat(dir_fd.get(), kSocketName, 0777, 0) < 0) {
        return Error::from_errno(cat("NOTIFY_SOCKET: chmod ", dir, "/", kSocketName));
    }
    return socket;
}

Status send_line(int host, std::string_view line) {
    if (send_with_fd(host, line.data(), line.size()) < 0) {
        return Error::from_errno("NOTIFY_SOCKET: send");
    }
    return {};
}

// BARRIER=1 with the write end of a pipe, whose end says that the caller has read
// everything before it (sd_notify_barrier(3)); a caller that does not know the protocol
// never closes it: after 30 s we go on with a warning, as runc does.
Status barrier(int host) {
    std::array<int, 2> ends{};
    if (::pipe2(ends.data(), O_CLOEXEC) != 0) {
        return Error::from_errno("NOTIFY_SOCKET: pipe");
    }
    UniqueFd read_end(ends[0]);
    UniqueFd write_end(ends[1]);
    constexpr std::string_view kBarrier = "BARRIER=1";
    if (send_with_fd(host, kBarrier.data(), kBarrier.size(), write_end.get()) < 0) {
        return Error::from_errno("NOTIFY_SOCKET: send BARRIER=1");
    }
    write_end.reset();
    pollfd entry{read_end.get(), POLLIN, 0};
    int ready = 0;
    while ((ready = ::poll(&entry, 1, kBarrierTimeoutMs)) < 0 && errno == EINTR) {
    }
    if (ready == 0) {
        log::warning("NOTIFY_SOCKET: no answer to BARRIER=1 within 30 s; ignored");
        return {};
    }
    char byte = 0;
    if (::read(read_end.get(), &byte, 1) != 0) {
        return Error(EPROTO, "NOTIFY_SOCKET: unexpected read from the barrier's pipe");
    }
    return {};
}

} // namespace

int listen_fds() {
    const char* text = std::getenv("LISTEN_FDS");
    int count = 0;
    if (text == nullptr ||
        std::from_chars(text, text + std::strlen(text), count).ec != std::errc() || count < 0) {
        return 0;
    }
    return count;
}

std::string notify_dir(const std::string& root, const std::string& id) {
    std::error_code ignored;
    std::filesystem::path base = std::filesystem::absolute(root, ignored);
    return (base.lexically_normal() / id / "notify").string();
}

Result<NotifyRelay> NotifyRelay::open(const std::string& host, const std::string& dir) {
    NotifyRelay relay;
    MR_ASSIGN(relay.host_, connect_host(host));
    MR_ASSIGN(relay.socket_, bind_in(dir));
    return relay;
}

Status NotifyRelay::service(pid_t main_pid) {
    // sd_notify sends one datagram per message; a longer one is cut, its READY= line (a
    // few bytes) almost surely within.
    std::array<char, 4096> buffer{};
    ssize_t got = ::recv(socket_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (got < 0) {
        return errno == EAGAIN || errno == EINTR ? Status{}
                                                 : Error::from_errno("NOTIFY_SOCKET: receive");
    }
    std::string_view rest(buffer.data(), static_cast<size_t>(got));
    while (!rest.empty() && !done_) {
        size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
        if (line.starts_with("READY=")) {
            log::debug(cat("NOTIFY_SOCKET: the container sent ", line));
            MR_TRY(send_line(host_.get(), cat(line, "\n")));
            MR_TRY(send_line(host_.get(), cat("MAINPID=", main_pid, "\n")));
            MR_TRY(barrier(host_.get()));
            done_ = true;
        }
    }
    return {};
}

Status NotifyRelay::wait(int pidfd, pid_t main_pid) {
    while (!done_) {
        std::array<pollfd, 2> fds{{{socket_.get(), POLLIN, 0}, {pidfd, POLLIN, 0}}};
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno("NOTIFY_SOCKET: poll");
        }
        if (fds[0].revents != 0) {
            MR_TRY(service(main_pid));
        } else if (fds[1].revents != 0) {
            return {}; // the init is gone without READY=: nothing to wait for
        }
    }
    return {};
}

Result<std::optional<NotifyRelay>> prepare_notify(const std::string& host, const std::string& root,
                                                  const std::string& id, bool listen_now) {
    if (host.empty()) {
        return std::optional<NotifyRelay>();
    }
    std::string dir = notify_dir(root, id);
    if (::mkdir(dir.c_str(), 0755) != 0) {
        return Error::from_errno(cat("NOTIFY_SOCKET: mkdir ", dir));
    }
    if (!listen_now) {
        return std::optional<NotifyRelay>();
    }
    MR_ASSIGN(NotifyRelay relay, NotifyRelay::open(host, dir));
    return std::optional<NotifyRelay>(std::move(relay));
}

} // namespace minirun::runtime::systemd
