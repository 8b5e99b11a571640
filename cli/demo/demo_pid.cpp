// `mini-run demo pid`: the shell is pid 1 inside and has another pid on the host. The
// namespace is made in runtime/ns/pid.cpp.
#include "demo.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>

namespace minirun::cli::demo {

Result<bool> demo_pid(Context& c) {
    intro(c, "pid: process ids",
          "A PID namespace numbers processes afresh: the container's first process is pid 1,\n"
          "its init, and it sees only the processes of its namespace. The host sees the same\n"
          "process under another pid; /proc/PID/status's NSpid lists both.",
          "CLONE_NEWPID", "clone3(CLONE_NEWPID); the child is pid 1 of the new namespace",
          "runtime/ns/pid.cpp (flags: runtime/plan.cpp, clone: runtime/process/child.cpp)");
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

} // namespace minirun::cli::demo
