#include "ns/net_devices.hpp"

#include "minirun/explain.hpp"
#include "minirun/log.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace minirun::runtime::net {

namespace {

constexpr size_t align4(size_t n) {
    return (n + 3) & ~size_t{3};
}

// One request: the nlmsghdr, a fixed header (ifinfomsg, ifaddrmsg), then attributes.
class MessageBuilder {
public:
    MessageBuilder(uint16_t type, uint16_t flags, uint32_t seq) {
        nlmsghdr header{};
        header.nlmsg_type = type;
        header.nlmsg_flags = flags;
        header.nlmsg_seq = seq;
        append(&header, sizeof header);
    }

    template <typename Header>
    void fixed(const Header& header) {
        append(&header, sizeof header);
    }

    void attribute(uint16_t type, const void* data, size_t size) {
        rtattr attr{};
        attr.rta_type = type;
        attr.rta_len = static_cast<unsigned short>(RTA_LENGTH(size));
        append(&attr, sizeof attr);
        append(data, size);
    }
    void attribute(uint16_t type, uint32_t value) { attribute(type, &value, sizeof value); }
    void attribute(uint16_t type, std::string_view text) {
        std::string terminated(text); // with its NUL
        attribute(type, terminated.c_str(), terminated.size() + 1);
    }

    Bytes done() && {
        auto length = static_cast<uint32_t>(bytes_.size());
        std::memcpy(bytes_.data() + offsetof(nlmsghdr, nlmsg_len), &length, sizeof length);
        return std::move(bytes_);
    }

private:
    void append(const void* data, size_t size) {
        const auto* begin = static_cast<const unsigned char*>(data);
        bytes_.insert(bytes_.end(), begin, begin + size);
        bytes_.resize(align4(bytes_.size()), 0);
    }

    Bytes bytes_;
};

ifinfomsg link_header(int index) {
    ifinfomsg info{};
    info.ifi_family = AF_UNSPEC;
    info.ifi_index = index;
    return info;
}

template <typename T>
T read_struct(std::span<const unsigned char> bytes) {
    T value{};
    std::memcpy(&value, bytes.data(), std::min(sizeof value, bytes.size()));
    return value;
}

Bytes to_bytes(std::span<const unsigned char> span) {
    return {span.begin(), span.end()};
}

std::string device_path(std::string_view host_name) {
    return cat("linux.netDevices.", quoted(host_name));
}

// A name the kernel made from a "%d" template: the same text around a number.
bool fits(std::string_view name, std::string_view wanted) {
    size_t percent = wanted.find("%d");
    if (percent == std::string_view::npos) {
        return name == wanted;
    }
    std::string_view prefix = wanted.substr(0, percent);
    std::string_view suffix = wanted.substr(percent + 2);
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
        !name.ends_with(suffix)) {
        return false;
    }
    std::string_view digits =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    return digits.find_first_not_of("0123456789") == std::string_view::npos;
}

std::string address_text(const InterfaceAddress& address) {
    const Bytes& raw = address.local.empty() ? address.address : address.local;
    char text[64] = {};
    if (::inet_ntop(address.family, raw.data(), text, sizeof text) == nullptr) {
        return "?";
    }
    return cat(text, "/", static_cast<int>(address.prefix_length));
}

Result<Link> get_link(Netlink& netlink, int index, std::string_view name) {
    MR_ASSIGN(auto replies, netlink.transact(get_link_message(netlink.next_seq(), index, name)));
    if (replies.empty()) {
        return Error(ENODEV, "no reply to RTM_GETLINK");
    }
    return parse_link(replies.front());
}

Result<std::vector<InterfaceAddress>> addresses_of(Netlink& netlink, int index) {
    MR_ASSIGN(auto replies, netlink.transact(dump_addresses_message(netlink.next_seq())));
    std::vector<InterfaceAddress> kept;
    for (const Bytes& reply : replies) {
        MR_ASSIGN(InterfaceAddress address, parse_address(reply));
        if (address.index == index && address_to_keep(address)) {
            kept.push_back(std::move(address));
        }
    }
    return kept;
}

// Addresses back and the device up, in the namespace `netlink` talks to.
Status configure(Netlink& netlink, int index, const std::vector<InterfaceAddress>& addresses,
                 bool up) {
    for (const InterfaceAddress& address : addresses) {
        auto added = netlink.transact(add_address_message(netlink.next_seq(), index, address));
        if (!added) {
            return added.error().wrap(cat("add address ", address_text(address)));
        }
    }
    if (up) {
        MR_TRY_WRAP(netlink.transact(set_up_message(netlink.next_seq(), index)), "set up");
    }
    return {};
}

