#include "plan_bundle.hpp"
#include "security/exec_gate.hpp"
#include "skips.hpp"
#include "sync_wire.hpp"

#include <catch2/catch.hpp>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace minirun;
using namespace minirun::runtime;
using nlohmann::json;

namespace {

// A container `run` could start through the gate: new pid and mount namespaces, nothing
// else that rules it out.
json gate_config() {
    return json{
        {"ociVersion", "1.0.2"},
        {"root", {{"path", "rootfs"}}},
        {"process", {{"args", {"sh"}}, {"cwd", "/"}}},
        {"linux", {{"namespaces", json::array({{{"type", "pid"}}, {{"type", "mount"}}})}}},
    };
}

std::string reason_for(const json& config) {
    auto plan = minirun::testing::PlanBundle().plan(config);
    INFO((plan ? std::string() : plan.error().message()));
    REQUIRE(plan);
    auto spec = spec::parse_spec(config.dump());
    REQUIRE(spec);
    return exec_gate::unusable_because(*spec);
}

json seccomp_with(const std::string& default_action, const json& syscalls) {
    return json{{"defaultAction", default_action}, {"syscalls", syscalls}};
}

} // namespace

TEST_CASE("exec gate: which containers may take it", "[exec-gate]") {
    json config = gate_config();
    CHECK(reason_for(config).empty());

    SECTION("no new pid namespace: processes of others may see the init") {
        config["linux"]["namespaces"] = json::array({{{"type", "mount"}}});
        CHECK_THAT(reason_for(config), Catch::Contains("PID namespace"));
    }
    SECTION("hooks that run as copies of the init in the container") {
        config["hooks"]["createContainer"] = json::array({{{"path", "/bin/true"}}});
        CHECK_THAT(reason_for(config), Catch::Contains("hooks"));
        config["hooks"].erase("createContainer");
        config["hooks"]["startContainer"] = json::array({{{"path", "/bin/true"}}});
        CHECK_THAT(reason_for(config), Catch::Contains("hooks"));
    }
    SECTION("hooks the runtime runs on the host do not matter") {
        config["hooks"]["prestart"] = json::array({{{"path", "/bin/true"}}});
        config["hooks"]["poststart"] = json::array({{{"path", "/bin/true"}}});
        config["hooks"]["poststop"] = json::array({{{"path", "/bin/true"}}});
        CHECK(reason_for(config).empty());
    }
    SECTION("an LSM label would apply to the gate's execve") {
        config["process"]["apparmorProfile"] = "container-default";
        CHECK_THAT(reason_for(config), Catch::Contains("LSM"));
        config["process"].erase("apparmorProfile");
        config["process"]["selinuxLabel"] = "system_u:system_r:container_t:s0";
        CHECK_THAT(reason_for(config), Catch::Contains("LSM"));
    }
    SECTION("seccomp: only a filter that surely lets execveat through") {
        const json allow_gate = {{{"names", {"execve", "execveat", "ppoll", "read", "fcntl"}},
                                  {"action", "SCMP_ACT_ALLOW"}}};
        config["linux"]["seccomp"] = seccomp_with("SCMP_ACT_ERRNO", allow_gate);
        CHECK(reason_for(config).empty());
        // The gate also waits for start under the filter.
        config["linux"]["seccomp"] = seccomp_with(
            "SCMP_ACT_ERRNO",
            {{{"names", {"execve", "execveat", "read", "fcntl"}}, {"action", "SCMP_ACT_ALLOW"}}});
        CHECK_THAT(reason_for(config), Catch::Contains("ppoll"));
        config["linux"]["seccomp"] = seccomp_with("SCMP_ACT_ALLOW", json::array());
        CHECK(reason_for(config).empty());
        config["linux"]["seccomp"] =
            seccomp_with("SCMP_ACT_ALLOW", {{{"names", {"mount"}}, {"action", "SCMP_ACT_ERRNO"}}});
        CHECK(reason_for(config).empty());

        // Not named by an allow-list.
        config["linux"]["seccomp"] =
            seccomp_with("SCMP_ACT_ERRNO", {{{"names", {"execve"}}, {"action", "SCMP_ACT_ALLOW"}}});
        CHECK_THAT(reason_for(config), Catch::Contains("execveat"));
        // Refused, or sent to a listener, on an allowing default.
        config["linux"]["seccomp"] = seccomp_with(
            "SCMP_ACT_ALLOW", {{{"names", {"execveat"}}, {"action", "SCMP_ACT_ERRNO"}}});
        CHECK_THAT(reason_for(config), Catch::Contains("execveat"));
        config["linux"]["seccomp"] = seccomp_with(
            "SCMP_ACT_ALLOW", {{{"names", {"execveat"}}, {"action", "SCMP_ACT_NOTIFY"}}});
        config["linux"]["seccomp"]["listenerPath"] = "/run/listener.sock";
        CHECK_THAT(reason_for(config), Catch::Contains("execveat"));
        // Allowed only for some arguments.
        config["linux"]["seccomp"] = seccomp_with(
            "SCMP_ACT_ERRNO", {{{"names", {"execveat"}},
                                {"action", "SCMP_ACT_ALLOW"},
                                {"args", {{{"index", 4}, {"value", 0}, {"op", "SCMP_CMP_EQ"}}}}}});
        CHECK_THAT(reason_for(config), Catch::Contains("execveat"));
    }
}

