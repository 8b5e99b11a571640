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
    unsigned long flags = 0; // MS_RDONLY, MS_NOSUID, ... (no MS_BIND/MS_REC)
    // Flags a word asked to clear ("rw", "suid", "dev", "exec", "atime", ...), not set again
    // by a later word: a bind's remount must not keep them from its source (runc's
    // ClearedFlags).
    unsigned long cleared = 0;
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

// A bind's remount in mounts[], as runc 1.3 makes it (rootfs_linux.go, mountToRootfs "bind"):
// none when the options neither set nor clear a flag (the bind keeps its source's flags);
// otherwise exactly the flags asked for ("mount --bind -o ..."), so that a word that clears
// takes effect and one not given is not inherited. Where the kernel refuses that because the
// source's flags are locked (a mount from outside the container's user namespace), the
// source's lockable flags are added to what was asked, unless the options clear one of them
// or ask for another atime: that is an error.

// The MS_* flags of a statvfs f_flag (runc's statfsToMountFlags): MS_STRICTATIME when no
// other atime flag is set, as statvfs has no bit for it.
unsigned long statvfs_mount_flags(unsigned long statvfs_flags);
// Whether a bind needs that remount.
bool bind_needs_remount(const MountOptions& options);
// Whether the kernel takes a bind remount to `requested` (MS_* flags) of a mount with flags
// `current` (statvfs_mount_flags) whose flags are locked, as in a mount namespace of a less
// privileged user namespace (lock_mnt_tree, can_change_locked_flags): ro, nodev, nosuid and
// noexec may not go, the atime ones may not change.
bool locked_flags_allow(unsigned long current, unsigned long requested);
// The flags of runc's second attempt: `requested` and `current`'s lockable flags, or the
// error (EPERM) when `cleared` names one of them or `requested` another atime.
Result<unsigned long> with_locked_flags(unsigned long requested, unsigned long cleared,
                                        unsigned long current);
// "ro,nosuid": MS_* flags in mount(8)'s words, for messages.
std::string mount_flag_words(unsigned long flags);

} // namespace minirun::runtime
