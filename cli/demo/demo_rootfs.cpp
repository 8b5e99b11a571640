// The root file system of `mini-run demo` when there is no example bundle: an installed
// mini-run has no source tree to take rootfs-examples/busybox from, so the demo makes a
// small rootfs of its own in a temporary directory and removes it when it ends (also on
// Ctrl-C: the TempTree in the Context goes with it).
//
// From the host's busybox when there is one (busybox-static: one static binary, an applet
// link for each command the demos' scripts run); else from the host's own binaries, each
// copied with the shared libraries it needs and the dynamic loader. Copied, not bind
// mounted: a copy needs no mount to undo, so nothing is left even when the demo is killed
// before its cleanup, but a directory in $TMPDIR.
#include "demo.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

namespace minirun::cli::demo {
namespace {

namespace stdfs = std::filesystem;

// What the demos' scripts run (demo_*.cpp); sh's builtins (echo, read, [, true) aside.
// The [install] integration test runs every demo on a rootfs of exactly these.
constexpr std::array<const char*, 14> kCommands = {"sh",  "readlink", "hostname", "ls",  "ip",
                                                   "ps",  "mount",    "grep",     "awk", "wc",
                                                   "cat", "id",       "stat",     "cut"};

// Where the host's commands are looked for: the PATH of the demo's config, not the
// caller's, so that the rootfs does not depend on who runs the demo.
constexpr std::array<const char*, 6> kHostDirs = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                                  "/usr/bin",        "/sbin",          "/bin"};

bool is_executable_file(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

std::string find_host_command(std::string_view name) {
    for (const char* dir : kHostDirs) {
        std::string path = cat(dir, "/", name);
        if (is_executable_file(path)) {
            return path;
        }
    }
    return {};
}

// The ELF's PT_INTERP (the dynamic loader it names), empty for a static binary or a file
// that is not a 64-bit ELF.
std::string elf_interpreter(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    Elf64_Ehdr header{};
    if (!file.read(reinterpret_cast<char*>(&header), sizeof header) ||
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64) {
        return {};
    }
    for (unsigned i = 0; i < header.e_phnum; ++i) {
        Elf64_Phdr program{};
        file.seekg(static_cast<std::streamoff>(header.e_phoff + i * sizeof program));
        if (!file.read(reinterpret_cast<char*>(&program), sizeof program)) {
            return {};
        }
        if (program.p_type == PT_INTERP && program.p_filesz > 1 && program.p_filesz < 4096) {
            std::string interp(program.p_filesz, '\0');
            file.seekg(static_cast<std::streamoff>(program.p_offset));
            if (!file.read(interp.data(), static_cast<std::streamsize>(interp.size()))) {
                return {};
            }
            return interp.substr(0, interp.find('\0'));
        }
    }
    return {};
}

// Builds the tree, remembering what it copied.
class Builder {
public:
    Builder(std::string rootfs, const Signals& signals)
        : rootfs_(std::move(rootfs)), signals_(&signals) {}

    Status dir(const std::string& path, mode_t mode) {
        std::error_code error;
        stdfs::create_directories(rootfs_ + path, error);
        if (error || ::chmod((rootfs_ + path).c_str(), mode) != 0) {
            return Error(
                cat("mkdir ", rootfs_, path, ": ", error ? error.message() : std::strerror(errno)));
        }
        return {};
    }

    Status text(const std::string& path, std::string_view content) {
        std::ofstream file(rootfs_ + path);
        file << content;
        if (!file.flush()) {
            return Error(cat("cannot write ", rootfs_, path));
        }
        return {};
    }

    // `host` (symlinks followed) at `path` in the rootfs, with the libraries and loader it
    // needs.
    Status program(const std::string& host, const std::string& path) {
        MR_TRY(copy(host, path, 0755));
        const std::string interp = elf_interpreter(host);
        if (interp.empty()) {
            return {}; // static: nothing else to bring
        }
        // What ldd does: the loader lists the libraries it would map, resolved as on the
        // host (ld.so.cache, RUNPATH). "libc.so.6 => /lib/.../libc.so.6 (0x...)", the
        // loader itself as "/lib64/ld-linux-x86-64.so.2 (0x...)", the vDSO without a path.
        MR_ASSIGN(CommandResult listed, run_command({interp, "--list", host}, *signals_));
        if (listed.exit_code != 0) {
            return Error(cat(interp, " --list ", host, ": ", trim(listed.err)));
        }
        MR_TRY(copy(interp, interp, 0755));
        for (const auto& line : lines_of(listed.out)) {
            auto words = words_of(line);
            auto arrow = std::find(words.begin(), words.end(), "=>");
            std::string library = arrow != words.end() && arrow + 1 != words.end()
                                      ? *(arrow + 1)
                                      : (words.empty() ? "" : words.front());
            if (library.starts_with('/')) {
                MR_TRY(copy(library, library, 0755));
            } else if (arrow != words.end()) {
                return Error(cat(host, " needs ", words.front(), ", which the loader cannot find"));
            }
        }
        libraries_ = true;
        return {};
    }

    Status link(const std::string& target, const std::string& path) {
        if (::symlink(target.c_str(), (rootfs_ + path).c_str()) != 0) {
            return Error(cat("symlink ", rootfs_, path, ": ", std::strerror(errno)));
        }
        return {};
    }

    // The loader inside finds the libraries where it found them on the host: they are at the
    // same paths, and the host's cache says where.
    Status finish() {
        if (libraries_ && ::access("/etc/ld.so.cache", R_OK) == 0) {
            MR_TRY(copy("/etc/ld.so.cache", "/etc/ld.so.cache", 0644));
        }
        return {};
    }

private:
    Status copy(const std::string& host, const std::string& path, mode_t mode) {
        if (!copied_.insert(path).second) {
            return {};
        }
        MR_TRY(signals_->check()); // Ctrl-C while copying
        std::error_code error;
        stdfs::create_directories(stdfs::path(rootfs_ + path).parent_path(), error);
        if (!error) {
            stdfs::copy_file(host, rootfs_ + path, stdfs::copy_options::overwrite_existing, error);
        }
        if (!error) {
            stdfs::permissions(rootfs_ + path, static_cast<stdfs::perms>(mode), error);
        }
        if (error) {
            return Error(cat("cannot copy ", host, " into the rootfs: ", error.message()));
        }
        return {};
    }

    std::string rootfs_;
    const Signals* signals_;
    std::set<std::string> copied_;
    bool libraries_ = false;
};

// The busybox the rootfs is made from: the host's, when it has one.
std::string find_busybox() {
    for (const char* path :
         {"/bin/busybox", "/usr/bin/busybox", "/sbin/busybox", "/usr/sbin/busybox"}) {
        if (is_executable_file(path)) {
            return path;
        }
    }
    return {};
}

} // namespace

TempTree::~TempTree() {
    remove_tree(path);
}

Result<std::string> make_rootfs(Context& context) {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ =
        cat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/mini-run-demo-rootfs.XXXXXX");
    if (::mkdtemp(templ.data()) == nullptr) {
        return Error(cat("mkdtemp ", templ, ": ", std::strerror(errno)));
    }
    context.scratch.path = templ;
    // The user demo's root (host uid 100000) must reach its files.
    ::chmod(templ.c_str(), 0755);
    std::string rootfs = templ + "/rootfs";
    Builder build(rootfs, *context.signals);
    MR_TRY(build.dir("", 0755));
    // Mount points stay empty: the config mounts over them (the rootfs is read-only).
    for (const char* dir : {"/bin", "/etc", "/proc", "/sys", "/dev"}) {
        MR_TRY(build.dir(dir, 0755));
    }
    MR_TRY(build.dir("/tmp", 01777));
    MR_TRY(build.dir("/root", 0700));
    // As scripts/make-rootfs.sh: `id` names root, the user demo's unmapped owner is nobody.
    MR_TRY(build.text("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
                                     "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"));
    MR_TRY(build.text("/etc/group", "root:x:0:\ntty:x:5:\nnogroup:x:65534:\n"));
    MR_TRY(build.text("/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n"));
    // glibc's programs look users up in files only (not the host's sssd or systemd).
    MR_TRY(build.text("/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n"));

    const std::string busybox = find_busybox();
    std::set<std::string> applets;
    if (!busybox.empty()) {
        MR_ASSIGN(CommandResult list, run_command({busybox, "--list"}, *context.signals));
        for (const auto& applet : lines_of(list.out)) {
            applets.insert(trim(applet));
        }
        MR_TRY(build.program(busybox, "/bin/busybox"));
    }
    std::vector<std::string> from_host;
    for (const char* command : kCommands) {
        if (applets.contains(command)) {
            MR_TRY(build.link("busybox", cat("/bin/", command)));
            continue;
        }
        const std::string host = find_host_command(command);
        if (host.empty()) {
            return Error(cat("cannot build the demo's rootfs: the host has no `", command,
                             "` and no busybox (apt-get install busybox-static)"));
        }
        MR_TRY(build.program(host, cat("/bin/", command)));
        from_host.emplace_back(command);
    }
    MR_TRY(build.finish());
    if (busybox.empty()) {
        context.rootfs_origin =
            cat("the host's binaries (", join(from_host, " "), ") with their libraries");
    } else {
        context.rootfs_origin = cat("the host's busybox (", busybox, ")");
        if (!from_host.empty()) {
            context.rootfs_origin += cat(" and its ", join(from_host, " "));
        }
    }
    context.out.note(cat("no example bundle: the demo's rootfs is ", rootfs, ", from ",
                         context.rootfs_origin, "; it is removed at the end"));
    return rootfs;
}

} // namespace minirun::cli::demo
