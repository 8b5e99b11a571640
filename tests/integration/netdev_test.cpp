// linux.netDevices: a host device moved into the container's network namespace, renamed,
// with its addresses and up; refused configs and failed moves leave it in the host as it was.
//
// The devices are veth pairs ("mrnd<pid>-<n>a" and its peer "...b"), since the dummy module
// may be missing. A veth is virtual: when the container's namespace goes, the kernel
// destroys it (and its peer) instead of giving it back, as the spec describes.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <string>
#include <vector>

using namespace it;

namespace {

bool link_in_host(const std::string& name) {
    return run({"/usr/sbin/ip", "link", "show", "dev", name}).exit_code == 0;
}

// A veth pair in the host's network namespace, deleted at the end whatever happened.
class Veth {
public:
    Veth() {
        static int count = 0;
        // At most 15 bytes with the suffixes the tests add ("mrnd12345-1az").
        std::string base =
            "mrnd" + std::to_string(::getpid() % 100000) + "-" + std::to_string(++count % 10);
        a = base + "a";
        b = base + "b";
        auto made = run({"/usr/sbin/ip", "link", "add", a, "type", "veth", "peer", "name", b});
        INFO(made.describe());
        REQUIRE(made.exit_code == 0);
    }
    Veth(const Veth&) = delete;
    Veth& operator=(const Veth&) = delete;
    ~Veth() {
        // Gone already when the container's namespace took it along; removing one end
        // removes the pair.
        for (const std::string* name : {&a, &b}) {
            if (link_in_host(*name)) {
                run({"/usr/sbin/ip", "link", "del", "dev", *name});
            }
        }
    }

    // `ip -o addr show dev NAME` plus `ip -o link show dev NAME`, "" when not in the host.
    [[nodiscard]] static std::string host_view(const std::string& name) {
        auto link = run({"/usr/sbin/ip", "-o", "link", "show", "dev", name});
        if (link.exit_code != 0) {
            return "";
        }
        return link.out + run({"/usr/sbin/ip", "-o", "addr", "show", "dev", name}).out;
    }

    std::string a;
    std::string b;
};

void give_address(const std::string& name, const std::string& address) {
    auto added = run({"/usr/sbin/ip", "addr", "add", address, "dev", name});
    INFO(added.describe());
    REQUIRE(added.exit_code == 0);
    auto up = run({"/usr/sbin/ip", "link", "set", "dev", name, "up"});
    REQUIRE(up.exit_code == 0);
}

// One line on stderr, a failed exit, the device still in the host as before, nothing else
// left behind.
void check_refused(TempBundle& bundle, const Veth& veth, const std::string& expected_error) {
    std::string before = Veth::host_view(veth.a);
    REQUIRE(!before.empty());
    bundle.set_shell("true");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(result.err == "mini-run: " + expected_error + "\n");
    CHECK(Veth::host_view(veth.a) == before);
    CHECK(link_in_host(veth.b));
    check_no_leftovers(bundle);
}

} // namespace

TEST_CASE("netDevices: the device is in the container, renamed, with its address and up",
          "[netdev]") {
    Veth veth;
    give_address(veth.a, "198.18.77.1/24");
    TempBundle bundle("netdev");
    bundle.config["linux"]["netDevices"] = {{veth.a, {{"name", "eth7"}}}};
    bundle.set_shell("ip -o link; ip -o addr show dev eth7; echo READY; read line || true");
    bundle.write_config();
    auto argv = bundle.run_argv();
    argv.insert(argv.end() - 1, "--explain");
    Child child(argv);
    REQUIRE(child.wait_for_output("READY"));
    const std::string inside = child.out();
    INFO(inside << child.err());
    CHECK(contains(inside, ": eth7@")); // busybox shows a veth as name@peer
    CHECK(contains(inside, ",UP"));     // the spec: up after the move
    CHECK_FALSE(contains(inside, veth.a));
    CHECK(contains(inside, "inet 198.18.77.1/24")); // permanent, global: kept
    // From the host: gone from its namespace; the peer stays.
    CHECK_FALSE(link_in_host(veth.a));
    CHECK(link_in_host(veth.b));
    CHECK(contains(child.err(), "runtime: RTM_NEWLINK(" + veth.a));
    CHECK(contains(child.err(), R"(IFLA_IFNAME "eth7"): linux.netDevices moves the device)"));

    auto result = child.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    // mini-run does not move it out (the spec forbids it); the namespace's end destroys a
    // virtual device, and with it the peer.
    CHECK(wait_until([&] { return !link_in_host(veth.b) && !link_in_host(veth.a); }));
    check_no_leftovers(bundle);
}

TEST_CASE("netDevices: a device keeps its name without one, and a template gets a number",
          "[netdev]") {
    Veth first;
    Veth second;
    TempBundle bundle("netdev-names");
    bundle.config["linux"]["netDevices"] = {{first.a, nlohmann::json::object()},
                                            {second.a, {{"name", "net%d"}}}};
    bundle.set_shell("ip -o link");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.out, ": " + first.a + "@"));
    CHECK(contains(result.out, ": net0@"));
    check_no_leftovers(bundle);
}

TEST_CASE("netDevices: refused configs leave the device in the host", "[netdev]") {
    Veth veth;
    give_address(veth.a, "198.18.78.1/24");
    TempBundle bundle("netdev-refused");

    SECTION("no network device of that name") {
        std::string missing = veth.a + "x";
        bundle.config["linux"]["netDevices"] = {{missing, nlohmann::json::object()}};
        check_refused(bundle, veth,
                      "linux.netDevices.\"" + missing + "\": no network device \"" + missing +
                          "\" in the runtime's network namespace");
    }
    SECTION("the second of two is missing: the first goes back as it was") {
        std::string missing = veth.a + "z"; // sorts after veth.a: moved second
        bundle.config["linux"]["netDevices"] = {{veth.a, {{"name", "eth7"}}},
                                                {missing, nlohmann::json::object()}};
        check_refused(bundle, veth,
                      "linux.netDevices.\"" + missing + "\": no network device \"" + missing +
                          "\" in the runtime's network namespace");
    }
    SECTION("a name the container's namespace has already") {
        bundle.config["linux"]["netDevices"] = {{veth.a, {{"name", "lo"}}}};
        check_refused(bundle, veth,
                      "linux.netDevices.\"" + veth.a +
                          "\": the container's network namespace has a device named \"lo\" "
                          "already");
    }
    SECTION("no network namespace") {
        bundle.config["linux"]["netDevices"] = {{veth.a, nlohmann::json::object()}};
        bundle.remove_namespaces({"network"});
        check_refused(bundle, veth,
                      "linux.netDevices: moving network devices needs a network namespace in "
                      "linux.namespaces (without one they would stay in the host's)");
    }
    SECTION("a bad name") {
        bundle.config["linux"]["netDevices"] = {{veth.a, {{"name", "eth/7"}}}};
        check_refused(bundle, veth,
                      "linux.netDevices.\"" + veth.a +
                          "\".name: not a valid interface name (no '/', ':' or white space): "
                          "\"eth/7\"");
    }
}
