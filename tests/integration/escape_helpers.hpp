// What the escape tests share (escape_test.cpp, escape_rootfs_test.cpp): canaries on the
// host, hostile rootfs copies, the attacked runtime binary and listing descriptors.
#pragma once

#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace escape_test {

using namespace it;

constexpr const char* loop = "while true; do sleep 0.1; done";

// The names in a directory, sorted ("." and ".." left out); empty when it cannot be read.
inline std::vector<std::string> entries_of(const std::string& dir) {
    std::vector<std::string> names;
    DIR* handle = opendir(dir.c_str());
    if (handle == nullptr) {
        return names;
    }
    while (const dirent* entry = readdir(handle)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..") {
            names.push_back(name);
        }
    }
    closedir(handle);
    std::sort(names.begin(), names.end());
    return names;
}

inline void make_symlink(const std::string& target, const std::string& link) {
    remove_tree(link); // whatever the copied rootfs had there
    ::rmdir(link.c_str());
    ::unlink(link.c_str());
    if (::symlink(target.c_str(), link.c_str()) != 0) {
        throw std::runtime_error("symlink " + link + " -> " + target + " failed");
    }
}

// The host mounts whose line mentions `text` (a unique tmpfs source name, say).
inline std::vector<std::string> host_mounts_mentioning(const std::string& text) {
    std::vector<std::string> found;
    for (const auto& mount : host_mounts()) {
        if (contains(mount.line, text)) {
            found.push_back(mount.line);
        }
    }
    return found;
}

// A host directory with a file in it, that the container must never touch.
struct Canary {
    TempDir dir{"minirun-it-canary"};
    std::string secret = "it-host-secret-" + std::to_string(getpid());
    std::string file;
    std::vector<std::string> before;

    Canary() {
        file = dir.path() + "/canary";
        write_text(file, secret + "\n");
        before = entries_of(dir.path());
    }
    [[nodiscard]] const std::string& path() const { return dir.path(); }

    // Fails the test (CHECK) when anything changed: entries, the file, mounts on it.
    void check_untouched() const {
        INFO("canary directory " << path());
        CHECK(entries_of(path()) == before);
        CHECK(read_file(file).value_or("<gone>") == secret + "\n");
        CHECK(host_mounts_under(path()).empty());
    }
};

// A host regular file with a secret in it, that the container must neither read nor write.
struct CanaryFile {
    TempDir dir{"minirun-it-canary-file"};
    std::string path;
    std::string secret = "it-host-file-secret-" + std::to_string(getpid());
    struct stat before {};

    CanaryFile() {
        path = dir.path() + "/target";
        write_text(path, secret + "\n");
        ::chmod(path.c_str(), 0640);
        ::lstat(path.c_str(), &before);
    }

    void check_untouched() const {
        INFO("canary file " << path);
        CHECK(read_file(path).value_or("<gone>") == secret + "\n");
        struct stat now {};
        REQUIRE(::lstat(path.c_str(), &now) == 0);
        CHECK(S_ISREG(now.st_mode));
        CHECK((now.st_mode & 07777) == (before.st_mode & 07777));
        CHECK(now.st_uid == before.st_uid);
        CHECK(now.st_gid == before.st_gid);
        CHECK(now.st_ino == before.st_ino);
        CHECK(host_mounts_under(path).empty());
        CHECK(entries_of(dir.path()) == std::vector<std::string>{"target"});
    }
};

// A writable copy of the example rootfs.
inline void hostile_rootfs(TempBundle& bundle) {
    bundle.copy_rootfs();
    bundle.config["root"]["readonly"] = false;
}

// Drops the config's /dev tmpfs (and what is mounted below it), so the runtime works on the
// rootfs's own /dev.
inline void without_dev_tmpfs(TempBundle& bundle) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& mount : bundle.config["mounts"]) {
        const auto destination = mount["destination"].get<std::string>();
        if (destination != "/dev" && destination.rfind("/dev/", 0) != 0) {
            kept.push_back(mount);
        }
    }
    bundle.config["mounts"] = kept;
}

inline std::string sha256(const std::string& path) {
    auto result = run({"/usr/bin/sha256sum", path});
    if (result.exit_code != 0) {
        throw std::runtime_error("sha256sum failed: " + result.describe());
    }
    return split_words(result.out).front();
}

// A copy of the runtime, the binary under attack (the real build is never at risk), on a
// writable file system, so that nothing protects it but the runtime; hashed at once.
struct AttackedBinary {
    TempDir dir{"minirun-it-bin"};
    std::string path = dir.path() + "/mini-run-copy";
    std::string hash_before;

    AttackedBinary() {
        if (run({"/bin/cp", minirun_binary(), path}).exit_code != 0 ||
            ::chmod(path.c_str(), 0755) != 0) {
            throw std::runtime_error("cannot copy the runtime to " + path);
        }
        hash_before = sha256(path);
    }
    [[nodiscard]] bool unchanged() const { return sha256(path) == hash_before; }
};

// /bin/evil in the bundle's rootfs leads to /proc/self/exe: at an execve of it, that is
// whatever execs it. Unprotected, mini-run itself would start in the container.
inline void add_evil_link(const TempBundle& bundle) {
    if (::symlink("/proc/self/exe", (bundle.rootfs() + "/bin/evil").c_str()) != 0) {
        throw std::runtime_error("cannot make /bin/evil in " + bundle.rootfs());
    }
}

// The descriptor numbers a container script printed between "fds" and "end" lines (one
// `ls /proc/$$/fd` run by the shell as a child, so that only the shell's own show).
inline std::string listed_fds(const std::string& out) {
    std::string fds;
    bool inside = false;
    for (const auto& line : split_lines(out)) {
        if (line == "fds") {
            inside = true;
        } else if (line == "end") {
            break;
        } else if (inside) {
            fds += (fds.empty() ? "" : " ") + line;
        }
    }
    return fds;
}

const char* const list_fds_script = "ls -l /proc/$$/fd; echo fds; ls /proc/$$/fd; echo end";

// An open descriptor, closed at the end of the scope.
struct Fd {
    int fd = -1;
    explicit Fd(int value) : fd(value) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

// How many processes a test execs at most while waiting for the attacker to catch one.
constexpr int kMaxExecs = 400;

// The capabilities a privileged attacker would have (to open other processes' exe links
// and write root-owned files).
inline void privileged(TempBundle& bundle) {
    bundle.add_capabilities({"CAP_SYS_PTRACE", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH",
                             "CAP_FOWNER", "CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID"});
    bundle.config["process"]["noNewPrivileges"] = false;
}

} // namespace escape_test
