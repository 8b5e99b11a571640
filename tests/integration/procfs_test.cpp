// Writes under /proc and mounts under /proc (issue 39, items 1 and 2), as the attacks are.
//
// CVE-2025-52881: whoever shaped the mount namespace binds another procfs file over the one
// a runtime writes (a sysctl, /proc/self/attr/exec), so the write lands elsewhere. mini-run
// writes through a procfs handle nothing can be mounted on (src/procfs.hpp), and refuses
// mount destinations under /proc as runc 1.3 does (src/proc_mounts.hpp).
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <string>
#include <vector>

using namespace it;

namespace {

const std::string kUnshare = "/usr/bin/unshare";

// argv run in a private mount namespace of the test's (unshare -m) in which
// /proc/sys/kernel/hostname is bound over /proc/sys/kernel/domainname first: the
// redirection a joined or inherited mount namespace can carry, which no config check sees.
std::vector<std::string> under_redirected_domainname(const std::vector<std::string>& argv,
                                                     bool new_uts = false) {
    std::vector<std::string> full = {kUnshare, "-m"};
    if (new_uts) {
        full.emplace_back("-u");
    }
    const std::string script =
        "mount --bind /proc/sys/kernel/hostname /proc/sys/kernel/domainname && exec \"$@\"";
    full.insert(full.end(), {"--propagation", "private", "/bin/sh", "-c", script, "sh"});
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
}

std::string host_names() {
    struct utsname names {};
    ::uname(&names);
    return std::string(names.nodename) + " " + names.domainname;
}

std::string quote(const std::string& text) {
    return "\"" + text + "\"";
}

nlohmann::json bind_at(const std::string& destination, const std::string& source,
                       std::vector<std::string> options = {"bind"}) {
    return {{"destination", destination},
            {"type", "bind"},
            {"source", source},
            {"options", std::move(options)}};
}

// The config's refusal: one line with the JSON path, non-zero, and nothing left behind (no
// state directory, no cgroup, no mount, no process).
void check_refused(TempBundle& bundle, const std::string& expected) {
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(contains(result.err, expected));
    CHECK(split_lines(result.err).size() == 1);
    CHECK(cgroup_dirs(default_cgroup(bundle.id())).empty());
    check_no_leftovers(bundle);
}

} // namespace

TEST_CASE("escape: a sysctl is written to its own file, not to a procfs file bound over it "
          "(CVE-2025-52881)",
          "[escape][procfs]") {
    if (::access(kUnshare.c_str(), X_OK) != 0) {
        skip_test("no " + kUnshare);
        return;
    }
    const std::string before = host_names();

    // The positive control: in such a namespace a write by path to the domainname lands on
    // the hostname (in a UTS namespace of its own, so the host's stays as it is).
    auto control = run(under_redirected_domainname({"/bin/sh", "-c",
                                                    "hostname control-before && echo redirected > "
                                                    "/proc/sys/kernel/domainname && hostname"},
                                                   true));
    INFO(control.describe());
    REQUIRE(control.exit_code == 0);
    REQUIRE(control.out == "redirected\n");

    // The container: no mount namespace of its own (so its init mounts into the one above,
    // where the bind is), a UTS namespace of its own, and kernel.domainname as a sysctl.
    TempBundle bundle("procfs-sysctl");
    bundle.remove_namespaces({"mount"});
    bundle.config["hostname"] = "ct-host";
    bundle.config["linux"]["sysctl"] = {{"kernel.domainname", "ct-domain"}};
    // The container's own /proc (fresh, in the rootfs) is a clean path to read them.
    bundle.set_shell("cat /proc/sys/kernel/domainname; hostname");
    bundle.write_config();
    std::vector<std::string> argv = bundle.run_argv();
    argv.insert(argv.begin() + 1, "--debug");
    auto result = run(under_redirected_domainname(argv));
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    // The sysctl landed on the domainname, and the hostname is the config's: the write did
    // not follow the bind.
    CHECK(result.out == "ct-domain\nct-host\n");
    // Which procfs the writes went through is stated (here the host's root may make one).
    CHECK(contains(result.err, "procfs: writes under /proc go through a private procfs "
                               "instance (fsopen)"));
    CHECK(host_names() == before);
    check_no_leftovers(bundle);
}

TEST_CASE("escape: an LSM label is written through the procfs handle (CVE-2025-52881)",
          "[escape][procfs]") {
    // The label attack needs an LSM to label with: without one (this kind of VM has none)
    // mini-run refuses any label before it makes anything (security.cpp: prepare), so there
    // is nothing to redirect. The write path itself is unit-tested (test_procfs.cpp: a
    // procfs file bound over thread-self/attr/exec is refused through the handle).
    struct stat info {};
    if (::stat("/sys/kernel/security/lsm", &info) != 0) {
        skip_test("no LSM active here (/sys/kernel/security/lsm is missing)");
        return;
    }
    auto lsm = read_file("/sys/kernel/security/lsm").value_or("");
    if (!contains(lsm, "apparmor") && !contains(lsm, "selinux")) {
        skip_test("neither AppArmor nor SELinux is active: " + lsm);
        return;
    }
    // An LSM is active: the label the config names must be the process's (read from inside,
    // through the container's own /proc).
    TempBundle bundle("procfs-lsm");
    if (contains(lsm, "apparmor")) {
        bundle.config["process"]["apparmorProfile"] = "unconfined";
    } else {
        bundle.config["process"]["selinuxLabel"] = "unconfined_u:unconfined_r:unconfined_t:s0";
    }
    bundle.set_shell("cat /proc/self/attr/current");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.out, "unconfined"));
    check_no_leftovers(bundle);
}

