// What runc's users and tools rely on, pinned down by mini-run's own tests: the configs
// `runc spec` and `crun spec` write, the order of the setup steps runc's integration suite
// checks (cwd, read-only /dev, rro, bind sources in a user namespace, the terminal's owner,
// seccomp last), and runc's command line (--debug, kill 0, list and ps, exec's exit code,
// --ignore-paused, --cgroup). runc's own suite runs in CI too (scripts/runc-suite.sh); these
// say what each of its failures meant.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

// `runc spec` 1.3.6's config (tests/unit/test_spec_default.cpp has it whole), made to run
// here: the example rootfs, no terminal, a command. Since runc 1.3 it lists no ambient (and
// no inheritable) capabilities.
nlohmann::json runc_spec_config(const std::string& rootfs) {
    const nlohmann::json caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
    nlohmann::json config = {
        {"ociVersion", "1.2.1"},
        {"process",
         {{"terminal", false},
          {"user", {{"uid", 0}, {"gid", 0}}},
          {"args", {"sh", "-c", "echo spec-ran"}},
          {"env",
           {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"}},
          {"cwd", "/"},
          {"capabilities", {{"bounding", caps}, {"effective", caps}, {"permitted", caps}}},
          {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 1024}}}},
          {"noNewPrivileges", true}}},
        {"root", {{"path", rootfs}, {"readonly", true}}},
        {"hostname", "runc"},
        {"mounts",
         {{{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
          {{"destination", "/dev"},
           {"type", "tmpfs"},
           {"source", "tmpfs"},
           {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}},
          {{"destination", "/dev/pts"},
           {"type", "devpts"},
           {"source", "devpts"},
           {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}}},
          {{"destination", "/dev/shm"},
           {"type", "tmpfs"},
           {"source", "shm"},
           {"options", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}}},
          {{"destination", "/dev/mqueue"},
           {"type", "mqueue"},
           {"source", "mqueue"},
           {"options", {"nosuid", "noexec", "nodev"}}},
          {{"destination", "/sys"},
           {"type", "sysfs"},
           {"source", "sysfs"},
           {"options", {"nosuid", "noexec", "nodev", "ro"}}},
          {{"destination", "/sys/fs/cgroup"},
           {"type", "cgroup"},
           {"source", "cgroup"},
           {"options", {"nosuid", "noexec", "nodev", "relatime", "ro"}}}}},
        {"linux",
         {{"resources", {{"devices", {{{"allow", false}, {"access", "rwm"}}}}}},
          {"namespaces",
           {{{"type", "pid"}},
            {{"type", "network"}},
            {{"type", "ipc"}},
            {{"type", "uts"}},
            {{"type", "mount"}}}},
          {"maskedPaths",
           {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
            "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
            "/proc/scsi"}},
          {"readonlyPaths",
           {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}}},
    };
    return config;
}

void check_ran(const RunResult& result, std::string_view marker) {
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, marker));
}

std::string mkdir_in(const std::string& parent, const std::string& name, mode_t mode) {
    std::string path = parent + "/" + name;
    REQUIRE(::mkdir(path.c_str(), mode) == 0);
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    return path;
}

} // namespace

TEST_CASE("runc spec: its config runs as it is, and crun spec's too", "[compat]") {
    TempBundle bundle("compat-spec");
    bundle.config = runc_spec_config(example_rootfs());
    SECTION("runc spec") {
        auto result = bundle.run();
        check_ran(result, "spec-ran");
        CHECK(result.err.empty());
    }
    SECTION("crun spec: ociVersion 1.0.0, ambient capabilities and an empty inheritable set") {
        // This once failed with "raise ambient capability CAP_AUDIT_WRITE": the kernel cannot
        // raise an ambient capability that is not inheritable. The container runs without
        // them, and runc 1.3 says so once per capability at its default level; so do we.
        const nlohmann::json caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
        bundle.config["ociVersion"] = "1.0.0";
        bundle.config["process"]["capabilities"]["inheritable"] = nlohmann::json::array();
        bundle.config["process"]["capabilities"]["ambient"] = caps;
        auto result = bundle.run();
        check_ran(result, "spec-ran");
        for (const auto& cap : caps) {
            CHECK(contains(result.err,
                           "can't raise ambient capability " + cap.get<std::string>() + ": "));
        }
    }
    SECTION("mini-run spec writes that config (with its own hostname)") {
        TempDir dir("minirun-it-spec");
        auto written = run_minirun({"spec", "--bundle", dir.path()});
        REQUIRE(written.exit_code == 0);
        auto text = read_file(dir.path() + "/config.json");
        REQUIRE(text.has_value());
        auto ours = nlohmann::json::parse(*text);
        ours["root"]["path"] = example_rootfs();
        ours["process"]["terminal"] = false;
        ours["process"]["args"] = {"sh", "-c", "echo spec-ran"};
        ours["hostname"] = "runc";
        CHECK(ours == bundle.config);
    }
    check_no_leftovers(bundle);
}

