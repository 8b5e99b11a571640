// mounts[].options -> mount(2) flags and data.
//
// The spec's option words are the ones mount(8) takes. Those that are MS_* flags become
// flags; propagation words (private, rshared, ...) are kept apart because the kernel
// applies them with a separate mount(2) call; anything else ("mode=755", "size=64k",
// "newinstance") is filesystem data.
#pragma once

#include "minirun/error.hpp"

#include <string>
#include <vector>

namespace minirun::runtime {

struct MountOptions {
    unsigned long flags = 0;         // MS_RDONLY, MS_NOSUID, ... (no MS_BIND/MS_REC)
    unsigned long propagation = 0;   // MS_PRIVATE|MS_REC, ... or 0
    std::string data;                // comma-joined filesystem options
    bool bind = false;               // "bind" or "rbind"
    bool recursive = false;          // "rbind"
    bool recursive_readonly = false; // "rro"
    bool tmpcopyup = false; // tmpfs starts with a copy of the directory it covers (runc, crun)
    bool idmap = false;     // "idmap" or "ridmap": an idmapped bind (runtime-spec 1.2)
    bool recursive_idmap = false; // "ridmap": every mount of an rbind's tree, not only its top
};

MountOptions parse_mount_options(const std::vector<std::string>& options);

// Every option word mini-run understands, for `features`.
std::vector<std::string> known_mount_options();

// Maps a propagation word ("rslave") to its MS_* flags; 0 for an unknown word.
unsigned long propagation_flags(const std::string& word);

// The MS_* flags matching statvfs ST_* flags that the kernel keeps locked on a bind mount
// made inside a user namespace: a remount must repeat them or fail with EPERM.
unsigned long locked_mount_flags(unsigned long statvfs_flags);

} // namespace minirun::runtime
