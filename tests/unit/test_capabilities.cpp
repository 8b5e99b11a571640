#include "capture_stderr.hpp"
#include "security/capabilities.hpp"
#include "skips.hpp"
#include "temp_dir.hpp"

#include "minirun/log.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/capability.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::capture_stderr;
using minirun::testing::TempDir;
using Caps = std::vector<int>;

// The capability numbers (CAP_CHOWN, ...) are the kernel's, from <linux/capability.h>.

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The Cap* lines of /proc/self/status ("CapEff" -> mask).
std::map<std::string, uint64_t> parse_cap_masks(const std::string& status) {
    std::map<std::string, uint64_t> masks;
    std::istringstream lines(status);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.starts_with("Cap") && line.find(':') != std::string::npos) {
            std::string name = line.substr(0, line.find(':'));
            masks[name] = std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
        }
    }
    return masks;
}

uint64_t own_mask(const std::string& name) {
    return parse_cap_masks(slurp("/proc/self/status"))[name];
}

// The privileged tests need root's capabilities, not just uid 0 (a restricted container
// may run us as root without them).
bool has_effective(std::initializer_list<int> caps) {
    uint64_t effective = own_mask("CapEff");
    uint64_t bounding = own_mask("CapBnd");
    for (int cap : caps) {
        uint64_t bit = uint64_t{1} << cap;
        if ((effective & bit) == 0 || (bounding & bit) == 0) {
            return false;
        }
    }
    return true;
}

