// rlimits, oom_score_adj, sysctls, masked and read-only paths, a read-only root, the umask,
// supplementary groups, the personality and `spec --seccomp`, read back from inside the
// container (see security_test.cpp).
#include "security_helpers.hpp"

#include <catch2/catch.hpp>

using namespace security_test;

TEST_CASE("rlimits: soft and hard limits inside", "[security][rlimits]") {
    TempBundle bundle("rlimits");
    bundle.config["process"]["rlimits"] = {
        {{"type", "RLIMIT_NOFILE"}, {"soft", 512}, {"hard", 1000}},
        {{"type", "RLIMIT_CORE"}, {"soft", 4096}, {"hard", 8192}},
        {{"type", "RLIMIT_NPROC"}, {"soft", 4000}, {"hard", 5000}}};
    bundle.set_shell("echo soft $(ulimit -n); echo hard $(ulimit -Hn); cat /proc/self/limits");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(value_of(result.out, "soft") == "512");
    CHECK(value_of(result.out, "hard") == "1000");
    auto limit_words = [&](const std::string& name) {
        for (const auto& line : split_lines(result.out)) {
            if (line.rfind(name, 0) == 0) {
                return split_words(line.substr(name.size()));
            }
        }
        return std::vector<std::string>{};
    };
    CHECK(limit_words("Max open files") == std::vector<std::string>{"512", "1000", "files"});
    CHECK(limit_words("Max core file size") == std::vector<std::string>{"4096", "8192", "bytes"});
    CHECK(limit_words("Max processes") == std::vector<std::string>{"4000", "5000", "processes"});
    check_no_leftovers(bundle);
}

TEST_CASE("rlimits: an unknown type fails", "[security][rlimits]") {
    TempBundle bundle("rlimits-bad");
    bundle.config["process"]["rlimits"] = {{{"type", "RLIMIT_IT_BOGUS"}, {"soft", 1}, {"hard", 1}}};
    check_refused(bundle, {"RLIMIT_IT_BOGUS"});
}

TEST_CASE("oomScoreAdj: /proc/self/oom_score_adj inside, the caller's unchanged",
          "[security][oom]") {
    const std::string before = read_file("/proc/self/oom_score_adj").value_or("?");
    // Below the caller's value needs CAP_SYS_RESOURCE, which this VM's root may lack.
    const int value = GENERATE(500, 1000, -100);
    if (value < 0 && !have_capability(24)) {
        skip_test("oomScoreAdj " + std::to_string(value) +
                  ": no CAP_SYS_RESOURCE, so oom_score_adj cannot be lowered");
        return;
    }
    INFO("oomScoreAdj " << value);
    TempBundle bundle("oom");
    bundle.config["process"]["oomScoreAdj"] = value;
    bundle.set_shell("cat /proc/self/oom_score_adj");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(result.out == std::to_string(value) + "\n");
    CHECK(read_file("/proc/self/oom_score_adj").value_or("?") == before);
    check_no_leftovers(bundle);
}

namespace {

// Puts host sysctls back as they were, should a broken runtime have written them.
class SysctlGuard {
public:
    explicit SysctlGuard(std::vector<std::string> paths) : paths_(std::move(paths)) {
        for (const auto& path : paths_) {
            values_.push_back(read_file(path));
        }
    }
    SysctlGuard(const SysctlGuard&) = delete;
    SysctlGuard& operator=(const SysctlGuard&) = delete;
    ~SysctlGuard() {
        for (size_t i = 0; i < paths_.size(); ++i) {
            if (values_[i] && read_file(paths_[i]) != values_[i]) {
                std::ofstream(paths_[i]) << *values_[i];
            }
        }
    }

private:
    std::vector<std::string> paths_;
    std::vector<std::optional<std::string>> values_;
};

const std::vector<std::string> guarded_sysctls{"/proc/sys/net/ipv4/ip_forward",
                                               "/proc/sys/kernel/shmmax", "/proc/sys/vm/swappiness",
                                               "/proc/sys/user/max_user_namespaces"};

} // namespace

