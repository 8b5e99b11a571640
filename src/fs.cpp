#include "fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <vector>

namespace minirun::fs {
namespace {

long openat2_raw(int dir_fd, const char* path, open_how* how) {
    return ::syscall(SYS_openat2, dir_fd, path, how, sizeof(*how));
}

// Magic links (/proc/self/fd/N, /proc/self/root) can jump anywhere, whatever the root.
constexpr uint64_t kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;

std::vector<std::string_view> components(std::string_view path) {
    std::vector<std::string_view> parts;
    size_t pos = 0;
    while (pos < path.size()) {
        size_t next = path.find('/', pos);
        if (next == std::string_view::npos) {
            next = path.size();
        }
        std::string_view part = path.substr(pos, next - pos);
        if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        pos = next + 1;
    }
    return parts;
}

} // namespace

Result<UniqueFd> open_in_root(int root_fd, std::string_view path, int flags,
                              uint64_t extra_resolve) {
    std::string relative(path);
    if (relative.empty()) {
        relative = ".";
    }
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = kInRoot | extra_resolve;
    for (;;) {
        long fd = openat2_raw(root_fd, relative.c_str(), &how);
        if (fd >= 0) {
            return UniqueFd(static_cast<int>(fd));
        }
        // EAGAIN: a concurrent rename inside the root raced the lookup; the kernel asks
        // us to retry rather than risk a wrong answer.
        if (errno != EAGAIN && errno != EINTR) {
            return Error::from_errno(cat("open ", quoted(path), " in rootfs"));
        }
    }
}

Result<std::string> path_in_root(int root_fd, int fd) {
    MR_ASSIGN(std::string root, fd_target(root_fd));
    MR_ASSIGN(std::string path, fd_target(fd));
    if (root == "/") {
        return path;
    }
    if (path == root) {
        return std::string("/");
    }
    if (!path.starts_with(root) || path[root.size()] != '/') {
        return Error(EXDEV, cat(quoted(path), " is not inside ", quoted(root)));
    }
    return path.substr(root.size());
}

namespace {

// Linux follows at most 40 symlinks in one lookup; so do we, then ELOOP.
constexpr int kMaxSymlinks = 40;

// `name` in `dir_fd` exists but does not resolve: a symlink whose target is missing (or a
// name that raced into place). Returns the path inside the root it points at, where the
// caller creates what it wanted instead, as runc's MkdirAllInRoot and securejoin do: an
// absolute target is taken from the root, a relative one from `dir_fd`, never from the
// host's "/" (CVE-2021-30465 class). The target is not cleaned lexically: a ".." after a
// symlink in it must climb from where that symlink leads, as the kernel's walk does.
Result<std::string> dangling_target(int root_fd, int dir_fd, const std::string& name,
                                    std::string_view shown) {
    std::array<char, PATH_MAX> link{};
    ssize_t length = ::readlinkat(dir_fd, name.c_str(), link.data(), link.size() - 1);
    if (length <= 0) {
        return Error::from_errno(length < 0 ? errno : ENOENT,
                                 cat("resolve ", quoted(shown), " in rootfs"));
    }
    std::string target(link.data(), static_cast<size_t>(length));
    if (target.front() == '/') {
        return target;
    }
    auto parent = path_in_root(root_fd, dir_fd);
    if (!parent) {
        return parent.error();
    }
    std::string joined = std::move(*parent);
    if (joined.empty() || joined.back() != '/') {
        joined += '/';
    }
    return joined + target;
}

// The deepest directory of `parts` that already resolves inside the root, tried from the
// whole path upwards: a mount or a device goes to a directory that exists (one lookup
// instead of one per component), and a missing mount point mostly lacks only its last
// component. `depth` is how many components it covers; `next_missing` says the lookup of
// one more answered ENOENT. Any other failure starts the walk from the root, whose
// step-by-step lookups name the component at fault.
struct Deepest {
    UniqueFd dir;
    size_t depth = 0;
    bool next_missing = false;
};

Result<Deepest> deepest_existing(int root_fd, const std::vector<std::string_view>& parts) {
    bool missing = false; // the lookup one level deeper said ENOENT
    for (size_t depth = parts.size(); depth > 0; --depth) {
        std::string prefix;
        for (size_t i = 0; i < depth; ++i) {
            prefix += '/';
            prefix += parts[i];
        }
        auto dir = open_in_root(root_fd, prefix, O_PATH | O_DIRECTORY);
        if (dir) {
            return Deepest{std::move(*dir), depth, missing};
        }
        missing = dir.error().errno_value() == ENOENT;
        if (!missing) {
            break;
        }
    }
    MR_ASSIGN(UniqueFd root, open_in_root(root_fd, "/", O_PATH | O_DIRECTORY));
    return Deepest{std::move(root), 0, missing};
}

// One pass of mkdir_all_in_root over `wanted`. Returns the final directory, or sets
// `redirect` to the path to create instead when a component is a symlink to a missing
// target.
Result<UniqueFd> mkdir_walk(int root_fd, const std::string& wanted, mode_t mode,
                            std::string& redirect) {
    std::vector<std::string_view> parts = components(wanted);
    MR_ASSIGN(Deepest start, deepest_existing(root_fd, parts));
    UniqueFd current = std::move(start.dir);
    std::string walked;
    for (size_t i = 0; i < start.depth; ++i) {
        walked += '/';
        walked += parts[i];
    }
    for (size_t i = start.depth; i < parts.size(); ++i) {
        std::string name(parts[i]);
        walked += '/';
        walked += name;
        // Each step resolves the prefix again from the root, so a ".." or a symlink in a
        // component can never climb above it. The first step below the deepest directory
        // found was looked up a moment ago: missing.
        bool known_missing = start.next_missing && i == start.depth;
        auto next = known_missing ? Result<UniqueFd>(Error(ENOENT, walked))
                                  : open_in_root(root_fd, walked, O_PATH | O_DIRECTORY);
        if (!next && next.error().errno_value() == ENOENT) {
            if (::mkdirat(current.get(), name.c_str(), mode) == 0) {
                // Just made below a directory resolved inside the root: one name, opened
                // without following a symlink, cannot lead out of it. Only if something
                // replaced it meanwhile is it resolved from the root again.
                next = UniqueFd(::openat(current.get(), name.c_str(),
                                         O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!*next) {
                    next = open_in_root(root_fd, walked, O_PATH | O_DIRECTORY);
                }
            } else if (errno != EEXIST) {
                return Error::from_errno(cat("mkdir ", quoted(walked), " in rootfs"));
            } else {
                // The name exists yet does not resolve: a symlink to a missing target.
                // Create the target instead, inside the root.
                MR_ASSIGN(std::string target,
                          dangling_target(root_fd, current.get(), name, walked));
                for (size_t j = i + 1; j < parts.size(); ++j) {
                    target += '/';
                    target += parts[j];
                }
                redirect = std::move(target);
                return UniqueFd();
            }
        }
        if (!next) {
            return next.error().wrap(cat("mkdir ", quoted(walked)));
        }
        current = std::move(*next);
    }
    return current;
}

// Both walk `path` as the kernel would, not cleaned lexically first: a ".." after a
// symlink climbs from where the link leads (and RESOLVE_IN_ROOT stops it at the root).
std::string from_root(std::string_view path) {
    return path.starts_with('/') ? std::string(path) : "/" + std::string(path);
}

} // namespace

Result<UniqueFd> mkdir_all_in_root(int root_fd, std::string_view path, mode_t mode) {
    std::string wanted = from_root(path);
    for (int symlinks = 0; symlinks <= kMaxSymlinks; ++symlinks) {
        std::string redirect;
        MR_ASSIGN(UniqueFd made, mkdir_walk(root_fd, wanted, mode, redirect));
        if (redirect.empty()) {
            return made;
        }
        wanted = std::move(redirect);
    }
    return Error(ELOOP, cat("mkdir ", quoted(path), " in rootfs: too many symlinks"));
}

Result<UniqueFd> ensure_file_in_root(int root_fd, std::string_view path, mode_t mode) {
    std::string wanted = from_root(path);
    for (int symlinks = 0; symlinks <= kMaxSymlinks; ++symlinks) {
        auto existing = open_in_root(root_fd, wanted, O_PATH);
        if (existing || existing.error().errno_value() != ENOENT) {
            return existing;
        }
        // Split by hand, not by clean_path: a link's target keeps its "..".
        while (wanted.size() > 1 && wanted.back() == '/') {
            wanted.pop_back();
        }
        size_t slash = wanted.rfind('/');
        std::string parent = slash == 0 ? "/" : wanted.substr(0, slash);
        std::string name = wanted.substr(slash + 1);
        if (name.empty() || name == "." || name == "..") {
            return Error(EISDIR, cat("create ", quoted(path), " in rootfs: names a directory"));
        }
        MR_ASSIGN(UniqueFd parent_fd, mkdir_all_in_root(root_fd, parent, 0755));
        // O_NOFOLLOW|O_EXCL: the kernel would follow a dangling symlink out of the root;
        // such a link is resolved by us, inside it, below.
        int fd = ::openat(parent_fd.get(), name.c_str(),
                          O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST) {
            return Error::from_errno(cat("create ", quoted(path), " in rootfs"));
        }
        if (fd >= 0) {
            UniqueFd created(fd);
            UniqueFd made(::openat(parent_fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
            if (!made) {
                return Error::from_errno(cat("open ", quoted(path), " in rootfs"));
            }
            return made;
        }
        // EEXIST for a name that did not resolve: a symlink to a missing target, whose
        // target, inside the root, is what gets created.
        MR_ASSIGN(wanted, dangling_target(root_fd, parent_fd.get(), name, path));
    }
    return Error(ELOOP, cat("create ", quoted(path), " in rootfs: too many symlinks"));
}

Result<UniqueFd> file_mount_point(int dir_fd, const std::string& name, mode_t mode,
                                  std::string_view shown) {
    // Open, else create and open: a name that appears between our open and our create
    // (EEXIST) is opened again, once.
    for (int attempt = 0; attempt < 3; ++attempt) {
        UniqueFd fd(::openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!fd && errno == ENOENT) {
            UniqueFd made(::openat(dir_fd, name.c_str(),
                                   O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, mode));
            if (!made && errno != EEXIST) {
                return Error::from_errno(cat("create ", shown));
            }
            continue;
        }
        if (!fd) {
            return Error::from_errno(cat("open ", shown));
        }
        struct stat info {};
        if (::fstat(fd.get(), &info) < 0) {
            return Error::from_errno(cat("stat ", shown));
        }
        if (S_ISLNK(info.st_mode)) {
            return Error(ELOOP, cat(shown, " is a symlink in the rootfs: refused, never followed"));
        }
        if (!S_ISREG(info.st_mode) && !S_ISCHR(info.st_mode)) {
            return Error(EEXIST,
                         cat(shown, " exists and is neither a file nor a character device"));
        }
        return fd;
    }
    return Error(EAGAIN, cat("create ", shown, ": it keeps changing"));
}

std::string fd_path(int fd) {
    return cat("/proc/self/fd/", fd);
}

Result<std::string> fd_target(int fd) {
    std::array<char, PATH_MAX> buffer{};
    ssize_t length = ::readlink(fd_path(fd).c_str(), buffer.data(), buffer.size() - 1);
    if (length < 0) {
        return Error::from_errno(cat("readlink ", fd_path(fd)));
    }
    return std::string(buffer.data(), static_cast<size_t>(length));
}

std::pair<std::string, std::string> split_parent(std::string_view path) {
    size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) {
        return {".", std::string(path)};
    }
    std::string parent(path.substr(0, slash));
    if (parent.empty()) {
        parent = "/";
    }
    return {parent, std::string(path.substr(slash + 1))};
}

bool at_or_below(std::string_view dir, std::string_view path) {
    return dir == "/" || path == dir ||
           (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

std::string clean_path(std::string_view path) {
    std::vector<std::string_view> kept;
    for (std::string_view part : components(path)) {
        if (part == "..") {
            if (!kept.empty()) {
                kept.pop_back();
            }
            continue;
        }
        kept.push_back(part);
    }
    std::string out;
    for (std::string_view part : kept) {
        out += '/';
        out += part;
    }
    return out.empty() ? "/" : out;
}

Result<std::string> read_all(int fd, std::string_view what, size_t limit) {
    std::string content;
    std::array<char, 8192> buffer{};
    for (;;) {
        ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno(cat("read ", what));
        }
        if (got == 0) {
            return content;
        }
        content.append(buffer.data(), static_cast<size_t>(got));
        if (content.size() > limit) {
            return Error(EFBIG, cat(what, ": larger than ", limit, " bytes"));
        }
    }
}

Status write_all(int fd, std::string_view content, std::string_view what) {
    while (!content.empty()) {
        ssize_t written = ::write(fd, content.data(), content.size());
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno(cat("write ", what));
        }
        content.remove_prefix(static_cast<size_t>(written));
    }
    return {};
}

Result<std::string> read_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", path));
    }
    return read_all(fd.get(), path);
}

namespace {
Status write_whole(int fd, std::string_view content, std::string_view what) {
    ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0) {
        return Error::from_errno(cat("write ", what));
    }
    if (static_cast<size_t>(written) != content.size()) {
        return Error(EIO, cat("write ", what, ": short write"));
    }
    return {};
}
} // namespace

