// Per-process settings outside the namespaces: resource limits, the OOM killer's view of
// the process, its execution domain, and namespaced kernel parameters (sysctl).
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "procfs.hpp"
#include "syscalls.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace minirun::runtime::limits {

// Each call goes through `sys` (syscalls.hpp); the writes under /proc through `proc`, the
// process plan's procfs handle (procfs.hpp): without one, a value to write is an error.

// process.rlimits with setrlimit(2). Before the privileges go: raising a hard limit
// needs CAP_SYS_RESOURCE.
Status apply_rlimits(const std::vector<spec::Rlimit>& rlimits, Syscalls& sys);

// process.oomScoreAdj, written only when set (runtime-spec), through the procfs handle
// (procfs.hpp).
Status set_oom_score_adj(const std::optional<int>& score, const procfs::Handle* proc,
                         Syscalls& sys);

// linux.personality (LINUX32 makes `uname -m` say i686); survives execve.
Status set_personality(const std::optional<spec::Personality>& personality, Syscalls& sys);

// linux.sysctl: each key under /proc/sys (dots become slashes), through the procfs handle
// (procfs.hpp): never through a mount the container could have bound over the file. The spec model
// already refused keys that are not private to the container's namespaces; the writes affect the
// namespaces of the calling process, so the init makes them once its namespaces exist.
Status apply_sysctls(const std::map<std::string, std::string>& sysctls, const procfs::Handle* proc,
                     Syscalls& sys);

} // namespace minirun::runtime::limits
