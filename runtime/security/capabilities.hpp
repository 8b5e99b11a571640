// Capabilities: root's privileges, split into pieces, and the five sets of a process.
//
// process.capabilities names what the container's process may keep. The sets are applied
// in an order the kernel dictates (docs/security.md):
//   1. drop_bounding: everything not in the bounding set leaves it; this needs
//      CAP_SETPCAP, so it comes while the init still has all capabilities.
//   2. keep_across_uid_switch: PR_SET_KEEPCAPS, or setresuid() to a non-root uid would
//      clear the permitted set before we could choose from it.
//   3. (the caller switches gid and uid)
//   4. apply: capset() the effective, permitted and inheritable sets, then raise the
//      ambient ones (which must be permitted and inheritable, so they come last).
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "syscalls.hpp"

#include <vector>

namespace minirun::runtime::caps {

struct CapabilitySets {
    std::vector<int> bounding;
    std::vector<int> effective;
    std::vector<int> permitted;
    std::vector<int> inheritable;
    std::vector<int> ambient;
};

// The highest capability this kernel knows (/proc/sys/kernel/cap_last_cap).
int kernel_last_cap();

// Names to numbers. An unknown name is an error naming it and its JSON path
// (`process.capabilities.bounding[3]: unknown capability "CAP_FOO"`); a name libcap knows but
// this kernel does not (above `last_cap`) is skipped with a warning.
Result<CapabilitySets> resolve(const spec::Capabilities& names, int last_cap);

Status drop_bounding(const CapabilitySets& sets, int last_cap, Syscalls& sys);
Status keep_across_uid_switch(Syscalls& sys);
Status apply(const CapabilitySets& sets, Syscalls& sys);

} // namespace minirun::runtime::caps
