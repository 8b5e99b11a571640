#include "fake_syscalls.hpp"
#include "process/process.hpp"
#include "process/signals.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;
using minirun::testing::TempDir;
namespace stdfs = std::filesystem;

namespace {
void make_file(const std::string& path, stdfs::perms perms) {
    stdfs::create_directories(stdfs::path(path).parent_path());
    { std::ofstream(path) << "#!/bin/sh\n"; }
    stdfs::permissions(path, perms);
}
} // namespace

TEST_CASE("search_path: the process's PATH, last one wins, default otherwise", "[process]") {
    CHECK(process::search_path({"A=1", "PATH=/x:/y"}) == "/x:/y");
    CHECK(process::search_path({"PATH=/x", "PATH=/z"}) == "/z");
    CHECK(process::search_path({}) ==
          "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
}

TEST_CASE("find_executable searches the container's PATH", "[process]") {
    TempDir tmp;
    make_file(tmp.path() + "/b/tool", stdfs::perms::owner_all);
    make_file(tmp.path() + "/a/plain", stdfs::perms::owner_read);
    spec::Process proc;
    proc.env = {"PATH=" + tmp.path() + "/a:" + tmp.path() + "/b"};

    proc.args = {"tool"};
    auto found = process::find_executable(proc);
    REQUIRE(found.ok());
    CHECK(*found == tmp.path() + "/b/tool");

    proc.args = {"nosuchcmd"};
    auto missing = process::find_executable(proc);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().errno_value() == ENOENT);
    CHECK(missing.error().message() == "exec: \"nosuchcmd\": executable file not found in $PATH");
}

TEST_CASE("find_executable: explicit paths and permissions", "[process]") {
    // Root passes access(X_OK) checks for any file with one x bit, so these use modes
    // that deny it for everyone.
    TempDir tmp;
    make_file(tmp.path() + "/noexec", stdfs::perms::owner_read | stdfs::perms::owner_write);
    spec::Process proc;

    proc.args = {tmp.path() + "/noexec"};
    auto denied = process::find_executable(proc);
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.error().errno_value() == EACCES);
    CHECK(denied.error().message() == "exec: \"" + tmp.path() + "/noexec\": permission denied");

    proc.args = {tmp.path() + "/missing"};
    auto missing = process::find_executable(proc);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message() == "exec: \"" + tmp.path() + "/missing\": stat " + tmp.path() +
                                           "/missing: no such file or directory");

    proc.args = {tmp.path()};
    CHECK(process::find_executable(proc).error().errno_value() == EACCES);

    proc.env = {"PATH=" + tmp.path()};
    proc.args = {"noexec"};
    auto in_path = process::find_executable(proc);
    REQUIRE_FALSE(in_path.ok());
    // As runc (Go's LookPath): a file in $PATH that cannot be run is not found.
    CHECK(in_path.error().errno_value() == ENOENT);
    CHECK(in_path.error().message() == "exec: \"noexec\": executable file not found in $PATH");
}

TEST_CASE("exit codes are reported as a shell does", "[signals]") {
    CHECK(exit_code_of(0) == 0);
    CHECK(exit_code_of(3 << 8) == 3);
    CHECK(exit_code_of(SIGKILL) == 137);
    CHECK(exit_code_of(SIGTERM) == 143);
}

TEST_CASE("home_in_passwd: the home of a uid, \"/\" without an entry", "[process]") {
    const std::string passwd = "root:x:0:0:root:/root:/bin/sh\n"
                               "broken line\n"
                               "user:x:1000:1000:User,,,:/home/user:/bin/sh\n"
                               "nohome:x:7:7:::/bin/false\n";
    CHECK(process::home_in_passwd(passwd, 0) == "/root");
    CHECK(process::home_in_passwd(passwd, 1000) == "/home/user");
    CHECK(process::home_in_passwd(passwd, 7) == "/");
    CHECK(process::home_in_passwd(passwd, 4242) == "/");
    CHECK(process::home_in_passwd("", 0) == "/");
}

// runc's prepareEnv (libcontainer/env.go): the last entry of a name wins, in the place of
// that last one; an empty HOME is dropped, so that the passwd's takes its place.
TEST_CASE("dedup_env: one entry per name, the last one's; an empty HOME dropped", "[process]") {
    using Env = std::vector<std::string>;
    CHECK(process::dedup_env({"ONE=two", "A=1", "ONE=three"}) == Env{"A=1", "ONE=three"});
    CHECK(process::dedup_env({"ONE=two", "ONE=", "PATH=/bin"}) == Env{"ONE=", "PATH=/bin"});
    CHECK(process::dedup_env({"HOME=/override", "HOME="}) == Env{});
    CHECK(process::dedup_env({"HOME=", "HOME=/x"}) == Env{"HOME=/x"});
    CHECK(process::dedup_env({"NL=\n", "PATH=/bin"}) == Env{"NL=\n", "PATH=/bin"});
    CHECK(process::dedup_env({"A=1", "AB=2", "A=3"}) == Env{"AB=2", "A=3"});
    CHECK(process::dedup_env({}).empty());
}

TEST_CASE("missing_home: only the last HOME counts", "[process]") {
    spec::Process proc;
    proc.env = {"HOME=/override"};
    CHECK(process::missing_home(proc).empty());
    proc.env = {"HOME=/override", "HOME="};
    CHECK(process::missing_home(proc).starts_with("HOME=/"));
    proc.env = {"HOME=", "HOME=/x"};
    CHECK(process::missing_home(proc).empty());
}

TEST_CASE("PreparedExec: execve gets the deduplicated env and the passwd's HOME", "[process]") {
    spec::Process proc;
    proc.args = {"/bin/true"};
    proc.env = {"ONE=two", "HOME=/override", "PATH=/bin", "ONE=three", "HOME="};
    FakeSyscalls sys;
    process::PreparedExec exec;
    REQUIRE(exec.prepare("/bin/true", proc, 0, "HOME=/root", sys).ok());
    REQUIRE(exec.run(sys).ok());
    CHECK(sys.exec_env == std::vector<std::string>{"PATH=/bin", "ONE=three", "HOME=/root"});
}
