// mini-run's library interface: what the CLI (or any other front end) calls.
#pragma once

#include "minirun/error.hpp"

#include <string>
#include <string_view>

namespace minirun {

// The OCI runtime-spec version mini-run implements.
inline constexpr std::string_view kSpecVersion = "1.2.0";

// Container ids are used as directory and cgroup names: letters, digits and "_+.-", not
// starting with '.', at most 1024 characters. Checked before any file system access.
Status validate_container_id(std::string_view id);

struct RunOptions {
    std::string id;
    std::string bundle = "."; // directory holding config.json
    int preserve_fds = 0;     // fds 3 .. 3+N-1 are passed to the container
};

// Creates the container described by <bundle>/config.json and runs its process in the
// foreground, stdio passed through and signals forwarded. Returns the exit code to exit
// with: the process's own, or 128+N if signal N killed it. An error means the container's
// process never started, and nothing was left behind.
Result<int> run_container(const RunOptions& options);

} // namespace minirun
