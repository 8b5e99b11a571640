// mini-run demo [NAME]: see one namespace at a time, in a real container.
//
// Each demo below runs the example busybox container with a mount namespace (mini-run
// needs one to build the root file system) plus the namespace it is about, makes the
// container print what it sees, looks at the same thing from the host, and checks that the
// facts it prints hold. The machinery (temporary bundle, cleanup, Ctrl-C) is in
// demo_session.cpp; docs/namespaces.md walks through the same ground in prose.
#include "demo.hpp"

#include "minirun/runtime.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/msg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace minirun::cli {
namespace demo {
namespace {

// Collects the facts a demo checks: each is printed as "ok" or "UNEXPECTED".
class Check {
public:
    explicit Check(const Output& out) : out_(&out) {}
    void operator()(bool holds, std::string_view fact) {
        if (holds) {
            out_->good(fact);
        } else {
            out_->bad(fact);
        }
        ok_ = ok_ && holds;
    }
    [[nodiscard]] bool ok() const { return ok_; }

private:
    const Output* out_;
    bool ok_ = true;
};

// The start of every container script: "@ns <link>" for the namespace shown.
std::string ns_line(std::string_view name) {
    return cat("echo \"@ns $(readlink /proc/self/ns/", name, ")\"; ");
}

// Stops the script until the demo has looked from the host: prints "@<marker>", then
// waits for the line Session::resume sends.
std::string pause(std::string_view marker = "ready") {
    return cat("echo @", marker, "; read line; ");
}

// With --step: says how to look at the running container, and waits for Enter.
Status pause_while_running(const Context& context, const Session& session) {
    MR_ASSIGN(pid_t pid, session.init_pid());
    return pause_here(context, cat("the container runs as host pid ", pid, ": try `nsenter -t ",
                                   pid, " -a sh` in another terminal"));
}

std::string host_hostname() {
    std::array<char, 256> name{};
    ::gethostname(name.data(), name.size() - 1);
    return name.data();
}

std::vector<std::string> words_of(std::string_view text) {
    std::vector<std::string> words;
    std::istringstream in{std::string(text)};
    for (std::string word; in >> word;) {
        words.push_back(word);
    }
    return words;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : std::string(separator)) + item;
    }
    return out;
}

std::string status_field(pid_t pid, std::string_view name) {
    std::string prefix = cat(name, ":");
    for (const auto& line : lines_of(read_text(cat("/proc/", pid, "/status")))) {
        if (line.starts_with(prefix)) {
            return join(words_of(line.substr(prefix.size())), " ");
        }
    }
    return {};
}

void intro(const Context& context, std::string_view title, std::string_view text,
           std::string_view flag, std::string_view syscall, std::string_view code) {
    context.out.heading(title);
    context.out.text(text);
    context.out.field("flag", flag);
    context.out.field("syscall", syscall);
    context.out.field("code", code);
}

// ---------------------------------------------------------------------------------------

Result<bool> demo_uts(Context& c) {
    intro(c, "uts: the hostname",
          "A UTS namespace holds the hostname and NIS domain name. The container gets its\n"
          "own, so it can be renamed without the host noticing.",
          "CLONE_NEWUTS", "clone3(CLONE_NEWUTS), then sethostname(2) with config.json's hostname",
          "runtime/uts.cpp (flags: runtime/plan.cpp, clone: runtime/child.cpp)");
    const std::string host_before = host_hostname();
    const std::string host_link = host_ns("uts");
    Session session(c, "uts");
    MR_TRY(session.open());
    session.set_namespaces({"uts"});
    session.add_capabilities({"CAP_SYS_ADMIN"}); // for `hostname NAME` inside
    // Guarded: in the host's uts namespace (which would be a bug) it must not rename.
    session.set_script(ns_line("uts") + "echo \"@hostname $(hostname)\"; " + "[ \"$(readlink " +
                       "/proc/self/ns/uts)\" != " + shell_quote(host_link) + " ] || exit 3; " +
                       "hostname renamed-inside && echo \"@renamed $(hostname)\"; " + pause());
    MR_TRY(session.start("@ready"));
    const std::string host_during = host_hostname();
    MR_TRY(pause_while_running(c, session));
    MR_TRY(session.resume());
    MR_TRY(session.finish());

    c.out.ns_compare("uts", session.value("ns"), host_link);
    c.out.inside("hostname, as mini-run set it from config.json", session.value("hostname"));
    c.out.inside("after `hostname renamed-inside`", session.value("renamed"));
    c.out.host("gethostname() while the container ran", host_during);
    Check check(c.out);
    check(session.value("ns") != host_link, "the container has a uts namespace of its own");
    check(session.value("hostname") == "mini-run-demo", "inside, the hostname is config.json's");
    check(session.value("renamed") == "renamed-inside",
          "root inside renamed its own uts namespace");
    check(host_during == host_before && host_hostname() == host_before,
          cat("the host is still called ", host_before));
    return check.ok();
}

