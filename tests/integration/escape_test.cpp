// Container escapes that a runtime must close. Each test plays the attacker: a hostile
// process inside the container, or a hostile rootfs (a copy of the example one with
// symlinks planted in it), or a hostile config; then it checks from the host that nothing
// outside the container changed: the runtime binary, canary directories and files, the
// host's mount table.
//
// Where runtimes may differ in how they refuse (an error, or a safe fallback), the tests
// assert the security property, not an error message.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace it;

namespace {

constexpr const char* loop = "while true; do sleep 0.1; done";

// The names in a directory, sorted ("." and ".." left out); empty when it cannot be read.
std::vector<std::string> entries_of(const std::string& dir) {
    std::vector<std::string> names;
    DIR* handle = opendir(dir.c_str());
    if (handle == nullptr) {
        return names;
    }
    while (const dirent* entry = readdir(handle)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..") {
            names.push_back(name);
        }
    }
    closedir(handle);
    std::sort(names.begin(), names.end());
    return names;
}

void make_symlink(const std::string& target, const std::string& link) {
    remove_tree(link); // whatever the copied rootfs had there
    ::rmdir(link.c_str());
    ::unlink(link.c_str());
    if (::symlink(target.c_str(), link.c_str()) != 0) {
        throw std::runtime_error("symlink " + link + " -> " + target + " failed");
    }
}

// The host mounts whose line mentions `text` (a unique tmpfs source name, say).
std::vector<std::string> host_mounts_mentioning(const std::string& text) {
    std::vector<std::string> found;
    for (const auto& mount : host_mounts()) {
        if (contains(mount.line, text)) {
            found.push_back(mount.line);
        }
    }
    return found;
}

// A host directory with a file in it, that the container must never touch.
struct Canary {
    TempDir dir{"minirun-it-canary"};
    std::string secret = "it-host-secret-" + std::to_string(getpid());
    std::string file;
    std::vector<std::string> before;

    Canary() {
        file = dir.path() + "/canary";
        write_text(file, secret + "\n");
        before = entries_of(dir.path());
    }
    [[nodiscard]] const std::string& path() const { return dir.path(); }

    // Fails the test (CHECK) when anything changed: entries, the file, mounts on it.
    void check_untouched() const {
        INFO("canary directory " << path());
        CHECK(entries_of(path()) == before);
        CHECK(read_file(file).value_or("<gone>") == secret + "\n");
        CHECK(host_mounts_under(path()).empty());
    }
};

// A host regular file with a secret in it, that the container must neither read nor write.
struct CanaryFile {
    TempDir dir{"minirun-it-canary-file"};
    std::string path;
    std::string secret = "it-host-file-secret-" + std::to_string(getpid());
    struct stat before {};

    CanaryFile() {
        path = dir.path() + "/target";
        write_text(path, secret + "\n");
        ::chmod(path.c_str(), 0640);
        ::lstat(path.c_str(), &before);
    }

    void check_untouched() const {
        INFO("canary file " << path);
        CHECK(read_file(path).value_or("<gone>") == secret + "\n");
        struct stat now {};
        REQUIRE(::lstat(path.c_str(), &now) == 0);
        CHECK(S_ISREG(now.st_mode));
        CHECK((now.st_mode & 07777) == (before.st_mode & 07777));
        CHECK(now.st_uid == before.st_uid);
        CHECK(now.st_gid == before.st_gid);
        CHECK(now.st_ino == before.st_ino);
        CHECK(host_mounts_under(path).empty());
        CHECK(entries_of(dir.path()) == std::vector<std::string>{"target"});
    }
};

// A writable copy of the example rootfs.
void hostile_rootfs(TempBundle& bundle) {
    bundle.copy_rootfs();
    bundle.config["root"]["readonly"] = false;
}

// Drops the config's /dev tmpfs (and what is mounted below it), so the runtime works on the
// rootfs's own /dev.
void without_dev_tmpfs(TempBundle& bundle) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& mount : bundle.config["mounts"]) {
        const auto destination = mount["destination"].get<std::string>();
        if (destination != "/dev" && destination.rfind("/dev/", 0) != 0) {
            kept.push_back(mount);
        }
    }
    bundle.config["mounts"] = kept;
}

std::string sha256(const std::string& path) {
    auto result = run({"/usr/bin/sha256sum", path});
    if (result.exit_code != 0) {
        throw std::runtime_error("sha256sum failed: " + result.describe());
    }
    return split_words(result.out).front();
}

// A copy of the runtime, the binary under attack (the real build is never at risk), on a
// writable file system, so that nothing protects it but the runtime; hashed at once.
struct AttackedBinary {
    TempDir dir{"minirun-it-bin"};
    std::string path = dir.path() + "/mini-run-copy";
    std::string hash_before;

    AttackedBinary() {
        if (run({"/bin/cp", minirun_binary(), path}).exit_code != 0 ||
            ::chmod(path.c_str(), 0755) != 0) {
            throw std::runtime_error("cannot copy the runtime to " + path);
        }
        hash_before = sha256(path);
    }
    [[nodiscard]] bool unchanged() const { return sha256(path) == hash_before; }
};

// /bin/evil in the bundle's rootfs leads to /proc/self/exe: at an execve of it, that is
// whatever execs it. Unprotected, mini-run itself would start in the container.
void add_evil_link(const TempBundle& bundle) {
    if (::symlink("/proc/self/exe", (bundle.rootfs() + "/bin/evil").c_str()) != 0) {
        throw std::runtime_error("cannot make /bin/evil in " + bundle.rootfs());
    }
}

// The descriptor numbers a container script printed between "fds" and "end" lines (one
// `ls /proc/$$/fd` run by the shell as a child, so that only the shell's own show).
std::string listed_fds(const std::string& out) {
    std::string fds;
    bool inside = false;
    for (const auto& line : split_lines(out)) {
        if (line == "fds") {
            inside = true;
        } else if (line == "end") {
            break;
        } else if (inside) {
            fds += (fds.empty() ? "" : " ") + line;
        }
    }
    return fds;
}

const char* const list_fds_script = "ls -l /proc/$$/fd; echo fds; ls /proc/$$/fd; echo end";

// An open descriptor, closed at the end of the scope.
struct Fd {
    int fd = -1;
    explicit Fd(int value) : fd(value) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

} // namespace

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

// How many processes a test execs at most while waiting for the attacker to catch one.
constexpr int kMaxExecs = 400;

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

// The capabilities a privileged attacker would have (to open other processes' exe links
// and write root-owned files).
void privileged(TempBundle& bundle) {
    bundle.add_capabilities({"CAP_SYS_PTRACE", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH",
                             "CAP_FOWNER", "CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID"});
    bundle.config["process"]["noNewPrivileges"] = false;
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
