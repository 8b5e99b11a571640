// The seccomp filter as a BPF program, and the -ENOSYS stub put in front of it.
//
// A profile lists the syscalls its authors knew. A syscall newer than all of them (clone3
// for a profile written before Linux 5.3, say) would get the profile's default action,
// usually EPERM, and a C library that tries the new call first and falls back to the old
// one on ENOSYS only then would fail instead. So, as runc does, a syscall whose number is
// above the highest one the profile names for its architecture gets ENOSYS: "this kernel
// does not have it". Syscalls at or below that number, known or not, still go through the
// profile's own filter.
//
// libseccomp cannot express "above N", so the filter is exported as BPF and a short stub
// goes in front:
//
//     load arch
//     for each architecture A:   arch == A ?  -> block A
//     otherwise                               -> the filter
//   block A:
//     load nr
//     nr > highest(A) ?                       -> return ERRNO(ENOSYS)
//     otherwise                               -> the filter
//   (x86_64 also carries x32 syscalls, nr | 0x40000000: its block checks each against its
//   own ABI's highest number)
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <linux/filter.h>
#include <seccomp.h>

#include <cstdint>
#include <map>
#include <vector>

namespace minirun::runtime::seccomp {

// libseccomp architecture token (SCMP_ARCH_*) -> the highest syscall number the profile
// names there. Architectures where it names none are left out.
using LastSyscalls = std::map<uint32_t, int>;

LastSyscalls last_syscalls(const spec::Seccomp& config, const std::vector<uint32_t>& arch_tokens);

// The stub, ending where the filter begins: append the filter right after it.
std::vector<sock_filter> enosys_stub(const LastSyscalls& last);

// libseccomp's program for `ctx`.
Result<std::vector<sock_filter>> export_program(scmp_filter_ctx ctx);

} // namespace minirun::runtime::seccomp
