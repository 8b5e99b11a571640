// File system helpers, above all the safe resolution of paths inside a container's rootfs.
//
// A rootfs is untrusted: it may contain symlinks such as /proc -> /host/etc or
// dev -> ../../../dev. Every path mini-run touches inside it is resolved with openat2()
// and RESOLVE_IN_ROOT, which makes the kernel treat the rootfs fd as "/" for ".." and for
// absolute symlinks, so no symlink can lead out of it (CVE-2021-30465, CVE-2024-45310
// class). Mounts then target the resolved fd through /proc/self/fd/N, never a path string
// that could be swapped between check and use.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "minirun/file.hpp"

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace minirun::fs {

// Resolves `path` (absolute or relative, either way taken inside the root) below `root_fd`,
// never leaving it. `extra_resolve` adds RESOLVE_* flags (e.g. RESOLVE_NO_SYMLINKS).
Result<UniqueFd> open_in_root(int root_fd, std::string_view path, int flags,
                              uint64_t extra_resolve = 0);

// Creates `path` and its missing parents below `root_fd` as directories (mode before
// umask), and returns an O_PATH fd of the final directory.
Result<UniqueFd> mkdir_all_in_root(int root_fd, std::string_view path, mode_t mode);

// Makes sure `path` exists below `root_fd` (a missing one becomes an empty regular file,
// its missing parents directories) and returns an O_PATH fd of it.
Result<UniqueFd> ensure_file_in_root(int root_fd, std::string_view path, mode_t mode);

// The file `name` in the directory `dir_fd` as a mount point for a file bind (a device node
// in a user namespace, the pty on /dev/console): created empty (`mode`) when missing, never
// through a symlink. An existing one must be a regular file or a character device: a
// symlink there is refused, not followed, wherever it leads (the kernel's O_CREAT would
// follow it even from the host's "/"), and so is anything else (a fifo would block the
// open, a directory is no file). Returns an O_PATH fd of it, for a mount by fd. Errors name
// the file as `shown` (its path in the container).
Result<UniqueFd> file_mount_point(int dir_fd, const std::string& name, mode_t mode,
                                  std::string_view shown);

// The magic-link path of an fd, to hand an fd to calls that only take paths (mount(2)).
std::string fd_path(int fd);

// The path an fd refers to (readlink of /proc/self/fd/N).
Result<std::string> fd_target(int fd);

// The path inside `root_fd` of `fd`, resolved below it ("/" for the root itself), from both
// fds' fd_target(); an error if it is not below it.
Result<std::string> path_in_root(int root_fd, int fd);

// Splits "/a/b/c" into ("/a/b", "c"). A path with no '/' has parent ".".
std::pair<std::string, std::string> split_parent(std::string_view path);

// Lexically normalises an absolute path: collapses "//", "." and ".." (never above "/").
std::string clean_path(std::string_view path);

// `path` is `dir` or inside it: "/proc/sys" of "/proc", any path of "/". Both clean.
bool at_or_below(std::string_view dir, std::string_view path);

// read_file(path) is in minirun/file.hpp, for the CLI too.

// Writes `content` with a single write(2): the kernel requires that for uid_map and friends.
Status write_file(const std::string& path, std::string_view content);

// write(2) until all of `content` is out, retried on EINTR (logs, explain's lines, state
// files): "write <what>: <strerror>" when a write fails.
Status write_all(int fd, std::string_view content, std::string_view what);

// read(2) until end of file, retried on EINTR: "read <what>: <strerror>" when a read
// fails, EFBIG "<what>: larger than <limit> bytes" once more than `limit` bytes came.
Result<std::string> read_all(int fd, std::string_view what, size_t limit = SIZE_MAX);

// Marks every open fd >= `first` close-on-exec, one fcntl(F_SETFD) per entry of
// /proc/self/fd (a procfs, checked): the fallback for close_range(CLOSE_RANGE_CLOEXEC)
// where a seccomp profile older than the call refuses it (runc's fdRangeFrom does the
// same). The listing's own fd is skipped (it is closed on return). Only raw system calls
// that any profile allows since 2014 (openat, fstatfs, getdents64, fcntl, close), no
// allocation: async-signal-safe, usable in a forked child. 0, or the errno of the failure.
int cloexec_fds_from(int first);

// realpath(3) as a Result.
Result<std::string> real_path(const std::string& path);

} // namespace minirun::fs