// ---------------------------------------------------------------------------------------

// The keys (hex) of the System V message queues in /proc/sysvipc/msg: what `ipcs -q`
// lists, for the ipc namespace of whoever reads it.
std::vector<std::string> queue_keys(const std::vector<std::string>& lines) {
    std::vector<std::string> keys;
    for (const auto& line : lines) {
        auto words = words_of(line);
        if (words.empty() || words[0] == "key") {
            continue;
        }
        std::ostringstream hex;
        hex << "0x" << std::hex << static_cast<unsigned>(std::stol(words[0]));
        keys.push_back(hex.str());
    }
    return keys;
}

std::string key_text(key_t key) {
    std::ostringstream hex;
    hex << "0x" << std::hex << static_cast<unsigned>(key);
    return hex.str();
}

bool has(const std::vector<std::string>& items, const std::string& item) {
    return std::find(items.begin(), items.end(), item) != items.end();
}

// msgget(key) in the ipc namespace of `pid`, from a forked child that setns()es there:
// what `nsenter --target PID --ipc ipcmk -Q` does (busybox has no ipcmk).
Status make_queue_in(pid_t pid, key_t key) {
    pid_t child = ::fork();
    if (child < 0) {
        return Error(cat("fork: ", std::strerror(errno)));
    }
    if (child == 0) {
        int ns = ::open(cat("/proc/", pid, "/ns/ipc").c_str(), O_RDONLY | O_CLOEXEC);
        if (ns < 0 || ::setns(ns, CLONE_NEWIPC) < 0 || ::msgget(key, IPC_CREAT | 0600) < 0) {
            ::_exit(1);
        }
        ::_exit(0);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return Error("could not make a message queue in the container's ipc namespace");
    }
    return {};
}

Result<bool> demo_ipc(Context& c) {
    intro(c, "ipc: System V message queues, semaphores, shared memory",
          "An IPC namespace has its own System V IPC objects and POSIX message queues. A\n"
          "queue made on one side is invisible on the other. /proc/sysvipc/msg is what\n"
          "`ipcs -q` reads; it lists the queues of the reader's ipc namespace.",
          "CLONE_NEWIPC", "clone3(CLONE_NEWIPC); setns(2) to make a queue inside from here",
          "runtime/ipc.cpp (flags: runtime/plan.cpp, clone: runtime/child.cpp)");
    const auto low = static_cast<key_t>(::getpid() & 0xffff);
    const key_t host_key = static_cast<key_t>(0x4d520000) | low;   // "MR"
    const key_t inside_key = static_cast<key_t>(0x4d430000) | low; // "MC"
    Session session(c, "ipc");
    MR_TRY(session.open());
    int host_queue = ::msgget(host_key, IPC_CREAT | IPC_EXCL | 0600);
    if (host_queue < 0) {
        return Error(cat("msgget ", key_text(host_key), " on the host: ", std::strerror(errno)));
    }
    session.on_cleanup(cat("removed the host's queue ", key_text(host_key)), [host_queue] {
        ::msgctl(host_queue, IPC_RMID, nullptr);
        return Status();
    });
    c.out.host(cat("ipcmk -Q (msgget key ", key_text(host_key), ")"), cat("queue ", host_queue));

    session.set_namespaces({"ipc"});
    session.set_script(ns_line("ipc") + pause() +
                       "echo @queues; cat /proc/sysvipc/msg; echo @end; ");
    MR_TRY(session.start("@ready"));
    MR_ASSIGN(pid_t init, session.init_pid());
    MR_TRY(make_queue_in(init, inside_key));
    c.out.inside(
        cat("ipcmk -Q (setns into /proc/", init, "/ns/ipc, msgget key ", key_text(inside_key), ")"),
        "made");
    auto host_keys = queue_keys(lines_of(read_text("/proc/sysvipc/msg")));
    MR_TRY(pause_while_running(c, session));
    MR_TRY(session.resume("@end"));
    MR_TRY(session.finish());
    auto inside_keys = queue_keys(session.block("queues"));

    c.out.ns_compare("ipc", session.value("ns"), host_ns("ipc"));
    c.out.inside("queues (cat /proc/sysvipc/msg)", join(inside_keys, " "));
    c.out.host("queues (cat /proc/sysvipc/msg)", join(host_keys, " "));
    Check check(c.out);
    check(session.value("ns") != host_ns("ipc"), "the container has an ipc namespace of its own");
    check(has(inside_keys, key_text(inside_key)), "the queue made inside is there inside");
    check(!has(host_keys, key_text(inside_key)), "the queue made inside is invisible on the host");
    check(has(host_keys, key_text(host_key)), "the host's queue is there on the host");
    check(!has(inside_keys, key_text(host_key)), "the host's queue is invisible inside");
    c.out.note("the container's queue went away with its ipc namespace");
    return check.ok();
}