// A netlink socket of the namespace `target`: made there, used from here.
Result<Netlink> open_netlink_in(int target, int home, Syscalls& sys) {
    MR_TRY_WRAP(sys.setns(target, CLONE_NEWNET), "enter the container's network namespace");
    auto netlink = Netlink::open();
    auto back = sys.setns(home, CLONE_NEWNET);
    if (!back) {
        return back.error().wrap("return to the runtime's network namespace");
    }
    return netlink;
}

} // namespace

// ---- messages

Bytes get_link_message(uint32_t seq, int index, std::string_view name) {
    MessageBuilder message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, seq);
    message.fixed(link_header(index));
    if (index == 0) {
        message.attribute(IFLA_IFNAME, name);
    }
    return std::move(message).done();
}

Bytes dump_addresses_message(uint32_t seq) {
    MessageBuilder message(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, seq);
    ifaddrmsg header{};
    header.ifa_family = AF_UNSPEC;
    message.fixed(header);
    return std::move(message).done();
}

Bytes move_link_message(uint32_t seq, int index, int netns_fd, std::string_view name) {
    MessageBuilder message(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, seq);
    message.fixed(link_header(index));
    message.attribute(IFLA_NET_NS_FD, static_cast<uint32_t>(netns_fd));
    message.attribute(IFLA_IFNAME, name);
    return std::move(message).done();
}

Bytes set_up_message(uint32_t seq, int index) {
    MessageBuilder message(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, seq);
    ifinfomsg header = link_header(index);
    header.ifi_flags = IFF_UP;
    header.ifi_change = IFF_UP;
    message.fixed(header);
    return std::move(message).done();
}

Bytes add_address_message(uint32_t seq, int index, const InterfaceAddress& address) {
    MessageBuilder message(RTM_NEWADDR, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, seq);
    ifaddrmsg header{};
    header.ifa_family = address.family;
    header.ifa_prefixlen = address.prefix_length;
    header.ifa_scope = address.scope;
    header.ifa_index = static_cast<uint32_t>(index);
    message.fixed(header);
    if (!address.local.empty()) {
        message.attribute(IFA_LOCAL, address.local.data(), address.local.size());
    }
    if (!address.address.empty()) {
        message.attribute(IFA_ADDRESS, address.address.data(), address.address.size());
    }
    if (!address.broadcast.empty()) {
        message.attribute(IFA_BROADCAST, address.broadcast.data(), address.broadcast.size());
    }
    return std::move(message).done();
}

std::span<const unsigned char> find_attribute(std::span<const unsigned char> message,
                                              size_t header_size, uint16_t type) {
    size_t offset = NLMSG_HDRLEN + align4(header_size);
    auto header = read_struct<nlmsghdr>(message);
    size_t end = std::min<size_t>(header.nlmsg_len, message.size());
    while (offset + sizeof(rtattr) <= end) {
        auto attr = read_struct<rtattr>(message.subspan(offset));
        if (attr.rta_len < sizeof(rtattr) || offset + attr.rta_len > end) {
            break;
        }
        if ((attr.rta_type & NLA_TYPE_MASK) == type) {
            return message.subspan(offset + RTA_LENGTH(0), attr.rta_len - RTA_LENGTH(0));
        }
        offset += align4(attr.rta_len);
    }
    return {};
}

Result<Link> parse_link(std::span<const unsigned char> message) {
    if (message.size() < NLMSG_HDRLEN + sizeof(ifinfomsg) ||
        read_struct<nlmsghdr>(message).nlmsg_type != RTM_NEWLINK) {
        return Error(EPROTO, "not an RTM_NEWLINK message");
    }
    auto info = read_struct<ifinfomsg>(message.subspan(NLMSG_HDRLEN));
    Link link;
    link.index = info.ifi_index;
    link.flags = info.ifi_flags;
    auto name = find_attribute(message, sizeof(ifinfomsg), IFLA_IFNAME);
    link.name.assign(name.begin(), name.end());
    link.name.resize(::strnlen(link.name.c_str(), link.name.size()));
    return link;
}

