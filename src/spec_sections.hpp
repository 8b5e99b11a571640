// Internal to spec_parse*.cpp: the sections of config.json that have a file of their own.
// spec_parse.cpp has the document, root, mounts, hooks, linux and its namespaces.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"
#include "spec_reader.hpp"

namespace minirun::spec::sections {

// spec_parse_process.cpp: "process" (also a whole `exec --process` file).
Status parse_process_object(const reader::Node& node, Process& process);
// spec_parse_resources.cpp: "linux.resources" (also a whole `update --resources` file).
Status parse_resources(const reader::Node& node, Resources& resources);
// spec_parse_seccomp.cpp: "linux.seccomp".
Status parse_seccomp(const reader::Node& node, Seccomp& seccomp);
// spec_parse_mempolicy_rdt.cpp: "linux.memoryPolicy" and "linux.intelRdt".
Status parse_memory_policy(const reader::Node& node, MemoryPolicy& policy);
Status parse_intel_rdt(const reader::Node& node, IntelRdt& rdt);

} // namespace minirun::spec::sections
