// linux.netDevices: the config rules, and the rtnetlink messages the move sends and reads.
#include "minirun/spec.hpp"
#include "ns/net_devices.hpp"
#include "plan_bundle.hpp"
#include "spec_rules.hpp"

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <nlohmann/json.hpp>
#include <sched.h>

#include <cstring>
#include <span>
#include <string>

using namespace minirun;
using namespace minirun::runtime::net;
using Json = nlohmann::json;

namespace {

Json config_with(const Json& net_devices, bool network_namespace = true) {
    Json namespaces = Json::array({{{"type", "mount"}}});
    if (network_namespace) {
        namespaces.push_back({{"type", "network"}});
    }
    return Json{{"ociVersion", "1.3.0"},
                {"root", {{"path", "rootfs"}}},
                {"linux", {{"namespaces", namespaces}, {"netDevices", net_devices}}}};
}

std::string error_of(const Json& config) {
    auto spec = spec::parse_spec(config.dump());
    return spec ? std::string() : spec.error().message();
}

template <typename T>
T header_of(const Bytes& message) {
    T value{};
    std::memcpy(&value, message.data() + NLMSG_HDRLEN, sizeof value);
    return value;
}

nlmsghdr netlink_header(const Bytes& message) {
    nlmsghdr header{};
    std::memcpy(&header, message.data(), sizeof header);
    return header;
}

std::string string_attribute(const Bytes& message, size_t header_size, uint16_t type) {
    auto value = find_attribute(message, header_size, type);
    REQUIRE(!value.empty());
    CHECK(value.back() == 0); // the kernel wants the NUL
    return {value.begin(), value.end() - 1};
}

uint32_t u32_attribute(const Bytes& message, size_t header_size, uint16_t type) {
    auto value = find_attribute(message, header_size, type);
    REQUIRE(value.size() == sizeof(uint32_t));
    uint32_t number = 0;
    std::memcpy(&number, value.data(), sizeof number);
    return number;
}

// A message as the kernel would send it: the headers, then attributes, each 4-aligned.
class Reply {
public:
    Reply(uint16_t type, const void* header, size_t size) {
        bytes_.resize(NLMSG_HDRLEN);
        append(header, size);
        nlmsghdr netlink{};
        netlink.nlmsg_type = type;
        std::memcpy(bytes_.data(), &netlink, sizeof netlink);
    }
    Reply& attribute(uint16_t type, const void* data, size_t size) {
        rtattr attr{};
        attr.rta_type = type;
        attr.rta_len = static_cast<unsigned short>(RTA_LENGTH(size));
        append(&attr, sizeof attr);
        append(data, size);
        return *this;
    }
    Bytes done() {
        auto length = static_cast<uint32_t>(bytes_.size());
        std::memcpy(bytes_.data(), &length, sizeof length);
        return bytes_;
    }

private:
    void append(const void* data, size_t size) {
        const auto* begin = static_cast<const unsigned char*>(data);
        bytes_.insert(bytes_.end(), begin, begin + size);
        bytes_.resize((bytes_.size() + 3) & ~size_t{3}, 0);
    }
    Bytes bytes_;
};

Bytes address_reply(uint8_t family, uint8_t prefix, uint8_t flags, uint8_t scope, int index,
                    const char* text) {
    ifaddrmsg header{};
    header.ifa_family = family;
    header.ifa_prefixlen = prefix;
    header.ifa_flags = flags;
    header.ifa_scope = scope;
    header.ifa_index = static_cast<uint32_t>(index);
    unsigned char raw[16] = {};
    REQUIRE(::inet_pton(family, text, raw) == 1);
    size_t size = family == AF_INET ? 4 : 16;
    Reply reply(RTM_NEWADDR, &header, sizeof header);
    reply.attribute(IFA_ADDRESS, raw, size);
    if (family == AF_INET) {
        reply.attribute(IFA_LOCAL, raw, size);
    }
    return reply.done();
}

} // namespace

TEST_CASE("linux.netDevices parses into host name -> name inside", "[netdev][spec]") {
    auto spec = spec::parse_spec(
        config_with({{"eth1", Json::object()}, {"ens3", {{"name", "eth0"}}}}).dump());
    REQUIRE(spec);
    const auto& devices = spec->linux.net_devices;
    REQUIRE(devices.size() == 2);
    CHECK(devices.at("eth1").name.empty());
    CHECK(devices.at("ens3").name == "eth0");
    // A template: the kernel completes it.
    CHECK(error_of(config_with({{"a", {{"name", "net%d"}}}, {"b", {{"name", "net%d"}}}})).empty());
    // Absent, null and empty: no devices.
    CHECK(error_of(config_with(Json::object())).empty());
    CHECK(error_of(config_with(nullptr, false)).empty());
}