namespace {

// `exec` of the container's own process into a container made from `config`.
std::string exec_reason_for(const json& config, const exec_gate::ExecFacts& facts,
                            const json& process_changes = json::object()) {
    auto plan = minirun::testing::PlanBundle().plan(config);
    INFO((plan ? std::string() : plan.error().message()));
    REQUIRE(plan);
    json process_json = config["process"];
    process_json.update(process_changes);
    auto process = spec::parse_process(process_json.dump(), "process.json");
    INFO((process ? std::string() : process.error().message()));
    REQUIRE(process);
    auto spec = spec::parse_spec(config.dump());
    REQUIRE(spec);
    return exec_gate::unusable_for_exec_because(*spec, *process, facts);
}

// The default capabilities of `runc spec`: no CAP_SYS_PTRACE anywhere.
json runc_spec_capabilities() {
    const json set = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
    return {{"bounding", set}, {"effective", set}, {"permitted", set}, {"ambient", set}};
}

} // namespace

TEST_CASE("exec gate: which execs may take it", "[exec-gate]") {
    json config = gate_config();
    config["process"]["capabilities"] = runc_spec_capabilities();
    exec_gate::ExecFacts facts;
    CHECK(exec_reason_for(config, facts).empty());

    SECTION("CAP_SYS_PTRACE in any set of the container's process, without a user namespace") {
        for (const char* set : {"bounding", "effective", "permitted", "inheritable", "ambient"}) {
            json with = config;
            with["process"]["capabilities"][set] = {"CAP_KILL", "CAP_SYS_PTRACE"};
            // The exec'd process itself is as the test gives it: without the capability.
            CHECK_THAT(exec_reason_for(with, facts, {{"capabilities", runc_spec_capabilities()}}),
                       Catch::Contains("container's process may hold CAP_SYS_PTRACE"));
        }
        // No capabilities object at all: none, as runc and crun (security.hpp).
        json without = config;
        without["process"].erase("capabilities");
        CHECK(
            exec_reason_for(without, facts, {{"capabilities", runc_spec_capabilities()}}).empty());
    }
    SECTION("this process may hold it (exec --cap CAP_SYS_PTRACE), or an earlier one did") {
        json caps = runc_spec_capabilities();
        caps["bounding"].push_back("CAP_SYS_PTRACE");
        CHECK_THAT(exec_reason_for(config, facts, {{"capabilities", caps}}),
                   Catch::Contains("this process may hold CAP_SYS_PTRACE"));
        facts.ptrace_marked = true;
        CHECK_THAT(exec_reason_for(config, facts),
                   Catch::Contains("shares the container's PID namespace"));
    }
    SECTION("a user namespace not mini-run's: nothing in it holds a capability in ours") {
        facts.own_user_namespace = true;
        facts.ptrace_marked = true;
        config["process"]["capabilities"]["bounding"].push_back("CAP_SYS_PTRACE");
        CHECK(exec_reason_for(config, facts).empty());
        // Still not where others see the process, or when the process would turn dumpable.
        facts.suid_dumpable_user = true;
        CHECK_THAT(exec_reason_for(config, facts), Catch::Contains("suid_dumpable"));
    }
    SECTION("a PID namespace that is not the container's own") {
        config["linux"]["namespaces"] = json::array({{{"type", "mount"}}});
        CHECK_THAT(exec_reason_for(config, facts), Catch::Contains("PID namespace is not its own"));
        config["linux"]["namespaces"] =
            json::array({{{"type", "mount"}}, {{"type", "pid"}, {"path", "/proc/1/ns/pid"}}});
        CHECK_THAT(exec_reason_for(config, facts), Catch::Contains("PID namespace is not its own"));
    }
    SECTION("paused, an LSM label, a filter that may stop the gate") {
        facts.paused = true;
        CHECK_THAT(exec_reason_for(config, facts), Catch::Contains("paused"));
        facts.paused = false;
        CHECK_THAT(exec_reason_for(config, facts, {{"apparmorProfile", "container-default"}}),
                   Catch::Contains("LSM"));
        config["linux"]["seccomp"] =
            seccomp_with("SCMP_ACT_ERRNO", {{{"names", {"execve"}}, {"action", "SCMP_ACT_ALLOW"}}});
        CHECK_THAT(exec_reason_for(config, facts), Catch::Contains("execveat"));
    }
}

TEST_CASE("exec gate: may_hold_ptrace reads every set", "[exec-gate]") {
    spec::Process process;
    CHECK_FALSE(exec_gate::may_hold_ptrace(process)); // no capabilities object: none at all
    process.capabilities.emplace();
    CHECK_FALSE(exec_gate::may_hold_ptrace(process));
    process.capabilities->inheritable = {"CAP_SYS_PTRACE"};
    CHECK(exec_gate::may_hold_ptrace(process));
}

