// runc 1.3's rules for single mounts[] entries, against the recording fake: a tmpfs takes
// the mode of the directory it covers, a bind's remount applies what its options set and
// clear, and bind sources inside the rootfs are looked up when their turn comes.
#include "mount_setup_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

using namespace minirun;
using namespace minirun::runtime;
using minirun::runtime::parse_mount_options;
using minirun::testing::MountCall;
using nlohmann::json;
namespace stdfs = std::filesystem;
using namespace mount_setup_test;

namespace {

const MountCall* mount_at(const FakeSyscalls& sys, const std::string& target) {
    for (const MountCall& call : sys.mounts) {
        if (call.target == target) {
            return &call;
        }
    }
    return nullptr;
}

json tmpfs_at(const std::string& destination, json options) {
    return {{"destination", destination},
            {"type", "tmpfs"},
            {"source", "tmpfs"},
            {"options", std::move(options)}};
}

} // namespace

// runc issue 4971 (runc 1.3, createOpenMountpoint): "mode=" of the covered directory goes
// ahead of the entry's own options, so that an explicit mode= (later) still wins.
TEST_CASE("tmpfs: an existing directory's mode, unless the options give one", "[mount]") {
    Fixture f;
    stdfs::create_directories(f.rootfs + "/inherit");
    stdfs::create_directories(f.rootfs + "/explicit");
    REQUIRE(::chmod((f.rootfs + "/inherit").c_str(), 0710) == 0);
    REQUIRE(::chmod((f.rootfs + "/explicit").c_str(), 02710) == 0);
    Plan plan = f.plan(config_with_mounts(json::array(
        {tmpfs_at("/inherit", {"rw", "nodev"}), tmpfs_at("/explicit", {"mode=1500", "size=1k"}),
         tmpfs_at("/new/dir", {"nosuid"})})));
    REQUIRE(prepare(plan, f.sys).ok());

    const MountCall* inherit = mount_at(f.sys, f.rootfs + "/inherit");
    REQUIRE(inherit != nullptr);
    CHECK(inherit->data == "mode=0710");
    const MountCall* explicit_mode = mount_at(f.sys, f.rootfs + "/explicit");
    REQUIRE(explicit_mode != nullptr);
    CHECK(explicit_mode->data == "mode=2710,mode=1500,size=1k");
    // A directory made for the mount: tmpfs's own default (1777), no mode= added.
    const MountCall* made = mount_at(f.sys, f.rootfs + "/new/dir");
    REQUIRE(made != nullptr);
    CHECK(made->data.empty());
    struct stat info {};
    REQUIRE(::stat((f.rootfs + "/new/dir").c_str(), &info) == 0);
    CHECK((info.st_mode & 07777) == 0755);
}

namespace {

// A bind of `options` from a source whose statvfs flags are `source` (the fake's answer).
struct BindRemount {
    Fixture f;
    UniqueFd target{::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)};

    Status apply(const std::vector<std::string>& options, unsigned long source, bool locked) {
        f.sys.statvfs_flags = source;
        return mount::apply_bind_flags(target.get(), parse_mount_options(options), locked, f.sys);
    }
    [[nodiscard]] std::vector<unsigned long> remounts() const {
        std::vector<unsigned long> flags;
        for (const MountCall& call : f.sys.mounts) {
            flags.push_back(call.flags);
        }
        return flags;
    }
};

constexpr unsigned long kRemount = MS_BIND | MS_REMOUNT;

} // namespace

TEST_CASE("bind flags: no option, no remount: the source's flags stay", "[mount]") {
    BindRemount b;
    REQUIRE(b.apply({"bind", "rprivate"}, ST_RDONLY | ST_NOEXEC, false).ok());
    CHECK(b.remounts().empty());
}

// mounts_sshfs.bats without a user namespace: the options are the mount's flags.
TEST_CASE("bind flags: the options set and clear, nothing else is inherited", "[mount]") {
    BindRemount b;
    REQUIRE(b.apply({"bind", "dev", "suid", "exec", "atime"},
                    ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_NOATIME, false)
                .ok());
    REQUIRE(b.apply({"bind", "nosuid", "nodev"}, ST_RDONLY, false).ok()); // implied rw
    REQUIRE(b.apply({"bind", "rw"}, ST_RDONLY, false).ok());
    CHECK(b.remounts() ==
          std::vector<unsigned long>{kRemount, kRemount | MS_NOSUID | MS_NODEV, kRemount});
}

