// `mini-run demo user`: uid 0 inside is uid 100000 outside, and cannot write the host
// root's file. The mappings are written in runtime/ns/user.cpp.
#include "demo.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace minirun::cli::demo {

namespace {

// Rootless (run by an unprivileged user): the only id such a user may map without
// newuidmap is its own, so container uid 0 is the user's uid outside, and the file of the
// host's root it tries to write is /etc/passwd, bound read-write: the kernel says no all
// the same.
struct Variant {
    bool rootless = false;
    uint32_t host_uid = 100000;
    uint32_t host_gid = 100000;
    uint32_t count = 65536;
};

Variant variant() {
    Variant v;
    if (::geteuid() != 0) {
        v = {true, ::geteuid(), ::getegid(), 1};
    }
    return v;
}

} // namespace

Result<bool> demo_user(Context& c) {
    const Variant v = variant();
    intro(c, "user: user and group ids",
          v.rootless
              ? cat("A user namespace maps ids. Run without root (rootless), mini-run may map\n"
                    "only your own uid: container uid 0 is host uid ",
                    v.host_uid,
                    ", you. Root inside has every\n"
                    "capability over what the namespace owns, and none over the host's: the\n"
                    "host root's /etc/passwd stays out of its reach. (docs/rootless.md)")
              : std::string(
                    "A user namespace maps ids: here container uid 0 is host uid 100000 (65536 "
                    "ids\nfrom there). Root inside has every capability over what the namespace "
                    "owns, and\nnone over the host's: a file of the host's root stays out of its "
                    "reach. (The\ncontainer gets a pid namespace too: only its owner may mount a "
                    "/proc.)"),
          "CLONE_NEWUSER", "clone3(CLONE_NEWUSER); the parent writes /proc/PID/uid_map and gid_map",
          "runtime/ns/user.cpp (flags: runtime/plan.cpp, clone: runtime/process/child.cpp)");
    Session session(c, "user");
    MR_TRY(session.open());
    std::string host_file = session.dir() + "/host-file";
    const std::string content = "written by the host's root\n";
    if (v.rootless) {
        host_file = "/etc/passwd";
    } else {
        std::ofstream(host_file) << content;
        ::chmod(host_file.c_str(), 0644);
    }
    const std::string before = read_text(host_file);

    session.set_namespaces({"user", "pid"});
    const nlohmann::json uids = {{{"containerID", 0}, {"hostID", v.host_uid}, {"size", v.count}}};
    const nlohmann::json gids = {{{"containerID", 0}, {"hostID", v.host_gid}, {"size", v.count}}};
    session.config["linux"]["uidMappings"] = uids;
    session.config["linux"]["gidMappings"] = gids;
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
    c.out.inside(cat("stat -c %u:%g on the host root's ", v.rootless ? "/etc/passwd" : "file"),
                 session.value("owner"));
    c.out.inside("echo changed >> that file", session.value("write"));
    Check check(c.out);
    const std::string host_uid = cat(v.host_uid);
    check(session.value("ns") != host_ns("user"), "the container has a user namespace of its own");
    check(session.value("id").starts_with("uid=0(root) gid=0(root)"), "inside, id says root");
    check(uid == cat(host_uid, " ", host_uid, " ", host_uid, " ", host_uid),
          cat("the host sees uid ", host_uid, v.rootless ? " (you)" : ""));
    check(session.value("uid_map") == cat("0 ", host_uid, " ", v.count),
          cat("uid_map maps 0 to ", host_uid, ", ", v.count, v.count == 1 ? " id" : " ids"));
    check(session.value("owner") == "65534:65534",
          "the host's root is unmapped inside: its file belongs to nobody (65534)");
    check(session.value("write") == "denied" && read_text(host_file) == before,
          "root inside cannot write the host root's file");
    return check.ok();
}

} // namespace minirun::cli::demo
