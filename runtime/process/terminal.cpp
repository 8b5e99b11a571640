#include "process/terminal.hpp"

#include "fs.hpp"
#include "sync.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cstring>

namespace minirun::runtime::terminal {

Result<Pty> open_pty(const std::optional<spec::ConsoleSize>& size, bool for_relay) {
    Pty pty;
    pty.master.reset(::open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!pty.master) {
        return Error::from_errno("process.terminal: open /dev/ptmx");
    }
    int unlock = 0;
    if (::ioctl(pty.master.get(), TIOCSPTLCK, &unlock) < 0) {
        return Error::from_errno("process.terminal: unlock pty");
    }
    unsigned int number = 0;
    if (::ioctl(pty.master.get(), TIOCGPTN, &number) < 0) {
        return Error::from_errno("process.terminal: pty number");
    }
    pty.slave_path = cat("/dev/pts/", number);
    int slave = ::ioctl(pty.master.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
        return Error::from_errno("process.terminal: open pty slave");
    }
    pty.slave.reset(slave);
    if (size) {
        winsize window{};
        window.ws_row = static_cast<unsigned short>(size->height);
        window.ws_col = static_cast<unsigned short>(size->width);
        if (::ioctl(pty.slave.get(), TIOCSWINSZ, &window) < 0) {
            return Error::from_errno("process.consoleSize");
        }
    }
    if (for_relay) {
        MR_TRY(clear_onlcr(pty));
    }
    return pty;
}

Status attach_stdio(const Pty& pty, uid_t uid) {
    if (::ioctl(pty.slave.get(), TIOCSCTTY, 0) < 0) {
        return Error::from_errno("process.terminal: make the pty the controlling terminal");
    }
    // EINVAL: the uid is not mapped in the container's user namespace; EPERM: the slave's
    // owner is not (a rootless container). The terminal then keeps its owner, as with runc.
    if (::fchown(pty.slave.get(), uid, static_cast<gid_t>(-1)) < 0 && errno != EINVAL &&
        errno != EPERM) {
        return Error::from_errno("process.terminal: give the pty to process.user.uid");
    }
    for (int fd = 0; fd <= 2; ++fd) {
        if (::dup2(pty.slave.get(), fd) < 0) {
            return Error::from_errno("process.terminal: pty as stdio");
        }
    }
    return {};
}

Status clear_onlcr(const Pty& pty) {
    termios attributes{};
    if (::tcgetattr(pty.slave.get(), &attributes) < 0) {
        return Error::from_errno("process.terminal: read the pty's modes");
    }
    attributes.c_oflag &= ~static_cast<tcflag_t>(ONLCR);
    if (::tcsetattr(pty.slave.get(), TCSANOW, &attributes) < 0) {
        return Error::from_errno("process.terminal: clear ONLCR");
    }
    return {};
}

Status bind_console(const Pty& pty, Syscalls& sys) {
    // O_NOFOLLOW|O_CREAT: a /dev/console planted as a symlink is refused, not followed.
    UniqueFd console(::open("/dev/console", O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!console) {
        return Error::from_errno("/dev/console");
    }
    // By fds (Syscalls::mount_on): not through the container's /proc/self/fd.
    return checked(sys.mount_on(fs::fd_path(pty.slave.get()), console.get(), "", MS_BIND, ""),
                   "bind the pty on /dev/console");
}

Status send_to_socket(const std::string& path, int fd, std::string_view name,
                      std::string_view option) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof(address.sun_path)) {
        return Error(ENAMETOOLONG, cat(option, " ", quoted(path), ": path too long"));
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket) {
        return Error::from_errno(cat(option, ": socket"));
    }
    if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), // NOLINT
                  sizeof(address)) < 0) {
        return Error::from_errno(cat(option, ": connect ", quoted(path)));
    }
    MR_TRY_WRAP(send_fd(socket.get(), fd, name), option);
    return {};
}

Status send_to_console_socket(const std::string& path, int master) {
    // The payload is the pty's name, as runc sends it; engines only need it non-empty.
    return send_to_socket(path, master, "/dev/ptmx", "--console-socket");
}

Relay::Relay(UniqueFd master) : master_(std::move(master)) {
    termios attributes{};
    if (::isatty(STDIN_FILENO) != 0 && ::tcgetattr(STDIN_FILENO, &attributes) == 0) {
        saved_ = attributes;
        ::cfmakeraw(&attributes);
        ::tcsetattr(STDIN_FILENO, TCSANOW, &attributes);
        copy_window_size();
    }
}

Relay::~Relay() {
    if (saved_) {
        ::tcsetattr(STDIN_FILENO, TCSANOW, &*saved_);
    }
}

void Relay::copy_window_size() const {
    winsize window{};
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &window) == 0) {
        ::ioctl(master_.get(), TIOCSWINSZ, &window);
    }
}

void Relay::add_poll_fds(std::vector<pollfd>& fds) const {
    fds.push_back({stdin_open_ ? STDIN_FILENO : -1, POLLIN, 0});
    fds.push_back({master_open_ ? master_.get() : -1, POLLIN, 0});
}

void Relay::pump(int from, int to, bool& open) {
    std::array<char, 16384> buffer{};
    ssize_t got = ::read(from, buffer.data(), buffer.size());
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
        return;
    }
    // EIO from a master: every slave fd is closed, the container is done with it.
    if (got <= 0) {
        open = false;
        return;
    }
    for (ssize_t done = 0; done < got;) {
        ssize_t written = ::write(to, buffer.data() + done, static_cast<size_t>(got - done));
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            open = false;
            return;
        }
        done += written;
    }
}

void Relay::service(const std::vector<pollfd>& fds) {
    for (const pollfd& entry : fds) {
        if (entry.fd < 0 || entry.revents == 0) {
            continue;
        }
        if (entry.fd == STDIN_FILENO && stdin_open_) {
            pump(STDIN_FILENO, master_.get(), stdin_open_);
        } else if (entry.fd == master_.get() && master_open_) {
            pump(master_.get(), STDOUT_FILENO, master_open_);
        }
    }
}

void Relay::drain() {
    int flags = ::fcntl(master_.get(), F_GETFL);
    ::fcntl(master_.get(), F_SETFL, flags | O_NONBLOCK);
    while (master_open_) {
        pollfd entry{master_.get(), POLLIN, 0};
        if (::poll(&entry, 1, 0) <= 0) {
            break;
        }
        pump(master_.get(), STDOUT_FILENO, master_open_);
    }
}

} // namespace minirun::runtime::terminal
