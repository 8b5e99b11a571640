// /proc/<pid>/mountinfo and /proc/<pid>/cgroup, parsed.
#pragma once

#include "minirun/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace minirun::fs {

struct MountInfo {
    int id = 0;
    int parent_id = 0;
    std::string root;          // path of the mount's root inside its filesystem
    std::string mount_point;   // where it is mounted
    std::string mount_options; // per-mount options ("rw,nosuid")
    std::string optional;      // propagation fields ("shared:1 master:2")
    std::string fs_type;
    std::string source;
    std::string super_options; // per-superblock options ("rw,cpu")
};

// Parses mountinfo text; octal escapes (\040 for space) are decoded.
std::vector<MountInfo> parse_mountinfo(std::string_view text);
Result<std::vector<MountInfo>> read_mountinfo(const std::string& path = "/proc/self/mountinfo");

struct CgroupMembership {
    int hierarchy_id = 0;
    std::string controllers; // "cpu,cpuacct", "name=systemd", or "" for cgroup2
    std::string path;        // "/user.slice"
};

std::vector<CgroupMembership> parse_proc_cgroup(std::string_view text);

// Splits on `separator`, keeping empty fields.
std::vector<std::string_view> split(std::string_view text, char separator);
// The words of `text`, split on runs of blanks (spaces, tabs, newlines).
std::vector<std::string_view> split_words(std::string_view text);

// True when the comma-separated `options` list contains `option` exactly.
bool has_option(std::string_view options, std::string_view option);

} // namespace minirun::fs