TEST_CASE("seccomp: after the filter only the exec, so a deny-by-default profile need not "
          "allow mini-run's own calls",
          "[compat][seccomp]") {
    // What busybox's sh needs to say hello, and the exec: no close_range, getcwd, fcntl or
    // rt_sigprocmask, which mini-run itself uses on its way there.
    TempBundle bundle("compat-seccomp-last");
    bundle.config["linux"]["seccomp"] = {
        {"defaultAction", "SCMP_ACT_ERRNO"},
        {"architectures", {"SCMP_ARCH_X86_64"}},
        {"syscalls",
         {{{"action", "SCMP_ACT_ALLOW"},
           {"names", {"execve",          "arch_prctl",   "brk",
                      "exit_group",      "exit",         "getpid",
                      "getppid",         "getrandom",    "getuid",
                      "mprotect",        "newfstatat",   "prctl",
                      "prlimit64",       "readlink",     "rseq",
                      "rt_sigaction",    "rt_sigreturn", "set_robust_list",
                      "set_tid_address", "uname",        "write"}}}}},
    };
    REQUIRE(bundle.config["process"]["noNewPrivileges"] == true);
    bundle.set_shell("echo filtered-hello");
    auto result = bundle.run();
    check_ran(result, "filtered-hello");
    check_no_leftovers(bundle);
}

TEST_CASE("cwd: entered while privileged, so a user may start where only root could go",
          "[compat][process]") {
    TempBundle bundle("compat-cwd");
    std::string rootfs = bundle.copy_rootfs();
    mkdir_in(rootfs, "secret", 0700);
    bundle.config["process"]["cwd"] = "/secret";
    bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    bundle.set_shell("pwd; ls . >/dev/null 2>&1 || echo cannot-list");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "/secret\n"));
    // In it, but still without the right to read it: the kernel's check, not ours.
    CHECK(contains(result.out, "cannot-list"));
    check_no_leftovers(bundle);
}

TEST_CASE("hooks: createContainer runs in the container's root", "[compat][hooks]") {
    TempDir out("minirun-it-hookcwd");
    TempBundle bundle("compat-hook-cwd");
    bundle.config["hooks"]["createContainer"] = {
        {{"path", "/bin/sh"}, {"args", {"sh", "-c", "pwd > " + out.path() + "/cwd"}}}};
    bundle.set_shell("true");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    auto cwd = read_file(out.path() + "/cwd");
    REQUIRE(cwd.has_value());
    CHECK(*cwd == bundle.rootfs() + "\n");
    check_no_leftovers(bundle);
}

TEST_CASE("mounts: a read-only /dev is made read-only after what goes inside it",
          "[compat][mount]") {
    TempBundle bundle("compat-ro-dev");
    for (auto& mount : bundle.config["mounts"]) {
        if (mount["destination"] == "/dev") {
            mount["options"].push_back("ro");
        }
    }
    bundle.config["process"]["terminal"] = false;
    bundle.set_shell("test -c /dev/null && test -e /dev/pts/ptmx && echo inside-ok; "
                     "touch /dev/new 2>&1; grep ' /dev ' /proc/self/mounts");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "inside-ok"));
    CHECK(contains(result.out, "Read-only file system"));
    CHECK(contains(result.out, "tmpfs /dev tmpfs ro,"));
    check_no_leftovers(bundle);
}

TEST_CASE("mounts: rro is read-only all the way down", "[compat][mount]") {
    TempBundle bundle("compat-rro");
    std::string source = mkdir_in(bundle.dir(), "tree", 0755);
    std::string sub = mkdir_in(source, "sub", 0755);
    REQUIRE(::mount("tmpfs", sub.c_str(), "tmpfs", 0, "size=1m") == 0); // the bundle undoes it
    bundle.config["mounts"].push_back(
        {{"destination", "/mnt"}, {"source", source}, {"options", {"rbind", "rro"}}});
    bundle.set_shell("touch /mnt/top 2>&1; touch /mnt/sub/below 2>&1; echo done");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "/mnt/top: Read-only file system"));
    CHECK(contains(result.out, "/mnt/sub/below: Read-only file system"));
    CHECK(::umount2(sub.c_str(), MNT_DETACH) == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("mounts: a bind source only the host can reach works with a user namespace",
          "[compat][mount][user]") {
    // runc's userns.bats: the source's parent is 0700 and root's. The container's root is
    // uid 100000 on the host and could not look the path up; the parent opened it first.
    TempBundle bundle("compat-userns-bind");
    bundle.copy_rootfs(std::make_pair(100000U, 100000U));
    bundle.add_namespace("user");
    const nlohmann::json mapping = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    bundle.config["linux"]["uidMappings"] = mapping;
    bundle.config["linux"]["gidMappings"] = mapping;
    std::string locked = mkdir_in(bundle.dir(), "locked", 0700);
    std::string data = mkdir_in(locked, "data", 0755);
    { std::ofstream(data + "/file") << "host-only-data\n"; }
    bundle.config["mounts"].push_back(
        {{"destination", "/data"}, {"source", data}, {"options", {"bind", "ro"}}});
    bundle.set_shell("cat /data/file");
    auto result = bundle.run();
    check_ran(result, "host-only-data");
    check_no_leftovers(bundle);
}

TEST_CASE("terminal: the pty belongs to the process's user, in the tty group",
          "[compat][terminal]") {
    TempBundle bundle("compat-tty-owner");
    bundle.config["process"]["terminal"] = true;
    bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    bundle.set_shell("stat -c owner=%u:%g $(tty)");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "owner=1000:5"));
    check_no_leftovers(bundle);
}

