// Each namespace, checked from inside the container (what it prints) and from outside
// (the host's /proc while it runs).
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>

using namespace it;

namespace {

std::string host_hostname() {
    std::array<char, 256> name{};
    gethostname(name.data(), name.size() - 1);
    return name.data();
}

// Prints "<ns> <link>" for each namespace in /proc/self/ns, from inside the container.
std::string print_namespaces_script() {
    std::string script = "for n in";
    for (const auto& name : namespace_names()) {
        script += " " + name;
    }
    script += "; do echo \"$n $(readlink /proc/self/ns/$n)\"; done";
    return script;
}

// Runs the bundle printing its namespaces; returns namespace name -> link.
std::map<std::string, std::string> container_namespaces(TempBundle& bundle) {
    bundle.set_shell(print_namespaces_script());
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    std::map<std::string, std::string> links;
    for (const auto& name : namespace_names()) {
        links[name] = value_of(result.out, name);
    }
    return links;
}

// For each namespace: different from the host's when `fresh` lists it, equal otherwise.
void check_namespaces(const std::map<std::string, std::string>& inside,
                      const std::set<std::string>& fresh) {
    for (const auto& [name, link] : inside) {
        const std::string host = ns_link(0, name);
        INFO("namespace " << name << ": container " << link << ", host " << host);
        CHECK(link.rfind(name + ":[", 0) == 0);
        if (fresh.count(name) != 0) {
            CHECK(link != host);
        } else {
            CHECK(link == host);
        }
    }
}

} // namespace

TEST_CASE("uts: the container has the config's hostname and the host keeps its own",
          "[namespaces][uts]") {
    const std::string host_before = host_hostname();

    SECTION("the example config's hostname") {
        TempBundle bundle("uts");
        bundle.set_shell("hostname; uname -n");
        auto result = bundle.run();
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(result.out == "mini-run\nmini-run\n");
        check_no_leftovers(bundle);
    }
    SECTION("a test-specific hostname") {
        TempBundle bundle("uts-name");
        const std::string name = "it-host-" + std::to_string(getpid());
        bundle.config["hostname"] = name;
        bundle.set_shell("hostname");
        auto result = bundle.run();
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(result.out == name + "\n");
        CHECK(name != host_before);
        check_no_leftovers(bundle);
    }
    SECTION("setting the hostname inside does not touch the host's") {
        TempBundle bundle("uts-set");
        bundle.add_capabilities({"CAP_SYS_ADMIN"});
        // Guarded: should the container share the host's uts namespace (a bug), the test
        // must not rename the host.
        bundle.set_shell("[ \"$(readlink /proc/self/ns/uts)\" != '" + ns_link(0, "uts") +
                         "' ] || { echo 'host uts namespace' >&2; exit 1; }; "
                         "hostname changed-inside && hostname");
        auto result = bundle.run();
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        CHECK(result.out == "changed-inside\n");
        check_no_leftovers(bundle);
    }
    CHECK(host_hostname() == host_before);
}

TEST_CASE("namespaces: /proc/self/ns differs from the host's exactly for the namespaces asked for",
          "[namespaces]") {
    SECTION("the example config: pid, network, ipc, uts, mount") {
        TempBundle bundle("ns-default");
        auto inside = container_namespaces(bundle);
        check_namespaces(inside, {"pid", "net", "ipc", "uts", "mnt"});
        check_no_leftovers(bundle);
    }
    SECTION("only pid and mount: network, ipc and uts are the host's") {
        TempBundle bundle("ns-few");
        bundle.remove_namespaces({"network", "ipc", "uts"});
        bundle.config.erase("hostname"); // a hostname needs a uts namespace
        auto inside = container_namespaces(bundle);
        check_namespaces(inside, {"pid", "mnt"});
        check_no_leftovers(bundle);
    }
    SECTION("a cgroup namespace on top") {
        TempBundle bundle("ns-cgroup");
        bundle.add_namespace("cgroup");
        auto inside = container_namespaces(bundle);
        check_namespaces(inside, {"pid", "net", "ipc", "uts", "mnt", "cgroup"});
        check_no_leftovers(bundle);
    }
}

