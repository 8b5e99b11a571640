// The IPC namespace (CLONE_NEWIPC): System V message queues, semaphores and shared memory,
// and POSIX message queues, of the container's own.
//
// clone() creates it and there is nothing to configure (its sysctls, kernel.msg* and
// kernel.shm*, come with the security work). What matters is that the /dev/mqueue mount
// from mounts[] shows the queues of the namespace of the process that mounts it: mounted
// without an IPC namespace of its own, it would hand the container the host's queues.
#pragma once

#include "plan.hpp"

namespace minirun::runtime::ipc {

// Warns when mounts[] has an mqueue mount but the container shares the host's IPC
// namespace.
void warn_if_host_queues_exposed(const Plan& plan);

} // namespace minirun::runtime::ipc
