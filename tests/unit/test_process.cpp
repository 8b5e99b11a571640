#include "process/process.hpp"
#include "process/signals.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

using namespace minirun;
using namespace minirun::runtime;
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
