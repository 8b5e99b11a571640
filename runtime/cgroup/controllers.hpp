// The controllers of a container's cgroup, one row each: what Cgroup::apply writes, and
// with which function on v1 and on v2. Each controller's writers (and its statistics) are
// together in one file, with its file names, unit conversions and write order:
//
//   cpuset              cgroup_cpuset.cpp   cpuset.cpus, cpuset.mems (the same on v1 and v2)
//   devices             cgroup_devices.cpp  v1 devices.deny/allow, v2 a BPF program
//   memory              cgroup_memory.cpp   v1 memory.*limit_in_bytes, v2 memory.max/swap.max/low
//   cpu                 cgroup_cpu.cpp      v1 cpu.shares/cfs_*/rt_*, v2 cpu.weight/max
//   pids                cgroup_pids.cpp     pids.max (the same on v1 and v2)
//   blkio (v2: io)      cgroup_blkio.cpp    v1 blkio.*, v2 io.weight/io.max
//   hugetlb             cgroup_hugetlb.cpp  v1 hugetlb.*.limit_in_bytes, v2 hugetlb.*.max
//   net_cls, net_prio   cgroup_net.cpp      v1 only
//   rdma                cgroup_rdma.cpp     rdma.max (the same on v1 and v2)
//   unified             cgroup_unified.cpp  v2 only: linux.resources.unified's raw files
#pragma once

#include "cgroup/cgroup.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <set>
#include <string>
#include <string_view>

namespace minirun::runtime::cgroup::controllers {

// What a writer gets besides its directory.
struct Request {
    const spec::Resources& resources;
    // Called by `update` on a running container (memory checks the usage first and orders
    // the v1 limit and swap writes so that every step stays valid).
    bool updating = false;
    // The cgroup2 directory's cgroup.controllers (unified checks its keys against it).
    const std::set<std::string>& v2_controllers;
};
// Writes one controller's values of request.resources into `dir`.
using Writer = Status (*)(const std::string& dir, const Request& request);
// Whether `resources` sets anything for one controller.
using Wanted = bool (*)(const spec::Resources& resources);

// cgroup_cpuset.cpp
bool cpuset_wanted(const spec::Resources& resources);
Status cpuset_write(const std::string& dir, const Request& request); // v1 and v2
// cgroup_devices.cpp
bool devices_wanted(const spec::Resources& resources);
Status devices_v1(const std::string& dir, const Request& request);
Status devices_v2(const std::string& dir, const Request& request);
// cgroup_memory.cpp
bool memory_wanted(const spec::Resources& resources);
Status memory_v1(const std::string& dir, const Request& request);
Status memory_v2(const std::string& dir, const Request& request);
// cgroup_cpu.cpp
bool cpu_wanted(const spec::Resources& resources);
Status cpu_v1(const std::string& dir, const Request& request);
Status cpu_v2(const std::string& dir, const Request& request);
// cgroup_pids.cpp
bool pids_wanted(const spec::Resources& resources);
Status pids_write(const std::string& dir, const Request& request); // v1 and v2
// cgroup_blkio.cpp
bool blkio_wanted(const spec::Resources& resources);
Status blkio_v1(const std::string& dir, const Request& request);
Status io_v2(const std::string& dir, const Request& request);
// cgroup_hugetlb.cpp
bool hugetlb_wanted(const spec::Resources& resources);
Status hugetlb_v1(const std::string& dir, const Request& request);
Status hugetlb_v2(const std::string& dir, const Request& request);
// cgroup_net.cpp
bool net_cls_wanted(const spec::Resources& resources);
Status net_cls_v1(const std::string& dir, const Request& request);
bool net_prio_wanted(const spec::Resources& resources);
Status net_prio_v1(const std::string& dir, const Request& request);
// cgroup_rdma.cpp
bool rdma_wanted(const spec::Resources& resources);
Status rdma_write(const std::string& dir, const Request& request); // v1 and v2
// cgroup_unified.cpp
bool unified_wanted(const spec::Resources& resources);
Status unified_v2(const std::string& dir, const Request& request);

struct Controller {
    // The v1 controller, as its hierarchy's key and the error messages name it.
    std::string_view name;
    // The cgroup2 controller ("io" for blkio); "" where cgroup2 has no such controller
    // (devices: a BPF program in any cgroup2 directory).
    std::string_view v2_name;
    Wanted wanted;
    // v1: its hierarchy's directory; nullptr for a cgroup2-only row, which always goes to
    // the cgroup2 directory (an error on a host without one).
    Writer v1;
    // v2: the cgroup2 directory, on a unified host or a hybrid one whose v1 lacks the
    // controller; nullptr for a v1-only controller (an error there).
    Writer v2;
};

// In the order Cgroup::apply writes them, runc's; unified last, as raw cgroup2 values may
// override what the typed fields wrote.
inline constexpr std::array<Controller, 11> kTable{{
    {"cpuset", "cpuset", cpuset_wanted, cpuset_write, cpuset_write},
    // On a hybrid host the v1 devices controller decides; a BPF program is a cgroup2-only
    // device filter.
    {"devices", "", devices_wanted, devices_v1, devices_v2},
    {"memory", "memory", memory_wanted, memory_v1, memory_v2},
    {"cpu", "cpu", cpu_wanted, cpu_v1, cpu_v2},
    {"pids", "pids", pids_wanted, pids_write, pids_write},
    {"blkio", "io", blkio_wanted, blkio_v1, io_v2},
    {"hugetlb", "hugetlb", hugetlb_wanted, hugetlb_v1, hugetlb_v2},
    {"net_cls", "", net_cls_wanted, net_cls_v1, nullptr},
    {"net_prio", "", net_prio_wanted, net_prio_v1, nullptr},
    {"rdma", "rdma", rdma_wanted, rdma_write, rdma_write},
    {"unified", "", unified_wanted, nullptr, unified_v2},
}};

// The sections of Cgroup::stats, in runc's types.Stats shape, from the same files.
void cpu_stats_v1(const std::string& cpu_dir, const std::string& cpuacct_dir, nlohmann::json& out);
void cpu_stats_v2(const std::string& dir, nlohmann::json& out);
void memory_stats_v1(const std::string& dir, nlohmann::json& out);
void memory_stats_v2(const std::string& dir, nlohmann::json& out);
void pids_stats(const std::string& dir, nlohmann::json& out); // the same files in both
void blkio_stats_v1(const std::string& dir, nlohmann::json& out);
void io_stats_v2(const std::string& dir, nlohmann::json& out);
void hugetlb_stats(const std::string& dir, bool v2, nlohmann::json& out);

// Pressure stall information (cgroup_psi.cpp): a cgroup2 directory's cpu.pressure,
// memory.pressure or io.pressure as runc's PSIStats, {"some": {"avg10", "avg60", "avg300",
// "total"}, "full": {...}}; "full" is zero where the file has no such line (cpu.pressure
// before Linux 5.13). An error names the line that is not "some|full key=value ...".
Result<nlohmann::json> parse_psi(std::string_view text);
// `name` of `dir` into out["psi"]; nothing when the file is missing or PSI is off.
Status psi_stats(const std::string& dir, const std::string& name, nlohmann::json& out);

} // namespace minirun::runtime::cgroup::controllers
