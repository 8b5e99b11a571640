// The /dev escapes of 2025 and 2026, written as the real attacks: a /dev/null planted as a
// symlink to /proc/sys/kernel/core_pattern (CVE-2025-31133), symlinks at /dev/pts/N where a
// runtime that looks the pty up by its number would bind the console from
// (CVE-2025-52565), and a config with no /dev mount over a rootfs that has no /dev, or a
// /dev that is a symlink out (crun's CVE-2026-88264/88265, the "/dev symlink" class),
// with stdio on a null device of the host. Each shows its attack set-up is real (a
// positive control), then that nothing outside the container changed. Shared helpers:
// escape_helpers.hpp.
#include "escape_helpers.hpp"

#include <catch2/catch.hpp>

#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

using namespace escape_test;

namespace {

constexpr const char* kCorePattern = "/proc/sys/kernel/core_pattern";

// The host's core_pattern: read at the start, checked at the end, and put back should a
// failed test have changed it (the kernel's, for every process on the machine).
struct CorePattern {
    std::string before = read_file(kCorePattern).value_or("");
    CorePattern() { REQUIRE_FALSE(before.empty()); }
    CorePattern(const CorePattern&) = delete;
    CorePattern& operator=(const CorePattern&) = delete;
    ~CorePattern() {
        if (read_file(kCorePattern).value_or("") != before) {
            write_text(kCorePattern, before);
        }
    }
    void check_untouched() const {
        CHECK(read_file(kCorePattern).value_or("<gone>") == before);
        CHECK(host_mounts_under(kCorePattern).empty());
    }
};

// The positive control of the /dev/null redirection: a bind of the planted link by path,
// as mount(2) takes it (following it), lands on core_pattern's procfs file: a runtime that
// bound "/dev/null" over a masked path would have bound core_pattern there, writable.
void check_bind_by_path_follows(const std::string& link) {
    TempDir dir{"minirun-it-naive-bind"};
    const std::string target = dir.path() + "/target";
    write_text(target, "");
    REQUIRE(::mount(link.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) == 0);
    struct statfs info {};
    int stat_result = ::statfs(target.c_str(), &info);
    ::umount2(target.c_str(), MNT_DETACH);
    REQUIRE(stat_result == 0);
    INFO("a naive bind of " << link << " binds a procfs file");
    CHECK(info.f_type == PROC_SUPER_MAGIC);
}

// One clear line: not empty, no line break before the end.
void check_one_line(const std::string& err, const std::string& mentions) {
    INFO("stderr: " << err);
    CHECK_FALSE(err.empty());
    CHECK(err.find('\n') == err.size() - 1);
    CHECK(contains(err, mentions));
}

// The caller's null device: a node of its own (1:3) in a host directory, so that a change
// the container makes through it is seen here, never on the host's /dev/null.
struct HostNullNode {
    TempDir dir{"minirun-it-null"};
    std::string path = dir.path() + "/null";
    struct stat before {};
    int fd = -1;
    HostNullNode() {
        REQUIRE(::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
        REQUIRE(::chmod(path.c_str(), 0666) == 0);
        REQUIRE(::lstat(path.c_str(), &before) == 0);
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
    }
    HostNullNode(const HostNullNode&) = delete;
    HostNullNode& operator=(const HostNullNode&) = delete;
    ~HostNullNode() { ::close(fd); }
    void check_untouched() const {
        struct stat now {};
        REQUIRE(::lstat(path.c_str(), &now) == 0);
        CHECK(now.st_uid == before.st_uid);
        CHECK(now.st_gid == before.st_gid);
        CHECK((now.st_mode & 07777) == (before.st_mode & 07777));
        CHECK(now.st_ctim.tv_sec == before.st_ctim.tv_sec);
        CHECK(now.st_ctim.tv_nsec == before.st_ctim.tv_nsec);
    }
};

} // namespace

// ---------------------------------------------------------------------------------------
// CVE-2025-31133: maskedPaths are bound from /dev/null; a /dev/null that is a symlink to
// core_pattern would make core_pattern writable at the masked path.

TEST_CASE("escape: a /dev/null planted as a symlink to core_pattern is refused, never bound "
          "or opened (CVE-2025-31133)",
          "[escape][cve-2025-31133][dev]") {
    CorePattern core;
    TempBundle bundle("null-core-pattern");
    const std::string kind =
        GENERATE(std::string("no /dev mount"), std::string("no /dev mount, user namespace"),
                 std::string("/dev tmpfs, /dev/null replaced after mknod"));
    INFO(kind);
    if (kind == "no /dev mount, user namespace") {
        // Here the host's node would be bound onto what the name resolves to.
        bundle.add_user_namespace();
        bundle.copy_rootfs(std::pair<uint32_t, uint32_t>{100000, 100000});
        bundle.config["root"]["readonly"] = false;
    } else {
        hostile_rootfs(bundle);
    }
    const std::string rootfs = bundle.rootfs();
    if (kind == "/dev tmpfs, /dev/null replaced after mknod") {
        // The race's outcome, made certain: the node the runtime made is swapped for the link
        // in the container's namespaces, after the devices and before the masks.
        bundle.config["hooks"]["createContainer"] = {
            {{"path", "/bin/sh"},
             {"args",
              {"sh", "-c", std::string("rm -f dev/null && ln -s ") + kCorePattern + " dev/null"}}}};
    } else {
        without_dev_tmpfs(bundle);
        make_symlink(kCorePattern, rootfs + "/dev/null");
        check_bind_by_path_follows(rootfs + "/dev/null");
    }
    // A masked file (bound from /dev/null), and the attacker's writes to it.
    REQUIRE(!bundle.config["linux"]["maskedPaths"].empty());
    bundle.set_shell("for p in /proc/kcore /dev/null; do echo it-pwned-core > $p; done; "
                     "cat /proc/kcore; echo done");
    auto result = bundle.run();
    INFO(result.describe());
    // Refused, in one line: the container never ran.
    CHECK(result.exit_code != 0);
    CHECK_FALSE(contains(result.out, "done"));
    check_one_line(result.err, "/dev/null");
    core.check_untouched();
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// CVE-2025-52565: a runtime that binds the console from /dev/pts/<TIOCGPTN> binds whatever
// the rootfs planted there. The pty here comes from a devpts at /devpts2 (the rootfs's
// /dev/pts/ptmx leads there), and /dev/pts/N are links to core_pattern and a host file.

TEST_CASE("escape: symlinks at /dev/pts/N never become the console (CVE-2025-52565)",
          "[escape][cve-2025-52565][terminal][dev]") {
    CorePattern core;
    CanaryFile host_file;
    TempBundle bundle("pts-links");
    hostile_rootfs(bundle);
    without_dev_tmpfs(bundle);
    const std::string rootfs = bundle.rootfs();
    const std::string kind = GENERATE(std::string("/dev/pts/N links"),
                                      std::string("/dev/pts/N links and a /dev/console link"));
    INFO(kind);
    REQUIRE(::mkdir((rootfs + "/dev/pts").c_str(), 0755) == 0);
    REQUIRE(::mkdir((rootfs + "/devpts2").c_str(), 0755) == 0);
    for (int n = 0; n < 4; ++n) {
        make_symlink(n % 2 == 0 ? kCorePattern : host_file.path,
                     rootfs + "/dev/pts/" + std::to_string(n));
    }
    make_symlink("/devpts2/ptmx", rootfs + "/dev/pts/ptmx");
    bundle.config["mounts"].push_back(
        {{"destination", "/devpts2"},
         {"type", "devpts"},
         {"source", "devpts"},
         {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}}});
    if (kind == "/dev/pts/N links and a /dev/console link") {
        make_symlink(host_file.path, rootfs + "/dev/console");
    }
    bundle.config["process"]["terminal"] = true;
    bundle.set_shell("echo fd0=$(readlink /proc/self/fd/0); "
                     "echo console=$(stat -c '%t:%i' /dev/console) "
                     "pty=$(stat -L -c '%t:%i' /proc/self/fd/0); "
                     "echo pts0=$(readlink /dev/pts/0) in-pts0=\"$(cat /dev/pts/0)\"; "
                     "echo ptys=$(ls /devpts2 | tr '\\n' ' '); "
                     "echo it-on-the-console > /dev/console; echo done");
    Runtime runtime;
    ConsoleSocket socket;
    auto created = runtime.create(bundle, {"--console-socket", socket.path()});
    INFO("create: " << created.describe() << created.err_now());
    if (kind == "/dev/pts/N links and a /dev/console link") {
        CHECK(created.exit_code != 0);
        check_one_line(created.err_now(), "/dev/console is a symlink in the rootfs");
    } else {
        REQUIRE(created.exit_code == 0);
        auto received = socket.receive();
        INFO("console socket: " << received.error);
        REQUIRE(received.fds.size() == 1);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid.has_value());
        auto started = runtime({"start", bundle.id()});
        INFO("start: " << started.describe());
        std::string output = read_pty(received.fds.front(), "done", 10s);
        wait_for_exit(*pid);
        for (int fd : received.fds) {
            ::close(fd);
        }
        INFO("terminal: " << output);
        // The positive control: the name a TIOCGPTN lookup builds, /dev/pts/0, is the link
        // to core_pattern, and the pty the container got is number 0 of /devpts2.
        CHECK(contains(output, std::string("pts0=") + kCorePattern +
                                   " in-pts0=" + split_lines(core.before).at(0)));
        CHECK(contains(output, "ptys=0 ptmx"));
        // The console is the pty itself: the same inode, a pty slave (major 0x88 = 136).
        CHECK(contains(output, "fd0=/devpts2/0"));
        auto at = output.find("console=");
        REQUIRE(at != std::string::npos);
        auto words = split_words(output.substr(at, output.find('\n', at) - at));
        REQUIRE(words.size() == 2);
        CHECK(words[0].starts_with("console=88:"));
        CHECK(words[0].substr(std::string_view("console=").size()) ==
              words[1].substr(std::string_view("pty=").size()));
        CHECK(contains(output, "it-on-the-console"));
    }
    core.check_untouched();
    host_file.check_untouched();
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// No /dev mount (crun's CVE-2026-88264/88265; the /dev symlink class): the rootfs has no
// /dev, or its /dev leads out; the caller's stdin is a null device of the host.

TEST_CASE("escape: no /dev mount: nodes, links and stdio stay inside the rootfs, stdio on the "
          "container's own 1:3",
          "[escape][dev]") {
    Canary canary;
    HostNullNode host_null;
    TempBundle bundle("no-dev");
    hostile_rootfs(bundle);
    without_dev_tmpfs(bundle);
    bundle.add_capabilities({"CAP_CHOWN", "CAP_FOWNER"});
    const std::string rootfs = bundle.rootfs();
    const std::string kind = GENERATE(std::string("no /dev"), std::string("/dev -> host dir"),
                                      std::string("/dev -> ../../.. host dir"));
    INFO(kind);
    remove_tree(rootfs + "/dev");
    ::rmdir((rootfs + "/dev").c_str());
    std::string dev_inside = "/dev";
    if (kind != "no /dev") {
        make_symlink(kind == "/dev -> host dir" ? canary.path()
                                                : "../../../../../../../.." + canary.path(),
                     rootfs + "/dev");
        dev_inside = canary.path(); // where the link leads inside the root
        // masks need /dev/null, which they take through no symlink at all: none here.
        bundle.config["linux"]["maskedPaths"] = nlohmann::json::array();
    }
    // The attacker: through its stdin (the caller's null device, unless the runtime moved
    // it to the container's) it takes the node; through its stdout (a host file: the
    // positive control) it shows that such a change does land on the host.
    bundle.set_shell("echo fd0=$(readlink /proc/self/fd/0); "
                     "echo null=$(stat -c '%F %t:%T %i' /dev/null); "
                     "echo stdin=$(stat -L -c '%F %t:%T %i' /proc/self/fd/0); "
                     "chown 4242:4242 /proc/self/fd/0; chmod 0600 /proc/self/fd/0; "
                     "chmod 0640 /proc/self/fd/1; echo done");
    Runtime runtime;
    bundle.write_config();
    auto result = runtime.to_files({"run", "--bundle", bundle.dir(), bundle.id()},
                                   {{STDIN_FILENO, host_null.fd}});
    INFO(result.describe() << result.out_now() << result.err_now());
    std::string out = result.out_now();
    REQUIRE(result.exit_code == 0);
    REQUIRE(contains(out, "done"));
    // The positive control: chmod through /proc/self/fd/1 changed the host's file.
    struct stat out_file {};
    REQUIRE(::stat(result.out_path.c_str(), &out_file) == 0);
    CHECK((out_file.st_mode & 07777) == 0640);
    // stdin was the container's own null device: the rootfs's node, not the host's.
    struct stat node {};
    REQUIRE(::lstat((rootfs + dev_inside + "/null").c_str(), &node) == 0);
    CHECK(S_ISCHR(node.st_mode));
    CHECK(node.st_rdev == makedev(1, 3));
    const std::string inode = std::to_string(node.st_ino);
    CHECK(contains(out, "fd0=" + dev_inside + "/null"));
    CHECK(contains(out, "stdin=character special file 1:3 " + inode));
    CHECK(contains(out, "null=character special file 1:3 " + inode));
    host_null.check_untouched();
    canary.check_untouched();
    check_no_leftovers(bundle);
}
