// What the demo tests share: demo_checks.hpp.
#include "demo_checks.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace it::demo {
namespace {

struct NsLine {
    std::string inside;
    std::string host;
};

// "/proc/self/ns/uts  inside uts:[1]  host uts:[2]  (different)"
NsLine ns_line(const std::string& out, const std::string& name) {
    const std::regex pattern("/proc/self/ns/" + name + R"(  inside (\S+)  host (\S+)  \()");
    std::smatch match;
    if (std::regex_search(out, match, pattern)) {
        return {match[1], match[2]};
    }
    return {"<none>", "<none>"};
}

std::vector<std::string> demo_links() {
    std::vector<std::string> found;
    auto links = run({"/usr/sbin/ip", "-o", "link", "show"});
    for (const auto& line : split_lines(links.out)) {
        if (contains(line, ": mrd")) {
            found.push_back(line);
        }
    }
    return found;
}

std::vector<std::string> words(const std::string& text) {
    return split_words(text);
}

} // namespace

std::string host_hostname() {
    std::array<char, 256> name{};
    gethostname(name.data(), name.size() - 1);
    return name.data();
}

std::string fact(const std::string& out, const std::string& who, const std::string& what) {
    const std::string prefix = who + "  " + what + ": ";
    for (const auto& line : split_lines(out)) {
        auto at = line.find(prefix);
        if (at != std::string::npos) {
            return line.substr(at + prefix.size());
        }
    }
    return "<no line " + prefix + ">";
}

std::set<std::string> mount_lines() {
    std::set<std::string> lines;
    for (const auto& mount : host_mounts()) {
        lines.insert(mount.line);
    }
    return lines;
}

DemoRun::DemoRun()
    : prefix_{"/usr/bin/env", "TMPDIR=" + tmp_.path(), "MINIRUN_SOURCE_DIR=" + source_dir(),
              minirun_binary(), "demo"} {}

DemoRun::DemoRun(std::vector<std::string> prefix) : prefix_(std::move(prefix)) {}

std::vector<std::string> DemoRun::argv(const std::vector<std::string>& args) const {
    std::vector<std::string> out = prefix_;
    out.insert(out.end(), args.begin(), args.end());
    return out;
}

RunResult DemoRun::operator()(const std::string& name) const {
    return run(argv({name}), {}, std::chrono::seconds(180));
}

void DemoRun::check_clean(const std::set<std::string>& mounts_before) const {
    auto left = run({"/bin/ls", "-A", tmp_.path()});
    CHECK(left.out.empty());
    CHECK(processes_with_marker("mini-run-demo-").empty());
    CHECK(demo_links().empty());
    // Other tests may mount things meanwhile: only what names a demo counts.
    auto mounts_after = mount_lines();
    std::vector<std::string> added;
    std::set_difference(mounts_after.begin(), mounts_after.end(), mounts_before.begin(),
                        mounts_before.end(), std::back_inserter(added));
    std::erase_if(added, [&](const std::string& line) {
        return !contains(line, "mini-run-demo") && !contains(line, tmp_.path()) &&
               !contains(line, "rootfs-examples");
    });
    INFO("new mounts: " << added.size());
    for (const auto& line : added) {
        INFO(line);
    }
    CHECK(added.empty());
}

void check_ns(const std::string& out, const std::string& name, bool host_is_ours) {
    NsLine ns = ns_line(out, name);
    INFO("namespace " << name);
    if (host_is_ours) {
        CHECK(ns.host == ns_link(0, name));
    } else {
        CHECK(ns.host.rfind(name + ":[", 0) == 0);
    }
    CHECK(ns.inside.rfind(name + ":[", 0) == 0);
    CHECK(ns.inside != ns.host);
}

RunResult run_demo(const DemoRun& demos, const std::string& name, const std::string& ns) {
    const auto mounts_before = mount_lines();
    auto result = demos(name);
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK_FALSE(contains(result.out, "UNEXPECTED"));
    CHECK(contains(result.out, "flag      CLONE_NEW"));
    CHECK(contains(result.out, "code      runtime/"));
    check_ns(result.out, ns);
    demos.check_clean(mounts_before);
    return result;
}

void check_uts_facts(const std::string& out, const std::string& host_name) {
    CHECK(fact(out, "inside", "hostname, as mini-run set it from config.json") == "mini-run-demo");
    CHECK(fact(out, "inside", "after `hostname renamed-inside`") == "renamed-inside");
    CHECK(fact(out, "host  ", "gethostname() while the container ran") == host_name);
    CHECK(host_hostname() == host_name);
}

void check_ipc_facts(const std::string& out) {
    std::smatch match;
    REQUIRE(std::regex_search(out, match, std::regex(R"(msgget key (0x4d52[0-9a-f]+))")));
    const std::string host_key = match[1];
    REQUIRE(std::regex_search(out, match, std::regex(R"(msgget key (0x4d43[0-9a-f]+))")));
    const std::string inside_key = match[1];
    auto inside = words(fact(out, "inside", "queues (cat /proc/sysvipc/msg)"));
    auto host = words(fact(out, "host  ", "queues (cat /proc/sysvipc/msg)"));
    CHECK(std::count(inside.begin(), inside.end(), inside_key) == 1);
    CHECK(std::count(inside.begin(), inside.end(), host_key) == 0);
    CHECK(std::count(host.begin(), host.end(), host_key) == 1);
    CHECK(std::count(host.begin(), host.end(), inside_key) == 0);
    // Both queues are gone now: the host's removed by the demo, the container's with its
    // namespace.
    const std::string queues = read_file("/proc/sysvipc/msg").value_or("");
    for (const std::string& key : {host_key, inside_key}) {
        CHECK_FALSE(contains(queues, std::to_string(std::stoul(key, nullptr, 16))));
    }
}

