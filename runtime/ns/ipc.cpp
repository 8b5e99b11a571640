#include "ns/ipc.hpp"

#include "minirun/log.hpp"

namespace minirun::runtime::ipc {

void warn_if_host_queues_exposed(const Plan& plan) {
    if (plan.has_own(spec::NamespaceType::ipc)) {
        return;
    }
    for (const MountStep& mount : plan.mounts) {
        if (mount.fs_type == "mqueue") {
            log::warning(cat("mount of mqueue on ", mount.destination,
                             " without an ipc namespace shows the host's message queues"));
        }
    }
}

} // namespace minirun::runtime::ipc
