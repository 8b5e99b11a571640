// The time namespace (CLONE_NEWTIME): CLOCK_MONOTONIC and CLOCK_BOOTTIME offsets of its own.
//
// A time namespace's offsets (linux.timeOffsets) can only be written while no process is
// inside it. clone(CLONE_NEWTIME) would put the init inside at once, so instead the init
// unshare()s one (which only its future children would enter), writes the offsets to
// /proc/self/timens_offsets, and then enters it itself with setns() through
// /proc/self/ns/time_for_children.
#pragma once

#include "minirun/error.hpp"
#include "plan.hpp"
#include "procfs.hpp"
#include "syscalls.hpp"

namespace minirun::runtime::time_ns {

// The offsets are written through the procfs handle (procfs.hpp), "self/timens_offsets".
Status enter_new_time_namespace(const Plan& plan, const procfs::Handle* proc, Syscalls& sys);

} // namespace minirun::runtime::time_ns
