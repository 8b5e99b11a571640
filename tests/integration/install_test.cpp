// An installed mini-run teaches without its source tree: `cmake --install` into a
// temporary prefix, then the installed binary's demos run in a mount namespace of their
// own where the source and build trees are covered by empty tmpfs mounts (and, in one
// case, the host's busybox by an empty file). The demo then makes its own rootfs (from the
// host's busybox, or from the host's binaries) and must leave nothing behind: no
// temporary directory, mount, process or veth. The facts each demo prints are checked as
// demo_test.cpp checks them (demo_checks.hpp).
#include "demo_checks.hpp"
#include "helpers.hpp"
#include "pty_run.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <set>
#include <string>
#include <vector>

using namespace it;
using namespace it::demo;

namespace {

// `cmake --install BUILD --prefix TMP`, removed at the end.
class Installed {
public:
    Installed() {
        auto installed =
            run({MINIRUN_CMAKE, "--install", MINIRUN_BUILD_DIR, "--prefix", prefix_.path()}, {},
                std::chrono::seconds(120));
        INFO(installed.describe());
        REQUIRE(installed.exit_code == 0);
    }
    [[nodiscard]] std::string path(const std::string& relative) const {
        return prefix_.path() + "/" + relative;
    }

private:
    TempDir prefix_{"minirun-it-prefix"};
};

bool is_file(const std::string& path, mode_t mode_bits = 0) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0 &&
           (info.st_mode & mode_bits) == mode_bits;
}

const std::vector<std::string> kBusyboxPaths = {"/bin/busybox", "/usr/bin/busybox", "/sbin/busybox",
                                                "/usr/sbin/busybox"};

