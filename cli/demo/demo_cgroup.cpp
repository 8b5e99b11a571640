// `mini-run demo cgroup`: /proc/self/cgroup says / inside, the real path outside. The
// cgroup mount is made in runtime/mount/mount_cgroup.cpp.
#include "demo.hpp"

#include <algorithm>
#include <string>

namespace minirun::cli::demo {

Result<bool> demo_cgroup(Context& c) {
    intro(c, "cgroup: the view of the cgroup tree",
          "A cgroup namespace makes the cgroup the process is in look like the root, so a\n"
          "container cannot learn (or depend on) where the host put it. /proc/self/cgroup\n"
          "says \"/\" inside; the host reads the real path for the same process.",
          "CLONE_NEWCGROUP", "clone3(CLONE_NEWCGROUP); the cgroup mount shows only the subtree",
          "runtime/mount/mount_cgroup.cpp (flags: runtime/plan.cpp, clone: "
          "runtime/process/child.cpp)");
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

} // namespace minirun::cli::demo
