// The user namespace (CLONE_NEWUSER): root inside, an unprivileged uid outside.
//
// A new user namespace starts with no mappings: until the parent writes
// /proc/<pid>/uid_map and gid_map, the init's ids show as the overflow id (65534). The
// kernel lets a process in the parent namespace write each map exactly once, in a single
// write(2). Then the init switches to uid/gid 0 *of the namespace*, which are the mapped
// host ids (100000, say), keeping full capabilities over its own namespaces only.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "plan.hpp"
#include "procfs.hpp"
#include "syscalls.hpp"

#include <sys/types.h>

namespace minirun::runtime::user {

// Parent side, before anything is created: whether a caller without the host's root may
// make this container's user namespace, and write its maps (own id only, or ranges of
// /etc/subuid and /etc/subgid through newuidmap/newgidmap): errors name the mapping.
Status check_id_maps(const Plan& plan, const spec::Linux& linux);

// Parent side, right after clone(): gid_map, then uid_map, each written directly or
// through newgidmap/newuidmap (rootless.hpp, MapWriter); directly, through the runtime's
// procfs handle (procfs.hpp), as "<pid>/gid_map" of its PID namespace.
Status write_id_maps(pid_t init_pid, const Plan& plan, const spec::Linux& linux,
                     const procfs::Handle& proc);

// Init side, once the maps exist: become the namespace's root.
Status become_namespace_root(Syscalls& sys);

// Init side, last step before exec: process.user (supplementary groups, gid, uid). Groups
// and gid go first: after setresuid() to a non-root uid we could no longer change them.
Status apply_process_identity(const spec::User& user, Syscalls& sys);

} // namespace minirun::runtime::user