// mounts_sshfs.bats with a user namespace: runc's source is locked; so is it taken here.
TEST_CASE("bind flags: a locked source keeps what is not asked for", "[mount]") {
    BindRemount b;
    // ro inherited: only nosuid,nodev were asked for.
    REQUIRE(b.apply({"bind", "nosuid", "nodev"}, ST_RDONLY | ST_RELATIME, true).ok());
    CHECK(b.remounts() ==
          std::vector<unsigned long>{kRemount | MS_NOSUID | MS_NODEV | MS_RDONLY | MS_RELATIME});
    // Nothing locked is lost: exactly the options.
    BindRemount unlocked;
    REQUIRE(unlocked.apply({"bind", "ro", "nosuid"}, ST_NOSUID | ST_RELATIME, true).ok());
    CHECK(unlocked.remounts() == std::vector<unsigned long>{kRemount | MS_RDONLY | MS_NOSUID});
}

TEST_CASE("bind flags: clearing a locked flag is refused in runc's words", "[mount]") {
    BindRemount b;
    auto refused = b.apply({"bind", "rw", "nosuid"}, ST_RDONLY, true);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().errno_value() == EPERM);
    CHECK(refused.error().message() == "failed to set user-requested vfs flags on bind-mount: "
                                       "cannot clear locked flags ro: operation not permitted");
    CHECK(b.remounts().empty());
    auto atime = b.apply({"bind", "relatime"}, ST_NOATIME, true);
    REQUIRE_FALSE(atime.ok());
    CHECK(atime.error().message().find("cannot change locked atime flags noatime") !=
          std::string::npos);
}

// Rootless, the kernel itself refuses the first remount: the second keeps the locked flags.
TEST_CASE("bind flags: after the kernel's EPERM, the remount with the source's flags", "[mount]") {
    BindRemount b;
    b.f.sys.fail("mount", EPERM);
    REQUIRE(b.apply({"bind", "ro"}, ST_NODEV | ST_NOSUID | ST_RELATIME, false).ok());
    CHECK(b.remounts() ==
          std::vector<unsigned long>{kRemount | MS_RDONLY,
                                     kRemount | MS_RDONLY | MS_NODEV | MS_NOSUID | MS_RELATIME});
}

