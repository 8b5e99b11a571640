#include "proc_mounts.hpp"

#include "minirun/error.hpp"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace minirun::proc_mounts {
namespace {

constexpr std::array<std::string_view, 10> kLxcfsFiles = {
    "/proc/cpuinfo",
    "/proc/diskstats",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/swaps",
    "/proc/uptime",
    "/proc/loadavg",
    "/proc/slabinfo",
    "/proc/sys/kernel/ns_last_pid",
    "/proc/sys/crypto/fips_enabled",
};

constexpr ino_t kProcRootInode = 1;

} // namespace

std::span<const std::string_view> lxcfs_files() {
    return kLxcfsFiles;
}

Where classify(std::string_view destination) {
    if (destination == "/proc") {
        return Where::proc_root;
    }
    if (!destination.starts_with("/proc/")) {
        return Where::outside;
    }
    if (std::find(kLxcfsFiles.begin(), kLxcfsFiles.end(), destination) != kLxcfsFiles.end()) {
        return Where::lxcfs_file;
    }
    return Where::inside;
}

std::optional<std::string> destination_problem(std::string_view destination, std::string_view type,
                                               bool bind) {
    switch (classify(destination)) {
    case Where::outside:
    case Where::lxcfs_file:
        return std::nullopt;
    case Where::proc_root:
        if (bind || type == "proc") {
            return std::nullopt;
        }
        return cat(quoted(destination), " cannot be mounted because it is not of type proc");
    case Where::inside:
        break;
    }
    return cat(quoted(destination), " cannot be mounted because it is inside /proc");
}

std::optional<std::string> source_problem(std::string_view destination, int source_fd) {
    struct statfs fs {};
    struct stat st {};
    if (::fstatfs(source_fd, &fs) < 0 || ::fstat(source_fd, &st) < 0) {
        return cat(quoted(destination), ": stat its source: ", std::strerror(errno));
    }
    if (fs.f_type != PROC_SUPER_MAGIC) {
        return cat(quoted(destination), " cannot be mounted because it is not of type proc");
    }
    if (st.st_ino != kProcRootInode) {
        return cat(quoted(destination),
                   " cannot be mounted because its source is not the root of a procfs (inode ",
                   st.st_ino, ")");
    }
    return std::nullopt;
}

} // namespace minirun::proc_mounts
