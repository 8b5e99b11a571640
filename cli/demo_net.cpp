// `mini-run demo net`: only lo inside; a veth pair to the host, a ping across, removed.
// The namespace is made in runtime/net.cpp.
#include "demo.hpp"

#include <unistd.h>

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

} // namespace

Result<bool> demo_net(Context& c) {
    intro(c, "net: network devices, addresses, routes",
          "A network namespace starts with only a loopback device (mini-run brings `lo` up).\n"
          "To reach it, a veth pair (two ends of one cable) is made with one end moved into\n"
          "the container's namespace; each side gives its end an address from a test subnet.",
          "CLONE_NEWNET",
          "clone3(CLONE_NEWNET); here: ip link add ... type veth peer ... netns PID",
          "runtime/net.cpp (flags: runtime/plan.cpp, clone: runtime/child.cpp)");
    MR_ASSIGN(const std::string ip, find_ip());
    const Signals& signals = *c.signals;
    MR_ASSIGN(const int subnet, free_subnet(ip, signals));
    const std::string host_addr = cat("10.203.", subnet, ".1");
    const std::string inside_addr = cat("10.203.", subnet, ".2");
    const std::string host_end = cat("mrd", ::getpid(), "h");
    const std::string inside_end = cat("mrd", ::getpid(), "c");

    Session session(c, "net");
    MR_TRY(session.open());
    session.set_namespaces({"network"});
    session.add_capabilities({"CAP_NET_ADMIN", "CAP_NET_RAW"}); // ip addr, ping inside
    session.set_script(ns_line("net") + "echo @links $(ls /sys/class/net); " + pause() +
                       "ip addr add " + inside_addr + "/30 dev " + inside_end + " && ip link set " +
                       inside_end + " up && echo '@configured yes'; " +
                       "echo @links2 $(ls /sys/class/net); " +
                       "ok=failed; for i in 1 2 3; do ping -c 1 -W 2 " + host_addr +
                       " >/dev/null 2>&1 && { ok=ok; break; }; done; echo \"@ping $ok\"; " +
                       pause("pinged") + "echo @links3 $(ls /sys/class/net)");
    MR_TRY(session.start("@ready"));
    MR_ASSIGN(pid_t init, session.init_pid());

    auto host_run = [&](const std::vector<std::string>& argv) -> Status {
        std::vector<std::string> shown = argv;
        shown[0] = "ip";
        c.out.command(join(shown, " "));
        MR_ASSIGN(CommandResult result, run_command(argv, signals));
        if (result.exit_code != 0) {
            return Error(cat(join(argv, " "), ": ", trim(result.err)));
        }
        return {};
    };
    auto link_exists = [&](const std::string& name) -> Result<bool> {
        MR_ASSIGN(CommandResult result, run_command({ip, "link", "show", name}, signals));
        return result.exit_code == 0;
    };
    // Registered before it exists: whatever happens from here, the pair goes. It runs when
    // the session ends, after link_exists (declared later) is gone: a copy of it, then.
    session.on_cleanup(cat("removed the veth pair ", host_end, "/", inside_end),
                       [link_exists, &ip, &signals, host_end]() -> Status {
                           MR_ASSIGN(bool exists, link_exists(host_end));
                           if (exists) {
                               MR_TRY(run_command({ip, "link", "del", host_end}, signals));
                           }
                           return {};
                       });
    MR_TRY(host_run({ip, "link", "add", host_end, "type", "veth", "peer", "name", inside_end,
                     "netns", std::to_string(init)}));
    MR_TRY(host_run({ip, "addr", "add", host_addr + "/30", "dev", host_end}));
    MR_TRY(host_run({ip, "link", "set", host_end, "up"}));

    MR_TRY(session.resume("@pinged"));
    c.out.inside(cat("ip addr add ", inside_addr, "/30 dev ", inside_end, "; ping ", host_addr),
                 session.value("ping"));
    MR_ASSIGN(CommandResult host_ping,
              run_command({c.rootfs + "/bin/busybox", "ping", "-c", "1", "-W", "2", inside_addr},
                          signals));
    c.out.host(cat("ping ", inside_addr, " (the rootfs's static busybox)"),
               host_ping.exit_code == 0 ? "ok" : "failed");
    MR_TRY(pause_here(c, cat("the veth pair is up: try `ip addr show ", host_end, "`")));
    MR_TRY(host_run({ip, "link", "del", host_end}));
    MR_ASSIGN(const bool still_there, link_exists(host_end));
    const bool gone = !still_there;
    MR_TRY(session.resume());
    MR_TRY(session.finish());

    c.out.ns_compare("net", session.value("ns"), host_ns("net"));
    c.out.inside("ls /sys/class/net, at the start", session.value("links"));
    c.out.inside("with the veth end", session.value("links2"));
    c.out.inside("after `ip link del` on the host", session.value("links3"));
    Check check(c.out);
    check(session.value("ns") != host_ns("net"),
          "the container has a network namespace of its own");
    check(session.value("links") == "lo", "at first the container has only lo");
    check(session.value("configured") == "yes" && session.value("links2") == cat("lo ", inside_end),
          "the container got its end of the pair and gave it an address");
    check(session.value("ping") == "ok", cat("the container pinged the host at ", host_addr));
    check(host_ping.exit_code == 0, cat("the host pinged the container at ", inside_addr));
    check(gone && session.value("links3") == "lo",
          "deleting the host's end removed the pair: only lo is left inside");
    return check.ok();
}

} // namespace minirun::cli::demo