// runc's mounts.bats "mount order": a source inside the rootfs is opened when its entry's
// turn comes, after the entries before it; a destination naming the rootfs's host path is
// the path inside it.
TEST_CASE("late sources: a source in the rootfs is opened after the mounts before it", "[mount]") {
    Fixture f;
    stdfs::create_directories(f.dir.path() + "/data/x");
    stdfs::create_directories(f.rootfs + "/final");
    stdfs::create_directories(f.rootfs + "/mnt/x"); // what the fake's first bind would show
    Plan plan = f.plan(config_with_mounts(
        json::array({{{"destination", "/mnt"}, {"source", "data"}, {"options", {"rbind"}}},
                     {{"destination", f.rootfs + "/final"},
                      {"source", f.rootfs + "/mnt/x"},
                      {"options", {"rbind"}}}})));
    REQUIRE(plan.mounts[1].destination == "/final");
    CHECK_FALSE(mount::source_opened_late(plan, plan.mounts[0]));
    CHECK(mount::source_opened_late(plan, plan.mounts[1]));

    auto sources = mount::open_bind_sources(plan, f.sys);
    REQUIRE(sources.ok());
    CHECK(sources->fds[0]);
    CHECK_FALSE(sources->fds[1]); // left for later
    std::vector<size_t> asked;
    UniqueFd root(::open(f.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    mount::LateSource late = [&](size_t index) -> Result<UniqueFd> {
        asked.push_back(index);
        // By now the first entry is in place: the fake made no mount, the order shows it.
        CHECK(f.sys.mounts.size() >= 3);
        return mount::open_source_now(plan, index, root.get(), f.sys);
    };
    SECTION("the parent opens it") {
        REQUIRE(mount::prepare_rootfs(plan, sources->fds, f.sys, {}, late).ok());
        CHECK(asked == std::vector<size_t>{1});
    }
    SECTION("rootless: the parent leaves it to the init (an invalid fd), which opens it") {
        mount::LateSource left = [&](size_t index) -> Result<UniqueFd> {
            asked.push_back(index);
            return UniqueFd();
        };
        REQUIRE(mount::prepare_rootfs(plan, sources->fds, f.sys, {}, left).ok());
        CHECK(asked == std::vector<size_t>{1});
    }
    const MountCall* final_bind = mount_at(f.sys, f.rootfs + "/final");
    REQUIRE(final_bind != nullptr);
    CHECK(final_bind->source == f.rootfs + "/mnt/x");
}

// The fd budget (runc 1.4.2): every host source is opened before clone() (a bad one fails
// then), but only the first `held_ahead` stay open; the others are closed at once and
// opened again by the parent when the init asks, so the fds held do not grow with mounts[].
TEST_CASE("bind sources: only a bounded window stays open ahead", "[mount]") {
    Fixture f;
    stdfs::create_directories(f.dir.path() + "/data");
    json mounts = json::array();
    for (int i = 0; i < 5; ++i) {
        mounts.push_back(
            {{"destination", cat("/m", i)}, {"source", "data"}, {"options", {"bind"}}});
    }
    mounts.push_back({{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}});
    Plan plan = f.plan(config_with_mounts(mounts));
    auto sources = mount::open_bind_sources(plan, f.sys, 2);
    REQUIRE(sources.ok());
    for (size_t i = 0; i < 6; ++i) {
        CAPTURE(i);
        CHECK(static_cast<bool>(sources->fds[i]) == (i < 2));
        CHECK(sources->reopened[i] == (i >= 2 && i < 5));
    }
    // All five were opened (checked) before clone().
    CHECK(std::count_if(f.sys.calls.begin(), f.sys.calls.end(), [](const std::string& call) {
              return call.starts_with("open_tree ");
          }) == 5);
    auto again = mount::reopen_bind_source(plan, 3, f.sys);
    REQUIRE(again.ok());
    CHECK(*fs::fd_target(again->get()) == f.dir.path() + "/data");
    // A source gone by its turn fails naming it.
    stdfs::remove(f.dir.path() + "/data");
    auto gone = mount::reopen_bind_source(plan, 4, f.sys);
    REQUIRE_FALSE(gone.ok());
    CHECK(gone.error().errno_value() == ENOENT);
    CHECK(gone.error().message().starts_with("mounts[4] on /m4: source \"" + f.dir.path() +
                                             "/data\""));
}

// Resolved from the rootfs as "/": a symlink in it cannot lead to the host's files.
TEST_CASE("late sources: a symlink in the rootfs stays in the rootfs", "[mount]") {
    Fixture f;
    stdfs::create_directories(f.rootfs + "/etc");
    { std::ofstream(f.rootfs + "/etc/inside") << "x\n"; }
    stdfs::create_symlink("/etc", f.rootfs + "/etc-link");
    Plan plan = f.plan(config_with_mounts(json::array(
        {{{"destination", "/a"}, {"source", f.rootfs + "/etc-link/inside"}, {"options", {"bind"}}},
         {{"destination", "/b"},
          {"source", f.rootfs + "/etc-link/passwd"},
          {"options", {"bind"}}}})));
    UniqueFd root(::open(f.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    auto inside = mount::open_source_now(plan, 0, root.get(), f.sys);
    REQUIRE(inside.ok());
    CHECK(*fs::fd_target(inside->get()) == f.rootfs + "/etc/inside");
    // The host's /etc/passwd exists; the rootfs's does not: not found.
    auto host = mount::open_source_now(plan, 1, root.get(), f.sys);
    REQUIRE_FALSE(host.ok());
    CHECK(host.error().errno_value() == ENOENT);
}

// runc 1.3's maskPaths (mask.bats "directories share tmpfs"): one read-only tmpfs, bound
// onto each further masked directory.
TEST_CASE("masked directories share one read-only tmpfs", "[mount]") {
    Fixture f;
    for (const char* dir : {"/testdir", "/testdir2", "/testdir3"}) {
        stdfs::create_directories(f.rootfs + dir);
    }
    UniqueFd root(::open(f.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    const std::vector<std::string> paths = {"/testdir", "/missing", "/testdir2", "/testdir3"};

    SECTION("the first gets the tmpfs, the others a bind of it") {
        REQUIRE(mount::mask_paths_below(root.get(), paths, f.sys).ok());
        REQUIRE(f.sys.mounts.size() == 3);
        CHECK(f.sys.mounts[0].target == f.rootfs + "/testdir");
        CHECK(f.sys.mounts[0].fs_type == "tmpfs");
        CHECK(f.sys.mounts[0].flags == MS_RDONLY);
        CHECK(f.sys.mounts[0].data == "nr_blocks=1,nr_inodes=1");
        for (size_t i : {1, 2}) {
            CHECK(f.sys.mounts[i].source == f.rootfs + "/testdir");
            CHECK(f.sys.mounts[i].flags == MS_BIND);
        }
        CHECK(f.sys.mounts[1].target == f.rootfs + "/testdir2");
        CHECK(f.sys.mounts[2].target == f.rootfs + "/testdir3");
    }
    SECTION("a bind that fails: a tmpfs each from there on") {
        f.sys.fail_call(2, EPERM); // the bind onto /testdir2
        REQUIRE(mount::mask_paths_below(root.get(), paths, f.sys).ok());
        REQUIRE(f.sys.mounts.size() == 4);
        CHECK(f.sys.mounts[2].target == f.rootfs + "/testdir2");
        CHECK(f.sys.mounts[2].fs_type == "tmpfs");
        CHECK(f.sys.mounts[3].target == f.rootfs + "/testdir3");
        CHECK(f.sys.mounts[3].fs_type == "tmpfs");
    }
}
