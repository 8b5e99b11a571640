// `mini-run demo mount`: a tmpfs mounted inside is not in the host's mount table, and
// after pivot_root the host's paths are gone. The mounts are made in runtime/mount*.cpp.
#include "demo.hpp"

#include <string>

namespace minirun::cli::demo {

Result<bool> demo_mount(Context& c) {
    intro(c, "mount: the mount table and the root",
          "A mount namespace has its own mount table: what the container mounts stays\n"
          "inside. mini-run binds the rootfs onto itself, mounts config.json's mounts into\n"
          "it, then pivot_root(2) makes it / and the old root (the host's) is detached.",
          "CLONE_NEWNS",
          R"(clone3(CLONE_NEWNS), mount(2), pivot_root(".", "."), umount2(MNT_DETACH))",
          "runtime/mount/mount.cpp, runtime/mount/mount_entries.cpp (run with --explain to see "
          "each)");
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
    // mountinfo's root: the rootfs's path within its file system, the end of its host path.
    const std::string root = session.value("root");
    check(!root.empty() && c.rootfs.ends_with(root), "after pivot_root, / is the rootfs");
    check(session.value("hostpath") == "unreachable",
          "the old root is gone: a host path does not resolve inside");
    return check.ok();
}

} // namespace minirun::cli::demo
