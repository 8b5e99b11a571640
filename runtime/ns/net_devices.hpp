// linux.netDevices (runtime-spec 1.3, "Network Devices"): host network devices moved into
// the container's network namespace, renamed there if the config says so.
//
// The parent does it, over a NETLINK_ROUTE socket of its own (rtnetlink(7)), once the
// init's network namespace exists and before the init goes on (it waits for kParentReady):
//
//   RTM_GETLINK  (name)                          the device in the runtime's namespace
//   RTM_GETADDR  (dump)                          its permanent, global addresses
//   RTM_NEWLINK  (index, IFLA_NET_NS_FD, IFLA_IFNAME)   move and rename in one request
//   RTM_NEWADDR  (in the container's namespace)  the addresses again (a move drops them)
//   RTM_NEWLINK  (IFF_UP)                        the spec wants the device up
//
// The second socket is opened inside the container's namespace (setns there and back):
// a netlink socket talks to the namespace it was made in. Until the create succeeds,
// MovedNetDevices moves every device back, with its host name, addresses and state. After
// that mini-run never touches them again: the spec forbids moving them out before the
// namespace is deleted, when the kernel gives physical devices back to the initial
// namespace and destroys virtual ones (a veth, with its peer).
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "plan.hpp"
#include "syscalls.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::runtime::net {

// ---- rtnetlink messages, built and read without a socket (unit-tested)

using Bytes = std::vector<unsigned char>;

// An interface address as RTM_GETADDR reports it; the attributes are raw (4 or 16 bytes).
struct InterfaceAddress {
    uint8_t family = 0; // AF_INET, AF_INET6
    uint8_t prefix_length = 0;
    uint32_t flags = 0; // IFA_F_*
    uint8_t scope = 0;  // RT_SCOPE_*
    int index = 0;
    Bytes local;     // IFA_LOCAL
    Bytes address;   // IFA_ADDRESS
    Bytes broadcast; // IFA_BROADCAST
};

struct Link {
    int index = 0;
    unsigned flags = 0; // IFF_*
    std::string name;
};

Bytes get_link_message(uint32_t seq, int index, std::string_view name);
Bytes dump_addresses_message(uint32_t seq);
// Moves device `index` into the namespace `netns_fd` names, as `name` there.
Bytes move_link_message(uint32_t seq, int index, int netns_fd, std::string_view name);
Bytes set_up_message(uint32_t seq, int index);
Bytes add_address_message(uint32_t seq, int index, const InterfaceAddress& address);

// One attribute of a message's payload after its fixed header, or an empty span.
std::span<const unsigned char> find_attribute(std::span<const unsigned char> message,
                                              size_t header_size, uint16_t type);

// An RTM_NEWLINK message (a reply to RTM_GETLINK).
Result<Link> parse_link(std::span<const unsigned char> message);
// An RTM_NEWADDR message of a dump.
Result<InterfaceAddress> parse_address(std::span<const unsigned char> message);
// The spec keeps the permanent addresses of global scope (RFC 3549 2.3.3.2).
bool address_to_keep(const InterfaceAddress& address);

// ---- the move

class Netlink {
public:
    static Result<Netlink> open(); // in the caller's network namespace
    // Sends one request and reads up to its ack: the messages that came before it.
    Result<std::vector<Bytes>> transact(Bytes request);
    [[nodiscard]] uint32_t next_seq() { return ++seq_; }

private:
    UniqueFd fd_;
    uint32_t seq_ = 0;
};

struct MovedDevice {
    std::string host_name;
    std::string inside_name; // after the kernel filled in a "%d"
    int inside_index = 0;
    bool was_up = false;
    std::vector<InterfaceAddress> addresses;
};

// The devices moved by one create: moved back when destroyed uncommitted.
class MovedNetDevices {
public:
    MovedNetDevices() = default;
    MovedNetDevices(const MovedNetDevices&) = delete;
    MovedNetDevices& operator=(const MovedNetDevices&) = delete;
    MovedNetDevices(MovedNetDevices&&) = default;
    MovedNetDevices& operator=(MovedNetDevices&&) = delete;
    ~MovedNetDevices();

    // Moves linux.netDevices into the network namespace of `init` (or the one the config
    // joins). Each error names the device's path in config.json.
    static Result<MovedNetDevices> move(const spec::Linux& linux, pid_t init, Syscalls& sys);

    void commit() { committed_ = true; }
    [[nodiscard]] const std::vector<MovedDevice>& devices() const { return moved_; }

private:
    Status move_one(const std::string& host_name, const std::string& wanted);
    void move_back(const MovedDevice& device);

    UniqueFd host_ns_;
    UniqueFd container_ns_;
    std::optional<Netlink> host_;
    std::optional<Netlink> inside_;
    std::vector<MovedDevice> moved_;
    bool committed_ = true; // nothing to undo until something moved
};

} // namespace minirun::runtime::net