TEST_CASE("rootfs: a /proc that is a symlink is refused in runc's words, making nothing",
          "[compat][mount]") {
    TempBundle bundle("compat-proc-link");
    std::string rootfs = bundle.copy_rootfs();
    REQUIRE(::rmdir((rootfs + "/proc").c_str()) == 0);
    REQUIRE(::symlink("/nowhere", (rootfs + "/proc").c_str()) == 0);
    bundle.set_shell("true");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code != 0);
    CHECK(contains(result.err, "must be mounted on ordinary directory"));
    struct stat info {};
    CHECK(::lstat((rootfs + "/nowhere").c_str(), &info) != 0);
    check_no_leftovers(bundle);
}

TEST_CASE("--debug: runc's text format on stderr, and its milestones", "[compat][cli]") {
    TempBundle bundle("compat-debug");
    bundle.set_shell("echo debug-run");
    bundle.write_config();
    SECTION("on stderr") {
        auto result = run_minirun({"--debug", "run", "--bundle", bundle.dir(), bundle.id()});
        INFO(result.describe());
        CHECK(result.exit_code == 0);
        CHECK(contains(result.out, "debug-run"));
        CHECK(contains(result.err, "level=debug msg=\"nsexec container setup"));
        CHECK(contains(result.err, "child process in init()"));
        CHECK(contains(result.err, "init: closing the pipe to signal completion"));
        CHECK_FALSE(contains(result.out, "level=debug"));
    }
    SECTION("into a JSON log, and nothing of it on stderr") {
        TempDir logs("minirun-it-debuglog");
        std::string log = logs.path() + "/log.json";
        auto result = run_minirun({"--log", log, "--log-format", "json", "--debug", "run",
                                   "--bundle", bundle.dir(), bundle.id()});
        INFO(result.describe());
        CHECK(result.exit_code == 0);
        CHECK_FALSE(contains(result.err, "level"));
        auto text = read_file(log);
        REQUIRE(text.has_value());
        size_t debug_lines = 0;
        for (const std::string& line : split_lines(*text)) {
            auto entry = nlohmann::json::parse(line);
            debug_lines += entry["level"] == "debug" ? 1 : 0;
        }
        CHECK(debug_lines >= 3);
        CHECK(contains(*text, "child process in init()"));
    }
    check_no_leftovers(bundle);
}

