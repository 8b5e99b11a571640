// Internal to runtime/cgroup/: reading and writing interface files, and which directory of
// a container's cgroup holds which controller. What each controller writes is in its own
// file (controllers.hpp).
#pragma once

#include "cgroup/cgroup.hpp"

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minirun::runtime::cgroup::files {

// cgroup interface files are opened without O_CREAT: cgroupfs refuses to create files, and
// a missing one means the controller is not there, which must not pass silently.
[[nodiscard]] bool exists(const std::string& dir, const std::string& name);
Status write(const std::string& dir, const std::string& name, std::string_view value);
// `values` to the files named with them, in order, one write(2) each, and a file opened
// once for the values in a row that go to it (the ten rules of devices.allow).
Status write_each(const std::string& dir,
                  const std::vector<std::pair<std::string, std::string>>& values);
// Unit tests: called with the path and value of every write(2) that write() and
// write_each() made, in order (the golden tests of Cgroup::apply pin that sequence).
// An empty function, the default, observes nothing.
using WriteObserver = std::function<void(const std::string& path, std::string_view value)>;
void observe_writes(WriteObserver next);
// The content without its trailing newline.
Result<std::string> read(const std::string& dir, const std::string& name);
// A number, "max" reading as UINT64_MAX (the kernel's word for "no limit").
Result<uint64_t> read_uint(const std::string& dir, const std::string& name);
// "key value" lines (memory.stat, cpu.stat, cgroup.events ...); unparsable lines skipped.
std::map<std::string, uint64_t> key_values(std::string_view text);
// Whitespace-separated words (cgroup.controllers, cgroup.subtree_control).
std::set<std::string> words(std::string_view text);
// A whole decimal number.
bool parse_uint(std::string_view text, uint64_t& value);
// For statistics: what cannot be read counts as zero, as in runc.
uint64_t uint_or_zero(const std::string& dir, const std::string& name);

// Knobs only some kernels have (swap accounting, CFQ's leaf weights, RT group
// scheduling, SCHED_IDLE groups). A missing file is a kernel without the feature, and
// runtime.md says a property that cannot be applied fails the create: running the
// container without a limit it asked for is the worse failure. `field` is the JSON path.
Status write_supported(const std::string& dir, const std::string& name, std::string_view value,
                       std::string_view field);
// JSON in runc's style: a Go `omitempty` field is left out when zero.
void set_nonzero(nlohmann::json& out, const char* name, uint64_t value);

// The directories of a container's cgroup (cgroup.cpp, cgroup_running.cpp).
// The keys "" (unified host) and "unified" (hybrid host) are cgroup2 directories.
[[nodiscard]] bool is_v2_key(const std::string& key);
[[nodiscard]] bool is_directory(const std::string& path);
// The cgroups directly below `dir` (none when it cannot be read).
std::vector<std::string> subdirectories(const std::string& dir);
// cgroup.procs of `dir` and of every cgroup below it, appended to `out`.
Status collect_pids(const std::string& dir, std::vector<pid_t>& out);
// Whether `dir` is the root of its hierarchy (the whole host).
[[nodiscard]] bool is_hierarchy_root(const std::string& dir);

// Where each controller of a container's cgroup lives.
struct Places {
    std::map<std::string, std::string> v1; // controller -> directory ("cpu", "cpuacct", ...)
    std::string v2;                        // the cgroup2 directory, "" when none
    bool unified_host = false;             // v2 is the whole tree, not a hybrid leftover
    std::set<std::string> v2_controllers;  // the v2 directory's cgroup.controllers

    // The v1 directory of `controller`, "" when no v1 hierarchy has it.
    [[nodiscard]] std::string v1_dir(const std::string& controller) const;
    // Whether `controller` is to be handled in the v2 directory: always on a unified host
    // (a missing file then names what is missing), on a hybrid one only when v1 lacks it
    // and the v2 directory offers it.
    [[nodiscard]] bool in_v2(const std::string& v1_controller,
                             const std::string& v2_controller) const;
};
Places places_of(const std::map<std::string, std::string>& paths);

} // namespace minirun::runtime::cgroup::files
