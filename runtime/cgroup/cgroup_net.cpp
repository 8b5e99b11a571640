// The net_cls and net_prio controllers, v1 only (cgroup v2 has neither: a config that sets
// them fails there): net_cls.classid and net_prio.ifpriomap.
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"

namespace minirun::runtime::cgroup::controllers {

bool net_cls_wanted(const spec::Resources& resources) {
    return resources.network && resources.network->class_id;
}

Status net_cls_v1(const std::string& dir, const Request& request) {
    const spec::NetworkResources& network = *request.resources.network;
    if (network.class_id) {
        MR_TRY(files::write(dir, "net_cls.classid", cat(*network.class_id)));
    }
    return {};
}

bool net_prio_wanted(const spec::Resources& resources) {
    return resources.network && !resources.network->priorities.empty();
}

Status net_prio_v1(const std::string& dir, const Request& request) {
    for (const auto& priority : request.resources.network->priorities) {
        MR_TRY(files::write(dir, "net_prio.ifpriomap", cat(priority.name, " ", priority.priority)));
    }
    return {};
}

} // namespace minirun::runtime::cgroup::controllers
