// Container escapes through descriptors, cwd, symlinks in the rootfs, device nodes, masked
// paths, /dev/console and mount propagation (see escape_test.cpp for how the tests play the
// attacker). Shared helpers: escape_helpers.hpp.
#include "escape_helpers.hpp"

#include <catch2/catch.hpp>

using namespace escape_test;

// ---------------------------------------------------------------------------------------
// 2. CVE-2024-21626: host descriptors reaching the container

TEST_CASE("escape: descriptors of the caller do not reach the container (CVE-2024-21626)",
          "[escape][cve-2024-21626]") {
    Canary canary;
    Fd host_dir(::open(canary.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(host_dir.fd >= 0);
    Runtime runtime;
    TempBundle bundle("cve-2024-21626-fds");
    bundle.set_shell(list_fds_script);
    // run_to_files passes them without FD_CLOEXEC, as an unwary caller would.
    std::vector<FdMapping> fds;
    for (int target = 3; target <= 9; ++target) {
        fds.push_back({target, host_dir.fd});
    }

    SECTION("create and start: only 0, 1, 2") {
        auto created = runtime.create(bundle, {}, fds);
        INFO("create: " << created.describe());
        REQUIRE(created.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid.has_value());
        // Seen from the host too, before the process runs.
        for (const auto& fd : entries_of("/proc/" + std::to_string(*pid) + "/fd")) {
            std::array<char, 4096> target{};
            const std::string link = "/proc/" + std::to_string(*pid) + "/fd/" + fd;
            ssize_t n = readlink(link.c_str(), target.data(), target.size() - 1);
            const std::string where =
                n > 0 ? std::string(target.data(), static_cast<size_t>(n)) : "";
            INFO("init fd " << fd << " -> " << where);
            CHECK(where != canary.path());
        }
        auto started = runtime({"start", bundle.id()});
        INFO("start: " << started.describe());
        REQUIRE(started.exit_code == 0);
        CHECK(wait_for_exit(*pid));
        const std::string out = created.out_now();
        INFO("container output: " << out);
        CHECK(listed_fds(out) == "0 1 2");
        CHECK_FALSE(contains(out, canary.path()));
    }
    SECTION("run: only 0, 1, 2") {
        bundle.write_config();
        runtime.track(bundle.id());
        auto ran = runtime.to_files({"run", "--bundle", bundle.dir(), bundle.id()}, fds);
        INFO("run: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        CHECK(listed_fds(ran.out) == "0 1 2");
        CHECK_FALSE(contains(ran.out, canary.path()));
    }
    SECTION("a privileged process exec'd into the created container finds none in the init") {
        // While the container is created, its init waits for `start`: descriptors the
        // caller leaked must already be gone, or /proc/1/fd/N leads to the host.
        bundle.add_capabilities({"CAP_SYS_PTRACE", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH"});
        bundle.set_shell("true");
        auto created = runtime.create(bundle, {}, fds);
        INFO("create: " << created.describe());
        REQUIRE(created.exit_code == 0);
        const std::string look =
            "for f in /proc/1/fd/*; do echo \"init $f -> $(readlink $f)\"; cat $f/canary; "
            "touch $f/it-pwned; done; true";
        auto exec = runtime({"exec", bundle.id(), "sh", "-c", look});
        INFO("exec into the created container: " << exec.describe());
        CHECK_FALSE(contains(exec.out, canary.secret));
        CHECK_FALSE(contains(exec.out, canary.path()));
        for (int n = 3; n <= 12; ++n) {
            const std::string cwd = "/proc/1/fd/" + std::to_string(n);
            auto in_fd = runtime({"exec", "--cwd", cwd, bundle.id(), "sh", "-c",
                                  "echo \"pwd [$(pwd)]\"; cat canary; touch it-pwned; true"});
            INFO("exec --cwd " << cwd << ": " << in_fd.describe());
            CHECK_FALSE(contains(in_fd.out, canary.secret));
            CHECK_FALSE(contains(in_fd.out, "unreachable"));
        }
    }
    SECTION("create --preserve-fds 1: 0, 1, 2 and 3") {
        auto created = runtime.create(bundle, {"--preserve-fds", "1"}, fds);
        INFO("create: " << created.describe());
        REQUIRE(created.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid.has_value());
        auto started = runtime({"start", bundle.id()});
        REQUIRE(started.exit_code == 0);
        CHECK(wait_for_exit(*pid));
        const std::string out = created.out_now();
        INFO("container output: " << out);
        CHECK(listed_fds(out) == "0 1 2 3");
    }
    SECTION("exec: only 0, 1, 2") {
        bundle.set_shell(loop);
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
        auto exec = runtime.to_files({"exec", bundle.id(), "sh", "-c", list_fds_script}, fds);
        INFO("exec: " << exec.describe());
        REQUIRE(exec.exit_code == 0);
        CHECK(listed_fds(exec.out) == "0 1 2");
        CHECK_FALSE(contains(exec.out, canary.path()));
    }
    canary.check_untouched();
}

TEST_CASE("escape: process.cwd through /proc/self/fd/N never lands on the host "
          "(CVE-2024-21626)",
          "[escape][cve-2024-21626]") {
    Canary canary;
    Fd host_dir(::open(canary.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(host_dir.fd >= 0);
    std::vector<FdMapping> fds;
    for (int target = 3; target <= 9; ++target) {
        fds.push_back({target, host_dir.fd});
    }
    // Inside, the attacker looks around its cwd and tries to leave a mark there. getcwd()
    // says "(unreachable)..." for a directory outside the container's root.
    const std::string script = "echo \"pwd [$(pwd)]\"; ls -a; cat canary; touch it-pwned; "
                               "ls -a ../../..; true";
    auto check_output = [&](const std::string& out) {
        INFO("container output: " << out);
        CHECK_FALSE(contains(out, canary.secret));
        CHECK_FALSE(contains(out, "unreachable"));
        CHECK_FALSE(contains(out, canary.path()));
    };
    // The descriptor numbers a runtime is likely to hold open, its own ones included.
    const int n = GENERATE(3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    const std::string cwd = "/proc/self/fd/" + std::to_string(n);
    INFO("cwd " << cwd);
    Runtime runtime;
    TempBundle bundle("cve-2024-21626-cwd");

    SECTION("process.cwd in config.json") {
        bundle.config["process"]["cwd"] = cwd;
        bundle.set_shell(script);
        auto created = runtime.create(bundle, {}, fds);
        INFO("create: " << created.describe());
        if (created.exit_code == 0) {
            auto pid = runtime.pid_from_file(bundle.id());
            REQUIRE(pid.has_value());
            auto started = runtime({"start", bundle.id()});
            INFO("start: " << started.describe());
            wait_for_exit(*pid);
            check_output(created.out_now());
        }
    }
    SECTION("exec --cwd") {
        bundle.set_shell(loop);
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
        auto exec = runtime.to_files({"exec", "--cwd", cwd, bundle.id(), "sh", "-c", script}, fds);
        INFO("exec: " << exec.describe());
        check_output(exec.out);
    }
    canary.check_untouched();
}

// ---------------------------------------------------------------------------------------
// 3. CVE-2021-30465 / CVE-2024-45310: symlinks in the rootfs redirecting mounts

TEST_CASE("escape: a mount below a symlink to a host directory lands inside the rootfs "
          "(CVE-2021-30465)",
          "[escape][cve-2021-30465]") {
    Canary canary;
    TempDir source("minirun-it-source");
    write_text(source.path() + "/from-source", "bound\n");
    TempBundle bundle("symlink-mount");
    hostile_rootfs(bundle);
    const std::string rootfs = bundle.rootfs();

    // rootfs/mnt points at the host's canary directory: absolutely, or climbing out.
    const std::string kind = GENERATE(std::string("absolute"), std::string("relative"));
    INFO(kind << " symlink");
    const std::string target =
        kind == "absolute" ? canary.path() : "../../../../../../../../../.." + canary.path();
    make_symlink(target, rootfs + "/mnt");

    const std::string destination =
        GENERATE(std::string("/mnt/x"), std::string("/mnt"), std::string("/mnt/a/b/c"));
    INFO("mount destination " << destination << " (and a bind at " << destination << "-bind)");
    const std::string tmpfs_source = bundle.id() + "-tmpfs";
    bundle.config["mounts"].push_back(
        {{"destination", destination}, {"type", "tmpfs"}, {"source", tmpfs_source}});
    if (destination != "/mnt") {
        bundle.config["mounts"].push_back({{"destination", destination + "-bind"},
                                           {"type", "bind"},
                                           {"source", source.path()},
                                           {"options", {"rbind", "rw"}}});
    }
    bundle.set_shell("echo written > " + destination + "/from-container; " + "grep -c " +
                     tmpfs_source + " /proc/self/mountinfo; echo ready; read line");
    Child minirun = bundle.start();
    const bool ready = minirun.wait_for_output("ready\n", 20s);
    // While it runs (if it runs): the host canary has no new entry and nothing mounted.
    canary.check_untouched();
    CHECK(host_mounts_mentioning(tmpfs_source).empty());
    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    if (ready) {
        CHECK(result.exit_code == 0);
    }
    canary.check_untouched();
    CHECK(entries_of(source.path()) == std::vector<std::string>{"from-source"});
    check_no_leftovers(bundle);
}

TEST_CASE("escape: a bind mount onto a symlink does not follow it out of the rootfs "
          "(CVE-2024-45310)",
          "[escape][cve-2024-45310]") {
    Canary canary;
    TempDir source("minirun-it-source");
    write_text(source.path() + "/from-source", "bound\n");
    TempBundle bundle("symlink-dest");
    hostile_rootfs(bundle);
    const std::string rootfs = bundle.rootfs();
    // The destination itself is the symlink; and one deeper, through a chain of two.
    make_symlink(canary.path(), rootfs + "/mnt");
    REQUIRE(::mkdir((rootfs + "/opt").c_str(), 0755) == 0);
    make_symlink("../mnt", rootfs + "/opt/link");
    const std::string destination =
        GENERATE(std::string("/mnt"), std::string("/opt/link"), std::string("/opt/link/deeper"));
    INFO("destination " << destination);
    bundle.config["mounts"].push_back({{"destination", destination},
                                       {"type", "bind"},
                                       {"source", source.path()},
                                       {"options", {"rbind", "rw"}}});
    bundle.set_shell("ls " + destination + "; touch " + destination + "/from-container; true");
    auto result = bundle.run();
    INFO(result.describe());
    canary.check_untouched();
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// 4. CVE-2023-27561: /proc (or /sys) of the rootfs is a symlink

TEST_CASE("escape: a rootfs whose /proc or /sys is a symlink (CVE-2023-27561)",
          "[escape][cve-2023-27561]") {
    Canary canary;
    TempBundle bundle("symlink-proc");
    hostile_rootfs(bundle);
    const std::string rootfs = bundle.rootfs();
    const std::string which = GENERATE(std::string("proc"), std::string("sys"));
    const std::string kind =
        GENERATE(std::string("absolute"), std::string("relative"), std::string("inside"));
    INFO("/" << which << " -> " << kind);
    std::string target;
    if (kind == "absolute") {
        target = canary.path();
    } else if (kind == "relative") {
        target = "../../../../../../../../../.." + canary.path();
    } else {
        ::mkdir((rootfs + "/fake" + which).c_str(), 0755);
        write_text(rootfs + "/fake" + which + "/marker", "fake\n");
        target = "fake" + which;
    }
    make_symlink(target, rootfs + "/" + which);
    // If the container runs at all, its /proc and /sys are the real filesystems.
    bundle.set_shell("echo fs $(stat -f -c %T /" + which + "/); ls /" + which + "/ | head -5");
    auto result = bundle.run();
    INFO(result.describe());
    if (result.exit_code == 0) {
        CHECK(value_of(result.out, "fs") == (which == "proc" ? "proc" : "sysfs"));
        CHECK_FALSE(contains(result.out, "marker"));
    }
    canary.check_untouched();
    if (kind == "inside") {
        CHECK(entries_of(rootfs + "/fake" + which) == std::vector<std::string>{"marker"});
    }
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// 5. /dev is a symlink and no tmpfs is mounted there

TEST_CASE("escape: device nodes are not created through a /dev symlink", "[escape][dev]") {
    Canary canary;
    TempBundle bundle("symlink-dev");
    hostile_rootfs(bundle);
    without_dev_tmpfs(bundle);
    const std::string kind = GENERATE(std::string("absolute"), std::string("relative"));
    INFO("/dev -> " << kind);
    make_symlink(kind == "absolute" ? canary.path()
                                    : "../../../../../../../../../.." + canary.path(),
                 bundle.rootfs() + "/dev");
    bundle.set_shell("ls -l /dev/; echo x > /dev/null; echo ok");
    auto result = bundle.run();
    INFO(result.describe());
    canary.check_untouched();
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// 6. CVE-2025-31133 / CVE-2025-52565: /dev/null or /dev/console that is not what it seems
//    (host files here; the exploits' own targets, core_pattern and /dev/pts/N links, and a
//    config without a /dev mount, in escape_dev_test.cpp)

TEST_CASE("escape: maskedPaths never bind an arbitrary file in place of /dev/null "
          "(CVE-2025-31133)",
          "[escape][cve-2025-31133]") {
    CanaryFile host_file;
    TempBundle bundle("fake-devnull");
    hostile_rootfs(bundle);
    const std::string rootfs = bundle.rootfs();
    write_text(rootfs + "/etc/it-masked", "masked file of the rootfs\n");
    bundle.config["linux"]["maskedPaths"] = {"/proc/cmdline", "/etc/it-masked"};
    const std::string kind = GENERATE(std::string("config binds a host file onto /dev/null"),
                                      std::string("rootfs /dev/null is a symlink to a host file"),
                                      std::string("rootfs /dev/null is a regular file"));
    INFO(kind);
    if (kind == "config binds a host file onto /dev/null") {
        bundle.config["mounts"].push_back({{"destination", "/dev/null"},
                                           {"type", "bind"},
                                           {"source", host_file.path},
                                           {"options", {"bind", "rw"}}});
    } else if (kind == "rootfs /dev/null is a symlink to a host file") {
        without_dev_tmpfs(bundle);
        make_symlink(host_file.path, rootfs + "/dev/null");
    } else {
        without_dev_tmpfs(bundle);
        write_text(rootfs + "/dev/null", "rootfs regular file\n");
    }
    // The attacker reads the masked paths and writes to them. (Not a byte to /dev/null
    // itself: in the first variant that is the bound host file, by the config's choice.)
    bundle.set_shell("for p in /proc/cmdline /etc/it-masked; do "
                     "echo \"$p $(stat -c '%F %t:%T' $p) [$(cat $p)]\"; "
                     "echo it-pwned > $p; done; true");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK_FALSE(contains(result.out, host_file.secret));
    if (result.exit_code == 0) {
        // The masks are empty character devices (null, 1:3).
        CHECK(contains(result.out, "/proc/cmdline character special file 1:3 []"));
        CHECK(contains(result.out, "/etc/it-masked character special file 1:3 []"));
    }
    host_file.check_untouched();
    CHECK(read_file(rootfs + "/etc/it-masked") == "masked file of the rootfs\n");
    check_no_leftovers(bundle);
}

TEST_CASE("escape: a /dev/console symlink in the rootfs is not followed (CVE-2025-52565)",
          "[escape][cve-2025-52565][terminal]") {
    CanaryFile host_file;
    TempBundle bundle("fake-console");
    hostile_rootfs(bundle);
    without_dev_tmpfs(bundle);
    // A devpts for the terminal, on the rootfs's own /dev (no tmpfs over it).
    REQUIRE(::mkdir((bundle.rootfs() + "/dev/pts").c_str(), 0755) == 0);
    make_symlink("pts/ptmx", bundle.rootfs() + "/dev/ptmx");
    bundle.config["mounts"].push_back(
        {{"destination", "/dev/pts"},
         {"type", "devpts"},
         {"source", "devpts"},
         {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}}});
    make_symlink(host_file.path, bundle.rootfs() + "/dev/console");
    bundle.config["process"]["terminal"] = true;
    bundle.set_shell("echo it-pwned > /dev/console; echo done");
    Runtime runtime;
    ConsoleSocket socket;
    auto created = runtime.create(bundle, {"--console-socket", socket.path()});
    INFO("create: " << created.describe());
    if (created.exit_code == 0) {
        auto received = socket.receive();
        INFO("console socket: " << received.error);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid.has_value());
        // Nothing was mounted or changed on the host file while the container is set up.
        host_file.check_untouched();
        auto started = runtime({"start", bundle.id()});
        INFO("start: " << started.describe());
        std::string output;
        if (!received.fds.empty()) {
            output = read_pty(received.fds.front(), "done", 10s);
        }
        wait_for_exit(*pid);
        INFO("terminal output: " << output);
        CHECK_FALSE(contains(output, host_file.secret));
        for (int fd : received.fds) {
            ::close(fd);
        }
    }
    host_file.check_untouched();
    CHECK(host_mounts_under(host_file.path).empty());
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// 7. Mount propagation: mounts made inside never show on the host

TEST_CASE("escape: mounts made inside the container never propagate to the host",
          "[escape][propagation]") {
    // The rootfs and a bind-mounted data directory live in a shared host mount.
    SharedDir shared;
    const std::string rootfs = shared.path() + "/rootfs";
    auto copied = run({"/bin/cp", "-a", example_rootfs(), rootfs});
    REQUIRE(copied.exit_code == 0);
    const std::string data = shared.path() + "/data";
    REQUIRE(::mkdir(data.c_str(), 0755) == 0);
    REQUIRE(::mkdir((data + "/sub").c_str(), 0755) == 0);

    const std::string propagation =
        GENERATE(std::string(""), std::string("private"), std::string("rprivate"),
                 std::string("slave"), std::string("rslave"), std::string("shared"),
                 std::string("rshared"), std::string("unbindable"), std::string("runbindable"));
    INFO("rootfsPropagation '" << propagation << "'");
    TempBundle bundle("propagation");
    bundle.config["root"]["path"] = rootfs;
    bundle.config["root"]["readonly"] = false;
    if (!propagation.empty()) {
        bundle.config["linux"]["rootfsPropagation"] = propagation;
    }
    bundle.add_capabilities({"CAP_SYS_ADMIN"});
    bundle.config["mounts"].push_back({{"destination", "/data"},
                                       {"type", "bind"},
                                       {"source", data},
                                       {"options", {"rbind", "rw"}}});
    const std::string in_root = bundle.id() + "-root";
    const std::string in_data = bundle.id() + "-data";
    // Guarded: never mount anything in the host's mount namespace.
    bundle.set_shell("[ \"$(readlink /proc/self/ns/mnt)\" != '" + ns_link(0, "mnt") +
                     "' ] || { echo 'host mount namespace' >&2; exit 1; }; "
                     "mount -t tmpfs " +
                     in_root + " /tmp && mount -t tmpfs " + in_data +
                     " /data/sub && echo mounted; echo ready; read line");
    Child minirun = bundle.start();
    const bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    if (propagation != "runbindable") { // runc cannot set the rootfs up with runbindable
        REQUIRE(ready);
        CHECK(contains(minirun.out(), "mounted"));
    }
    // While the container runs: nothing on the host.
    CHECK(host_mounts_mentioning(in_root).empty());
    CHECK(host_mounts_mentioning(in_data).empty());
    CHECK(host_mounts_under(rootfs).empty());
    CHECK(host_mounts_under(data).empty());
    CHECK(entries_of(data + "/sub").empty());
    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    if (ready) {
        CHECK(result.exit_code == 0);
    }
    CHECK(host_mounts_mentioning(in_root).empty());
    CHECK(host_mounts_mentioning(in_data).empty());
    CHECK(host_mounts_under(rootfs).empty());
    check_no_leftovers(bundle);
}
