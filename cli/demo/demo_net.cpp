// `mini-run demo net`: only lo inside; a veth pair to the host, a ping across, removed.
// The namespace is made in runtime/ns/net.cpp.
#include "demo.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace minirun::cli::demo {
namespace {

Result<std::string> find_ip() {
    for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
        if (::access(path, X_OK) == 0) {
            return std::string(path);
        }
    }
    return Error("the net demo needs iproute2's `ip` (apt-get install iproute2)");
}

// A /30 of 10.203.0.0/16 that no address or route of the host uses yet.
Result<int> free_subnet(const std::string& ip, const Signals& signals) {
    MR_ASSIGN(CommandResult addresses, run_command({ip, "-4", "-o", "addr", "show"}, signals));
    MR_ASSIGN(CommandResult routes,
              run_command({ip, "-4", "route", "show", "table", "all"}, signals));
    std::string used = addresses.out + routes.out;
    for (int i = 0; i < 256; ++i) {
        int third = (::getpid() + i) % 256;
        if (used.find(cat("10.203.", third, ".")) == std::string::npos) {
            return third;
        }
    }
    return Error("no free test subnet in 10.203.0.0/16");
}

// One ICMP echo request to `address` and its reply, on a raw socket in the caller's
// network namespace, three tries of two seconds: what `ping -c 1 -W 2` does. The demo
// pings itself rather than run a ping(8), which a host without busybox may not have.
bool echo(const std::string& address) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    if (::inet_pton(AF_INET, address.c_str(), &to.sin_addr) != 1) {
        return false;
    }
    int fd = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
    if (fd < 0) {
        return false;
    }
    const auto id = static_cast<uint16_t>(::getpid());
    bool replied = false;
    for (uint16_t sequence = 1; sequence <= 3 && !replied; ++sequence) {
        icmphdr request{};
        request.type = ICMP_ECHO;
        request.un.echo.id = htons(id);
        request.un.echo.sequence = htons(sequence);
        // The Internet checksum: the ones' complement of the ones' complement sum.
        std::array<uint16_t, sizeof request / 2> words{};
        std::memcpy(words.data(), &request, sizeof request);
        uint32_t sum = 0;
        for (uint16_t word : words) {
            sum += word;
        }
        sum = (sum >> 16) + (sum & 0xffff);
        request.checksum = static_cast<uint16_t>(~(sum + (sum >> 16)));
        if (::sendto(fd, &request, sizeof request, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) <
            0) {
            break;
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (!replied && std::chrono::steady_clock::now() < deadline) {
            pollfd ready{fd, POLLIN, 0};
            if (::poll(&ready, 1, 100) <= 0) {
                continue;
            }
            std::array<unsigned char, 1500> packet{};
            sockaddr_in from{};
            socklen_t from_size = sizeof from;
            ssize_t got = ::recvfrom(fd, packet.data(), packet.size(), 0,
                                     reinterpret_cast<sockaddr*>(&from), &from_size);
            // A raw socket gets every ICMP packet with its IP header: ours is the echo reply
            // from `address` with our id.
            const size_t header = got > 0 ? static_cast<size_t>(packet[0] & 0x0f) * 4 : 0;
            if (got <= 0 || static_cast<size_t>(got) < header + sizeof(icmphdr)) {
                continue;
            }
            icmphdr reply{};
            std::memcpy(&reply, packet.data() + header, sizeof reply);
            replied = from.sin_addr.s_addr == to.sin_addr.s_addr && reply.type == ICMP_ECHOREPLY &&
                      reply.un.echo.id == htons(id);
        }
    }
    ::close(fd);
    return replied;
}

// The pair's names and addresses, on a subnet the host does not use.
struct NetPlan {
    std::string ip; // iproute2's binary
    std::string host_addr;
    std::string inside_addr;
    std::string host_end;
    std::string inside_end;
};

Result<NetPlan> plan_net(const Signals& signals) {
    NetPlan plan;
    MR_ASSIGN(plan.ip, find_ip());
    MR_ASSIGN(const int subnet, free_subnet(plan.ip, signals));
    plan.host_addr = cat("10.203.", subnet, ".1");
    plan.inside_addr = cat("10.203.", subnet, ".2");
    plan.host_end = cat("mrd", ::getpid(), "h");
    plan.inside_end = cat("mrd", ::getpid(), "c");
    return plan;
}

// The container's side: its links at the start, its end addressed, its links after.
std::string net_script(const NetPlan& p) {
    return ns_line("net") + "echo @links $(ls /sys/class/net); " + pause() + "ip addr add " +
           p.inside_addr + "/30 dev " + p.inside_end + " && ip link set " + p.inside_end +
           " up && echo '@configured yes'; " + "echo @links2 $(ls /sys/class/net); " +
           pause("addressed") + "echo @links3 $(ls /sys/class/net)";
}

// `ip ARGS...` on the host, shown as the demo's command.
Status host_ip(Context& c, const std::vector<std::string>& argv) {
    std::vector<std::string> shown = argv;
    shown[0] = "ip";
    c.out.command(join(shown, " "));
    MR_ASSIGN(CommandResult result, run_command(argv, *c.signals));
    if (result.exit_code != 0) {
        return Error(cat(join(argv, " "), ": ", trim(result.err)));
    }
    return {};
}

