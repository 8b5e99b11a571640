// The UTS namespace (CLONE_NEWUTS): a hostname and NIS domain name of the container's own.
//
// sethostname(2) changes the name for every process in the caller's UTS namespace, so the
// spec model refuses a hostname unless the container has its own UTS namespace: setting
// it would otherwise rename the host.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "syscalls.hpp"

namespace minirun::runtime::uts {

Status set_names(const std::string& hostname, const std::string& domainname, Syscalls& sys);

} // namespace minirun::runtime::uts
