// The device allow-list of a container's cgroup: which device nodes its processes may
// open (r, w) or create (m), whatever the nodes' file permissions say.
//
// v1 keeps the list in the kernel (devices.allow / devices.deny). v2 has no files for it:
// a BPF_CGROUP_DEVICE program attached to the cgroup answers each access, so the rules
// are compiled into one (cgroup_devices.cpp).
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <linux/bpf.h>

#include <string>
#include <utility>
#include <vector>

namespace minirun::runtime::cgroup {

// The rules a container's cgroup gets, in order, later rules winning: the config's
// linux.resources.devices, then the devices every container needs (null, zero, full,
// random, urandom, tty, ptmx, /dev/pts/*, /dev/net/tun, and mknod of any char or block
// device), as runc appends them. As in runc, a default whose path a linux.devices entry
// names is left out, and linux.devices entries get no rule of their own (engines put
// theirs in linux.resources.devices).
std::vector<spec::DeviceCgroupRule> effective_device_rules(const spec::Linux& linux);

// v1: the writes that make the kernel's list equal `rules`, in order, as
// (file name, line) pairs: ("devices.deny", "a"), ("devices.allow", "c 1:3 rwm"), ...
// A major or minor that is absent is "*".
std::vector<std::pair<std::string, std::string>>
v1_device_writes(const std::vector<spec::DeviceCgroupRule>& rules);

// v2: the BPF_PROG_TYPE_CGROUP_DEVICE program for `rules` (default deny; the last
// matching rule decides, as on v1).
std::vector<bpf_insn> device_program(const std::vector<spec::DeviceCgroupRule>& rules);

// Loads device_program(rules) with bpf(2) and attaches it to the cgroup2 directory
// `cgroup_dir_fd` (BPF_F_ALLOW_MULTI), then detaches the programs that were attached
// before (an `update` replaces the list).
Status attach_device_program(int cgroup_dir_fd, const std::vector<spec::DeviceCgroupRule>& rules);

} // namespace minirun::runtime::cgroup