TEST_CASE("sysctl: namespaced sysctls are set inside, the host's stay", "[security][sysctl]") {
    SysctlGuard guard(guarded_sysctls);
    const auto host_forward = read_file("/proc/sys/net/ipv4/ip_forward");
    const auto host_shmmax = read_file("/proc/sys/kernel/shmmax");
    REQUIRE(host_forward.has_value());
    REQUIRE(host_shmmax.has_value());
    const std::string forward = *host_forward == "1\n" ? "0" : "1";
    const std::string shmmax = "123456789";
    REQUIRE(*host_shmmax != shmmax + "\n");

    TempBundle bundle("sysctl");
    bundle.config["linux"]["sysctl"] = {{"net.ipv4.ip_forward", forward},
                                        {"kernel.shmmax", shmmax}};
    bundle.set_shell("echo forward $(cat /proc/sys/net/ipv4/ip_forward); "
                     "echo shmmax $(cat /proc/sys/kernel/shmmax)");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(value_of(result.out, "forward") == forward);
    CHECK(value_of(result.out, "shmmax") == shmmax);
    CHECK(read_file("/proc/sys/net/ipv4/ip_forward") == host_forward);
    CHECK(read_file("/proc/sys/kernel/shmmax") == host_shmmax);
    check_no_leftovers(bundle);
}

TEST_CASE("sysctl: user.* is the container's own user namespace's limit, the host's stays",
          "[security][sysctl]") {
    // /proc/sys/user holds per-user-namespace limits: written by the init once it is root in
    // its new user namespace, they are that namespace's, as runc 1.4 allows.
    const std::string host_path = "/proc/sys/user/max_user_namespaces";
    SysctlGuard guard(guarded_sysctls);
    const auto host_value = read_file(host_path);
    REQUIRE(host_value.has_value());
    const std::string value = *host_value == "1234\n" ? "1235" : "1234";

    TempBundle bundle("sysctl-userns");
    bundle.copy_rootfs(std::make_pair(100000U, 100000U));
    bundle.add_user_namespace();
    bundle.config["linux"]["sysctl"] = {{"user.max_user_namespaces", value}};
    bundle.set_shell("echo inside $(cat /proc/sys/user/max_user_namespaces)");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(value_of(result.out, "inside") == value);
    CHECK(read_file(host_path) == host_value);
    check_no_leftovers(bundle);
}

TEST_CASE("sysctl: a sysctl of a namespace the container does not have fails",
          "[security][sysctl]") {
    SysctlGuard guard(guarded_sysctls);
    const auto host_forward = read_file("/proc/sys/net/ipv4/ip_forward");
    const auto host_shmmax = read_file("/proc/sys/kernel/shmmax");
    const auto host_swappiness = read_file("/proc/sys/vm/swappiness");
    const auto host_user_namespaces = read_file("/proc/sys/user/max_user_namespaces");
    TempBundle bundle("sysctl-bad");
    SECTION("vm.swappiness is not namespaced") {
        const std::string other =
            host_swappiness == std::optional<std::string>("10\n") ? "11" : "10";
        bundle.config["linux"]["sysctl"] = {{"vm.swappiness", other}};
        check_refused(bundle, {"vm.swappiness"});
    }
    SECTION("net.* without a network namespace") {
        bundle.remove_namespaces({"network"});
        bundle.config["linux"]["sysctl"] = {
            {"net.ipv4.ip_forward", host_forward == std::optional<std::string>("1\n") ? "0" : "1"}};
        check_refused(bundle, {"net.ipv4.ip_forward"});
    }
    SECTION("kernel.shm* without an ipc namespace") {
        bundle.remove_namespaces({"ipc"});
        bundle.config["linux"]["sysctl"] = {{"kernel.shmmax", "123456789"}};
        check_refused(bundle, {"kernel.shmmax"});
    }
    SECTION("user.* without a user namespace: one line naming the key") {
        bundle.config["linux"]["sysctl"] = {{"user.max_user_namespaces", "1234"}};
        bundle.set_shell("echo it-process-ran");
        auto result = bundle.run();
        INFO(result.describe());
        CHECK(result.exit_code != 0);
        CHECK_FALSE(contains(result.out, "it-process-ran"));
        CHECK(split_lines(result.err) ==
              std::vector<std::string>{"mini-run: linux.sysctl.\"user.max_user_namespaces\": "
                                       "needs a private user namespace"});
        check_no_leftovers(bundle);
    }
    CHECK(read_file("/proc/sys/net/ipv4/ip_forward") == host_forward);
    CHECK(read_file("/proc/sys/kernel/shmmax") == host_shmmax);
    CHECK(read_file("/proc/sys/vm/swappiness") == host_swappiness);
    CHECK(read_file("/proc/sys/user/max_user_namespaces") == host_user_namespaces);
}

// ---------------------------------------------------------------------------------------
// Masked and read-only paths, a read-only root

