// minirun-sd-notify [MESSAGE]: a static sd_notify(3) client for the notify tests'
// containers (busybox has none). Sends MESSAGE ("READY=1" by default) as one datagram to
// the socket $NOTIFY_SOCKET names, as systemd-notify does; exits 1 when that fails.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    const char* path = std::getenv("NOTIFY_SOCKET");
    if (path == nullptr || *path == '\0') {
        std::fputs("sd-notify: NOTIFY_SOCKET is not set\n", stderr);
        return 2;
    }
    const char* message = argc > 1 ? argv[1] : "READY=1";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof(address.sun_path)) {
        std::fputs("sd-notify: NOTIFY_SOCKET is too long\n", stderr);
        return 2;
    }
    std::strcpy(address.sun_path, path); // NOLINT: length checked above
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::sendto(fd, message, std::strlen(message), 0,
                           reinterpret_cast<const sockaddr*>(&address), // NOLINT
                           sizeof(address)) < 0) {
        std::perror("sd-notify: send");
        return 1;
    }
    ::close(fd);
    return 0;
}