Result<bool> link_exists(const std::string& ip, const std::string& name, const Signals& signals) {
    MR_ASSIGN(CommandResult result, run_command({ip, "link", "show", name}, signals));
    return result.exit_code == 0;
}

// The veth pair, its container end moved into the namespace of `init`.
Status make_veth_pair(Context& c, Session& session, const NetPlan& p, pid_t init) {
    const std::string& ip = p.ip;
    // Registered before it exists: whatever happens from here, the pair goes. It runs when
    // the session ends: what it needs, it holds a copy of.
    session.on_cleanup(cat("removed the veth pair ", p.host_end, "/", p.inside_end),
                       [ip, host_end = p.host_end, &signals = *c.signals]() -> Status {
                           MR_ASSIGN(bool exists, link_exists(ip, host_end, signals));
                           if (exists) {
                               MR_TRY(run_command({ip, "link", "del", host_end}, signals));
                           }
                           return {};
                       });
    MR_TRY(host_ip(c, {ip, "link", "add", p.host_end, "type", "veth", "peer", "name", p.inside_end,
                       "netns", std::to_string(init)}));
    MR_TRY(host_ip(c, {ip, "addr", "add", p.host_addr + "/30", "dev", p.host_end}));
    return host_ip(c, {ip, "link", "set", p.host_end, "up"});
}

struct NetResults {
    bool inside_ping = false;
    bool host_ping = false;
    bool gone = false; // the host's end deleted, the pair is gone
};

// A ping each way across the addressed pair, then the host's end deleted.
Result<NetResults> ping_then_remove(Context& c, Session& session, const NetPlan& p, pid_t init) {
    NetResults results;
    MR_TRY(session.resume("@addressed"));
    // The container's side: a child of the demo that joined its network namespace, as
    // `nsenter --net` would, pings the host's end; then the host pings the container's.
    MR_ASSIGN(results.inside_ping,
              in_namespace_of(init, "net", CLONE_NEWNET, [&p] { return echo(p.host_addr); }));
    c.out.inside(cat("ip addr add ", p.inside_addr, "/30 dev ", p.inside_end,
                     "; from its netns (setns): ping ", p.host_addr),
                 results.inside_ping ? "ok" : "failed");
    MR_ASSIGN(results.host_ping,
              in_namespace_of(0, "net", 0, [&p] { return echo(p.inside_addr); }));
    c.out.host(cat("ping ", p.inside_addr, " (an ICMP echo from mini-run)"),
               results.host_ping ? "ok" : "failed");
    MR_TRY(pause_here(c, cat("the veth pair is up: try `ip addr show ", p.host_end, "`")));
    MR_TRY(host_ip(c, {p.ip, "link", "del", p.host_end}));
    MR_ASSIGN(const bool still_there, link_exists(p.ip, p.host_end, *c.signals));
    results.gone = !still_there;
    return results;
}

bool report_net(Context& c, const Session& session, const NetPlan& p, const NetResults& r) {
    c.out.ns_compare("net", session.value("ns"), host_ns("net"));
    c.out.inside("ls /sys/class/net, at the start", session.value("links"));
    c.out.inside("with the veth end", session.value("links2"));
    c.out.inside("after `ip link del` on the host", session.value("links3"));
    Check check(c.out);
    check(session.value("ns") != host_ns("net"),
          "the container has a network namespace of its own");
    check(session.value("links") == "lo", "at first the container has only lo");
    check(session.value("configured") == "yes" &&
              session.value("links2") == cat("lo ", p.inside_end),
          "the container got its end of the pair and gave it an address");
    check(r.inside_ping, cat("the container's namespace pinged the host at ", p.host_addr));
    check(r.host_ping, cat("the host pinged the container at ", p.inside_addr));
    check(r.gone && session.value("links3") == "lo",
          "deleting the host's end removed the pair: only lo is left inside");
    return check.ok();
}

} // namespace

Result<bool> demo_net(Context& c) {
    intro(c, "net: network devices, addresses, routes",
          "A network namespace starts with only a loopback device (mini-run brings `lo` up).\n"
          "To reach it, a veth pair (two ends of one cable) is made with one end moved into\n"
          "the container's namespace; each side gives its end an address from a test subnet.",
          "CLONE_NEWNET",
          "clone3(CLONE_NEWNET); here: ip link add ... type veth peer ... netns PID, and "
          "setns(2) to ping from inside",
          "runtime/ns/net.cpp (flags: runtime/plan.cpp, clone: runtime/process/child.cpp)");
    MR_ASSIGN(const NetPlan plan, plan_net(*c.signals));

    Session session(c, "net");
    MR_TRY(session.open());
    session.set_namespaces({"network"});
    session.add_capabilities({"CAP_NET_ADMIN"}); // for `ip addr` inside
    session.set_script(net_script(plan));
    MR_TRY(session.start("@ready"));
    MR_ASSIGN(pid_t init, session.init_pid());

    MR_TRY(make_veth_pair(c, session, plan, init));
    MR_ASSIGN(const NetResults results, ping_then_remove(c, session, plan, init));
    MR_TRY(session.resume());
    MR_TRY(session.finish());
    return report_net(c, session, plan, results);
}

} // namespace minirun::cli::demo