Result<InterfaceAddress> parse_address(std::span<const unsigned char> message) {
    if (message.size() < NLMSG_HDRLEN + sizeof(ifaddrmsg) ||
        read_struct<nlmsghdr>(message).nlmsg_type != RTM_NEWADDR) {
        return Error(EPROTO, "not an RTM_NEWADDR message");
    }
    auto header = read_struct<ifaddrmsg>(message.subspan(NLMSG_HDRLEN));
    InterfaceAddress address;
    address.family = header.ifa_family;
    address.prefix_length = header.ifa_prefixlen;
    address.flags = header.ifa_flags;
    address.scope = header.ifa_scope;
    address.index = static_cast<int>(header.ifa_index);
    // IFA_FLAGS holds all 32 bits; ifa_flags only the first 8.
    auto flags = find_attribute(message, sizeof(ifaddrmsg), IFA_FLAGS);
    if (flags.size() == sizeof(uint32_t)) {
        address.flags = read_struct<uint32_t>(flags);
    }
    address.local = to_bytes(find_attribute(message, sizeof(ifaddrmsg), IFA_LOCAL));
    address.address = to_bytes(find_attribute(message, sizeof(ifaddrmsg), IFA_ADDRESS));
    address.broadcast = to_bytes(find_attribute(message, sizeof(ifaddrmsg), IFA_BROADCAST));
    return address;
}

bool address_to_keep(const InterfaceAddress& address) {
    return (address.flags & IFA_F_PERMANENT) != 0 && address.scope == RT_SCOPE_UNIVERSE;
}

// ---- the socket

Result<Netlink> Netlink::open() {
    Netlink netlink;
    netlink.fd_.reset(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (!netlink.fd_) {
        return Error::from_errno("socket(NETLINK_ROUTE)");
    }
    return netlink;
}

Result<std::vector<Bytes>> Netlink::transact(Bytes request) {
    uint32_t seq = read_struct<nlmsghdr>(request).nlmsg_seq;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd_.get(), request.data(), request.size(), 0,
                 reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel) < 0) {
        return Error::from_errno("netlink send");
    }
    std::vector<Bytes> replies;
    Bytes buffer(size_t{64} * 1024);
    for (;;) {
        ssize_t got = ::recv(fd_.get(), buffer.data(), buffer.size(), 0);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno("netlink receive");
        }
        std::span<const unsigned char> rest(buffer.data(), static_cast<size_t>(got));
        while (rest.size() >= NLMSG_HDRLEN) {
            auto header = read_struct<nlmsghdr>(rest);
            if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > rest.size()) {
                return Error(EPROTO, "netlink: truncated message");
            }
            auto message = rest.first(header.nlmsg_len);
            rest = rest.subspan(std::min<size_t>(align4(header.nlmsg_len), rest.size()));
            if (header.nlmsg_seq != seq) {
                continue; // an answer to an earlier request
            }
            if (header.nlmsg_type == NLMSG_DONE) {
                return replies;
            }
            if (header.nlmsg_type == NLMSG_ERROR) {
                auto error = read_struct<nlmsgerr>(message.subspan(NLMSG_HDRLEN));
                if (error.error == 0) {
                    return replies;
                }
                return Error(-error.error, std::strerror(-error.error));
            }
            replies.emplace_back(message.begin(), message.end());
        }
    }
}

// ---- the move

Result<MovedNetDevices> MovedNetDevices::move(const spec::Linux& linux, pid_t init, Syscalls& sys) {
    MovedNetDevices moved;
    const auto& devices = linux.net_devices;
    if (devices.empty()) {
        return moved;
    }
    moved.host_ns_.reset(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!moved.host_ns_) {
        return Error::from_errno("linux.netDevices: open the runtime's network namespace");
    }
    const spec::Namespace* joined = linux.find_namespace(spec::NamespaceType::network);
    std::string target =
        joined != nullptr && !joined->path.empty() ? joined->path : cat("/proc/", init, "/ns/net");
    moved.container_ns_.reset(::open(target.c_str(), O_RDONLY | O_CLOEXEC));
    if (!moved.container_ns_) {
        return Error::from_errno(cat("linux.netDevices: open ", target));
    }
    struct stat host {};
    struct stat container {};
    if (::fstat(moved.host_ns_.get(), &host) < 0 ||
        ::fstat(moved.container_ns_.get(), &container) < 0) {
        return Error::from_errno("linux.netDevices: stat the network namespaces");
    }
    if (host.st_dev == container.st_dev && host.st_ino == container.st_ino) {
        return Error(EINVAL, cat("linux.netDevices: the network namespace ", target,
                                 " is the runtime's own: the devices would not move"));
    }
    MR_ASSIGN(Netlink host_netlink, Netlink::open());
    moved.host_.emplace(std::move(host_netlink));
    auto inside = open_netlink_in(moved.container_ns_.get(), moved.host_ns_.get(), sys);
    if (!inside) {
        return inside.error().wrap("linux.netDevices");
    }
    moved.inside_.emplace(std::move(*inside));
    moved.committed_ = false;
    for (const auto& [host_name, device] : devices) {
        MR_TRY(moved.move_one(host_name, device.name.empty() ? host_name : device.name));
    }
    return moved;
}