// Runs `body` in a forked child (capability changes are for good) and returns what it
// returned. The child never touches Catch2.
std::string in_child(const std::function<std::string()>& body) {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        std::string out = body();
        const char* data = out.data();
        size_t left = out.size();
        while (left > 0) {
            ssize_t written = ::write(fds[1], data, left);
            if (written <= 0) {
                ::_exit(1);
            }
            data += written;
            left -= static_cast<size_t>(written);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buffer[4096];
    ssize_t length = 0;
    while ((length = ::read(fds[0], buffer, sizeof buffer)) > 0) {
        out.append(buffer, static_cast<size_t>(length));
    }
    ::close(fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    return out;
}

// libcap's name for a capability, in the config's upper case.
std::string upper_cap_name(int cap) {
    char* name = cap_to_name(cap);
    std::string out = name != nullptr ? name : "";
    cap_free(name);
    for (char& c : out) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string status_or_error(const Status& status) {
    return status.ok() ? std::string() : status.error().message();
}

} // namespace

TEST_CASE("kernel_last_cap reads the kernel's answer", "[caps]") {
    int last = caps::kernel_last_cap();
    CHECK(last >= CAP_SYS_ADMIN);
    CHECK(last <= 63);
    std::string text = slurp("/proc/sys/kernel/cap_last_cap");
    if (!text.empty()) {
        CHECK(last == std::stoi(text));
    }
}

TEST_CASE("resolve maps names to numbers in every set", "[caps]") {
    spec::Capabilities names;
    names.bounding = {"CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_BIND_SERVICE", "CAP_KILL"};
    names.effective = {"CAP_KILL"};
    names.permitted = {"CAP_NET_BIND_SERVICE", "CAP_SETUID", "CAP_SETPCAP", "CAP_CHOWN"};
    names.inheritable = {"CAP_SETGID", "CAP_CHOWN", "CAP_SETPCAP"};
    names.ambient = {"CAP_SETPCAP", "CAP_CHOWN"};
    auto sets = caps::resolve(names, 40);
    REQUIRE(sets.ok());
    CHECK(sets->bounding == Caps({CAP_CHOWN, CAP_SYS_ADMIN, CAP_NET_BIND_SERVICE, CAP_KILL}));
    CHECK(sets->effective == Caps({CAP_KILL}));
    CHECK(sets->permitted == Caps({CAP_NET_BIND_SERVICE, CAP_SETUID, CAP_SETPCAP, CAP_CHOWN}));
    CHECK(sets->inheritable == Caps({CAP_SETGID, CAP_CHOWN, CAP_SETPCAP}));
    CHECK(sets->ambient == Caps({CAP_SETPCAP, CAP_CHOWN}));

    auto empty = caps::resolve(spec::Capabilities{}, 40);
    REQUIRE(empty.ok());
    CHECK(empty->bounding.empty());
    CHECK(empty->ambient.empty());
}

TEST_CASE("resolve: the CAP_ prefix as the spec parser has it, any case after it", "[caps]") {
    spec::Capabilities names;
    names.effective = {"CAP_sys_admin", "CAP_Net_Bind_Service"};
    auto sets = caps::resolve(names, 40);
    REQUIRE(sets.ok());
    CHECK(sets->effective == Caps({CAP_SYS_ADMIN, CAP_NET_BIND_SERVICE}));

    // libcap alone would take these; runc does not: they are unknown names, skipped.
    REQUIRE(log::configure(log::Options{}).ok());
    for (const char* name : {"cap_sys_admin", "SYS_ADMIN", "21"}) {
        names.effective = {name, "CAP_KILL"};
        Result<caps::CapabilitySets> skipped = Error("not run");
        std::string warnings = capture_stderr([&] { skipped = caps::resolve(names, 40); });
        REQUIRE(skipped.ok());
        CHECK(skipped->effective == Caps({CAP_KILL}));
        CHECK(warnings == cat("mini-run: warning: process.capabilities.effective[0]: unknown "
                              "capability \"",
                              name, "\"; skipped\n"));
    }
}

TEST_CASE("resolve: an unknown name is a warning with its path, and is skipped", "[caps]") {
    // runtime-spec 1.1 and later (config.md): a capability that cannot be granted is a
    // warning. `runc spec` configs carried into newer or older kernels depend on it.
    REQUIRE(log::configure(log::Options{}).ok());
    spec::Capabilities names;
    names.bounding = {"CAP_CHOWN", "CAP_FOO"};
    names.permitted = {"CAP_CHOWN", "CAP_KILL"};
    names.inheritable = {"CAP_CHOWN", "CAP_KILL"};
    names.ambient = {"CAP_CHOWN", "CAP_KILL", "CAP_FOO"};
    Result<caps::CapabilitySets> sets = Error("not run");
    std::string warnings = capture_stderr([&] { sets = caps::resolve(names, 40); });
    REQUIRE(sets.ok());
    CHECK(sets->bounding == Caps({CAP_CHOWN}));
    CHECK(sets->ambient == Caps({CAP_CHOWN, CAP_KILL}));
    CHECK(warnings ==
          "mini-run: warning: process.capabilities.bounding[1]: unknown capability \"CAP_FOO\"; "
          "skipped\n"
          "mini-run: warning: process.capabilities.ambient[2]: unknown capability \"CAP_FOO\"; "
          "skipped\n");
}

TEST_CASE("resolve: an ambient capability that is not also inheritable is skipped with runc's "
          "warning",
          "[caps]") {
    // The kernel would refuse to raise them (PR_CAP_AMBIENT_RAISE needs permitted and
    // inheritable); runc 1.3 warns at its default level, and its capabilities.bats reads it.
    REQUIRE(log::configure(log::Options{}).ok());
    spec::Capabilities names;
    names.bounding = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
    names.effective = names.bounding;
    names.permitted = names.bounding;
    names.ambient = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_CHOWN"};
    names.inheritable = {"CAP_KILL", "CAP_CHOWN"};
    Result<caps::CapabilitySets> sets = Error("not run");
    std::string warnings = capture_stderr([&] { sets = caps::resolve(names, 40); });
    REQUIRE(sets.ok());
    CHECK(sets->ambient == Caps({CAP_KILL}));
    CHECK(sets->permitted == Caps({CAP_AUDIT_WRITE, CAP_KILL, CAP_NET_BIND_SERVICE}));
    CHECK(warnings ==
          "mini-run: warning: process.capabilities.ambient: can't raise ambient capability "
          "CAP_AUDIT_WRITE: it is not inheritable\n"
          "mini-run: warning: process.capabilities.ambient: can't raise ambient capability "
          "CAP_NET_BIND_SERVICE: it is not inheritable\n"
          "mini-run: warning: process.capabilities.ambient: can't raise ambient capability "
          "CAP_CHOWN: it is not permitted and inheritable\n");

    // Every ambient capability also inheritable and permitted: not a word.
    names.ambient = {"CAP_KILL"};
    std::string quiet = capture_stderr([&] { sets = caps::resolve(names, 40); });
    REQUIRE(sets.ok());
    CHECK(sets->ambient == Caps({CAP_KILL}));
    CHECK(quiet.empty());
}

TEST_CASE("resolve: a capability above the kernel's last is skipped with a warning", "[caps]") {
    REQUIRE(log::configure(log::Options{}).ok());
    spec::Capabilities names;
    names.effective = {"CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_KILL"};
    names.ambient = {"CAP_NET_BIND_SERVICE"};
    Result<caps::CapabilitySets> sets = Error("not run");
    std::string warnings = capture_stderr([&] { sets = caps::resolve(names, CAP_KILL); });
    REQUIRE(sets.ok());
    CHECK(sets->effective == Caps({CAP_CHOWN, CAP_KILL}));
    CHECK(sets->ambient.empty());
    CHECK(warnings == "mini-run: warning: process.capabilities.effective[1]: capability "
                      "CAP_SYS_ADMIN is not supported by this kernel; skipped\n"
                      "mini-run: warning: process.capabilities.ambient[0]: capability "
                      "CAP_NET_BIND_SERVICE is not supported by this kernel; skipped\n");
}

TEST_CASE("resolve: duplicates within a set count once", "[caps]") {
    spec::Capabilities names;
    names.permitted = {"CAP_KILL", "CAP_CHOWN", "CAP_KILL", "CAP_kill", "CAP_CHOWN"};
    names.inheritable = {"CAP_KILL"};
    auto sets = caps::resolve(names, 40);
    REQUIRE(sets.ok());
    CHECK(sets->permitted == Caps({CAP_KILL, CAP_CHOWN}));
    CHECK(sets->inheritable == Caps({CAP_KILL}));
}

TEST_CASE("apply rejects a capability number no kernel has, before any change", "[caps]") {
    caps::CapabilitySets sets;
    sets.effective = {64};
    auto applied = caps::apply(sets, minirun::linux_syscalls());
    REQUIRE_FALSE(applied.ok());
    CHECK(applied.error().errno_value() == EINVAL);
    CHECK(applied.error().message() == "effective capabilities: no capability number 64");
}

TEST_CASE("apply: drop, switch to uid 1000, keep what the config names", "[caps]") {
    if (!has_effective(
            {CAP_SETPCAP, CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_KILL, CAP_NET_BIND_SERVICE})) {
        minirun_tests::skip_test("needs root's capabilities");
        return;
    }
    int last = caps::kernel_last_cap();
    caps::CapabilitySets sets;
    sets.bounding = {CAP_CHOWN, CAP_NET_BIND_SERVICE, CAP_KILL};
    sets.effective = {CAP_NET_BIND_SERVICE, CAP_KILL};
    sets.permitted = {CAP_NET_BIND_SERVICE, CAP_KILL};
    sets.inheritable = {CAP_NET_BIND_SERVICE};
    sets.ambient = {CAP_NET_BIND_SERVICE};

    std::string out = in_child([&]() -> std::string {
        if (auto s = caps::drop_bounding(sets, last, minirun::linux_syscalls()); !s.ok()) {
            return "error: " + s.error().message();
        }
        if (auto s = caps::keep_across_uid_switch(minirun::linux_syscalls()); !s.ok()) {
            return "error: " + s.error().message();
        }
        if (::setgroups(0, nullptr) != 0 || ::setresgid(1000, 1000, 1000) != 0 ||
            ::setresuid(1000, 1000, 1000) != 0) {
            return "error: switching ids";
        }
        if (auto s = caps::apply(sets, minirun::linux_syscalls()); !s.ok()) {
            return "error: " + s.error().message();
        }
        return slurp("/proc/self/status");
    });
    REQUIRE_FALSE(out.starts_with("error: "));
    auto masks = parse_cap_masks(out);
    CHECK(masks["CapInh"] == 0x400);
    CHECK(masks["CapPrm"] == 0x420);
    CHECK(masks["CapEff"] == 0x420);
    CHECK(masks["CapBnd"] == 0x421);
    CHECK(masks["CapAmb"] == 0x400);
}

TEST_CASE("apply: uid 0 with every set empty keeps nothing", "[caps]") {
    if (!has_effective({CAP_SETPCAP})) {
        minirun_tests::skip_test("needs CAP_SETPCAP");
        return;
    }
    int last = caps::kernel_last_cap();
    std::string out = in_child([&]() -> std::string {
        caps::CapabilitySets none;
        if (auto s = caps::drop_bounding(none, last, minirun::linux_syscalls()); !s.ok()) {
            return "error: " + s.error().message();
        }
        if (auto s = caps::apply(none, minirun::linux_syscalls()); !s.ok()) {
            return "error: " + s.error().message();
        }
        return slurp("/proc/self/status");
    });
    REQUIRE_FALSE(out.starts_with("error: "));
    auto masks = parse_cap_masks(out);
    CHECK(masks["CapInh"] == 0);
    CHECK(masks["CapPrm"] == 0);
    CHECK(masks["CapEff"] == 0);
    CHECK(masks["CapBnd"] == 0);
    CHECK(masks["CapAmb"] == 0);
}

TEST_CASE("apply with empty sets needs no privilege", "[caps]") {
    uint64_t bounding = own_mask("CapBnd");
    std::string out = in_child([]() -> std::string {
        if (auto s = caps::keep_across_uid_switch(minirun::linux_syscalls()); !s.ok()) {
            return "error: " + s.error().message();
        }
        if (auto s = caps::apply(caps::CapabilitySets{}, minirun::linux_syscalls()); !s.ok()) {
            return "error: " + s.error().message();
        }
        return slurp("/proc/self/status");
    });
    REQUIRE_FALSE(out.starts_with("error: "));
    auto masks = parse_cap_masks(out);
    CHECK(masks["CapInh"] == 0);
    CHECK(masks["CapPrm"] == 0);
    CHECK(masks["CapEff"] == 0);
    CHECK(masks["CapAmb"] == 0);
    CHECK(masks["CapBnd"] == bounding); // only drop_bounding changes it
}

TEST_CASE("drop_bounding only drops what is still there, and names what it cannot drop", "[caps]") {
    int last = caps::kernel_last_cap();
    uint64_t bounding = own_mask("CapBnd");
    if (bounding == 0) {
        minirun_tests::skip_test("empty bounding set");
        return;
    }
    caps::CapabilitySets current;
    for (int cap = 0; cap <= last; ++cap) {
        if ((bounding & (uint64_t{1} << cap)) != 0) {
            current.bounding.push_back(cap);
        }
    }
    caps::CapabilitySets fewer = current;
    int lowest = fewer.bounding.front();
    fewer.bounding.erase(fewer.bounding.begin());

    // Without CAP_SETPCAP (gone with the effective set) every drop is refused: keeping the
    // current bounding set still succeeds (a read then finds each one gone already);
    // dropping one more fails.
    std::string out = in_child([&]() -> std::string {
        if (auto s = caps::apply(caps::CapabilitySets{}, minirun::linux_syscalls()); !s.ok()) {
            return "apply: " + s.error().message();
        }
        std::string kept =
            status_or_error(caps::drop_bounding(current, last, minirun::linux_syscalls()));
        auto dropped = caps::drop_bounding(fewer, last, minirun::linux_syscalls());
        return cat(kept, "|", dropped.ok() ? 0 : dropped.error().errno_value(), "|",
                   status_or_error(dropped));
    });
    CHECK(out == cat("|", EPERM, "|drop ", upper_cap_name(lowest),
                     " from the bounding set: Operation not permitted"));
}

TEST_CASE("apply: an ambient capability must be permitted and inheritable", "[caps]") {
    bool privileged = has_effective({CAP_NET_BIND_SERVICE});
    caps::CapabilitySets sets;
    if (privileged) {
        sets.effective = {CAP_NET_BIND_SERVICE};
        sets.permitted = {CAP_NET_BIND_SERVICE};
    }
    sets.ambient = {CAP_NET_BIND_SERVICE};
    std::string out =
        in_child([&] { return status_or_error(caps::apply(sets, minirun::linux_syscalls())); });
    CHECK(out == "raise ambient capability CAP_NET_BIND_SERVICE: Operation not permitted (an "
                 "ambient capability must also be permitted and inheritable)");
}

TEST_CASE("apply: capset errors name the capability that breaks the kernel's rules", "[caps]") {
    caps::CapabilitySets effective_only;
    effective_only.effective = {CAP_KILL};
    std::string out = in_child(
        [&] { return status_or_error(caps::apply(effective_only, minirun::linux_syscalls())); });
    CHECK(out == "capset: Operation not permitted (CAP_KILL is in the effective set but not in "
                 "the permitted set)");

    caps::CapabilitySets regain;
    regain.permitted = {CAP_KILL};
    out = in_child([&] {
        if (auto s = caps::apply(caps::CapabilitySets{}, minirun::linux_syscalls()); !s.ok()) {
            return "first apply: " + s.error().message();
        }
        return status_or_error(caps::apply(regain, minirun::linux_syscalls()));
    });
    CHECK(out == "capset: Operation not permitted (CAP_KILL is to be permitted but is not "
                 "permitted now)");
}
