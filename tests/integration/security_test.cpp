// The process's security settings, each read back from inside the container: the five
// capability sets, no_new_privs and seccomp (/proc/self/status), rlimits, oom_score_adj,
// sysctls, masked and read-only paths, a read-only root, the umask, supplementary groups,
// the personality, and the seccomp profile of `spec --seccomp`.
//
// Expected values come from the config and the kernel's rules; runc is the reference.
//
// This file: capabilities and no_new_privs; seccomp in security_seccomp_test.cpp, the rest
// in security_limits_test.cpp. Shared helpers: security_helpers.hpp.
#include "security_helpers.hpp"

#include <catch2/catch.hpp>

using namespace security_test;

// ---------------------------------------------------------------------------------------
// Capabilities

TEST_CASE("capabilities: the example config's three, in bounding, effective and permitted",
          "[security][capabilities]") {
    TempBundle bundle("caps-example");
    bundle.set_shell("cat /proc/self/status; echo ready; read line");
    Child minirun = bundle.start();
    bool ready = minirun.wait_for_output("ready\n");
    INFO("stdout: " << minirun.out() << "\nstderr: " << minirun.err());
    REQUIRE(ready);
    // CAP_AUDIT_WRITE (29), CAP_KILL (5), CAP_NET_BIND_SERVICE (10).
    const uint64_t three = 0x20000420;
    REQUIRE(mask_of({"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"}) == three);
    check_caps(caps_in(minirun.out()), 0, three, three, three, 0);

    // The same from the host, for the init itself.
    auto init = find_container_init(minirun.pid());
    REQUIRE(init.has_value());
    auto host_view = read_file("/proc/" + std::to_string(*init) + "/status").value_or("");
    check_caps(caps_in(host_view), 0, three, three, three, 0);

    minirun.write_stdin("\n");
    auto result = minirun.wait();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: five different sets, as root with no_new_privs",
          "[security][capabilities]") {
    // As root, execve recomputes permitted = (bounding | inheritable | ambient), capped by the
    // old permitted set under no_new_privs, and effective = permitted: so what shows is
    // bounding, inheritable, ambient exactly, and permitted (= effective) exactly.
    TempBundle bundle("caps-five");
    const std::vector<std::string> bounding{
        "CAP_CHOWN",   "CAP_KILL",        "CAP_NET_BIND_SERVICE",
        "CAP_NET_RAW", "CAP_AUDIT_WRITE", "CAP_SETUID"};
    const std::vector<std::string> permitted{"CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
                                             "CAP_SETUID"};
    const std::vector<std::string> effective{"CAP_KILL", "CAP_NET_BIND_SERVICE"};
    const std::vector<std::string> inheritable{"CAP_NET_BIND_SERVICE", "CAP_NET_RAW"};
    const std::vector<std::string> ambient{"CAP_NET_BIND_SERVICE"};
    bundle.config["process"]["capabilities"] = {{"bounding", bounding},
                                                {"permitted", permitted},
                                                {"effective", effective},
                                                {"inheritable", inheritable},
                                                {"ambient", ambient}};
    bundle.config["process"]["noNewPrivileges"] = true;
    bundle.set_shell("cat /proc/self/status");
    auto result = run_ok(bundle);
    INFO(result.describe());
    check_caps(caps_in(result.out), mask_of(inheritable), mask_of(permitted), mask_of(permitted),
               mask_of(bounding), mask_of(ambient));
    CHECK(status_value(result.out, "NoNewPrivs") == "1");
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: a non-root user keeps the ambient set across execve",
          "[security][capabilities]") {
    // uid 1000 runs a file without file capabilities: permitted = effective = ambient.
    TempBundle bundle("caps-ambient");
    const std::vector<std::string> bounding{"CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
                                            "CAP_AUDIT_WRITE"};
    const std::vector<std::string> some{"CAP_NET_BIND_SERVICE", "CAP_NET_RAW"};
    const std::vector<std::string> ambient{"CAP_NET_BIND_SERVICE"};
    bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    bundle.set_shell("echo uid $(id -u); cat /proc/self/status");
    SECTION("with ambient capabilities") {
        bundle.config["process"]["capabilities"] = {{"bounding", bounding},
                                                    {"permitted", some},
                                                    {"effective", some},
                                                    {"inheritable", some},
                                                    {"ambient", ambient}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "uid") == "1000");
        check_caps(caps_in(result.out), mask_of(some), mask_of(ambient), mask_of(ambient),
                   mask_of(bounding), mask_of(ambient));
    }
    SECTION("without ambient capabilities, none but the bounding set") {
        bundle.config["process"]["capabilities"] = {
            {"bounding", bounding}, {"permitted", some}, {"effective", some}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "uid") == "1000");
        check_caps(caps_in(result.out), 0, 0, 0, mask_of(bounding), 0);
    }
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: empty sets leave root with none at all", "[security][capabilities]") {
    TempBundle bundle("caps-none");
    bundle.config["process"]["capabilities"] = {{"bounding", nlohmann::json::array()},
                                                {"permitted", nlohmann::json::array()},
                                                {"effective", nlohmann::json::array()},
                                                {"inheritable", nlohmann::json::array()},
                                                {"ambient", nlohmann::json::array()}};
    // Without CAP_KILL, root cannot signal a process of another uid; without CAP_CHOWN it
    // cannot give a file away.
    writable_tmp(bundle);
    bundle.set_shell("cat /proc/self/status; touch /tmp/f; chown 1000 /tmp/f 2>&1; "
                     "echo chown $?");
    auto result = run_ok(bundle);
    INFO(result.describe());
    check_caps(caps_in(result.out), 0, 0, 0, 0, 0);
    CHECK(value_of(result.out, "chown") != "0");
    CHECK(contains(result.out, "Operation not permitted"));
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: without process.capabilities, none at all, as runc and crun",
          "[security][capabilities]") {
    // The spec leaves it open; runc (its init starts from an empty set) and crun both run
    // such a process with every set empty, and so does an exec into it.
    TempBundle bundle("caps-absent");
    bundle.config["process"].erase("capabilities");
    bundle.set_shell("cat /proc/self/status");
    bundle.write_config();
    auto result = run_ok(bundle);
    INFO(result.describe());
    check_caps(caps_in(result.out), 0, 0, 0, 0, 0);
    CHECK(status_value(result.out, "NoNewPrivs") == "1");

    bundle.set_shell("sleep 30");
    bundle.write_config();
    Runtime runtime;
    auto started = runtime.run_detached(bundle);
    INFO("run --detach: " << started.describe());
    REQUIRE(started.exit_code == 0);
    auto exec = runtime({"exec", bundle.id(), "cat", "/proc/self/status"});
    INFO("exec: " << exec.describe());
    CHECK(exec.exit_code == 0);
    check_caps(caps_in(exec.out), 0, 0, 0, 0, 0);
    auto deleted = runtime({"delete", "--force", bundle.id()});
    CHECK(deleted.exit_code == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: every capability the caller has", "[security][capabilities]") {
    TempBundle bundle("caps-all");
    const auto all = all_capabilities();
    bundle.config["process"]["capabilities"] = {
        {"bounding", all}, {"permitted", all}, {"effective", all}};
    bundle.set_shell("cat /proc/self/status");
    auto result = run_ok(bundle);
    INFO(result.describe());
    const uint64_t full = own_bounding();
    CHECK(mask_of(all) == full);
    check_caps(caps_in(result.out), 0, full, full, full, 0);
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: an unknown name is a warning naming it, and the container runs",
          "[security][capabilities]") {
    // runtime-spec 1.1 and later (config.md): a capability that cannot be granted is logged
    // as a warning; runc too ("ignoring unknown or unavailable capabilities") goes on.
    const std::string set =
        GENERATE(std::string("bounding"), std::string("effective"), std::string("permitted"),
                 std::string("inheritable"), std::string("ambient"));
    INFO("set " << set);
    TempBundle bundle("caps-unknown");
    auto& list = bundle.config["process"]["capabilities"][set];
    if (list.is_null()) {
        list = nlohmann::json::array();
    }
    list.push_back("CAP_IT_BOGUS");
    const size_t index = list.size() - 1;
    bundle.set_shell("echo it-process-ran; grep CapBnd /proc/self/status");
    auto result = bundle.run();
    INFO(result.describe());
    CHECK(result.exit_code == 0);
    CHECK(contains(result.out, "it-process-ran"));
    CHECK(contains(result.err, "mini-run: warning: process.capabilities." + set + "[" +
                                   std::to_string(index) +
                                   "]: unknown capability \"CAP_IT_BOGUS\"; skipped"));
    check_no_leftovers(bundle);
}

TEST_CASE("capabilities: an ambient set without an inheritable one runs, with runc's warning",
          "[security][capabilities]") {
    // runc 1.1's `runc spec` and crun's list CAP_AUDIT_WRITE, CAP_KILL and CAP_NET_BIND_SERVICE
    // as ambient but not inheritable: the kernel cannot raise them (this once failed with
    // "raise ambient capability CAP_AUDIT_WRITE"). The container runs without them, and runc
    // 1.3 warns "can't raise ambient capability CAP_X: ..." (its capabilities.bats).
    TempBundle bundle("caps-runc-spec");
    const nlohmann::json caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
    bundle.config["process"]["capabilities"] = {
        {"bounding", caps}, {"effective", caps}, {"permitted", caps}, {"ambient", caps}};
    bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    bundle.set_shell("grep -E '^Cap(Amb|Prm)' /proc/self/status");
    auto result = bundle.run();
    INFO(result.describe());
    REQUIRE(result.exit_code == 0);
    for (const auto& cap : caps) {
        CHECK(contains(result.err,
                       "can't raise ambient capability " + cap.get<std::string>() + ": "));
    }
    // Not raised, so a non-root process keeps none across its execve.
    CHECK(contains(result.out, "CapAmb:\t0000000000000000"));
    CHECK(contains(result.out, "CapPrm:\t0000000000000000"));
    check_no_leftovers(bundle);
}

TEST_CASE("exec --cap adds to bounding, effective and permitted only (no inheritable set)",
          "[security][capabilities][exec]") {
    Running container("caps-exec");
    const uint64_t three = 0x20000420;
    const uint64_t admin = mask_of({"CAP_SYS_ADMIN"});
    const uint64_t net_admin = mask_of({"CAP_NET_ADMIN"});

    SECTION("one capability") {
        auto result = container.exec({"--cap", "CAP_SYS_ADMIN"}, {"cat", "/proc/self/status"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        check_caps(caps_in(result.out), 0, three | admin, three | admin, three | admin, 0);
    }
    SECTION("two capabilities") {
        auto result = container.exec({"--cap", "CAP_SYS_ADMIN", "--cap", "CAP_NET_ADMIN"},
                                     {"cat", "/proc/self/status"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        const uint64_t all = three | admin | net_admin;
        check_caps(caps_in(result.out), 0, all, all, all, 0);
    }
    SECTION("without --cap, the config's sets") {
        auto result = container.exec({}, {"cat", "/proc/self/status"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        check_caps(caps_in(result.out), 0, three, three, three, 0);
    }
    // The init keeps its own sets.
    auto init_status = read_file("/proc/" + std::to_string(container.init) + "/status");
    REQUIRE(init_status.has_value());
    check_caps(caps_in(*init_status), 0, three, three, three, 0);
}

TEST_CASE("exec --cap with an inheritable set in the config raises it as ambient too",
          "[security][capabilities][exec]") {
    // runc 1.3: "ambient capabilities can't be set without inheritable", so exec --cap adds
    // to the ambient set only when the config has an inheritable set; a non-root process
    // then keeps the capability across its execve.
    Running container("caps-exec-ambient", [](TempBundle& bundle) {
        const nlohmann::json inheritable = {"CAP_CHOWN", "CAP_SYSLOG"};
        bundle.config["process"]["capabilities"] = {
            {"bounding", {"CAP_KILL", "CAP_CHOWN", "CAP_SYSLOG"}},
            {"effective", {"CAP_KILL"}},
            {"permitted", {"CAP_KILL", "CAP_CHOWN"}},
            {"inheritable", inheritable},
            {"ambient", {"CAP_CHOWN"}}};
    });
    const uint64_t chown = mask_of({"CAP_CHOWN"});
    const uint64_t kill = mask_of({"CAP_KILL"});
    const uint64_t syslog = mask_of({"CAP_SYSLOG"});
    SECTION("as root: runc's capabilities.bats") {
        auto result = container.exec({"--cap", "CAP_SYSLOG"}, {"cat", "/proc/self/status"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        check_caps(caps_in(result.out), chown | syslog, chown | kill | syslog,
                   chown | kill | syslog, chown | kill | syslog, chown | syslog);
    }
    SECTION("as a non-root user: ambient is what it keeps") {
        auto result = container.exec({"--user", "1000:1000", "--cap", "CAP_SYSLOG"},
                                     {"cat", "/proc/self/status"});
        INFO(result.describe());
        REQUIRE(result.exit_code == 0);
        check_caps(caps_in(result.out), chown | syslog, chown | syslog, chown | syslog,
                   chown | kill | syslog, chown | syslog);
    }
}

// ---------------------------------------------------------------------------------------
// no_new_privs

TEST_CASE("noNewPrivileges: NoNewPrivs in /proc/self/status", "[security][nnp]") {
    TempBundle bundle("nnp");
    bundle.set_shell("cat /proc/self/status");
    SECTION("true") {
        bundle.config["process"]["noNewPrivileges"] = true;
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(status_value(result.out, "NoNewPrivs") == "1");
    }
    SECTION("false") {
        bundle.config["process"]["noNewPrivileges"] = false;
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(status_value(result.out, "NoNewPrivs") == "0");
    }
    SECTION("absent") {
        bundle.config["process"].erase("noNewPrivileges");
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(status_value(result.out, "NoNewPrivs") == "0");
    }
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// seccomp