// ---------------------------------------------------------------------------------------

Result<bool> demo_pid(Context& c) {
    intro(c, "pid: process ids",
          "A PID namespace numbers processes afresh: the container's first process is pid 1,\n"
          "its init, and it sees only the processes of its namespace. The host sees the same\n"
          "process under another pid; /proc/PID/status's NSpid lists both.",
          "CLONE_NEWPID", "clone3(CLONE_NEWPID); the child is pid 1 of the new namespace",
          "runtime/pid.cpp (flags: runtime/plan.cpp, clone: runtime/child.cpp)");
    Session session(c, "pid");
    MR_TRY(session.open());
    session.set_namespaces({"pid"});
    // `true` at the end: the shell would otherwise exec ps in place of itself.
    session.set_script(ns_line("pid") + "echo \"@pid $$\"; echo @ps; ps -o pid,comm; echo @end; " +
                       pause() + "true");
    MR_TRY(session.start("@ready"));
    MR_ASSIGN(pid_t init, session.init_pid());
    const std::string nspid = status_field(init, "NSpid");
    size_t host_processes = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        host_processes += std::all_of(name.begin(), name.end(),
                                      [](unsigned char ch) { return std::isdigit(ch) != 0; })
                              ? 1
                              : 0;
    }
    MR_TRY(pause_while_running(c, session));
    MR_TRY(session.resume());
    MR_TRY(session.finish());

    auto ps = session.block("ps");
    c.out.ns_compare("pid", session.value("ns"), host_ns("pid"));
    c.out.inside("echo $$", session.value("pid"));
    c.out.inside("ps", "");
    for (const auto& line : ps) {
        c.out.note(cat("          ", line));
    }
    c.out.host(cat("the same shell, /proc/", init, "/status NSpid"), nspid);
    c.out.host("processes in /proc", std::to_string(host_processes));
    Check check(c.out);
    auto nspids = words_of(nspid);
    check(session.value("ns") != host_ns("pid"), "the container has a pid namespace of its own");
    check(session.value("pid") == "1", "inside, the shell is pid 1");
    check(ps.size() >= 2 && ps.size() <= 5 && words_of(ps[1]).at(0) == "1",
          "ps inside shows only the container's few processes, pid 1 first");
    check(nspids.size() == 2 && nspids[0] == std::to_string(init) && nspids[1] == "1",
          cat("outside, pid 1 is host pid ", init));
    return check.ok();
}

// ---------------------------------------------------------------------------------------

