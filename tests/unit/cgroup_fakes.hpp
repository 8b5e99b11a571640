// The cgroup unit tests' fakes: mountinfo and /proc/self/cgroup texts of three host
// layouts, and fake cgroup trees in a temporary directory (FakeUnified, FakeLegacy) whose
// interface files are plain files, read back after a write.
#pragma once

#include "cgroup/cgroup.hpp"
#include "mountinfo.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace minirun::testing::cgroup_fakes {

using namespace minirun::runtime::cgroup;

// This machine's cgroup mounts: v1 controllers each on its own, a named systemd
// hierarchy, and the cgroup2 leftover at /sys/fs/cgroup/unified.
inline const char* kHybridMounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
inline const char* kHybridProcCgroup = "9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n"
                                       "5:devices:/\n4:memory:/process_api/53bb\n3:cpuset:/\n"
                                       "2:cpuacct:/\n1:cpu:/\n0::/\n";

// A classic systemd legacy host: combined hierarchies, no cgroup2.
inline const char* kLegacyMounts =
    "25 18 0:21 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
    "26 25 0:22 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
    "28 25 0:24 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "29 25 0:25 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    "30 25 0:26 / /sys/fs/cgroup/net_cls,net_prio rw - cgroup cgroup rw,net_cls,net_prio\n"
    "31 25 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
    "32 25 0:28 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset,clone_children\n"
    "33 25 0:29 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio\n"
    "34 25 0:30 / /sys/fs/cgroup/hugetlb rw - cgroup cgroup rw,hugetlb\n"
    "35 25 0:31 / /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n"
    "36 25 0:32 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
    "37 18 0:33 / /run/elsewhere rw - cgroup cgroup rw,perf_event\n";
inline const char* kLegacyProcCgroup =
    "11:freezer:/\n10:devices:/user.slice\n9:hugetlb:/\n8:blkio:/\n"
    "7:cpuset:/\n6:pids:/user.slice/u\n5:net_cls,net_prio:/\n"
    "4:memory:/user.slice\n3:cpu,cpuacct:/user.slice\n"
    "1:name=systemd:/user.slice/session-1.scope\n";

inline const char* kUnifiedMounts =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

inline void put(const std::string& path, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << content;
}

inline std::string get(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

inline const Hierarchy* find(const Host& host, const std::string& key) {
    for (const auto& hierarchy : host.hierarchies) {
        if (hierarchy.key == key) {
            return &hierarchy;
        }
    }
    return nullptr;
}

// Interface files of a fake cgroup directory, empty unless given.
inline void make_cgroup(const std::string& dir, const std::vector<std::string>& names,
                        const std::map<std::string, std::string>& contents = {}) {
    std::filesystem::create_directories(dir);
    for (const auto& name : names) {
        put(cat(dir, "/", name), "");
    }
    for (const auto& [name, content] : contents) {
        put(cat(dir, "/", name), content);
    }
}

inline const std::vector<std::string> kV2Files = {
    "cgroup.procs", "cgroup.freeze", "cgroup.subtree_control",
    "memory.max",   "memory.low",    "memory.swap.max",
    "memory.high",  "pids.max",      "cpu.max",
    "cpu.weight",   "cpuset.cpus",   "cpuset.mems",
    "io.weight",    "io.max",        "hugetlb.2MB.max"};

// A unified host's fake tree with the container's directory at /mini-run/c1.
struct FakeUnified {
    TempDir tmp;
    Host host = host_from(fs::parse_mountinfo(kUnifiedMounts), "0::/\n",
                          "cpuset cpu io memory hugetlb pids rdma\n");
    std::string root = tmp.path() + "/sys/fs/cgroup";
    std::string dir = root + "/mini-run/c1";

    FakeUnified() {
        make_cgroup(root, {"cgroup.procs", "cgroup.subtree_control"},
                    {{"cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n"}});
        make_cgroup(root + "/mini-run", {"cgroup.procs"},
                    {{"cgroup.controllers", "cpu memory\n"}, {"cgroup.subtree_control", ""}});
        make_cgroup(dir, kV2Files, {{"cgroup.controllers", "cpuset cpu io memory hugetlb pids\n"}});
    }
    [[nodiscard]] Cgroup cgroup() const {
        return Cgroup::for_path(host, "/mini-run/c1", tmp.path());
    }
    [[nodiscard]] std::string file(const std::string& name) const { return get(dir + "/" + name); }
};

// A legacy host's fake tree (kLegacyMounts) with /mini-run/c1 in every hierarchy.
struct FakeLegacy {
    TempDir tmp;
    Host host = host_from(fs::parse_mountinfo(kLegacyMounts), kLegacyProcCgroup, "");
    std::string base = tmp.path() + "/sys/fs/cgroup";

    FakeLegacy() {
        for (const auto& hierarchy : host.hierarchies) {
            make_cgroup(tmp.path() + hierarchy.mount_point, {"cgroup.procs"});
            make_cgroup(tmp.path() + hierarchy.mount_point + "/mini-run/c1", {"cgroup.procs"});
        }
        make_cgroup(dir("memory"),
                    {"memory.limit_in_bytes", "memory.soft_limit_in_bytes", "memory.swappiness",
                     "memory.oom_control"},
                    {{"memory.memsw.limit_in_bytes", "9223372036854771712\n"}});
        make_cgroup(dir("cpu,cpuacct"), {"cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us"});
        make_cgroup(dir("cpuset"), {"cpuset.cpus", "cpuset.mems"});
        make_cgroup(dir("pids"), {"pids.max"});
        make_cgroup(dir("blkio"),
                    {"blkio.weight", "blkio.weight_device", "blkio.throttle.read_bps_device",
                     "blkio.throttle.write_iops_device"});
        make_cgroup(dir("hugetlb"), {"hugetlb.2MB.limit_in_bytes"});
        make_cgroup(dir("net_cls,net_prio"), {"net_cls.classid", "net_prio.ifpriomap"});
        make_cgroup(dir("devices"), {"devices.allow", "devices.deny"});
        make_cgroup(dir("freezer"), {}, {{"freezer.state", "THAWED\n"}});
    }
    [[nodiscard]] std::string dir(const std::string& key) const {
        return base + "/" + key + "/mini-run/c1";
    }
    [[nodiscard]] Cgroup cgroup() const {
        return Cgroup::for_path(host, "/mini-run/c1", tmp.path());
    }
    [[nodiscard]] std::string file(const std::string& key, const std::string& name) const {
        return get(dir(key) + "/" + name);
    }
};

} // namespace minirun::testing::cgroup_fakes
