// The cpuset controller: the cpus and memory nodes a container may use. The files have the
// same names and values on v1 and v2 (runc's fs/cpuset.go, fs2/cpuset.go). A new v1 cpuset
// cgroup's first values, copied from its parent, are written at create (cgroup.cpp).
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"

namespace minirun::runtime::cgroup::controllers {

bool cpuset_wanted(const spec::Resources& resources) {
    const auto& cpu = resources.cpu;
    return cpu && (!cpu->cpus.empty() || !cpu->mems.empty());
}

Status cpuset_write(const std::string& dir, const Request& request) {
    const spec::CpuResources& cpu = *request.resources.cpu;
    if (!cpu.cpus.empty()) {
        MR_TRY(files::write(dir, "cpuset.cpus", cpu.cpus));
    }
    if (!cpu.mems.empty()) {
        MR_TRY(files::write(dir, "cpuset.mems", cpu.mems));
    }
    return {};
}

} // namespace minirun::runtime::cgroup::controllers