TEST_CASE("mounts under /proc: refused with the JSON path, in runc's words, nothing left",
          "[procfs][mount]") {
    TempDir dir;
    write_text(dir.path() + "/file", "not a kernel setting\n");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"/proc/sys/kernel/domainname", "is inside /proc"},
        {"/proc/self/attr/exec", "is inside /proc"},
        {"/proc/sysrq-trigger", "is inside /proc"},
        {"/proc/net/dev", "is inside /proc"},
    };
    for (const auto& [destination, words] : cases) {
        TempBundle bundle("procfs-refused");
        bundle.config["mounts"].push_back(bind_at(destination, dir.path() + "/file"));
        const size_t index = bundle.config["mounts"].size() - 1;
        CAPTURE(destination);
        check_refused(bundle, "mounts[" + std::to_string(index) + "].destination: " +
                                  quote(destination) + " cannot be mounted because it " + words);
    }
    // On /proc itself, anything but proc or a bind.
    TempBundle tmpfs("procfs-refused");
    for (auto& mount : tmpfs.config["mounts"]) {
        if (mount["destination"] == "/proc") {
            mount = {{"destination", "/proc"}, {"type", "tmpfs"}, {"source", "tmpfs"}};
        }
    }
    check_refused(tmpfs, R"(mounts[0].destination: "/proc" cannot be mounted because it is )"
                         R"(not of type proc)");

    // `mini-run check` reports it too, from the same rule.
    TempBundle checked("procfs-check");
    checked.config["mounts"].push_back(bind_at("/proc/sys/kernel/domainname", dir.path()));
    checked.write_config();
    auto report = run_minirun({"check", "--bundle", checked.dir()});
    INFO(report.describe());
    CHECK(report.exit_code != 0);
    CHECK(contains(report.out + report.err, R"("/proc/sys/kernel/domainname" cannot be mounted )"
                                            R"(because it is inside /proc)"));
}

TEST_CASE("mounts under /proc: the files lxcfs emulates may be covered", "[procfs][mount]") {
    TempDir dir;
    write_text(dir.path() + "/cpuinfo", "processor : lxcfs-like\n");
    TempBundle bundle("procfs-lxcfs");
    bundle.config["mounts"].push_back(bind_at("/proc/cpuinfo", dir.path() + "/cpuinfo"));
    bundle.set_shell("cat /proc/cpuinfo");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(result.out == "processor : lxcfs-like\n");
    check_no_leftovers(bundle);
}

TEST_CASE("mounts under /proc: a bind onto /proc needs the root of a procfs", "[procfs][mount]") {
    auto with_proc_bind = [](TempBundle& bundle, const std::string& source) {
        for (auto& mount : bundle.config["mounts"]) {
            if (mount["destination"] == "/proc") {
                mount = bind_at("/proc", source, {"rbind", "nosuid", "nodev", "noexec"});
            }
        }
    };
    // The root of a procfs (runc's suite binds the host's for rootless without a PID
    // namespace): allowed, and it is what the container sees.
    TempBundle root("procfs-root");
    with_proc_bind(root, "/proc");
    root.set_shell("cat /proc/sys/kernel/ostype; test -e /proc/self/status && echo self");
    auto result = root.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    CHECK(result.out == "Linux\nself\n");
    check_no_leftovers(root);

    // Not procfs: refused at mount time, once the source is open.
    TempDir dir;
    TempBundle other("procfs-other");
    with_proc_bind(other, dir.path());
    check_refused(other, R"("/proc" cannot be mounted because it is not of type proc)");

    // Procfs, but not its root (/proc/self): refused too.
    TempBundle self("procfs-self");
    with_proc_bind(self, "/proc/self");
    check_refused(self, R"("/proc" cannot be mounted because its source is not the root of a )"
                        R"(procfs)");
}

TEST_CASE("mounts under /proc: a rootfs symlink cannot lead a mount there",
          "[procfs][mount][escape]") {
    TempDir dir;
    write_text(dir.path() + "/file", "not a kernel setting\n");
    TempBundle bundle("procfs-symlink");
    const std::string rootfs = bundle.copy_rootfs();
    REQUIRE(::symlink("/proc/sys", (rootfs + "/foo").c_str()) == 0);

    // The positive control: in the container the link leads into its procfs.
    bundle.set_shell("cat /foo/kernel/ostype");
    auto control = bundle.run();
    INFO(control.describe());
    REQUIRE(control.exit_code == 0);
    REQUIRE(control.out == "Linux\n");

    // The config's destination is outside /proc, lexically; resolved, it is inside.
    bundle.config["mounts"].push_back(bind_at("/foo/kernel/domainname", dir.path() + "/file"));
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(contains(result.err, R"("/proc/sys/kernel/domainname" cannot be mounted because it is )"
                               R"(inside /proc (where "/foo/kernel/domainname" leads))"));
    CHECK(split_lines(result.err).size() == 1);
    CHECK(cgroup_dirs(default_cgroup(bundle.id())).empty());
    check_no_leftovers(bundle);
}