Status MovedNetDevices::move_one(const std::string& host_name, const std::string& wanted) {
    std::string path = device_path(host_name);
    auto link = get_link(*host_, 0, host_name);
    if (!link) {
        if (link.error().errno_value() == ENODEV) {
            return Error(ENODEV, cat(path, ": no network device ", quoted(host_name),
                                     " in the runtime's network namespace"));
        }
        return link.error().wrap(cat(path, ": look up the device"));
    }
    auto addresses = addresses_of(*host_, link->index);
    if (!addresses) {
        return addresses.error().wrap(cat(path, ": read its addresses"));
    }
    if (explain::enabled()) {
        explain::step(cat("RTM_NEWLINK(", host_name, " index ", link->index,
                          ", IFLA_NET_NS_FD container, IFLA_IFNAME ", quoted(wanted),
                          "): linux.netDevices moves the device into the container's network "
                          "namespace"));
    }
    auto sent = host_->transact(
        move_link_message(host_->next_seq(), link->index, container_ns_.get(), wanted));
    // The kernel moves first and renames after: a failed rename may leave the device inside
    // under its host name. Found there, it is ours to move back. The index is kept unless
    // the container's namespace has it already.
    MovedDevice device{host_name, wanted, 0, (link->flags & IFF_UP) != 0, std::move(*addresses)};
    auto inside_link = get_link(*inside_, link->index, {});
    bool found = inside_link &&
                 (fits(inside_link->name, wanted) || (!sent && inside_link->name == host_name));
    if (!found && sent && wanted.find('%') == std::string::npos) {
        inside_link = get_link(*inside_, 0, wanted);
        found = inside_link.ok();
    }
    if (found) {
        device.inside_name = inside_link->name;
        device.inside_index = inside_link->index;
        moved_.push_back(device);
    }
    if (!sent) {
        if (sent.error().errno_value() == EEXIST) {
            return Error(EEXIST, cat(path,
                                     ": the container's network namespace has a device "
                                     "named ",
                                     quoted(wanted), " already"));
        }
        return sent.error().wrap(cat(path, ": move into the container's network namespace"));
    }
    if (!found) {
        return Error(ENODEV, cat(path, ": moved, but not found in the container's network "
                                       "namespace"));
    }
    if (explain::enabled()) {
        explain::step(cat("RTM_NEWADDR x", device.addresses.size(),
                          ", RTM_NEWLINK(IFF_UP) in "
                          "the container: ",
                          device.inside_name, " keeps its permanent global addresses and is up"));
    }
    MR_TRY_WRAP(configure(*inside_, device.inside_index, device.addresses, true),
                cat(path, ": in the container's network namespace"));
    return {};
}

void MovedNetDevices::move_back(const MovedDevice& device) {
    std::string path = device_path(device.host_name);
    auto sent = inside_->transact(move_link_message(inside_->next_seq(), device.inside_index,
                                                    host_ns_.get(), device.host_name));
    if (!sent) {
        log::warning(cat(path, ": could not move ", quoted(device.inside_name),
                         " back to the runtime's network namespace: ", sent.error().message()));
        return;
    }
    auto link = get_link(*host_, 0, device.host_name);
    Status restored = link ? configure(*host_, link->index, device.addresses, device.was_up)
                           : Status(link.error());
    if (restored && explain::enabled()) {
        explain::step(cat("RTM_NEWLINK(", device.inside_name,
                          ", IFLA_NET_NS_FD runtime, "
                          "IFLA_IFNAME ",
                          quoted(device.host_name),
                          "): the create failed, the device goes back as it was"));
    }
    if (!restored) {
        log::warning(cat(path, ": moved back, but not as it was: ", restored.error().message()));
    }
}

MovedNetDevices::~MovedNetDevices() {
    if (committed_) {
        return;
    }
    for (size_t i = moved_.size(); i-- > 0;) { // the last moved first
        move_back(moved_[i]);
    }
}

} // namespace minirun::runtime::net