TEST_CASE("pid: the container's shell is pid 1 and sees only the container's processes",
          "[namespaces][pid]") {
    TempBundle bundle("pid-inside");
    // Not the script's last command: the shell would exec it instead of forking.
    bundle.set_shell("echo pid $$; ps -o pid,comm; true");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(value_of(result.out, "pid") == "1");

    // ps: a header, then "PID COMMAND" lines: the shell as pid 1 and ps itself (maybe a
    // forked shell too). The host has dozens of processes, this test's pid among them.
    auto lines = split_lines(result.out);
    auto header = std::find_if(lines.begin(), lines.end(),
                               [](const std::string& line) { return contains(line, "PID"); });
    REQUIRE(header != lines.end());
    std::vector<std::pair<long, std::string>> processes;
    for (auto line = header + 1; line != lines.end(); ++line) {
        auto words = split_words(*line);
        REQUIRE(words.size() >= 2);
        processes.emplace_back(std::stol(words[0]), words[1]);
    }
    CHECK(processes.size() >= 2);
    CHECK(processes.size() <= 4);
    REQUIRE_FALSE(processes.empty());
    CHECK(processes.front().first == 1);
    CHECK(processes.front().second == "sh");
    for (const auto& [pid, command] : processes) {
        CHECK(pid != getpid());
    }
    check_no_leftovers(bundle);
}