TEST_CASE("maskedPaths: files read empty, directories show empty", "[security][masked]") {
    const auto hosts_before = read_file(example_rootfs() + "/etc/hosts");
    REQUIRE(hosts_before.has_value());
    REQUIRE_FALSE(hosts_before->empty());
    TempBundle bundle("masked");
    auto& masked = bundle.config["linux"]["maskedPaths"];
    masked.push_back("/proc/cmdline");      // a proc file every kernel has
    masked.push_back("/etc/hosts");         // a file of the rootfs
    masked.push_back("/home");              // a directory of the rootfs (it has user/)
    masked.push_back("/it-does-not-exist"); // skipped
    bundle.set_shell(
        "echo cmdline $(stat -c '%F %t:%T' /proc/cmdline); "
        "echo cmdline-size $(cat /proc/cmdline | wc -c); "
        "echo hosts $(stat -c '%F %t:%T' /etc/hosts); echo hosts-size $(cat /etc/hosts | wc -c); "
        "echo home [$(ls -A /home)]; echo firmware [$(ls -A /sys/firmware)]; "
        "touch /home/x 2>&1; echo touch-home $?; echo x > /etc/hosts; echo write-hosts $?");
    auto result = run_ok(bundle);
    INFO(result.describe());
    // /dev/null: a character device 1:3.
    CHECK(value_of(result.out, "cmdline") == "character special file 1:3");
    CHECK(value_of(result.out, "cmdline-size") == "0");
    CHECK(value_of(result.out, "hosts") == "character special file 1:3");
    CHECK(value_of(result.out, "hosts-size") == "0");
    CHECK(value_of(result.out, "home") == "[]");
    CHECK(value_of(result.out, "firmware") == "[]");
    CHECK(value_of(result.out, "touch-home") != "0");
    CHECK(contains(result.out, "Read-only file system"));
    // Writing the masked file writes /dev/null: the file underneath stays as it was.
    CHECK(read_file(example_rootfs() + "/etc/hosts") == hosts_before);
    struct stat st {};
    CHECK(stat((example_rootfs() + "/home/user").c_str(), &st) == 0);
    check_no_leftovers(bundle);
}

TEST_CASE("readonlyPaths: writes fail with EROFS", "[security][readonly]") {
    TempDir data("minirun-it-data");
    REQUIRE(::mkdir((data.path() + "/ro").c_str(), 0777) == 0);
    REQUIRE(::mkdir((data.path() + "/rw").c_str(), 0777) == 0);
    TempBundle bundle("readonly-paths");
    bundle.config["mounts"].push_back({{"destination", "/data"},
                                       {"type", "bind"},
                                       {"source", data.path()},
                                       {"options", {"rbind", "rw"}}});
    bundle.config["linux"]["readonlyPaths"].push_back("/data/ro");
    bundle.config["linux"]["readonlyPaths"].push_back("/it-does-not-exist");
    bundle.set_shell("touch /data/ro/x 2>&1; echo ro $?; touch /data/rw/x; echo rw $?; "
                     "echo 1 > /proc/sys/kernel/domainname; echo sys $?");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(value_of(result.out, "ro") == "1");
    CHECK(value_of(result.out, "rw") == "0");
    CHECK(value_of(result.out, "sys") != "0");
    CHECK(contains(result.out, "touch: /data/ro/x: Read-only file system"));
    CHECK(contains(result.err, "Read-only file system")); // the shell's redirection
    struct stat st {};
    CHECK(stat((data.path() + "/rw/x").c_str(), &st) == 0);
    CHECK(stat((data.path() + "/ro/x").c_str(), &st) != 0);
    check_no_leftovers(bundle);
}

TEST_CASE("root.readonly: the root filesystem is read-only, mounts on it are not",
          "[security][readonly]") {
    SECTION("readonly true") {
        TempBundle bundle("root-ro");
        bundle.config["root"]["readonly"] = true;
        bundle.set_shell("touch /it-x 2>&1; echo root $?; touch /dev/it-x; echo dev $?; "
                         "awk '$5 == \"/\" { print \"options\", $6 }' /proc/self/mountinfo");
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "root") == "1");
        CHECK(contains(result.out, "Read-only file system"));
        CHECK(value_of(result.out, "dev") == "0");
        const auto options = value_of(result.out, "options");
        CHECK((options == "ro" || options.rfind("ro,", 0) == 0));
        struct stat st {};
        CHECK(lstat((example_rootfs() + "/it-x").c_str(), &st) != 0);
        check_no_leftovers(bundle);
    }
    SECTION("readonly false") {
        TempBundle bundle("root-rw");
        const std::string rootfs = bundle.copy_rootfs();
        bundle.config["root"]["readonly"] = false;
        bundle.set_shell("touch /it-x; echo root $?");
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "root") == "0");
        struct stat st {};
        CHECK(lstat((rootfs + "/it-x").c_str(), &st) == 0);
        check_no_leftovers(bundle);
    }
}

// ---------------------------------------------------------------------------------------
// umask, additionalGids, personality