Result<bool> demo_mount(Context& c) {
    intro(c, "mount: the mount table and the root",
          "A mount namespace has its own mount table: what the container mounts stays\n"
          "inside. mini-run binds the rootfs onto itself, mounts config.json's mounts into\n"
          "it, then pivot_root(2) makes it / and the old root (the host's) is detached.",
          "CLONE_NEWNS",
          R"(clone3(CLONE_NEWNS), mount(2), pivot_root(".", "."), umount2(MNT_DETACH))",
          "runtime/mount.cpp, runtime/mount_entries.cpp (run with --explain to see each)");
    Session session(c, "mount");
    MR_TRY(session.open());
    session.set_namespaces({});
    session.add_capabilities({"CAP_SYS_ADMIN"}); // for `mount -t tmpfs` inside
    const std::string source = session.id() + "-tmpfs";
    const std::string host_path = session.bundle() + "/config.json";
    // Guarded: never mount anything in the host's mount namespace.
    session.set_script(
        ns_line("mnt") + "[ \"$(readlink /proc/self/ns/mnt)\" != " + shell_quote(host_ns("mnt")) +
        " ] || exit 3; " + "mount -t tmpfs " + source + " /tmp && echo \"@mounted $(grep " +
        source + " /proc/self/mounts)\"; " +
        "echo \"@root $(awk '$5 == \"/\" {print $4}' /proc/self/mountinfo)\"; " +
        "echo \"@mounts $(wc -l < /proc/self/mountinfo)\"; " + "[ -e " + shell_quote(host_path) +
        " ] && echo '@hostpath reachable' || echo '@hostpath unreachable'; " + pause());
    MR_TRY(session.start("@ready"));
    size_t host_count = 0;
    bool on_host = false;
    for (const auto& line : lines_of(read_text("/proc/self/mountinfo"))) {
        ++host_count;
        on_host = on_host || line.find(source) != std::string::npos;
    }
    MR_TRY(pause_while_running(c, session));
    MR_TRY(session.resume());
    MR_TRY(session.finish());

    c.out.ns_compare("mnt", session.value("ns"), host_ns("mnt"));
    c.out.inside(cat("mount -t tmpfs ", source, " /tmp"), session.value("mounted"));
    c.out.host(cat("grep ", source, " /proc/self/mountinfo"), on_host ? "found" : "nothing");
    c.out.inside("/ is the bind mount of", session.value("root"));
    c.out.inside(cat("[ -e ", host_path, " ]"), session.value("hostpath"));
    c.out.inside("mounts in /proc/self/mountinfo", session.value("mounts"));
    c.out.host("mounts in /proc/self/mountinfo", std::to_string(host_count));
    Check check(c.out);
    check(session.value("ns") != host_ns("mnt"), "the container has a mount namespace of its own");
    check(!session.value("mounted").empty() && !on_host,
          "the tmpfs mounted inside is not in the host's mount table");
    check(session.value("root").ends_with("/rootfs"), "after pivot_root, / is the rootfs");
    check(session.value("hostpath") == "unreachable",
          "the old root is gone: a host path does not resolve inside");
    return check.ok();
}

// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------

Result<bool> demo_user(Context& c) {
    intro(c, "user: user and group ids",
          "A user namespace maps ids: here container uid 0 is host uid 100000 (65536 ids\n"
          "from there). Root inside has every capability over what the namespace owns, and\n"
          "none over the host's: a file of the host's root stays out of its reach. (The\n"
          "container gets a pid namespace too: only its owner may mount a /proc.)",
          "CLONE_NEWUSER", "clone3(CLONE_NEWUSER); the parent writes /proc/PID/uid_map and gid_map",
          "runtime/user.cpp (flags: runtime/plan.cpp, clone: runtime/child.cpp)");
    Session session(c, "user");
    MR_TRY(session.open());
    const std::string host_file = session.dir() + "/host-file";
    const std::string content = "written by the host's root\n";
    std::ofstream(host_file) << content;
    ::chmod(host_file.c_str(), 0644);

    session.set_namespaces({"user", "pid"});
    const nlohmann::json mapping = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    session.config["linux"]["uidMappings"] = mapping;
    session.config["linux"]["gidMappings"] = mapping;
    // The host's file is bound onto a file in a fresh tmpfs, not into the shared rootfs.
    session.config["mounts"].push_back({{"destination", "/tmp"},
                                        {"type", "tmpfs"},
                                        {"source", "tmpfs"},
                                        {"options", {"nosuid", "nodev", "mode=1777"}}});
    session.config["mounts"].push_back({{"destination", "/tmp/host-file"},
                                        {"type", "bind"},
                                        {"source", host_file},
                                        {"options", {"bind"}}});
    session.set_script(ns_line("user") + "echo \"@id $(id)\"; " +
                       "echo @uid_map $(cat /proc/self/uid_map); " +
                       "echo \"@owner $(stat -c %u:%g /tmp/host-file)\"; " +
                       "{ echo changed >> /tmp/host-file; } 2>/dev/null && echo '@write allowed' "
                       "|| echo '@write denied'; " +
                       pause());
    MR_TRY(session.start("@ready"));
    MR_ASSIGN(pid_t init, session.init_pid());
    const std::string uid = status_field(init, "Uid");
    const std::string uid_map = join(words_of(read_text(cat("/proc/", init, "/uid_map"))), " ");
    MR_TRY(pause_while_running(c, session));
    MR_TRY(session.resume());
    MR_TRY(session.finish());

    c.out.ns_compare("user", session.value("ns"), host_ns("user"));
    c.out.inside("id", session.value("id"));
    c.out.inside("cat /proc/self/uid_map (inside-id host-id count)", session.value("uid_map"));
    c.out.host(cat("/proc/", init, "/status Uid (real, effective, saved, fs)"), uid);
    c.out.host(cat("cat /proc/", init, "/uid_map"), uid_map);
    c.out.inside("stat -c %u:%g on the host root's file", session.value("owner"));
    c.out.inside("echo changed >> that file", session.value("write"));
    Check check(c.out);
    check(session.value("ns") != host_ns("user"), "the container has a user namespace of its own");
    check(session.value("id").starts_with("uid=0(root) gid=0(root)"), "inside, id says root");
    check(uid == "100000 100000 100000 100000", "the host sees uid 100000");
    check(session.value("uid_map") == "0 100000 65536", "uid_map maps 0 to 100000, 65536 ids");
    check(session.value("owner") == "65534:65534",
          "the host's root is unmapped inside: its file belongs to nobody (65534)");
    check(session.value("write") == "denied" && read_text(host_file) == content,
          "root inside cannot write the host root's file");
    return check.ok();
}