TEST_CASE("the command line as runc's tools use it", "[compat][cli]") {
    Runtime runtime;
    TempBundle bundle("compat-cli");
    bundle.set_shell(loop);
    auto started = runtime.run_detached(bundle);
    INFO(started.describe());
    REQUIRE(started.exit_code == 0);
    const std::string id = bundle.id();

    SECTION("kill with signal 0 only asks whether it runs") {
        CHECK(runtime({"kill", id, "0"}).exit_code == 0);
        CHECK(runtime.status(id) == "running");
        REQUIRE(runtime({"kill", id, "KILL"}).exit_code == 0);
        REQUIRE(runtime.wait_for_status(id, "stopped"));
        CHECK(runtime({"kill", "--all", id, "0"}).exit_code == 0);
        auto refused = runtime({"kill", id, "0"});
        CHECK(refused.exit_code != 0);
        CHECK(contains(refused.err, "container not running"));
    }
    SECTION("list --format json in runc's key order") {
        auto listed = runtime({"list", "--format", "json"});
        INFO(listed.describe());
        REQUIRE(listed.exit_code == 0);
        const std::string& text = listed.out;
        std::vector<size_t> at;
        for (const char* key : {"\"ociVersion\"", "\"id\"", "\"pid\"", "\"status\"", "\"bundle\"",
                                "\"rootfs\"", "\"created\"", "\"owner\""}) {
            at.push_back(text.find(key));
            INFO(key);
            CHECK(at.back() != std::string::npos);
        }
        CHECK(std::is_sorted(at.begin(), at.end()));
        CHECK_FALSE(contains(text, "annotations")); // left out when empty, as runc does
        CHECK(nlohmann::json::parse(text).at(0).at("id") == id);
    }
    SECTION("ps runs ps(1) with the arguments given, -ef by default") {
        auto pid = runtime.pid_from_file(id);
        REQUIRE(pid.has_value());
        auto table = runtime({"ps", id});
        INFO(table.describe());
        REQUIRE(table.exit_code == 0);
        auto lines = split_lines(table.out);
        REQUIRE(lines.size() >= 2);
        CHECK(split_words(lines[0]).at(1) == "PID");
        CHECK(contains(lines[0], "PPID"));
        bool found = false;
        for (size_t i = 1; i < lines.size(); ++i) {
            found = found || split_words(lines[i]).at(1) == std::to_string(*pid);
        }
        CHECK(found);
        auto custom = runtime({"ps", id, "-o", "pid,comm"});
        INFO(custom.describe());
        REQUIRE(custom.exit_code == 0);
        CHECK(split_words(split_lines(custom.out).at(0)) ==
              std::vector<std::string>{"PID", "COMMAND"});
        // Only the container's: far fewer than the host's.
        auto host = run({"/bin/ps", "-o", "pid,comm", "-e"});
        CHECK(split_lines(custom.out).size() < split_lines(host.out).size());
        auto json = runtime({"ps", "--format", "json", id});
        REQUIRE(json.exit_code == 0);
        CHECK(nlohmann::json::parse(json.out).at(0) == *pid);
    }
    SECTION("exec exits 255 when mini-run itself fails, the process's code otherwise") {
        CHECK(runtime({"exec", id, "sh", "-c", "exit 42"}).exit_code == 42);
        auto failed = runtime({"exec", "--pid-file", "/nonexistent/dir/pid", id, "true"});
        CHECK(failed.exit_code == 255);
        CHECK(runtime({"exec", "no-such-container", "true"}).exit_code == 255);
    }
    SECTION("exec in a paused container: refused in runc's words, or --ignore-paused") {
        REQUIRE(runtime({"pause", id}).exit_code == 0);
        auto refused = runtime({"exec", id, "true"});
        CHECK(refused.exit_code == 255);
        CHECK(contains(refused.err, "cannot exec in a paused container"));
        // runc's test: resumed a moment later, the exec'd process then runs. The pause is
        // part of what is tested (exec waits while the container is frozen), not a wait
        // for something to happen.
        RunResult resumed;
        std::thread resumer([&] {
            std::this_thread::sleep_for(1s);
            resumed = runtime({"resume", id});
        });
        auto waited = runtime({"exec", "--ignore-paused", id, "echo", "after-resume"}, {}, 20s);
        resumer.join();
        INFO(waited.describe());
        CHECK(waited.exit_code == 0);
        CHECK(waited.out == "after-resume\n");
        CHECK(resumed.exit_code == 0);
    }
    SECTION("exec --cgroup: a sub-cgroup of the container's, and only that") {
        auto dotdot = runtime({"exec", "--cgroup", "..", id, "true"});
        CHECK(dotdot.exit_code == 255);
        CHECK(contains(dotdot.err, " .. is not a sub cgroup path"));
        auto missing = runtime({"exec", "--cgroup", "nonexistent", id, "true"});
        CHECK(missing.exit_code == 255);
        CHECK(contains(missing.err, " adding pid "));
        CHECK(contains(missing.err, "/nonexistent/cgroup.procs: no such file "));
        auto unknown = runtime({"exec", "--cgroup", "whaaat:/", id, "true"});
        CHECK(unknown.exit_code == 255);
        CHECK(contains(unknown.err, "unknown controller "));

        auto state = runtime.state(id);
        REQUIRE(state.has_value());
        std::string memory_dir = "/sys/fs/cgroup/memory" + default_cgroup(id);
        if (::access(memory_dir.c_str(), F_OK) == 0) {
            std::string sub = memory_dir + "/submem";
            REQUIRE(::mkdir(sub.c_str(), 0755) == 0);
            auto joined =
                runtime({"exec", "--cgroup", "memory:submem", id, "cat", "/proc/self/cgroup"});
            INFO(joined.describe());
            CHECK(joined.exit_code == 0);
            bool memory_moved = false;
            bool pids_moved = false;
            for (const std::string& line : split_lines(joined.out)) {
                bool in_sub = line.size() >= 7 && line.compare(line.size() - 7, 7, "/submem") == 0;
                memory_moved = memory_moved || (contains(line, ":memory:") && in_sub);
                pids_moved = pids_moved || (contains(line, ":pids:") && in_sub);
            }
            CHECK(memory_moved);
            CHECK_FALSE(pids_moved);
        }
    }
}
