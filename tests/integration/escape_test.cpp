// Container escapes that a runtime must close. Each test plays the attacker: a hostile
// process inside the container, or a hostile rootfs (a copy of the example one with
// symlinks planted in it), or a hostile config; then it checks from the host that nothing
// outside the container changed: the runtime binary, canary directories and files, the
// host's mount table.
//
// Where runtimes may differ in how they refuse (an error, or a safe fallback), the tests
// assert the security property, not an error message.
//
// This file: the runtime binary (CVE-2019-5736) and `exec` through the gate; the rootfs,
// descriptors and mounts in escape_rootfs_test.cpp. Shared helpers: escape_helpers.hpp.
#include "escape_helpers.hpp"

#include <catch2/catch.hpp>

using namespace escape_test;

// ---------------------------------------------------------------------------------------
// 1. CVE-2019-5736: overwriting the runtime binary through /proc/<pid>/exe

namespace {

// The attacker's script: it keeps scanning the processes it can see, tries to write each
// one's executable, holds a descriptor on every executable that is not its own busybox
// (told apart by a stat, `-ef`, without forking: an exec'd process is the runtime's for
// well under a millisecond, so a slow scan would rarely catch one),
// and keeps trying to reopen those for writing (which works once nobody runs the file
// any more). Every success is reported as "WROTE". So that a pass means "refused" and not
// "never tried", it reports its attempts too: "attacker-ready" once it runs, "refused
// <path> (<target>): <error>" for each write refused on another executable than its own,
// "holding fd <k>" for each descriptor taken, and once per descriptor "refused fd <k>".
const char* const overwrite_exe_script = R"SH(
echo attacker-ready
n=3
while true; do
  for p in /proc/[0-9]*; do
    [ "$p" = "/proc/$$" ] && continue
    { echo it-garbage > "$p/exe"; } 2>/dev/null && echo "WROTE $p/exe"
    [ "$p/exe" -ef /bin/busybox ] && continue
    t=$(readlink "$p/exe" 2>/dev/null)
    case "$t" in ""|/bin/busybox) continue ;; esac
    echo "saw $p $t"
    if e=$( { echo it-garbage > "$p/exe"; } 2>&1 ); then echo "WROTE $p/exe"
    else echo "refused $p/exe ($t): $e"; fi
    if command eval "exec $n< $p/exe" 2>/dev/null; then
      echo "holding fd $n: $t"; eval "tried_$n="; n=$((n % 7 + 3))
    fi
  done
  for k in 3 4 5 6 7 8 9; do
    [ -e /proc/$$/fd/$k ] || continue
    { echo it-garbage > /proc/$$/fd/$k; } 2>/dev/null && echo "WROTE fd $k"
    { echo it-garbage >> /proc/$$/fd/$k; } 2>/dev/null && echo "WROTE fd $k (append)"
    eval "[ -n \"\$tried_$k\" ]" || { echo "refused fd $k"; eval "tried_$k=1"; }
  done
done
)SH";

// Fails the test unless the attacker's output shows that it ran, found an executable of
// the runtime's to attack, and was refused every write: without the attempts, no write
// reported would prove nothing.
void check_attack_refused(const std::string& out) {
    INFO(
        "attacker's output (last part): " << out.substr(out.size() > 4000 ? out.size() - 4000 : 0));
    REQUIRE(contains(out, "attacker-ready\n"));
    REQUIRE(contains(out, "\nrefused /proc/"));
    CHECK_FALSE(contains(out, "WROTE"));
}

// True once the attacker has tried to write the executable of a process that is not its
// own busybox.
bool attacker_tried(const FileRunResult& attacker) {
    return contains(attacker.out_now(), "\nrefused /proc/") ||
           contains(attacker.out_now(), "WROTE");
}

} // namespace