void check_pid_facts(const std::string& out) {
    CHECK(fact(out, "inside", "echo $$") == "1");
    std::smatch match;
    REQUIRE(std::regex_search(out, match, std::regex(R"(/proc/(\d+)/status NSpid: (\d+) (\d+))")));
    CHECK(match[1] == match[2]);
    CHECK(match[2] != "1");
    CHECK(match[3] == "1");
    CHECK(std::stol(match[2]) != getpid());
    // ps inside (busybox's or procps's): a header, the shell as pid 1, and very few others.
    REQUIRE(std::regex_search(out, match, std::regex(R"(PID +COMMAND)")));
    auto rest = split_lines(out.substr(static_cast<size_t>(match.position(0))));
    REQUIRE(rest.size() >= 2);
    CHECK(words(rest[1]) == std::vector<std::string>{"1", "sh"});
}

void check_mount_facts(const std::string& out, const std::string& rootfs_end) {
    std::smatch match;
    REQUIRE(std::regex_search(out, match,
                              std::regex(R"(mount -t tmpfs (\S+) /tmp: (\S+) /tmp tmpfs)")));
    CHECK(match[1] == match[2]);
    const std::string source = match[1];
    CHECK(fact(out, "host  ", "grep " + source + " /proc/self/mountinfo") == "nothing");
    for (const auto& mount : host_mounts()) {
        CHECK_FALSE(contains(mount.line, source));
    }
    CHECK(fact(out, "inside", "/ is the bind mount of").ends_with(rootfs_end));
    CHECK(contains(out, "]: unreachable"));
}

void check_net_facts(const std::string& out) {
    CHECK(fact(out, "inside", "ls /sys/class/net, at the start") == "lo");
    std::smatch match;
    REQUIRE(std::regex_search(
        out, match, std::regex(R"(ip link add (mrd\d+h) type veth peer name (mrd\d+c))")));
    const std::string host_end = match[1];
    CHECK(fact(out, "inside", "with the veth end") == "lo " + std::string(match[2]));
    CHECK(fact(out, "inside", "after `ip link del` on the host") == "lo");
    REQUIRE(std::regex_search(out, match, std::regex(R"(ping (10\.203\.\d+\.1): ok)")));
    const std::string host_addr = match[1];
    REQUIRE(
        std::regex_search(out, match, std::regex(R"(host    ping (10\.203\.\d+\.2) \(.*\): ok)")));
    // Gone: the device, and with it the address and the route of the test subnet.
    CHECK(run({"/usr/sbin/ip", "link", "show", host_end}).exit_code != 0);
    CHECK_FALSE(contains(run({"/usr/sbin/ip", "-4", "addr", "show"}).out, host_addr + "/"));
}

void check_user_facts(const std::string& out) {
    CHECK(fact(out, "inside", "id").rfind("uid=0(root) gid=0(root)", 0) == 0);
    CHECK(contains(out, "Uid (real, effective, saved, fs): 100000 100000 100000 100000"));
    CHECK(fact(out, "inside", "cat /proc/self/uid_map (inside-id host-id count)") ==
          "0 100000 65536");
    CHECK(fact(out, "inside", "stat -c %u:%g on the host root's file") == "65534:65534");
    CHECK(fact(out, "inside", "echo changed >> that file") == "denied");
}

void check_cgroup_facts(const std::string& out) {
    auto lines = split_lines(out);
    auto inside = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
        return contains(line, "inside  cat /proc/self/cgroup");
    });
    REQUIRE(inside != lines.end());
    // The first host line after it (in `demo all`'s output other demos' come before).
    auto host = std::find_if(inside, lines.end(), [](const std::string& line) {
        return contains(line, "host    cat /proc/");
    });
    REQUIRE(host != lines.end());
    REQUIRE(inside < host);
    const auto hierarchies = std::distance(inside, host) - 1;
    // The test's own /proc/self/cgroup has as many hierarchies as the container's.
    CHECK(hierarchies ==
          static_cast<long>(split_lines(read_file("/proc/self/cgroup").value_or("")).size()));
    for (auto line = inside + 1; line != host; ++line) {
        CHECK(line->ends_with(":/"));
    }
}

void check_time_facts(const std::string& out) {
    CHECK(contains(fact(out, "inside", "cat /proc/self/timens_offsets"), "monotonic 864000 0"));
    const double inside = std::stod(fact(out, "inside", "uptime in seconds (/proc/uptime)"));
    const double host = std::stod(fact(out, "host  ", "uptime in seconds (/proc/uptime)"));
    CHECK(std::abs(inside - host - 864000) < 60);
    // And the test, on the host, sees its own clock unchanged.
    CHECK(contains(read_file("/proc/self/timens_offsets").value_or(""), "monotonic"));
    CHECK(std::stod(read_file("/proc/uptime").value_or("0")) < inside);
}

void check_all(const RunResult& result, const std::string& host_name,
               const std::vector<std::string>& not_ours) {
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    const std::string& out = result.out;
    CHECK_FALSE(contains(out, "UNEXPECTED"));
    for (const auto& name : namespace_names()) {
        check_ns(out, name, std::find(not_ours.begin(), not_ours.end(), name) == not_ours.end());
    }
    for (const char* heading : {"== uts:", "== ipc:", "== pid:", "== mount:", "== net:", "== user:",
                                "== cgroup:", "== time:"}) {
        CHECK(contains(out, heading));
    }
    check_uts_facts(out, host_name);
    check_ipc_facts(out);
    check_pid_facts(out);
    check_mount_facts(out);
    check_net_facts(out);
    check_user_facts(out);
    check_cgroup_facts(out);
    if (read_file("/proc/self/timens_offsets")) {
        check_time_facts(out);
    }
}

} // namespace it::demo
