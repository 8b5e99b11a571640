// linux.memoryPolicy: the NUMA memory policy of the container's processes.
//
// set_mempolicy(2) sets the calling thread's policy, which fork() and execve() keep: set
// once in the init (and in each process `exec` starts, which is forked from mini-run, not
// from the init), it is the policy of every process of the container.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "syscalls.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace minirun::runtime::memory_policy {

// set_mempolicy(2)'s arguments for a policy.
struct Request {
    int mode = 0;                    // MPOL_* | MPOL_F_*
    std::vector<unsigned long> mask; // bit N of the words: node N; empty for no nodes
    unsigned long max_node = 0;      // one more than the mask's bits (the kernel reads one less)
};

Request request_for(const spec::MemoryPolicy& policy);

// "MPOL_BIND|MPOL_F_STATIC_NODES", for messages and --explain.
std::string mode_text(const spec::MemoryPolicy& policy);

// Sets the policy (nothing without one). A refusal names linux.memoryPolicy and, for
// EINVAL, the nodes this process may use: `status_path` is where its Mems_allowed_list is
// read (/proc/self/status; the cpuset's and the host's nodes together).
Status apply(const spec::MemoryPolicy* policy, Syscalls& sys,
             const std::string& status_path = "/proc/self/status");

// The message for a refused policy (apply's, exposed for the tests).
Error refusal(const spec::MemoryPolicy& policy, int error, std::string_view allowed_nodes);

} // namespace minirun::runtime::memory_policy