TEST_CASE("pid: from the host, the container's init has a host pid in another pid namespace",
          "[namespaces][pid]") {
    TempBundle bundle("pid-outside");
    bundle.set_shell("echo ready; read line; echo got $line");
    Child minirun = bundle.start();
    REQUIRE(minirun.wait_for_output("ready\n"));

    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    INFO("mini-run pid " << minirun.pid() << ", container init host pid " << *init);
    CHECK(*init != 1);
    CHECK(*init != minirun.pid());
    auto nspids = ns_pids(*init);
    REQUIRE(nspids.size() == 2);
    CHECK(nspids.front() == *init);
    CHECK(nspids.back() == 1);
    CHECK(ns_link(*init, "pid") != ns_link(0, "pid"));
    // It is the container's shell, carrying the bundle's marker as $0.
    auto cmdline = read_file("/proc/" + std::to_string(*init) + "/cmdline").value_or("");
    CHECK(contains(cmdline, bundle.id()));

    minirun.write_stdin("bye\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "got bye"));
    check_no_leftovers(bundle);
}

TEST_CASE("mount: a tmpfs mounted inside the container stays inside", "[namespaces][mount]") {
    TempBundle bundle("mount");
    bundle.add_capabilities({"CAP_SYS_ADMIN"});
    // The source name is unique, so the mount is easy to recognize in any mount table.
    const std::string source = bundle.id() + "-tmpfs";
    // Guarded: never mount anything in the host's mount namespace.
    bundle.set_shell("[ \"$(readlink /proc/self/ns/mnt)\" != '" + ns_link(0, "mnt") +
                     "' ] || { echo 'host mount namespace' >&2; exit 1; }; "
                     "mount -t tmpfs " +
                     source + " /tmp && grep " + source +
                     " /proc/self/mounts && echo ready; read line");
    Child minirun = bundle.start();
    bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    CHECK(contains(minirun.out(), source + " /tmp tmpfs"));

    auto on_host = [&] {
        std::vector<std::string> found;
        for (const auto& mount : host_mounts()) {
            if (mount.source == source || contains(mount.line, source)) {
                found.push_back(mount.line);
            }
        }
        return found;
    };
    CHECK(on_host().empty()); // while the container runs

    // The container's mount namespace is another one, seen from the host too.
    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    CHECK(ns_link(*init, "mnt") != ns_link(0, "mnt"));
    auto container_mounts = read_file("/proc/" + std::to_string(*init) + "/mountinfo");
    REQUIRE(container_mounts.has_value());
    CHECK(contains(*container_mounts, source));

    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(on_host().empty()); // and after
    check_no_leftovers(bundle);
}

TEST_CASE("network: a new network namespace has only lo", "[namespaces][network]") {
    TempBundle bundle("net");
    bundle.set_shell("echo links $(ls /sys/class/net); echo devices $(tail -n +3 /proc/net/dev | "
                     "cut -d: -f1); ip -o link show | cut -d: -f2 | tr -d ' '");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(value_of(result.out, "links") == "lo");
    CHECK(value_of(result.out, "devices") == "lo");
    auto lines = split_lines(result.out);
    REQUIRE(lines.size() == 3);
    CHECK(lines[2] == "lo");
    check_no_leftovers(bundle);
}

TEST_CASE("network: lo is up in a new network namespace", "[namespaces][network]") {
    TempBundle bundle("net-lo");
    bundle.set_shell(
        "echo flags $(cat /sys/class/net/lo/flags); ping -c 1 -W 2 127.0.0.1 >/dev/null "
        "&& echo ping ok || echo ping failed");
    bundle.add_capabilities({"CAP_NET_RAW"});
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    const std::string flags = value_of(result.out, "flags");
    REQUIRE(flags.rfind("0x", 0) == 0);
    const unsigned long value = std::stoul(flags, nullptr, 16);
    CHECK((value & 0x1UL) != 0); // IFF_UP
    CHECK(value_of(result.out, "ping") == "ok");
    check_no_leftovers(bundle);
}

TEST_CASE("network: without a network namespace the container sees the host's interfaces",
          "[namespaces][network]") {
    TempBundle bundle("net-host");
    bundle.remove_namespaces({"network"});
    bundle.set_shell("ls /sys/class/net");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    auto host = run({"/bin/ls", "/sys/class/net"});
    REQUIRE(host.exit_code == 0);
    CHECK(split_words(result.out) == split_words(host.out));
    check_no_leftovers(bundle);
}

TEST_CASE("user: root inside is uid 100000 outside", "[namespaces][user]") {
    TempBundle bundle("user");
    bundle.copy_rootfs(std::make_pair(100000U, 100000U));
    bundle.add_user_namespace();
    bundle.set_shell("id; echo user $(readlink /proc/self/ns/user); echo ready; read line");

    Child minirun = bundle.start();
    bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    CHECK(contains(minirun.out(), "uid=0(root) gid=0(root)"));
    CHECK(value_of(minirun.out(), "user") != ns_link(0, "user"));

    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    const std::vector<std::string> mapped(4, "100000");
    CHECK(status_field(*init, "Uid") == mapped);
    CHECK(status_field(*init, "Gid") == mapped);
    CHECK(ns_link(*init, "user") != ns_link(0, "user"));
    const std::string proc = "/proc/" + std::to_string(*init);
    const std::vector<std::string> expected_map{"0", "100000", "65536"};
    CHECK(split_words(read_file(proc + "/uid_map").value_or("")) == expected_map);
    CHECK(split_words(read_file(proc + "/gid_map").value_or("")) == expected_map);

    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("root: the host's filesystem and the old root are out of reach", "[namespaces][root]") {
    TempDir canary_dir("minirun-it-canary");
    const std::string canary = canary_dir.path() + "/canary";
    std::ofstream(canary) << "host only\n";
    REQUIRE(read_file(canary).has_value());

    TempBundle bundle("root");
    const std::vector<std::string> host_only{canary, canary_dir.path(),
                                             source_dir() + "/CMakeLists.txt",
                                             example_rootfs() + "/bin/busybox"};
    std::string script = "cat /proc/self/mountinfo; echo ---;";
    for (const auto& path : host_only) {
        script += " [ -e '" + path + "' ] && echo 'reachable " + path + "';";
    }
    script += " [ \"$(ls -a /..)\" = \"$(ls -a /)\" ] && echo 'dotdot is root'; true";
    bundle.set_shell(script);
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);

    auto separator = result.out.find("---\n");
    REQUIRE(separator != std::string::npos);
    auto mounts = parse_mountinfo(result.out.substr(0, separator));
    const std::string rest = result.out.substr(separator + 4);
    CHECK_FALSE(contains(rest, "reachable"));
    CHECK(contains(rest, "dotdot is root"));

    REQUIRE_FALSE(mounts.empty());
    bool has_root = false;
    for (const auto& mount : mounts) {
        INFO("container mount: " << mount.line);
        has_root = has_root || mount.mount_point == "/";
        // Only the rootfs and what the config mounts: /proc, /dev, /sys and below.
        const bool expected =
            mount.mount_point == "/" || mount.mount_point.rfind("/proc", 0) == 0 ||
            mount.mount_point.rfind("/dev", 0) == 0 || mount.mount_point.rfind("/sys", 0) == 0;
        CHECK(expected);
        CHECK_FALSE(contains(mount.mount_point, canary_dir.path()));
        CHECK_FALSE(contains(mount.mount_point, source_dir()));
        CHECK_FALSE(contains(mount.mount_point, bundle.dir()));
    }
    CHECK(has_root);
    check_no_leftovers(bundle);
}
