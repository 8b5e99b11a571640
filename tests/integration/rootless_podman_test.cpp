// Rootless podman's setting, without podman: mini-run runs as root of a user namespace that
// maps part of the id range (podman's pause process holds one, made with newuidmap), and
// the container gets no user namespace of its own. Every call (run, exec, delete) enters
// that same user namespace, as each of podman's calls does.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <string>

using namespace it;

TEST_CASE("rootless podman's way: root of a user namespace, a container without its own",
          "[rootless]") {
    // The user namespace, kept by a sleeping process; the host's root writes its maps
    // (like newuidmap, setgroups stays allowed): ids 0-65535 onto themselves, not the
    // whole range, so mini-run knows it is rootless (/proc/self/uid_map).
    Child holder({"/usr/bin/unshare", "--user", "--", "/bin/sleep", "1000"});
    const std::string host_userns = ns_link(0, "user");
    REQUIRE(wait_until([&] {
        std::string link = ns_link(holder.pid(), "user");
        return !link.empty() && link != host_userns;
    }));
    const std::string proc = "/proc/" + std::to_string(holder.pid());
    write_text(proc + "/uid_map", "0 0 65536\n");
    write_text(proc + "/gid_map", "0 0 65536\n");

    TempDir bin;
    const std::string wrapper = bin.path() + "/mini-run";
    write_text(wrapper, "#!/bin/sh\nexec /usr/bin/nsenter -t " + std::to_string(holder.pid()) +
                            " -U -- " + minirun_binary() + " --cgroup-manager disabled \"$@\"\n");
    REQUIRE(::chmod(wrapper.c_str(), 0755) == 0);

    Runtime runtime;
    runtime.use_binary(wrapper);
    TempBundle bundle("rlpodman");
    bundle.remove_namespaces({"user"});
    bundle.set_shell("while true; do sleep 0.1; done");
    // Devices: mknod is refused in a user namespace; the host's nodes are bound instead.
    auto ran = runtime.run_detached(bundle);
    INFO("run -d: " << ran.describe() << ran.err_now());
    REQUIRE(ran.exit_code == 0);
    auto init = runtime.pid_from_file(bundle.id());
    REQUIRE(init.has_value());
    REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
    CHECK(ns_link(*init, "user") == ns_link(holder.pid(), "user"));

    // exec joins the container's pid namespace; the way back to the host's is closed to a
    // root of a user namespace.
    auto exec = runtime({"exec", bundle.id(), "sh", "-c",
                         "echo in-exec; id -u; test -c /dev/null && echo null-is-a-device"});
    INFO("exec: " << exec.describe());
    CHECK(exec.exit_code == 0);
    CHECK(exec.out == "in-exec\n0\nnull-is-a-device\n");

    auto deleted = runtime({"delete", "--force", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    CHECK(wait_for_exit(*init));
    CHECK(runtime.root_entries().empty());
    check_no_leftovers(bundle);
}