// The installed `mini-run demo ARGS...` in a private mount namespace (unshare -m) where the
// source and build trees are empty tmpfs mounts and, with `hide_busybox`, every busybox
// the demo would find is an empty file. The namespace's mount table before and after the
// demo goes to WORK/before and WORK/after: the demo's own mounts are in there, not the
// host's.
class HiddenTreeDemos {
public:
    HiddenTreeDemos(const Installed& installed, bool hide_busybox) {
        write_text(work_.path() + "/empty", "");
        std::string script = "set -e; "
                             "mount -t tmpfs -o size=64k,mode=0755 mini-run-it-hidden \"$BUILD\"; "
                             "mount -t tmpfs -o size=64k,mode=0755 mini-run-it-hidden \"$SOURCE\"; "
                             "[ ! -e \"$SOURCE/CMakeLists.txt\" ]; ";
        if (hide_busybox) {
            for (const auto& path : kBusyboxPaths) {
                script.append("if [ -e ")
                    .append(path)
                    .append(" ]; then mount --bind \"$WORK/empty\" ");
                script.append(path).append("; fi; ");
            }
        }
        script += "cat /proc/self/mountinfo > \"$WORK/before\"; set +e; "
                  "env -u MINIRUN_SOURCE_DIR TMPDIR=\"$DEMO_TMP\" \"$MINIRUN\" demo \"$@\"; rc=$?; "
                  "cat /proc/self/mountinfo > \"$WORK/after\"; exit $rc";
        demos_.set_prefix({"/usr/bin/env", "BUILD=" + std::string(MINIRUN_BUILD_DIR),
                           "SOURCE=" + source_dir(), "WORK=" + work_.path(),
                           "DEMO_TMP=" + demos_.tmp(), "MINIRUN=" + installed.path("bin/mini-run"),
                           "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                           script, "mini-run-it-hidden-tree"});
    }
    [[nodiscard]] const DemoRun& demos() const { return demos_; }

    // Nothing the demo made is left: on the host (demo_checks.hpp) and in its namespace.
    void check_clean(const std::set<std::string>& host_mounts_before) const {
        demos_.check_clean(host_mounts_before);
        auto before = split_lines(read_file(work_.path() + "/before").value_or("<none>"));
        auto after = split_lines(read_file(work_.path() + "/after").value_or("<none>"));
        CHECK(std::set<std::string>(after.begin(), after.end()) ==
              std::set<std::string>(before.begin(), before.end()));
    }

private:
    TempDir work_{"minirun-it-hidden"};
    DemoRun demos_{std::vector<std::string>{}};
};

} // namespace

TEST_CASE("install: cmake --install puts the binary, the man page and the docs in the prefix",
          "[install]") {
    Installed installed;
    CHECK(is_file(installed.path("bin/mini-run"), S_IXUSR));
    CHECK(is_file(installed.path("share/man/man8/mini-run.8")));
    CHECK(is_file(installed.path("share/doc/mini-run/README.md")));
    for (const char* doc : {"architecture", "namespaces", "security", "cgroups", "rootless",
                            "engines", "performance"}) {
        INFO(doc);
        CHECK(is_file(installed.path("share/doc/mini-run/docs/") + doc + ".md"));
    }
    auto version = run({installed.path("bin/mini-run"), "--version"});
    CHECK(version.exit_code == 0);
    CHECK(contains(version.out, "mini-run version "));
    // The installed page renders as man(1) renders it, without a warning.
    auto rendered =
        run({"/usr/bin/groff", "-man", "-ww", "-z", installed.path("share/man/man8/mini-run.8")});
    INFO(rendered.describe());
    CHECK(rendered.exit_code == 0);
    CHECK(rendered.err.empty());
}

TEST_CASE("install: without the source tree every demo runs, on the host's busybox or binaries",
          "[install]") {
    REQUIRE(is_file("/bin/busybox", S_IXUSR)); // busybox-static, scripts/bootstrap.sh
    // Busybox visible, or covered, so that the demo falls back to the host's binaries.
    const bool hide_busybox = GENERATE(false, true);
    DYNAMIC_SECTION((hide_busybox ? "host binaries" : "busybox")) {
        Installed installed;
        HiddenTreeDemos hidden(installed, hide_busybox);
        const std::string host_name = host_hostname();
        const auto mounts_before = mount_lines();
        auto result = hidden.demos()("all");
        CHECK(contains(result.out, "no example bundle: the demo's rootfs is "));
        if (hide_busybox) {
            CHECK(contains(result.out, "from the host's binaries (sh "));
            CHECK_FALSE(contains(result.out, "busybox"));
        } else {
            CHECK(contains(result.out, "from the host's busybox (/"));
        }
        // The demo's host is the namespace's own mount namespace.
        check_all(result, host_name, {"mnt"});
        hidden.check_clean(mounts_before);
    }
}

TEST_CASE("install: Ctrl-C removes the rootfs the demo made", "[install]") {
    Installed installed;
    HiddenTreeDemos hidden(installed, false);
    const auto mounts_before = mount_lines();
    // --step waits for Enter on a terminal: at each step's card (the run's), then while
    // the container runs (the demo's "press Enter" on stdout).
    TempDir files;
    PtyRun shell(hidden.demos().argv({"net", "--step"}), files.path(), true);
    const bool paused =
        shell.answer_cards_until([&] { return contains(shell.out(), "press Enter"); }, 60s);
    INFO(shell.out() << shell.err());
    REQUIRE(paused);
    // The shell of the namespace runs the demo as its child: the one to interrupt.
    auto children = children_of(shell.pid());
    REQUIRE(children.size() == 1);
    CHECK_FALSE(processes_with_marker("mini-run-demo-net-" + std::to_string(children[0])).empty());
    kill(children[0], SIGINT);
    CHECK(shell.wait(60s) == 130);
    CHECK(contains(shell.out(), "interrupted"));
    hidden.check_clean(mounts_before);
}

TEST_CASE("install: bad input is one line, non-zero, and leaves nothing", "[install]") {
    Installed installed;
    HiddenTreeDemos hidden(installed, false);
    const auto mounts_before = mount_lines();
    auto unknown = run(hidden.demos().argv({"nope"}));
    CHECK(unknown.exit_code == 1);
    CHECK(unknown.err == "mini-run: unknown demo \"nope\" (mini-run demo lists them)\n");
    auto missing = run(hidden.demos().argv({"--bundle", "/nonexistent-bundle", "uts"}));
    CHECK(missing.exit_code == 1);
    CHECK(missing.err == "mini-run: demo uts: cannot read /nonexistent-bundle/config.json: No "
                         "such file or directory\n");
    hidden.check_clean(mounts_before);
}
