// `mini-run demo ipc`: a System V message queue made on one side is invisible on the other.
// The namespace is made in runtime/ns/ipc.cpp.
#include "demo.hpp"

#include <sched.h>
#include <sys/msg.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace minirun::cli::demo {
namespace {

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
    MR_ASSIGN(bool made, in_namespace_of(pid, "ipc", CLONE_NEWIPC,
                                         [key] { return ::msgget(key, IPC_CREAT | 0600) >= 0; }));
    if (!made) {
        return Error("could not make a message queue in the container's ipc namespace");
    }
    return {};
}

} // namespace

Result<bool> demo_ipc(Context& c) {
    intro(c, "ipc: System V message queues, semaphores, shared memory",
          "An IPC namespace has its own System V IPC objects and POSIX message queues. A\n"
          "queue made on one side is invisible on the other. /proc/sysvipc/msg is what\n"
          "`ipcs -q` reads; it lists the queues of the reader's ipc namespace.",
          "CLONE_NEWIPC", "clone3(CLONE_NEWIPC); setns(2) to make a queue inside from here",
          "runtime/ns/ipc.cpp (flags: runtime/plan.cpp, clone: runtime/process/child.cpp)");
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

} // namespace minirun::cli::demo