TEST_CASE("escape: the runtime binary cannot be overwritten through /proc/<pid>/exe "
          "(CVE-2019-5736)",
          "[escape][cve-2019-5736]") {
    AttackedBinary copy;
    Runtime runtime;
    runtime.use_binary(copy.path);
    TempBundle bundle("cve-2019-5736");
    hostile_rootfs(bundle);
    privileged(bundle);
    // Guarded: the attacker runs only in the container's own pid and mount namespaces,
    // where every process it can see is the container's or the runtime's.
    const std::string attack =
        "[ \"$(readlink /proc/self/ns/pid)\" != '" + ns_link(0, "pid") +
        "' ] && [ \"$(readlink /proc/self/ns/mnt)\" != '" + ns_link(0, "mnt") +
        "' ] || { echo 'host namespace' >&2; exit 1; }\n" + overwrite_exe_script;

    SECTION("the container's init attacks while processes are exec'd into it") {
        bundle.set_shell(attack);
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        REQUIRE(runtime.wait_for_status(bundle.id(), "running"));
        REQUIRE(wait_until([&] { return contains(ran.out_now(), "attacker-ready\n"); }));
        // 15 at least, and on until the attacker has caught a runtime process to attack.
        for (int i = 0; i < 15 || (i < kMaxExecs && !attacker_tried(ran)); ++i) {
            auto exec = runtime({"exec", bundle.id(), "sh", "-c", "sleep 0.05; echo exec-ok"});
            INFO("exec " << i << ": " << exec.describe());
            CHECK(exec.exit_code == 0);
        }
        // Detached execs: the runtime's process exits while the container process lives on.
        for (int i = 0; i < 5; ++i) {
            auto exec = runtime.to_files(
                {"exec", "--detach", bundle.id(), "sh", "-c", "sleep 0.3", bundle.id()});
            INFO("exec -d " << i << ": " << exec.describe());
            CHECK(exec.exit_code == 0);
        }
        // The attacker now holds descriptors; give it time to use them with no runtime
        // process running the binary (the attack window: a fixed time by design).
        std::this_thread::sleep_for(1500ms);
        check_attack_refused(ran.out_now());
        auto deleted = runtime.force_delete(bundle.id());
        INFO("delete --force: " << deleted.describe());
        CHECK(deleted.exit_code == 0);
    }
    SECTION("an exec'd process attacks the init of a created container") {
        // The init keeps running after start, so that the attacker (in its pid namespace)
        // outlives the runtime code that ran as the init.
        bundle.set_shell(loop);
        auto created = runtime.create(bundle);
        INFO("create: " << created.describe());
        REQUIRE(created.exit_code == 0);
        auto exec = runtime.to_files(
            {"exec", "--detach", bundle.id(), "sh", "-c", attack, bundle.id() + "-attacker"});
        INFO("exec -d into the created container: " << exec.describe());
        // mini-run, as runc, lets a process into a created container (runtime/exec.cpp
        // accepts the created status): the attack must fail, not the exec.
        REQUIRE(exec.exit_code == 0);
        // The waiting init is the runtime's: the attacker finds it before the start.
        CHECK(wait_until([&] { return attacker_tried(exec); }));
        auto started = runtime({"start", bundle.id()});
        INFO("start: " << started.describe());
        CHECK(started.exit_code == 0);
        std::this_thread::sleep_for(1500ms); // the attack window, after the start
        check_attack_refused(exec.out_now());
        auto deleted = runtime.force_delete(bundle.id());
        INFO("delete --force: " << deleted.describe());
        CHECK(deleted.exit_code == 0);
        CHECK(processes_with_marker(bundle.id() + "-attacker").empty());
    }
    SECTION("an exec'd process attacks the other exec'd processes") {
        bundle.set_shell(loop);
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        auto attacker = runtime.to_files(
            {"exec", "--detach", bundle.id(), "sh", "-c", attack, bundle.id() + "-attacker"});
        INFO("exec -d attacker: " << attacker.describe());
        REQUIRE(attacker.exit_code == 0);
        REQUIRE(wait_until([&] { return contains(attacker.out_now(), "attacker-ready\n"); }));
        for (int i = 0; i < 15 || (i < kMaxExecs && !attacker_tried(attacker)); ++i) {
            auto exec = runtime({"exec", bundle.id(), "true"});
            INFO("exec " << i << ": " << exec.describe());
            CHECK(exec.exit_code == 0);
        }
        std::this_thread::sleep_for(1500ms); // the attack window: a fixed time by design
        check_attack_refused(attacker.out_now());
        auto deleted = runtime.force_delete(bundle.id());
        INFO("delete --force: " << deleted.describe());
        CHECK(deleted.exit_code == 0);
        CHECK(processes_with_marker(bundle.id() + "-attacker").empty());
    }
    CHECK(copy.unchanged());
    struct stat st {};
    REQUIRE(stat(copy.path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0755);
    reap_orphans();
}

TEST_CASE("escape: `run` never executes mini-run in the container: /proc/self/exe at the "
          "container's execve is the sealed exec gate (CVE-2019-5736)",
          "[escape][cve-2019-5736][exec-gate]") {
    AttackedBinary copy;
    Runtime runtime;
    runtime.use_binary(copy.path);
    TempBundle bundle("exec-gate");
    hostile_rootfs(bundle);
    add_evil_link(bundle); // the image's entrypoint
    bundle.set_args({"/bin/evil", "--version"});
    bundle.write_config();
    auto explain_run = [&]() {
        auto argv = bundle.run_argv();
        argv[0] = copy.path;
        argv.insert(argv.begin() + 2, "--explain");
        return run(argv);
    };

    SECTION("a new PID namespace: the gate, and mini-run never runs inside") {
        auto result = explain_run();
        INFO(result.describe());
        CHECK(contains(result.err, "runtime: exec gate:"));
        CHECK_FALSE(contains(result.err, "read-only view"));
        // What ran instead was the gate again, which found no command line of its own.
        CHECK_FALSE(contains(result.out, "mini-run version"));
        CHECK(result.exit_code == 127);
    }
    SECTION("create: while the container waits for start, its pid 1 is the sealed gate") {
        bundle.set_args({"/bin/sh", "-c", "echo started"});
        auto created = runtime.create(bundle);
        INFO(created.describe());
        REQUIRE(created.exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid);
        char target[256] = {};
        const std::string exe = "/proc/" + std::to_string(*pid) + "/exe";
        REQUIRE(::readlink(exe.c_str(), target, sizeof(target) - 1) > 0);
        CHECK(std::string(target).starts_with("/memfd:mini-run-exec-gate"));
        // Even the host's root cannot change it: the memfd is sealed.
        int fd = ::open(exe.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            CHECK(::write(fd, "x", 1) < 0);
            ::close(fd);
        }
        CHECK(runtime.status(bundle.id()) == "created");
        CHECK_FALSE(contains(created.out_now(), "started"));
        auto started = runtime({"start", bundle.id()});
        INFO(started.describe());
        CHECK(started.exit_code == 0);
        CHECK(runtime.wait_for_status(bundle.id(), "stopped"));
        CHECK(contains(created.out_now(), "started\n"));
        CHECK(runtime({"delete", bundle.id()}).exit_code == 0);
    }
    SECTION("the host's PID namespace: the protected re-exec instead") {
        bundle.remove_namespaces({"pid"});
        bundle.write_config();
        auto result = explain_run();
        INFO(result.describe());
        CHECK(contains(result.err, "no exec gate (no new PID namespace"));
        CHECK(contains(result.err, "runs from a read-only view of itself"));
        CHECK(contains(result.err, "[explain] 1. runtime: no exec gate")); // numbered once
        // mini-run ran in the container, but from the read-only view only.
        CHECK(result.exit_code == 0);
        CHECK(contains(result.out, "mini-run version"));
    }
    SECTION("a startContainer hook forks copies of the init: the protected re-exec") {
        bundle.config["hooks"]["startContainer"] = {{{"path", "/bin/true"}}};
        bundle.write_config();
        auto result = explain_run();
        INFO(result.describe());
        CHECK(contains(result.err, "no exec gate (createContainer/startContainer hooks"));
        CHECK(contains(result.out, "mini-run version"));
    }
    CHECK(copy.unchanged());
    check_no_leftovers(bundle);
}

namespace {

// An attacker without CAP_SYS_PTRACE: it watches for processes that still run mini-run
// (their comm) and tries to reach their executable. "REACHED" is a success: the link or an
// open gave it something that is neither busybox nor the sealed gate. "denied" proves that
// it caught one in time and was refused.
const char* const reach_runtime_script = R"SH(
echo attacker-ready
while true; do
  for p in /proc/[0-9]*; do
    [ "$p" = "/proc/$$" ] && continue
    read -r c < "$p/comm" 2>/dev/null || continue
    case "$c" in mini-run*) ;; *) continue ;; esac
    t=$(readlink "$p/exe" 2>/dev/null)
    case "$t" in ""|/memfd:*|/bin/busybox) ;; *) echo "REACHED $p exe: $t" ;; esac
    if command eval "exec 3< $p/exe" 2>/dev/null; then
      o=$(readlink /proc/$$/fd/3)
      case "$o" in /memfd:*|/bin/busybox) ;; *) echo "REACHED $p open: $o" ;; esac
      exec 3<&-
    fi
    [ -z "$t" ] && echo "denied $p $c"
  done
