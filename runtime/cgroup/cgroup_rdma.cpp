// The rdma controller: rdma.max, one "device hca_handle=N hca_object=M" line per device;
// the same file on v1 and v2.
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"

namespace minirun::runtime::cgroup::controllers {

bool rdma_wanted(const spec::Resources& resources) {
    return !resources.rdma.empty();
}

Status rdma_write(const std::string& dir, const Request& request) {
    for (const auto& [name, limit] : request.resources.rdma) {
        std::string line = name;
        if (limit.hca_handles) {
            line += cat(" hca_handle=", *limit.hca_handles);
        }
        if (limit.hca_objects) {
            line += cat(" hca_object=", *limit.hca_objects);
        }
        if (line != name) {
            MR_TRY(files::write(dir, "rdma.max", line));
        }
    }
    return {};
}

} // namespace minirun::runtime::cgroup::controllers
