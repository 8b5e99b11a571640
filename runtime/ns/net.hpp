// The network namespace (CLONE_NEWNET): interfaces, routes, ports and firewall of its own.
//
// A new network namespace holds only a loopback device, and it starts down. Like runc,
// mini-run brings `lo` up so that 127.0.0.1 works inside; any other interface (a veth to
// the host, say) is the job of whoever manages the container's network.
#pragma once

#include "minirun/error.hpp"

namespace minirun::runtime::net {

Status bring_up_loopback();

} // namespace minirun::runtime::net
