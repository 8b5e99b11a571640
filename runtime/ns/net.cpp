#include "ns/net.hpp"

#include "minirun/fd.hpp"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstring>

namespace minirun::runtime::net {

Status bring_up_loopback() {
    // An ioctl on any socket is enough for one flag; no netlink needed.
    UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!sock) {
        return Error::from_errno("bring up lo: socket");
    }
    ifreq request{};
    std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    if (::ioctl(sock.get(), SIOCGIFFLAGS, &request) < 0) {
        return Error::from_errno("bring up lo: get flags");
    }
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    if (::ioctl(sock.get(), SIOCSIFFLAGS, &request) < 0) {
        return Error::from_errno("bring up lo: set flags");
    }
    return {};
}

} // namespace minirun::runtime::net
