#include "procfs.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <array>
#include <charconv>

namespace minirun::procfs {
namespace {

constexpr ino_t kProcRootInode = 1; // PROC_ROOT_INO

// The first: a procfs of the caller's PID namespace that only this fd reaches. nosuid,
// nodev, noexec: nothing is ever executed or opened as a device through it.
Result<UniqueFd> private_instance() {
    UniqueFd context(static_cast<int>(::syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC)));
    if (!context) {
        return Error::from_errno("fsopen(\"proc\")");
    }
    if (::syscall(SYS_fsconfig, context.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0) {
        return Error::from_errno("fsconfig(FSCONFIG_CMD_CREATE)");
    }
    UniqueFd root(
        static_cast<int>(::syscall(SYS_fsmount, context.get(), FSMOUNT_CLOEXEC,
                                   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)));
    if (!root) {
        return Error::from_errno("fsmount");
    }
    return root;
}

// The second: /proc's own mount, copied without anything mounted below it (no
// AT_RECURSIVE), so a bind over one of its files is not in the copy.
Result<UniqueFd> detached_clone() {
    UniqueFd root(static_cast<int>(
        ::syscall(SYS_open_tree, AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
    if (!root) {
        return Error::from_errno("open_tree(\"/proc\", OPEN_TREE_CLONE)");
    }
    return root;
}

// The root of a procfs: its type, and inode 1 (not /proc/self, not a bind of a subtree).
Status check_root(int fd, std::string_view what) {
    struct statfs fs {};
    struct stat st {};
    if (::fstatfs(fd, &fs) < 0 || ::fstat(fd, &st) < 0) {
        return Error::from_errno(cat("stat ", what));
    }
    if (fs.f_type != PROC_SUPER_MAGIC || st.st_ino != kProcRootInode) {
        return Error(EPERM, cat(what, " is not the root of a procfs"));
    }
    return {};
}

Result<uint64_t> fdinfo_mount_id(int fd, int proc_root) {
    open_how how{};
    how.flags = O_RDONLY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS;
    std::string path = cat("thread-self/fdinfo/", fd);
    UniqueFd info(
        static_cast<int>(::syscall(SYS_openat2, proc_root, path.c_str(), &how, sizeof(how))));
    if (!info) {
        return Error::from_errno(cat("open ", path));
    }
    std::array<char, 4096> buffer{};
    ssize_t length = ::read(info.get(), buffer.data(), buffer.size() - 1);
    if (length < 0) {
        return Error::from_errno(cat("read ", path));
    }
    std::string_view text(buffer.data(), static_cast<size_t>(length));
    size_t at = text.find("mnt_id:");
    if (at == std::string_view::npos) {
        return Error(ENOTSUP, cat(path, ": no mnt_id"));
    }
    text.remove_prefix(at + 7);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    uint64_t id = 0;
    if (std::from_chars(text.data(), text.data() + text.size(), id).ec != std::errc{}) {
        return Error(EINVAL, cat(path, ": bad mnt_id"));
    }
    return id;
}

} // namespace

Result<uint64_t> mount_id_of(int fd, int proc_root) {
    struct statx info {};
    if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &info) == 0 &&
        (info.stx_mask & STATX_MNT_ID) != 0) {
        return static_cast<uint64_t>(info.stx_mnt_id);
    }
    return fdinfo_mount_id(fd, proc_root); // before Linux 5.8
}

Result<UniqueFd> open_beneath(int dir_fd, std::string_view path, int flags, int proc_root) {
    open_how how{};
    how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC;
    // Ordinary symlinks stay allowed: "self" and "thread-self" are, and RESOLVE_BENEATH
    // keeps them below the root. A magic link (/proc/self/fd/N, cwd, root) leads anywhere.
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS;
    std::string name(path);
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dir_fd, name.c_str(), &how, sizeof(how))));
    if (!fd) {
        if (errno == EXDEV) {
            return Error(EXDEV, cat("open ", name,
                                    ": something is mounted on it (or on the way): refusing to "
                                    "go through it (CVE-2025-52881)"));
        }
        return Error::from_errno(cat("open ", name));
    }
    struct statfs fs {};
    if (::fstatfs(fd.get(), &fs) < 0) {
        return Error::from_errno(cat("statfs ", name));
    }
    if (fs.f_type != PROC_SUPER_MAGIC) {
        return Error(EXDEV, cat(name, " is not on procfs (CVE-2025-52881)"));
    }
    MR_ASSIGN(uint64_t dir_mount, mount_id_of(dir_fd, proc_root));
    MR_ASSIGN(uint64_t file_mount, mount_id_of(fd.get(), proc_root));
    if (dir_mount != file_mount) {
        return Error(EXDEV, cat(name, " is on another mount than the procfs it was opened in: "
                                      "another procfs file is bound over it (CVE-2025-52881)"));
    }
    return fd;
}