TEST_CASE("linux.netDevices errors name the entry", "[netdev][spec]") {
    CHECK(error_of(config_with(Json::array())) ==
          "linux.netDevices: expected an object, got array");
    CHECK(error_of(config_with({{"eth9", "eth0"}})) ==
          R"(linux.netDevices."eth9": expected an object, got string)");
    CHECK(error_of(config_with({{"eth9", {{"name", 7}}}})) ==
          R"(linux.netDevices."eth9".name: expected a string, got 7)");
    CHECK(
        error_of(config_with({{"eth9", {{"name", "a/b"}}}})) ==
        R"(linux.netDevices."eth9".name: not a valid interface name (no '/', ':' or white space): "a/b")");
    CHECK(
        error_of(config_with({{"eth9", {{"name", "sixteen-bytes-xx"}}}})) ==
        R"(linux.netDevices."eth9".name: must be at most 15 bytes (IFNAMSIZ), got 16: "sixteen-bytes-xx")");
    CHECK(error_of(config_with({{"eth9", {{"name", ".."}}}})) ==
          R"(linux.netDevices."eth9".name: not a valid interface name: "..")");
    CHECK(error_of(config_with({{"eth9", {{"name", ""}}}})) ==
          R"(linux.netDevices."eth9".name: must not be empty)");
    CHECK(error_of(config_with({{"eth9", {{"name", "a%s"}}}})) ==
          R"(linux.netDevices."eth9".name: a name template has one "%d" and no other '%': "a%s")");
    CHECK(
        error_of(config_with({{"eth9", {{"name", "a%d%d"}}}})) ==
        R"(linux.netDevices."eth9".name: a name template has one "%d" and no other '%': "a%d%d")");
    CHECK(
        error_of(config_with({{"e th", Json::object()}})) ==
        R"(linux.netDevices."e th": not a valid interface name (no '/', ':' or white space): "e th")");
    CHECK(error_of(config_with({{".", Json::object()}})) ==
          R"(linux.netDevices.".": not a valid interface name: ".")");
    CHECK(error_of(config_with({{"eth%d", Json::object()}})) ==
          R"(linux.netDevices."eth%d": a host device name has no '%': "eth%d")");
    CHECK(error_of(config_with({{"eth9", Json::object()}}, false)) ==
          "linux.netDevices: moving network devices needs a network namespace in "
          "linux.namespaces (without one they would stay in the host's)");
    // Two devices with one name inside, given or kept.
    CHECK(
        error_of(config_with({{"a", {{"name", "eth0"}}}, {"b", {{"name", "eth0"}}}})) ==
        R"(linux.netDevices."b": the name "eth0" in the container is linux.netDevices."a"'s too)");
    CHECK(error_of(config_with({{"a", {{"name", "b"}}}, {"b", Json::object()}})) ==
          R"(linux.netDevices."b": the name "b" in the container is linux.netDevices."a"'s too)");
}

TEST_CASE("interface names follow the kernel's dev_valid_name", "[netdev]") {
    using spec::rules::interface_name_problem;
    CHECK_FALSE(interface_name_problem("eth0", false));
    CHECK_FALSE(interface_name_problem("fifteen-bytes-x", false));
    CHECK(interface_name_problem("sixteen-bytes-xx", false));
    CHECK(interface_name_problem("a:1", false));
    CHECK(interface_name_problem("a\tb", false));
    CHECK_FALSE(interface_name_problem("...", false));
    CHECK_FALSE(interface_name_problem("eth%d", true));
    CHECK(interface_name_problem("eth%d", false));
    CHECK(interface_name_problem("%", true));
}

TEST_CASE("the move: one RTM_NEWLINK with the namespace fd and the new name", "[netdev]") {
    Bytes message = move_link_message(7, 42, 9, "eth7");
    nlmsghdr header = netlink_header(message);
    CHECK(header.nlmsg_len == message.size());
    CHECK(header.nlmsg_type == RTM_NEWLINK);
    CHECK(header.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK)); // no CREATE: a change
    CHECK(header.nlmsg_seq == 7);
    auto info = header_of<ifinfomsg>(message);
    CHECK(info.ifi_family == AF_UNSPEC);
    CHECK(info.ifi_index == 42);
    CHECK(info.ifi_change == 0);
    CHECK(u32_attribute(message, sizeof(ifinfomsg), IFLA_NET_NS_FD) == 9);
    CHECK(string_attribute(message, sizeof(ifinfomsg), IFLA_IFNAME) == "eth7");
    CHECK(find_attribute(message, sizeof(ifinfomsg), IFLA_NET_NS_PID).empty());
    CHECK(message.size() % 4 == 0);
}

