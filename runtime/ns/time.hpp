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
#include "syscalls.hpp"

namespace minirun::runtime::time_ns {

Status enter_new_time_namespace(const Plan& plan, Syscalls& sys);

} // namespace minirun::runtime::time_ns
