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
    // The peer from the master itself, never /dev/pts/N by path (TIOCGPTN's number): that
    // name may be a symlink the rootfs planted, or in another devpts (CVE-2025-52565).
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

namespace {

// /dev/console of the container, as the mount point of the pty: /dev resolved inside the
// root (a /dev that is a symlink, with no /dev mounted, leads where the devices went), the
// last name never followed (fs::file_mount_point): a /dev/console planted as a symlink, to
// a procfs file or to anything else, is refused, as runc's O_NOFOLLOW does (CVE-2025-52565).
Result<UniqueFd> console_mount_point() {
    UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) {
        return Error::from_errno("/dev/console: open /");
    }
    MR_ASSIGN(UniqueFd dev, fs::open_in_root(root.get(), "/dev", O_PATH | O_DIRECTORY));
    return fs::file_mount_point(dev.get(), "console", 0600, "/dev/console");
}

} // namespace

Status bind_console(const Pty& pty, Syscalls& sys) {
    MR_ASSIGN(UniqueFd console, console_mount_point());
    // The source is the peer fd itself (TIOCGPTPEER), cloned by fd: no /dev/pts/N is
    // looked up (CVE-2025-52565: symlinks planted there, or a /dev/pts that is not the
    // devpts the pty came from, would make the console some other file), and no
    // /proc/self/fd link either, which the container's /proc would resolve.
    auto tree_fd = sys.open_tree_clone_fd(pty.slave.get());
    if (!tree_fd) {
        return Error::from_errno(tree_fd.error().errno_value(),
                                 "bind the pty on /dev/console: open_tree of the pty");
    }
    UniqueFd tree(*tree_fd);
    return checked(sys.move_mount(tree.get(), console.get()), "bind the pty on /dev/console");
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
