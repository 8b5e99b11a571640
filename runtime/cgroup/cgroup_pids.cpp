// The pids controller: pids.max, and pids.current for the statistics; the same files on
// v1 and v2.
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"

namespace minirun::runtime::cgroup::controllers {

bool pids_wanted(const spec::Resources& resources) {
    return resources.pids && resources.pids->limit;
}

namespace {

std::string pids_max_value(int64_t limit) {
    // runtime-spec 1.3 (config-linux.md, pids): the limit is optional, so an absent one is
    // "leave pids.max alone" and a present one is a limit, 0 included: no process may be
    // forked in the cgroup. runc 1.3 (opencontainers/cgroups v0.0.1, an int64 where 0 meant
    // unset) skips a 0 and writes "max" for a negative one; later cgroups versions write 1
    // for 0, for systemd's sake (TasksMax=0 is refused). We follow the spec: the kernel
    // takes 0, checks it at fork only (never when a process is moved in, so the init
    // and exec'd processes still join: child.cpp's clone falls back from
    // CLONE_INTO_CGROUP, which counts as a fork), and a negative value stays "max".
    return limit < 0 ? std::string("max") : cat(limit);
}

} // namespace

Status pids_write(const std::string& dir, const Request& request) {
    return files::write(dir, "pids.max", pids_max_value(*request.resources.pids->limit));
}

void pids_stats(const std::string& dir, nlohmann::json& out) {
    files::set_nonzero(out, "current", files::uint_or_zero(dir, "pids.current"));
    // "max" is no limit, which runc reports as 0.
    if (uint64_t limit = files::uint_or_zero(dir, "pids.max"); limit != UINT64_MAX) {
        files::set_nonzero(out, "limit", limit);
    }
}

} // namespace minirun::runtime::cgroup::controllers