Result<Handle> Handle::open() {
    Handle handle;
    auto instance = private_instance();
    if (instance) {
        handle.root_ = std::move(*instance);
        handle.kind_ = Kind::private_instance;
        handle.description_ = "a private procfs instance (fsopen)";
    } else {
        auto clone = detached_clone();
        if (clone) {
            handle.root_ = std::move(*clone);
            handle.kind_ = Kind::detached_clone;
            handle.description_ = cat("a copy of /proc without its submounts (open_tree; ",
                                      instance.error().message(), ")");
        } else {
            auto host = host_proc();
            if (!host) {
                return Error(
                    host.error().errno_value(),
                    cat("no procfs to write kernel settings through: ", instance.error().message(),
                        "; ", clone.error().message(), "; ", host.error().message()));
            }
            handle = std::move(*host);
            handle.description_ =
                cat("/proc itself, opened before any mount of the container's; a file with "
                    "a mount on it is refused (",
                    instance.error().message(), "; ", clone.error().message(), ")");
        }
    }
    if (handle.kind_ != Kind::host_proc) {
        MR_TRY(check_root(handle.fd(), "the procfs handle"));
    }
    MR_ASSIGN(handle.mount_id_, mount_id_of(handle.fd(), handle.fd()));
    return handle;
}

Result<Handle> Handle::host_proc() {
    Handle handle;
    handle.root_ = UniqueFd(::open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!handle.root_) {
        return Error::from_errno("open /proc");
    }
    MR_TRY(check_root(handle.fd(), "/proc"));
    handle.kind_ = Kind::host_proc;
    handle.description_ = "/proc itself";
    MR_ASSIGN(handle.mount_id_, mount_id_of(handle.fd(), handle.fd()));
    return handle;
}

Status Handle::usable(const Handle* handle) {
    if (handle == nullptr || !handle->valid()) {
        return Error(EBADF, "no procfs handle to write it through");
    }
    return {};
}

Result<UniqueFd> Handle::open_file(std::string_view path, int flags) const {
    if (!root_) {
        return Error(EBADF, cat("open /proc/", path, ": no procfs handle"));
    }
    auto opened = open_beneath(root_.get(), path, flags, root_.get());
    if (!opened) {
        return opened.error().wrap("/proc");
    }
    return opened;
}

Status Handle::verify(int fd, std::string_view path) const {
    struct statfs fs {};
    if (::fstatfs(fd, &fs) < 0) {
        return Error::from_errno(cat("statfs /proc/", path));
    }
    MR_ASSIGN(uint64_t mount, mount_id_of(fd, root_.get()));
    if (fs.f_type != PROC_SUPER_MAGIC || mount != mount_id_) {
        return Error(EXDEV, cat("/proc/", path, " is not the file of the procfs handle"));
    }
    return {};
}

Status Handle::write(std::string_view path, std::string_view value) const {
    MR_ASSIGN(UniqueFd file, open_file(path, O_WRONLY));
    if (::write(file.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
        return Error::from_errno(cat("write /proc/", path));
    }
    return {};
}

} // namespace minirun::procfs
