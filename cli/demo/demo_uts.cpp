// `mini-run demo uts`: the container renames itself, the host keeps its name. The
// namespace is made in runtime/ns/uts.cpp.
#include "demo.hpp"

#include <unistd.h>

#include <array>
#include <string>

namespace minirun::cli::demo {
namespace {

std::string host_hostname() {
    std::array<char, 256> name{};
    ::gethostname(name.data(), name.size() - 1);
    return name.data();
}

} // namespace

Result<bool> demo_uts(Context& c) {
    intro(c, "uts: the hostname",
          "A UTS namespace holds the hostname and NIS domain name. The container gets its\n"
          "own, so it can be renamed without the host noticing.",
          "CLONE_NEWUTS", "clone3(CLONE_NEWUTS), then sethostname(2) with config.json's hostname",
          "runtime/ns/uts.cpp (flags: runtime/plan.cpp, clone: runtime/process/child.cpp)");
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

} // namespace minirun::cli::demo