// ---------------------------------------------------------------------------------------

Result<bool> demo_cgroup(Context& c) {
    intro(c, "cgroup: the view of the cgroup tree",
          "A cgroup namespace makes the cgroup the process is in look like the root, so a\n"
          "container cannot learn (or depend on) where the host put it. /proc/self/cgroup\n"
          "says \"/\" inside; the host reads the real path for the same process.",
          "CLONE_NEWCGROUP", "clone3(CLONE_NEWCGROUP); the cgroup mount shows only the subtree",
          "runtime/mount_cgroup.cpp (flags: runtime/plan.cpp, clone: runtime/child.cpp)");
    Session session(c, "cgroup");
    MR_TRY(session.open());
    session.set_namespaces({"cgroup"});
    session.set_script(ns_line("cgroup") + "echo @cgroup; cat /proc/self/cgroup; echo @end; " +
                       pause());
    MR_TRY(session.start("@ready"));
    MR_ASSIGN(pid_t init, session.init_pid());
    auto host_view = lines_of(read_text(cat("/proc/", init, "/cgroup")));
    MR_TRY(pause_while_running(c, session));
    MR_TRY(session.resume());
    MR_TRY(session.finish());

    auto inside_view = session.block("cgroup");
    c.out.ns_compare("cgroup", session.value("ns"), host_ns("cgroup"));
    c.out.inside("cat /proc/self/cgroup", "");
    for (const auto& line : inside_view) {
        c.out.note(cat("          ", line));
    }
    c.out.host(cat("cat /proc/", init, "/cgroup"), "");
    for (const auto& line : host_view) {
        c.out.note(cat("          ", line));
    }
    bool all_root = !inside_view.empty() &&
                    std::all_of(inside_view.begin(), inside_view.end(),
                                [](const std::string& line) { return line.ends_with(":/"); });
    Check check(c.out);
    check(session.value("ns") != host_ns("cgroup"),
          "the container has a cgroup namespace of its own");
    check(all_root, "inside, every hierarchy shows \"/\"");
    check(host_view.size() == inside_view.size(), "the host sees the same hierarchies");
    if (std::all_of(host_view.begin(), host_view.end(),
                    [](const std::string& line) { return line.ends_with(":/"); })) {
        c.out.note(
            "(mini-run itself runs in the root cgroup here: the host's paths are \"/\" too)");
    }
    return check.ok();
}

// ---------------------------------------------------------------------------------------

constexpr long kTimeOffset = 10L * 24 * 3600; // ten days

double first_number(std::string_view text) {
    try {
        return std::stod(std::string(text));
    } catch (const std::exception&) {
        return -1;
    }
}

