// exec --apparmor and --process-label (runc's exec options): what they set on the exec'd
// process, and the one line a host without the LSM gets instead.
#include "security/security.hpp"

#include <catch2/catch.hpp>

using namespace minirun;
using minirun::runtime::security::apply_exec_labels;
using minirun::runtime::security::HostLsms;

namespace {

spec::Process container_process() {
    spec::Process process;
    process.args = {"sh"};
    process.apparmor_profile = "container-profile";
    process.selinux_label = "system_u:system_r:container_t:s0";
    return process;
}

constexpr HostLsms kBoth{.apparmor = true, .selinux = true};
constexpr HostLsms kNeither{};

} // namespace

TEST_CASE("exec labels: --apparmor and --process-label replace the process's own", "[exec][lsm]") {
    spec::Process process = container_process();
    REQUIRE(apply_exec_labels("exec-profile", "system_u:system_r:other_t:s0", kBoth, process));
    CHECK(process.apparmor_profile == "exec-profile");
    CHECK(process.selinux_label == "system_u:system_r:other_t:s0");
    CHECK(process.args == std::vector<std::string>{"sh"}); // nothing else changes
}

TEST_CASE("exec labels: each option alone changes only its own field", "[exec][lsm]") {
    spec::Process apparmor = container_process();
    REQUIRE(apply_exec_labels("exec-profile", "", HostLsms{.apparmor = true}, apparmor));
    CHECK(apparmor.apparmor_profile == "exec-profile");
    CHECK(apparmor.selinux_label == "system_u:system_r:container_t:s0");

    spec::Process selinux = container_process();
    REQUIRE(
        apply_exec_labels("", "system_u:system_r:other_t:s0", HostLsms{.selinux = true}, selinux));
    CHECK(selinux.apparmor_profile == "container-profile");
    CHECK(selinux.selinux_label == "system_u:system_r:other_t:s0");
}

TEST_CASE("exec labels: neither option given leaves the process as it is, on any host",
          "[exec][lsm]") {
    // As runc: an empty value is no override. Nothing is checked either: the container's
    // own labels were checked by its create.
    spec::Process process = container_process();
    REQUIRE(apply_exec_labels("", "", kNeither, process));
    CHECK(process.apparmor_profile == "container-profile");
    CHECK(process.selinux_label == "system_u:system_r:container_t:s0");
}

TEST_CASE("exec labels: an LSM the host lacks is one line naming the option", "[exec][lsm]") {
    spec::Process process = container_process();
    SECTION("--apparmor") {
        auto applied = apply_exec_labels("exec-profile", "", HostLsms{.selinux = true}, process);
        REQUIRE_FALSE(applied);
        CHECK(applied.error().message() == "exec --apparmor: AppArmor is not enabled on this host");
        CHECK(applied.error().errno_value() == ENOTSUP);
    }
    SECTION("--process-label") {
        auto applied = apply_exec_labels("", "some_t", HostLsms{.apparmor = true}, process);
        REQUIRE_FALSE(applied);
        CHECK(applied.error().message() ==
              "exec --process-label: SELinux is not enabled on this host");
    }
    SECTION("both: the first refused is reported") {
        auto applied = apply_exec_labels("exec-profile", "some_t", kNeither, process);
        REQUIRE_FALSE(applied);
        CHECK(applied.error().message() == "exec --apparmor: AppArmor is not enabled on this host");
    }
    // Refused means unchanged.
    CHECK(process.apparmor_profile == "container-profile");
    CHECK(process.selinux_label == "system_u:system_r:container_t:s0");
}
