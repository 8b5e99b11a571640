#include "security/sealed_exe.hpp"

#include "fs.hpp"
#include "minirun/fd.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <initializer_list>
#include <string>
#include <utility>

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace minirun::runtime {
namespace {

// Every seal: no writes, no size change, and no way to lift them.
constexpr int kSeals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;

#ifndef MFD_EXEC
constexpr unsigned int MFD_EXEC = 0x0010U; // Linux 6.3: executable memfd, explicitly
#endif

int memfd(unsigned int flags) {
    return static_cast<int>(::syscall(SYS_memfd_create, "mini-run", flags));
}

// A process already runs from a place nobody can write through: a sealed memfd, or a
// read-only mount (our overlay view, or a binary installed on a read-only file system).
bool already_protected(int self) {
    int seals = ::fcntl(self, F_GET_SEALS);
    if (seals >= 0 && (seals & kSeals) == kSeals) {
        return true;
    }
    struct statvfs info {};
    return ::fstatvfs(self, &info) == 0 && (info.f_flag & ST_RDONLY) != 0;
}

int sys_fsopen(const char* name) {
    return static_cast<int>(::syscall(SYS_fsopen, name, FSOPEN_CLOEXEC));
}

int sys_fsconfig(int context, unsigned int command, const char* key, const char* value) {
    return static_cast<int>(::syscall(SYS_fsconfig, context, command, key, value, 0));
}

UniqueFd sys_fsmount(int context, unsigned int attributes) {
    return UniqueFd(static_cast<int>(::syscall(SYS_fsmount, context, FSMOUNT_CLOEXEC, attributes)));
}

// A detached mount of `type` made from `options` (key, value pairs); invalid on failure.
UniqueFd detached_mount(const char* type,
                        std::initializer_list<std::pair<const char*, std::string>> options,
                        unsigned int attributes) {
    UniqueFd context(sys_fsopen(type));
    if (!context) {
        return {};
    }
    for (const auto& [key, value] : options) {
        if (sys_fsconfig(context.get(), FSCONFIG_SET_STRING, key, value.c_str()) < 0) {
            return {};
        }
    }
    if (sys_fsconfig(context.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr) < 0) {
        return {};
    }
    return sys_fsmount(context.get(), attributes);
}

// runc's answer to CVE-2019-5736 without a copy: the directory holding the binary, seen
// through an overlayfs that has no upper layer and is mounted read-only. Writing to the
// file through it fails with EROFS, whoever holds the fd, and it cannot be made writable:
// there is no layer to write to. The mounts are detached: in no mount namespace at all.
UniqueFd read_only_view(int self) {
    auto target = fs::fd_target(self);
    if (!target) {
        return {};
    }
    auto [directory, name] = fs::split_parent(*target);
    // overlayfs wants two lower layers when it has no upper one: an empty tmpfs.
    UniqueFd empty = detached_mount("tmpfs", {{"size", "4k"}, {"mode", "0500"}},
                                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC);
    if (!empty) {
        return {};
    }
    constexpr unsigned int kAttributes = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID;
    UniqueFd overlay = detached_mount(
        "overlay", {{"lowerdir", cat(directory, ":/proc/self/fd/", empty.get())}}, kAttributes);
    if (!overlay) {
        return {};
    }
    UniqueFd binary(::openat(overlay.get(), name.c_str(), O_PATH | O_CLOEXEC));
    struct stat seen {};
    struct stat original {};
    // The file we will run must be the one we are running.
    if (!binary || ::fstat(binary.get(), &seen) < 0 || ::fstat(self, &original) < 0 ||
        seen.st_size != original.st_size) {
        return {};
    }
    return binary;
}

// The fallback: the whole binary copied into a memfd sealed against any change.
Result<UniqueFd> sealed_copy(int self) {
    struct stat info {};
    if (::fstat(self, &info) < 0) {
        return Error::from_errno("stat /proc/self/exe");
    }
    // MFD_EXEC where the kernel knows it (a vm.memfd_noexec policy may demand it).
    UniqueFd copy(memfd(MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC));
    if (!copy && errno == EINVAL) {
        copy.reset(memfd(MFD_CLOEXEC | MFD_ALLOW_SEALING));
    }
    if (!copy) {
        return Error::from_errno("memfd_create for a sealed copy of mini-run");
    }
    for (off_t done = 0; done < info.st_size;) {
        ssize_t sent =
            ::sendfile(copy.get(), self, &done, static_cast<size_t>(info.st_size - done));
        if (sent <= 0) {
            if (sent < 0 && errno == EINTR) {
                continue;
            }
            return Error::from_errno("copy mini-run into a sealed memfd");
        }
    }
    if (::fcntl(copy.get(), F_ADD_SEALS, kSeals) < 0) {
        return Error::from_errno("seal the copy of mini-run");
    }
    return copy;
}

} // namespace

bool runs_from_protected_view() {
    UniqueFd self(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    return self && already_protected(self.get());
}

Status ensure_sealed_binary(char** argv) {
    UniqueFd self(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    if (!self) {
        return Error::from_errno("open /proc/self/exe");
    }
    if (already_protected(self.get())) {
        return {};
    }
    // The read-only overlay costs a few mount calls; the copy costs writing the whole
    // binary again, so it is only the fallback (no CAP_SYS_ADMIN, no overlayfs).
    if (UniqueFd view = read_only_view(self.get()); view) {
        ::execveat(view.get(), "", argv, environ, AT_EMPTY_PATH);
    }
    MR_ASSIGN(UniqueFd copy, sealed_copy(self.get()));
    ::fexecve(copy.get(), argv, environ);
    return Error::from_errno("exec the sealed copy of mini-run");
}

} // namespace minirun::runtime