Result<bool> demo_time(Context& c) {
    intro(c, "time: the monotonic and boot clocks",
          "A time namespace offsets CLOCK_MONOTONIC and CLOCK_BOOTTIME (not the wall clock),\n"
          "so a container moved to another machine can keep its clocks. The offsets\n"
          "(config.json's linux.timeOffsets, here ten days) are written before anyone is\n"
          "inside. /proc/uptime follows CLOCK_BOOTTIME.",
          "CLONE_NEWTIME",
          "unshare(CLONE_NEWTIME), write /proc/self/timens_offsets, setns(time_for_children)",
          "runtime/time.cpp");
    if (::access("/proc/self/ns/time", F_OK) != 0) {
        c.out.note("this kernel has no time namespaces (Linux 5.6 or later): skipped");
        return true;
    }
    Session session(c, "time");
    MR_TRY(session.open());
    session.set_namespaces({"time"});
    const nlohmann::json offset = {{"secs", kTimeOffset}, {"nanosecs", 0}};
    session.config["linux"]["timeOffsets"] = {{"monotonic", offset}, {"boottime", offset}};
    session.set_script(ns_line("time") +
                       "echo @offsets; cat /proc/self/timens_offsets; echo @end; "
                       "echo \"@uptime $(cut -d' ' -f1 /proc/uptime)\"; " +
                       pause());
    MR_TRY(session.start("@ready"));
    const std::string host_uptime = words_of(read_text("/proc/uptime")).at(0);
    MR_TRY(pause_while_running(c, session));
    MR_TRY(session.resume());
    MR_TRY(session.finish());

    c.out.ns_compare("time", session.value("ns"), host_ns("time"));
    auto offsets = [](const std::vector<std::string>& lines) {
        std::vector<std::string> out;
        out.reserve(lines.size());
        for (const auto& line : lines) {
            out.push_back(join(words_of(line), " "));
        }
        return join(out, "; ");
    };
    c.out.inside("cat /proc/self/timens_offsets", offsets(session.block("offsets")));
    c.out.host("cat /proc/self/timens_offsets",
               offsets(lines_of(read_text("/proc/self/timens_offsets"))));
    c.out.inside("uptime in seconds (/proc/uptime)", session.value("uptime"));
    c.out.host("uptime in seconds (/proc/uptime)", host_uptime);
    const double difference = first_number(session.value("uptime")) - first_number(host_uptime);
    Check check(c.out);
    check(session.value("ns") != host_ns("time"), "the container has a time namespace of its own");
    bool monotonic = false;
    for (const auto& line : session.block("offsets")) {
        auto words = words_of(line);
        monotonic =
            monotonic || (words.size() == 3 && (words[0] == "monotonic" || words[0] == "1") &&
                          words[1] == std::to_string(kTimeOffset));
    }
    check(monotonic, cat("inside, CLOCK_MONOTONIC is ", kTimeOffset, " s ahead"));
    check(std::fabs(difference - static_cast<double>(kTimeOffset)) < 60,
          cat("the uptime inside is ten days ahead of the host's (", difference, " s)"));
    return check.ok();
}

// ---------------------------------------------------------------------------------------

Result<bool> demo_overview(Context& c) {
    intro(c, "all: every namespace at once",
          "One container with all eight namespaces: each /proc/self/ns link (a namespace's\n"
          "identity, the inode of an nsfs file) differs from the host's. Each demo after\n"
          "this one shows what one of them isolates.",
          "every CLONE_NEW* flag (CLONE_NEWTIME by unshare: see time)", "clone3(2), unshare(2)",
          "runtime/plan.cpp, runtime/child.cpp, runtime/init.cpp");
    const std::vector<std::string> names = {"cgroup", "ipc",  "mnt",  "net",
                                            "pid",    "time", "user", "uts"};
    Session session(c, "all");
    MR_TRY(session.open());
    session.set_namespaces({"pid", "network", "ipc", "uts", "user", "cgroup", "time"});
    const nlohmann::json mapping = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    session.config["linux"]["uidMappings"] = mapping;
    session.config["linux"]["gidMappings"] = mapping;
    session.config["linux"]["timeOffsets"] = {{"monotonic", {{"secs", kTimeOffset}}}};
    std::string script;
    for (const auto& name : names) {
        script += cat("echo \"@", name, " $(readlink /proc/self/ns/", name, ")\"; ");
    }
    session.set_script(script);
    MR_TRY(session.start());
    MR_TRY(session.finish());
    Check check(c.out);
    bool all_differ = true;
    for (const auto& name : names) {
        c.out.ns_compare(name, session.value(name), host_ns(name));
        all_differ =
            all_differ && !session.value(name).empty() && session.value(name) != host_ns(name);
    }
    check(all_differ, "every namespace differs from the host's");
    return check.ok();
}

