// Joining namespaces: by path (the init), or a container's (a process `exec` starts).
//
// The table of namespace types (spec name, /proc name, clone flag) is spec::namespace_table()
// (src/namespace_table.cpp). What mini-run does with each namespace lives in its own file,
// each with its parent-side and child-side entry points:
//
//   user     user.cpp       parent: write_id_maps          init: become_namespace_root
//   pid      pid.cpp        parent: JoinedForChildren      (clone() creates it; in a joined
//                                   take_second_stage          user ns: continue_as_pid_1)
//   mount    mount*.cpp     parent: open_bind_sources      init: prepare_rootfs ... enter_root
//                                   idmap_bind_sources
//   network  net.cpp                                       init: bring_up_loopback
//   ipc      ipc.cpp        parent: warn_if_host_queues_exposed
//   uts      uts.cpp                                       init: set_names
//   cgroup   cgroup_ns.cpp  plan: unshare_after_joining    init: unshare_namespaces
//   time     time.cpp                                      init: enter_new_time_namespace
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "minirun/spec.hpp"
#include "plan.hpp"
#include "syscalls.hpp"

#include <string>

#include <string_view>
#include <vector>

namespace minirun::runtime {

// From the table: the CLONE_NEW* flag, and the entry under /proc/<pid>/ns/ ("net").
int clone_flag_of(spec::NamespaceType type);
std::string_view proc_ns_name(spec::NamespaceType type);

// An open namespace file the init will setns() into.
struct OpenNamespace {
    NamespaceToJoin target;
    UniqueFd fd;
};

// Opens every namespace the plan joins and checks that each file really is a namespace of
// the type the config says (NS_GET_NSTYPE), before anything is created; with a joined user
// namespace, that the config's mappings, if any, are its maps (runc 1.3's rule). A PID
// namespace joined by path is among them for the parent, which enters it around the clone
// (pid.hpp); the init does not join it.
Result<std::vector<OpenNamespace>> open_namespaces_to_join(const Plan& plan, Syscalls& sys);

// uid_map(5) text as the kernel shows it (padded columns) in id_map_text()'s form
// ("0 100000 65536\n" per line), and that on one line ("0 100000 65536,1 2 3").
std::string normalized_id_map(std::string_view text);
std::string one_line_id_map(std::string text);

// A namespace to setns() into, and the words of the error if that fails.
struct NamespaceEntry {
    int fd = -1;
    int clone_flag = 0;
    std::string what; // "join network namespace \"/run/netns/x\""
};

// The init's entries for the namespaces opened above, in the plan's order, but the PID
// namespace, which the parent joins around the clone, unless `with_pid` (the init joins it:
// Plan::pid_joined_by_init).
std::vector<NamespaceEntry> entries_of(const std::vector<OpenNamespace>& namespaces,
                                       bool with_pid = false);

// In the child: setns() into each, the user namespace between the others the caller may
// join with its own privileges and those it may only join with the user namespace's
// (runc's two-stage join).
Status join_namespaces(const std::vector<NamespaceEntry>& entries, Syscalls& sys);

// In the init, after joining: the namespaces that must be owned by a joined user
// namespace (and a cgroup namespace, cgroup_ns.cpp) are created now.
Status unshare_remaining(const Plan& plan, Syscalls& sys);

} // namespace minirun::runtime