done
)SH";

} // namespace

TEST_CASE("escape: `exec` through the gate where nothing in the container may hold "
          "CAP_SYS_PTRACE; the protected re-exec elsewhere (CVE-2019-5736)",
          "[escape][cve-2019-5736][exec-gate]") {
    AttackedBinary copy;
    Runtime runtime;
    runtime.use_binary(copy.path);
    TempBundle bundle("exec-gate-exec");
    hostile_rootfs(bundle);
    add_evil_link(bundle); // a program of the image that exec runs
    bundle.set_shell(loop);
    const std::string state_dir = runtime.root() + "/" + bundle.id();
    auto evil_exec = [&](const std::vector<std::string>& options) {
        std::vector<std::string> args = {"--debug", "exec"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {bundle.id(), "/bin/evil", "--version"});
        return runtime(args);
    };

    SECTION("runc spec's capabilities: the gate, and mini-run never runs inside") {
        REQUIRE(runtime.run_detached(bundle).exit_code == 0);
        auto result = evil_exec({});
        INFO(result.describe());
        CHECK(contains(result.err, "exec gate: the process is exec'd through a sealed"));
        CHECK_FALSE(contains(result.err, "read-only view"));
        CHECK_FALSE(contains(result.out, "mini-run version"));
        CHECK(result.exit_code == 127); // the gate again, without a command line of its own
        CHECK_FALSE(::access((state_dir + "/ptrace-capable").c_str(), F_OK) == 0);
        // The exec'd process is the user's program, as without the gate.
        auto plain = runtime({"exec", bundle.id(), "sh", "-c", "readlink /proc/self/exe; echo $0"});
        INFO(plain.describe());
        CHECK(plain.exit_code == 0);
        CHECK(plain.out == "/bin/busybox\nsh\n");
    }
    SECTION("the container's process may hold CAP_SYS_PTRACE: the protected re-exec") {
        bundle.add_capabilities({"CAP_SYS_PTRACE"});
        REQUIRE(runtime.run_detached(bundle).exit_code == 0);
        auto result = evil_exec({});
        INFO(result.describe());
        CHECK(contains(result.err,
                       "no exec gate (the container's process may hold CAP_SYS_PTRACE): mini-run "
                       "runs from a read-only view of itself"));
        CHECK(result.exit_code == 0);
        CHECK(contains(result.out, "mini-run version")); // from the read-only view only
    }
    SECTION("exec --cap CAP_SYS_PTRACE leaves the mark: no later exec takes the gate") {
        REQUIRE(runtime.run_detached(bundle).exit_code == 0);
        auto capable = evil_exec({"--cap", "CAP_SYS_PTRACE"});
        INFO(capable.describe());
        CHECK(contains(capable.err, "no exec gate (this process may hold CAP_SYS_PTRACE)"));
        CHECK(contains(capable.out, "mini-run version"));
        CHECK(::access((state_dir + "/ptrace-capable").c_str(), F_OK) == 0);
        auto later = evil_exec({});
        INFO(later.describe());
        CHECK(contains(later.err, "no exec gate (a process that may hold CAP_SYS_PTRACE shares"));
        CHECK(contains(later.out, "mini-run version"));
    }
    SECTION("a container that joins the PID namespace with CAP_SYS_PTRACE leaves the mark") {
        REQUIRE(runtime.run_detached(bundle).exit_code == 0);
        auto pid = runtime.pid_from_file(bundle.id());
        REQUIRE(pid);
        TempBundle joiner("exec-gate-joiner");
        joiner.set_shell(loop);
        joiner.add_capabilities({"CAP_SYS_PTRACE"});
        for (auto& ns : joiner.config["linux"]["namespaces"]) {
            if (ns["type"] == "pid") {
                ns["path"] = "/proc/" + std::to_string(*pid) + "/ns/pid";
            }
        }
        auto joined = runtime.run_detached(joiner);
        INFO(joined.describe());
        REQUIRE(joined.exit_code == 0);
        CHECK(::access((state_dir + "/ptrace-capable").c_str(), F_OK) == 0);
        auto result = evil_exec({});
        INFO(result.describe());
        CHECK(contains(result.err, "no exec gate (a process that may hold CAP_SYS_PTRACE shares"));
        CHECK(contains(result.out, "mini-run version"));
        CHECK(runtime.force_delete(joiner.id()).exit_code == 0);
    }
    SECTION("the container's root, without CAP_SYS_PTRACE, sees the exec'd mini-run but cannot "
            "reach its executable") {
        bundle.set_shell("[ \"$(readlink /proc/self/ns/pid)\" != '" + ns_link(0, "pid") +
                         "' ] || { echo 'host namespace' >&2; exit 1; }\n" + reach_runtime_script);
        auto ran = runtime.run_detached(bundle);
        INFO("run -d: " << ran.describe());
        REQUIRE(ran.exit_code == 0);
        REQUIRE(wait_until([&] { return contains(ran.out_now(), "attacker-ready\n"); }));
        for (int i = 0; i < 15 || (i < kMaxExecs && !contains(ran.out_now(), "\ndenied ")); ++i) {
            auto exec = runtime({"exec", bundle.id(), "true"});
            INFO("exec " << i << ": " << exec.describe());
            CHECK(exec.exit_code == 0);
        }
        INFO("attacker's output (last part): " << ran.out_now().substr(
                 ran.out_now().size() > 4000 ? ran.out_now().size() - 4000 : 0));
        CHECK(contains(ran.out_now(), "\ndenied /proc/"));
        CHECK_FALSE(contains(ran.out_now(), "REACHED"));
    }
    CHECK(runtime.force_delete(bundle.id()).exit_code == 0);
    CHECK(copy.unchanged());
    reap_orphans();
}
