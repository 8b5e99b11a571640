#include "fs.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <climits>
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

namespace {

// The path inside the root of a directory fd resolved below it.
Result<std::string> path_in_root(int root_fd, int dir_fd) {
    MR_ASSIGN(std::string root, fd_target(root_fd));
    MR_ASSIGN(std::string dir, fd_target(dir_fd));
    if (root == "/") {
        return dir;
    }
    return dir.size() > root.size() ? dir.substr(root.size()) : std::string("/");
}

} // namespace

namespace {

// One pass of mkdir_all_in_root over `wanted`. Returns the final directory, or sets
// `redirect` to the path to create instead when a component is a symlink to a missing
// target.
Result<UniqueFd> mkdir_walk(int root_fd, const std::string& wanted, mode_t mode,
                            std::string& redirect) {
    MR_ASSIGN(UniqueFd current, open_in_root(root_fd, "/", O_PATH | O_DIRECTORY));
    std::vector<std::string_view> parts = components(wanted);
    std::string walked;
    for (size_t i = 0; i < parts.size(); ++i) {
        std::string name(parts[i]);
        walked += '/';
        walked += name;
        // Each step resolves the prefix again from the root, so a ".." or a symlink in a
        // component can never climb above it.
        auto next = open_in_root(root_fd, walked, O_PATH | O_DIRECTORY);
        if (!next && next.error().errno_value() == ENOENT) {
            if (::mkdirat(current.get(), name.c_str(), mode) == 0) {
                next = open_in_root(root_fd, walked, O_PATH | O_DIRECTORY);
            } else if (errno != EEXIST) {
                return Error::from_errno(cat("mkdir ", quoted(walked), " in rootfs"));
            } else {
                // The name exists yet does not resolve: a symlink to a missing target.
                // Create the target instead, inside the root.
                std::array<char, PATH_MAX> link{};
                ssize_t length =
                    ::readlinkat(current.get(), name.c_str(), link.data(), link.size() - 1);
                if (length <= 0) {
                    return Error::from_errno(cat("mkdir ", quoted(walked), " in rootfs"));
                }
                std::string target(link.data(), static_cast<size_t>(length));
                if (target.front() != '/') {
                    MR_ASSIGN(std::string parent, path_in_root(root_fd, current.get()));
                    parent += '/';
                    parent += target;
                    target = std::move(parent);
                }
                for (size_t j = i + 1; j < parts.size(); ++j) {
                    target += '/';
                    target += parts[j];
                }
                redirect = clean_path(target);
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

} // namespace

Result<UniqueFd> mkdir_all_in_root(int root_fd, std::string_view path, mode_t mode) {
    // Linux follows at most 40 symlinks in one lookup; so do we, then ELOOP.
    constexpr int kMaxSymlinks = 40;
    std::string wanted = clean_path(path);
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
    auto existing = open_in_root(root_fd, path, O_PATH);
    if (existing || existing.error().errno_value() != ENOENT) {
        return existing;
    }
    auto [parent, name] = split_parent(clean_path(path));
    MR_ASSIGN(UniqueFd parent_fd, mkdir_all_in_root(root_fd, parent, 0755));
    // O_NOFOLLOW|O_EXCL: never create through a dangling symlink planted in the rootfs.
    int fd = ::openat(parent_fd.get(), name.c_str(),
                      O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) {
        return Error::from_errno(cat("create ", quoted(path), " in rootfs"));
    }
    UniqueFd created(fd);
    return open_in_root(root_fd, path, O_PATH);
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

Result<std::string> read_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", path));
    }
    std::string content;
    std::array<char, 8192> buffer{};
    for (;;) {
        ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno(cat("read ", path));
        }
        if (got == 0) {
            break;
        }
        content.append(buffer.data(), static_cast<size_t>(got));
    }
    return content;
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

Status write_file_at(int dir_fd, const std::string& name, std::string_view content) {
    UniqueFd fd(::openat(dir_fd, name.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", name));
    }
    return write_whole(fd.get(), content, name);
}

Result<std::string> real_path(const std::string& path) {
    std::array<char, PATH_MAX> buffer{};
    if (::realpath(path.c_str(), buffer.data()) == nullptr) {
        return Error::from_errno(quoted(path));
    }
    return std::string(buffer.data());
}

} // namespace minirun::fs