TEST_CASE("process.user.umask", "[security][user]") {
    TempBundle bundle("umask");
    bundle.set_shell("umask; touch /dev/f; mkdir /dev/d; stat -c '%n %a' /dev/f /dev/d");
    SECTION("077") {
        bundle.config["process"]["user"]["umask"] = 077;
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(split_lines(result.out).front() == "0077");
        CHECK(value_of(result.out, "/dev/f") == "600");
        CHECK(value_of(result.out, "/dev/d") == "700");
    }
    SECTION("absent: 022") {
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(split_lines(result.out).front() == "0022");
        CHECK(value_of(result.out, "/dev/f") == "644");
        CHECK(value_of(result.out, "/dev/d") == "755");
    }
    check_no_leftovers(bundle);
}

TEST_CASE("process.user.additionalGids", "[security][user]") {
    TempBundle bundle("gids");
    bundle.set_shell("echo groups $(id -G); grep Groups: /proc/self/status");
    SECTION("root") {
        bundle.config["process"]["user"]["additionalGids"] = {5, 10, 1234};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "groups") == "0 5 10 1234");
        CHECK(status_value(result.out, "Groups") == "5");
        CHECK(contains(result.out, "Groups:\t5 10 1234"));
    }
    SECTION("uid 1000") {
        bundle.config["process"]["user"] = {
            {"uid", 1000}, {"gid", 1000}, {"additionalGids", {5, 10}}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "groups") == "1000 5 10");
    }
    SECTION("none: no supplementary groups") {
        bundle.config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(value_of(result.out, "groups") == "1000");
    }
    check_no_leftovers(bundle);
}

TEST_CASE("linux.personality: LINUX32 makes uname -m show i686", "[security][personality]") {
    // runc 1.1 ignores linux.personality (it came with runc 1.2).
    TempBundle bundle("personality");
    bundle.set_shell("uname -m");
    SECTION("LINUX32") {
        bundle.config["linux"]["personality"] = {{"domain", "LINUX32"}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(result.out == "i686\n");
    }
    SECTION("LINUX") {
        bundle.config["linux"]["personality"] = {{"domain", "LINUX"}};
        auto result = run_ok(bundle);
        INFO(result.describe());
        CHECK(result.out == "x86_64\n");
    }
    check_no_leftovers(bundle);
}

// ---------------------------------------------------------------------------------------
// spec --seccomp

TEST_CASE("spec --seccomp: a default deny-list profile that containers run with",
          "[security][seccomp][spec]") {
    // runc's `spec` has no --seccomp.
    TempBundle bundle("spec-seccomp");
    auto made = run_minirun({"spec", "--seccomp", "--bundle", bundle.dir()});
    INFO(made.describe());
    REQUIRE(made.exit_code == 0);
    auto text = read_file(bundle.config_path());
    REQUIRE(text.has_value());
    auto config = nlohmann::json::parse(*text, nullptr, false);
    REQUIRE_FALSE(config.is_discarded());
    REQUIRE(config["linux"]["seccomp"].is_object());
    const auto& seccomp = config["linux"]["seccomp"];
    INFO("seccomp: " << seccomp.dump(2));
    CHECK(seccomp["defaultAction"] == "SCMP_ACT_ALLOW");
    REQUIRE(seccomp["syscalls"].is_array());
    for (const char* name : {"kexec_load", "init_module", "bpf", "keyctl"}) {
        INFO("syscall " << name);
        bool denied = false;
        for (const auto& rule : seccomp["syscalls"]) {
            const auto& names = rule["names"];
            if (std::find(names.begin(), names.end(), name) != names.end()) {
                denied = rule["action"] == "SCMP_ACT_ERRNO" &&
                         (!rule.contains("errnoRet") || rule["errnoRet"] == 1);
            }
        }
        CHECK(denied);
    }
    // Without --seccomp: no profile.
    TempBundle plain("spec-plain");
    auto plain_made = run_minirun({"spec", "--bundle", plain.dir()});
    INFO(plain_made.describe());
    REQUIRE(plain_made.exit_code == 0);
    auto plain_config =
        nlohmann::json::parse(read_file(plain.config_path()).value_or(""), nullptr, false);
    REQUIRE_FALSE(plain_config.is_discarded());
    CHECK_FALSE(plain_config["linux"].contains("seccomp"));

    // A container runs with it, under the filter.
    bundle.config = config;
    bundle.config["root"]["path"] = example_rootfs();
    bundle.config["process"]["terminal"] = false;
    bundle.set_shell("grep Seccomp: /proc/self/status; echo ok");
    auto result = run_ok(bundle);
    INFO(result.describe());
    CHECK(seccomp_line(result.out) == "2");
    CHECK(contains(result.out, "ok\n"));
    check_no_leftovers(bundle);
}