// ---------------------------------------------------------------------------------------

struct Entry {
    const char* name;
    const char* summary;
    Result<bool> (*run)(Context&);
};

constexpr std::array<Entry, 8> kDemos = {{
    {"uts", "hostname: the container renames itself, the host keeps its name", demo_uts},
    {"ipc", "System V message queues: made on one side, invisible on the other", demo_ipc},
    {"pid", "process ids: the shell is pid 1 inside, another pid on the host", demo_pid},
    {"mount", "mounts and pivot_root: a tmpfs inside is not on the host", demo_mount},
    {"net", "only lo inside; a veth pair to the host, a ping across, removed", demo_net},
    {"user", "uid 0 inside is uid 100000 outside, and cannot touch the host's files", demo_user},
    {"cgroup", "/proc/self/cgroup says / inside, the real path outside", demo_cgroup},
    {"time", "a monotonic clock ten days ahead inside, unchanged outside", demo_time},
}};

void list_demos() {
    std::cout << "mini-run demo NAME: one namespace at a time, in a real container (root)\n\n";
    for (const Entry& entry : kDemos) {
        std::string name = entry.name;
        name.resize(8, ' ');
        std::cout << "  " << name << entry.summary << "\n";
    }
    std::cout << "  all     every namespace in one container, then each demo in turn\n\n"
              << "Each shows /proc/self/ns/NAME inside and outside, the clone flag, the file\n"
              << "of runtime/ that implements it, and removes what it made. The walkthrough:\n"
              << "docs/namespaces.md. Every step of a run: mini-run run --explain ID.\n"
              << "With --step, each demo pauses while its container runs.\n";
}

// The chosen demos in turn ("all": the overview first); whether every fact held.
Result<bool> run_chosen(Context& context, const std::string& name,
                        const std::vector<const Entry*>& chosen) {
    MR_TRY(prepare_context(context));
    bool ok = true;
    if (name == "all") {
        MR_ASSIGN(ok, demo_overview(context));
    }
    for (const Entry* entry : chosen) {
        MR_ASSIGN(bool passed, entry->run(context));
        ok = passed && ok;
    }
    return ok;
}

int run_demo(const std::string& name, bool step) {
    if (name.empty()) {
        list_demos();
        return 0;
    }
    std::vector<const Entry*> chosen;
    for (const Entry& entry : kDemos) {
        if (name == "all" || name == entry.name) {
            chosen.push_back(&entry);
        }
    }
    if (chosen.empty()) {
        return fail(cat("unknown demo ", quoted(name), " (mini-run demo lists them)"));
    }
    if (::geteuid() != 0) {
        return fail("the demos need root: they make namespaces, mounts and network devices");
    }
    Signals signals;
    if (auto opened = signals.open(); !opened) {
        return fail(opened.error().message());
    }
    Context context;
    context.signals = &signals;
    context.step = step;
    Result<bool> ok = run_chosen(context, name, chosen);
    if (!ok && is_interrupted(ok.error())) {
        context.out.note("interrupted: everything the demo made has been removed");
        return 130;
    }
    std::cout << std::flush;
    if (!ok) {
        return fail(cat("demo ", name, ": ", ok.error().message()));
    }
    return *ok ? 0 : 1;
}

} // namespace
} // namespace demo

CommandRunner add_demo_command(CLI::App& app, GlobalOptions& /*global*/) {
    auto name = std::make_shared<std::string>();
    auto step = std::make_shared<bool>(false);
    CLI::App* command = app.add_subcommand(
        "demo", "show one namespace at a time in a real container (without NAME: the list)");
    command->add_option("name", *name, "uts, ipc, pid, mount, net, user, cgroup, time or all");
    command->add_flag("--step", *step,
                      "pause while each container runs, to look at it from another terminal");
    return [name, step]() {
        return demo::run_demo(*name, *step);
    };
}

} // namespace minirun::cli
