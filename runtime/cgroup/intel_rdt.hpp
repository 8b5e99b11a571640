// linux.intelRdt: the container's group in the resctrl filesystem (Intel RDT cache and
// memory bandwidth allocation, and monitoring).
//
// A group is a directory right below the resctrl root: its `schemata` file holds the
// allocations, its `tasks` file the processes in it (children of a process stay in its
// group). With linux.intelRdt.closID the group is that one, shared by whoever names it:
// joined when it exists (its schemata must then match the config's), made otherwise.
// Without closID it is the container's own, named after its id, and delete removes it.
// Everything takes the resctrl root as a parameter, so the unit tests run it in a temp
// dir.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minirun::runtime::intel_rdt {

inline constexpr std::string_view kDefaultRoot = "/sys/fs/resctrl";

// Where a resctrl filesystem is mounted, from a mountinfo file; empty when none is.
std::string find_root(const std::string& mountinfo_path = "/proc/self/mountinfo");

// The writes to a new group's `schemata`, in order: l3CacheSchema and memBwSchema in one
// (l3CacheSchema's own MB: lines give way to memBwSchema), then linux.intelRdt.schemata.
std::vector<std::string> schemata_writes(const spec::IntelRdt& rdt);

// How an existing group's schemata (the file's text) differs from the config's
// l3CacheSchema and memBwSchema, or nothing. Only the resources and cache domains the
// config names are compared; bitmasks as numbers ("0ff" is "ff").
std::optional<std::string> schemata_mismatch(std::string_view existing, const spec::IntelRdt& rdt);

struct Group {
    std::string dir; // <root>/<closID or container id>
    bool created = false;
    std::string monitor_dir; // <dir>/mon_groups/<container id>, with enableMonitoring
    bool monitor_created = false;
};

// Makes or joins the container's group under `root` and writes its schemata.
Result<Group> prepare(const std::string& root, const spec::IntelRdt& rdt, const std::string& id);
// Puts `pid` (and so its future children) in the group, and in its monitoring group.
Status add_process(const Group& group, pid_t pid);
// Removes what prepare() made (a failed create).
Status undo(const Group& group);
// The group as prepare() left it for a container that exists, for delete and exec: what
// it made is marked created (the container's own group, its monitoring group).
Group group_of(const std::string& root, const spec::IntelRdt& rdt, const std::string& id);

// delete: removes the container's own group and its monitoring group, when resctrl is
// still mounted (nothing without linux.intelRdt).
Status remove_for_delete(const std::optional<spec::IntelRdt>& rdt, const std::string& id);
// exec: puts an exec'd process in the container's group (nothing without linux.intelRdt).
Status add_exec_process(const std::optional<spec::IntelRdt>& rdt, const std::string& id, pid_t pid);

// A group that is removed again unless the create it belongs to succeeds.
class PendingGroup {
public:
    explicit PendingGroup(Group group) : group_(std::move(group)) {}
    PendingGroup(const PendingGroup&) = delete;
    PendingGroup& operator=(const PendingGroup&) = delete;
    PendingGroup(PendingGroup&&) = delete;
    PendingGroup& operator=(PendingGroup&&) = delete;
    ~PendingGroup();
    [[nodiscard]] const Group& group() const { return group_; }
    void commit() { committed_ = true; }

private:
    Group group_;
    bool committed_ = false;
};

} // namespace minirun::runtime::intel_rdt
