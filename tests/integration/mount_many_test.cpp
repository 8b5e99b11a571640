// The fd budget (runc 1.4.2's fix, issue 39 item 5): the bind sources a create opens ahead
// are closed as they are mounted and at most a small window of them is open at once, so a
// config with thousands of binds works under `ulimit -n 1024`, and neither the parent nor
// the init holds fds in proportion to the mounts.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <unistd.h>

#include <string>
#include <vector>

using namespace it;

namespace {

constexpr int kBinds = 2000;
constexpr int kLimit = 1024;

// The number of open fds of `pid` (its /proc/<pid>/fd entries), -1 when unreadable.
int open_fds(pid_t pid) {
    DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
    if (dir == nullptr) {
        return -1;
    }
    int count = 0;
    while (const dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] != '.') {
            ++count;
        }
    }
    ::closedir(dir);
    return count;
}

// "Max open files  1024  1024  files" from /proc/<pid>/limits.
std::string nofile_limit(pid_t pid) {
    for (const std::string& line :
         split_lines(read_file("/proc/" + std::to_string(pid) + "/limits").value_or(""))) {
        if (line.starts_with("Max open files")) {
            return line;
        }
    }
    return "<no Max open files in /proc/" + std::to_string(pid) + "/limits>";
}

} // namespace

TEST_CASE("fd budget: 2,000 bind mounts under RLIMIT_NOFILE 1024", "[mount][fdbudget]") {
    TempDir source;
    write_text(source.path() + "/hello", "from the host\n");
    TempBundle bundle("fdbudget");
    // The binds go onto a tmpfs of the container's own, where mini-run makes their mount
    // points: the shared example rootfs stays untouched.
    nlohmann::json& mounts = bundle.config["mounts"];
    mounts.push_back({{"destination", "/mnt"},
                      {"type", "tmpfs"},
                      {"source", "tmpfs"},
                      {"options", {"nosuid", "nodev", "mode=755", "size=1m"}}});
    for (int i = 0; i < kBinds; ++i) {
        mounts.push_back({{"destination", "/mnt/b" + std::to_string(i)},
                          {"type", "bind"},
                          {"source", source.path()},
                          {"options", {"bind", "ro"}}});
    }
    // No process.rlimits: the init keeps the limit it was started with (mini-run's own),
    // which is what the positive control reads.
    bundle.config["process"].erase("rlimits");
    bundle.set_shell("grep -c ' /mnt/b[0-9]* ' /proc/self/mountinfo; cat /mnt/b1999/hello; "
                     "grep 'Max open files' /proc/self/limits");
    bundle.write_config();

    // util-linux's prlimit sets the limit and execs mini-run under it.
    const std::string prlimit = "/usr/bin/prlimit";
    if (::access(prlimit.c_str(), X_OK) != 0) {
        skip_test("no /usr/bin/prlimit (util-linux) to start mini-run under RLIMIT_NOFILE");
        return;
    }
    Runtime runtime;
    runtime.track(bundle.id());
    std::vector<std::string> argv = {
        prlimit, "--nofile=" + std::to_string(kLimit) + ":" + std::to_string(kLimit), "--"};
    for (const std::string& arg : runtime.argv({"create", "--bundle", bundle.dir(), "--pid-file",
                                                runtime.pid_file(bundle.id()), bundle.id()})) {
        argv.push_back(arg);
    }
    auto created = run_to_files(argv, runtime.io_dir());
    INFO("create under prlimit: " << created.describe());
    REQUIRE(created.exit_code == 0);
    auto init = runtime.pid_from_file(bundle.id());
    REQUIRE(init.has_value());

    // Positive control: the limit was in force for mini-run (its init is a clone of create
    // and still has create's limit), so 2,000 sources held at once could not have fitted.
    const std::string limit = nofile_limit(*init);
    INFO(limit);
    CHECK(split_words(limit) == std::vector<std::string>{"Max", "open", "files",
                                                         std::to_string(kLimit),
                                                         std::to_string(kLimit), "files"});
    // The init, done with its mounts and waiting for start, holds a handful of fds, not one
    // per mount.
    const int held = open_fds(*init);
    INFO("the created init's open fds: " << held);
    CHECK(held >= 0);
    CHECK(held < 64);

    auto started = runtime({"start", bundle.id()});
    INFO("start: " << started.describe());
    REQUIRE(started.exit_code == 0);
    REQUIRE(wait_until([&] { return !process_alive(*init); }));
    const std::string out = created.out_now();
    INFO("the container's output: " << out << created.err_now());
    const std::vector<std::string> lines = split_lines(out);
    REQUIRE(lines.size() >= 3);
    CHECK(lines[0] == std::to_string(kBinds)); // every bind is mounted
    CHECK(lines[1] == "from the host");        // the 2,000th shows the source
    CHECK(contains(lines[2], std::to_string(kLimit)));

    auto deleted = runtime.force_delete(bundle.id());
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
    check_no_leftovers(bundle);
}