TEST_CASE("looking up, dumping, setting up", "[netdev]") {
    Bytes by_name = get_link_message(1, 0, "mrnd-1a");
    CHECK(netlink_header(by_name).nlmsg_type == RTM_GETLINK);
    CHECK(header_of<ifinfomsg>(by_name).ifi_index == 0);
    CHECK(string_attribute(by_name, sizeof(ifinfomsg), IFLA_IFNAME) == "mrnd-1a");

    Bytes by_index = get_link_message(2, 5, "");
    CHECK(header_of<ifinfomsg>(by_index).ifi_index == 5);
    CHECK(find_attribute(by_index, sizeof(ifinfomsg), IFLA_IFNAME).empty());

    Bytes dump = dump_addresses_message(3);
    CHECK(netlink_header(dump).nlmsg_type == RTM_GETADDR);
    CHECK((netlink_header(dump).nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP);
    CHECK(header_of<ifaddrmsg>(dump).ifa_family == AF_UNSPEC);

    Bytes up = set_up_message(4, 5);
    auto info = header_of<ifinfomsg>(up);
    CHECK(netlink_header(up).nlmsg_type == RTM_NEWLINK);
    CHECK(info.ifi_index == 5);
    CHECK(info.ifi_flags == IFF_UP);
    CHECK(info.ifi_change == IFF_UP); // only that flag changes
}

TEST_CASE("addresses: the permanent global ones are kept and added again", "[netdev]") {
    auto kept = parse_address(
        address_reply(AF_INET, 24, IFA_F_PERMANENT, RT_SCOPE_UNIVERSE, 5, "198.18.7.1"));
    REQUIRE(kept);
    CHECK(kept->family == AF_INET);
    CHECK(kept->prefix_length == 24);
    CHECK(kept->index == 5);
    CHECK(kept->local == Bytes{198, 18, 7, 1});
    CHECK(kept->address == Bytes{198, 18, 7, 1});
    CHECK(address_to_keep(*kept));

    auto link_local =
        parse_address(address_reply(AF_INET6, 64, IFA_F_PERMANENT, RT_SCOPE_LINK, 5, "fe80::1"));
    REQUIRE(link_local);
    CHECK(link_local->address.size() == 16);
    CHECK_FALSE(address_to_keep(*link_local)); // the kernel makes it again itself
    auto dynamic =
        parse_address(address_reply(AF_INET6, 64, 0, RT_SCOPE_UNIVERSE, 5, "2001:db8::1"));
    REQUIRE(dynamic);
    CHECK_FALSE(address_to_keep(*dynamic)); // SLAAC, DHCP: not the user's

    // IFA_FLAGS, when present, holds all the flags.
    ifaddrmsg header{};
    header.ifa_family = AF_INET;
    header.ifa_index = 5;
    uint32_t flags = IFA_F_PERMANENT | IFA_F_NOPREFIXROUTE;
    auto with_flags = parse_address(
        Reply(RTM_NEWADDR, &header, sizeof header).attribute(IFA_FLAGS, &flags, 4).done());
    REQUIRE(with_flags);
    CHECK(with_flags->flags == flags);

    Bytes add = add_address_message(9, 12, *kept);
    nlmsghdr added = netlink_header(add);
    CHECK(added.nlmsg_type == RTM_NEWADDR);
    CHECK((added.nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL)) == (NLM_F_CREATE | NLM_F_EXCL));
    auto address = header_of<ifaddrmsg>(add);
    CHECK(address.ifa_index == 12); // the index inside the container
    CHECK(address.ifa_prefixlen == 24);
    CHECK(address.ifa_family == AF_INET);
    auto local = find_attribute(add, sizeof(ifaddrmsg), IFA_LOCAL);
    CHECK(Bytes(local.begin(), local.end()) == kept->local);
    CHECK(find_attribute(add, sizeof(ifaddrmsg), IFA_BROADCAST).empty());

    CHECK_FALSE(parse_address(Bytes(4, 0)));
}

TEST_CASE("a link reply gives index, flags and name", "[netdev]") {
    ifinfomsg info{};
    info.ifi_index = 12;
    info.ifi_flags = IFF_UP | IFF_BROADCAST;
    uint32_t mtu = 1500;
    auto link = parse_link(Reply(RTM_NEWLINK, &info, sizeof info)
                               .attribute(IFLA_MTU, &mtu, sizeof mtu)
                               .attribute(IFLA_IFNAME, "eth7", 5)
                               .done());
    REQUIRE(link);
    CHECK(link->index == 12);
    CHECK(link->flags == (IFF_UP | IFF_BROADCAST));
    CHECK(link->name == "eth7");
    CHECK_FALSE(parse_link(Reply(RTM_NEWADDR, &info, sizeof info).done()));
}

TEST_CASE("plan: with netDevices the init waits for the parent's move", "[netdev][plan]") {
    minirun::testing::PlanBundle bundle;
    Json config = config_with({{"eth1", {{"name", "eth0"}}}});
    config["process"] = {{"args", {"sh"}}, {"cwd", "/"}};
    auto plan = bundle.plan(config);
    REQUIRE(plan);
    CHECK(plan->wait_for_parent);
    CHECK((plan->clone_flags & CLONE_NEWNET) != 0);

    config["linux"]["netDevices"] = nullptr;
    auto without = bundle.plan(config);
    REQUIRE(without);
    CHECK_FALSE(without->wait_for_parent);

    // A network namespace the init unshares after joining a user namespace comes too late.
    config["linux"]["netDevices"] = {{"eth1", Json::object()}};
    config["linux"]["namespaces"].push_back({{"type", "user"}, {"path", "/proc/1/ns/user"}});
    auto joined_user = bundle.plan(config);
    REQUIRE_FALSE(joined_user);
    CHECK(joined_user.error().message() ==
          "linux.netDevices: not supported with a new network namespace in a joined user "
          "namespace");
}