Status write_file(const std::string& path, std::string_view content) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", path));
    }
    return write_whole(fd.get(), content, path);
}

Result<std::string> real_path(const std::string& path) {
    std::array<char, PATH_MAX> buffer{};
    if (::realpath(path.c_str(), buffer.data()) == nullptr) {
        return Error::from_errno(quoted(path));
    }
    return std::string(buffer.data());
}

int cloexec_fds_from(int first) {
    int dir = static_cast<int>(
        ::syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir < 0) {
        return errno;
    }
    // The container's /proc, mounted by us: still, an fd listing that is not a procfs
    // would leave the caller's fds open while claiming they were marked.
    struct statfs info {};
    if (::fstatfs(dir, &info) < 0 || info.f_type != PROC_SUPER_MAGIC) {
        ::close(dir);
        return ENOTSUP;
    }
    // linux_dirent64, read raw: readdir(3) allocates.
    alignas(8) std::array<char, 4096> buffer{};
    int error = 0;
    for (;;) {
        long got = ::syscall(SYS_getdents64, dir, buffer.data(), buffer.size());
        if (got <= 0) {
            if (got < 0) {
                error = errno;
            } // else the end of the listing: a failed mark found before it stays the answer
            break;
        }
        for (long at = 0; at < got;) {
            const char* entry = buffer.data() + at;
            unsigned short length = 0;
            __builtin_memcpy(&length, entry + offsetof(dirent64, d_reclen), sizeof(length));
            const char* name = entry + offsetof(dirent64, d_name);
            at += length;
            int fd = 0;
            bool number = *name != '\0';
            for (; *name != '\0'; ++name) {
                number = number && *name >= '0' && *name <= '9' && fd < 100000000;
                fd = number ? fd * 10 + (*name - '0') : 0;
            }
            // EBADF: an fd of the listing that closed meanwhile (none of ours can).
            if (number && fd >= first && fd != dir && ::fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 &&
                errno != EBADF) {
                error = errno;
            }
        }
    }
    ::close(dir);
    return error;
}

} // namespace minirun::fs
