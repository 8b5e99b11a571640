// The pids controller: pids.max, and pids.current for the statistics; the same files on
// v1 and v2.
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"

namespace minirun::runtime::cgroup::controllers {

bool pids_wanted(const spec::Resources& resources) {
    return resources.pids.has_value();
}

Status pids_write(const std::string& dir, const Request& request) {
    const spec::PidsResources& pids = *request.resources.pids;
    // The spec's 0 or negative limit is "no limit" (runc normalises both to "max").
    return files::write(dir, "pids.max", pids.limit > 0 ? cat(pids.limit) : std::string("max"));
}

void pids_stats(const std::string& dir, nlohmann::json& out) {
    files::set_nonzero(out, "current", files::uint_or_zero(dir, "pids.current"));
    // "max" is no limit, which runc reports as 0.
    if (uint64_t limit = files::uint_or_zero(dir, "pids.max"); limit != UINT64_MAX) {
        files::set_nonzero(out, "limit", limit);
    }
}

} // namespace minirun::runtime::cgroup::controllers