TEST_CASE("exec gate: a sealed, executable memfd that nobody can change", "[exec-gate]") {
    auto gate = exec_gate::open_gate();
    if (!gate) {
        minirun_tests::skip_test("no exec gate here: " + gate.error().message());
        return;
    }
    struct stat info {};
    REQUIRE(::fstat(gate->get(), &info) == 0);
    CHECK(S_ISREG(info.st_mode));
    CHECK(info.st_size > 0);
    CHECK(info.st_size < 16384);
    CHECK((::fcntl(gate->get(), F_GETFD) & FD_CLOEXEC) != 0);
    const int seals = ::fcntl(gate->get(), F_GET_SEALS);
    CHECK((seals & F_SEAL_WRITE) != 0);
    CHECK((seals & F_SEAL_SEAL) != 0);
    CHECK(::pwrite(gate->get(), "x", 1, 0) < 0);
    CHECK(::ftruncate(gate->get(), 0) < 0);
    // An ELF executable: its first bytes.
    char magic[4] = {};
    REQUIRE(::pread(gate->get(), magic, sizeof(magic), 0) == 4);
    CHECK(std::string(magic, 4) == "\x7f"
                                   "ELF");
}

TEST_CASE("exec gate: the program waits for start on its fifo, execs its argv[2], and "
          "reports a failure on the sync fd in mini-run's frame",
          "[exec-gate]") {
    auto gate = exec_gate::open_gate();
    if (!gate) {
        minirun_tests::skip_test("no exec gate here: " + gate.error().message());
        return;
    }
    int sockets[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) == 0);
    int start[2];
    REQUIRE(::pipe2(start, O_NONBLOCK | O_CLOEXEC) == 0);
    const std::string sync = std::to_string(sockets[1]);
    const std::string fifo = std::to_string(start[0]);

    // Starts the gate as the init does: the fds it is told about survive its execve.
    auto spawn_gate = [&](std::vector<std::string> args) {
        pid_t child = ::fork();
        if (child == 0) {
            ::fcntl(sockets[1], F_SETFD, 0);
            if (args[1] == fifo) {
                ::fcntl(start[0], F_SETFD, 0);
            }
            std::vector<char*> argv;
            for (auto& arg : args) {
                argv.push_back(arg.data());
            }
            argv.push_back(nullptr);
            char* envp[] = {nullptr};
            ::execveat(gate->get(), "", argv.data(), envp, AT_EMPTY_PATH);
            ::_exit(99);
        }
        return child;
    };
    auto exit_code = [](pid_t child) {
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        REQUIRE(WIFEXITED(status));
        return WEXITSTATUS(status);
    };
    auto error_frame = [&]() {
        char frame[4096];
        ssize_t got = ::recv(sockets[0], frame, sizeof(frame), MSG_DONTWAIT);
        REQUIRE(got > 8);
        uint32_t message = 0;
        int32_t error = 0;
        std::memcpy(&message, frame, 4);
        std::memcpy(&error, frame + 4, 4);
        CHECK(message == static_cast<uint32_t>(ToParent::kError));
        return std::pair{error, std::string(frame + 8, static_cast<size_t>(got) - 8)};
    };
    char none = 0;

    // No fifo: at once. Neither fd reaches the process; on success no frame arrives.
    const std::string leaked =
        "[ -e /proc/self/fd/" + sync + " ] || [ -e /proc/self/fd/" + fifo + " ] && exit 9; exit 7";
    CHECK(exit_code(spawn_gate({sync, "-1", "/bin/sh", "sh", "-c", leaked})) == 7);
    CHECK(::recv(sockets[0], &none, 1, MSG_DONTWAIT) < 0);

    // A failed execve: mini-run's frame, exit 1.
    CHECK(exit_code(spawn_gate({sync, "-1", "/nonexistent/program", "program"})) == 1);
    auto [error, text] = error_frame();
    CHECK(error == ENOENT);
    CHECK(text == "exec /nonexistent/program: no such file or directory");

    // With a fifo (a pipe will do): nothing runs before its byte arrives.
    pid_t waiting = spawn_gate({sync, fifo, "/bin/sh", "sh", "-c", leaked});
    ::usleep(100000);
    int status = 0;
    CHECK(::waitpid(waiting, &status, WNOHANG) == 0);
    REQUIRE(::write(start[1], "0", 1) == 1);
    CHECK(exit_code(waiting) == 7);

    // A writer that closes without a byte is no start.
    ::close(start[1]);
    CHECK(exit_code(spawn_gate({sync, fifo, "/bin/true", "true"})) == 1);
    auto [closed_error, closed_text] = error_frame();
    CHECK(closed_error == EPIPE);
    CHECK(closed_text == "wait for start: exec.fifo closed without a start: broken pipe");

    ::close(start[0]);
    ::close(sockets[0]);
    ::close(sockets[1]);
}
