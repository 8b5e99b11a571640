#include "mount/mount_options.hpp"

#include <sys/mount.h>
#include <sys/statvfs.h>

#include <string_view>

namespace minirun::runtime {
namespace {

struct FlagWord {
    std::string_view word;
    bool clear; // "rw" clears MS_RDONLY, "suid" clears MS_NOSUID, ...
    unsigned long flag;
};

constexpr unsigned long kAtimeFlags = MS_NOATIME | MS_RELATIME | MS_STRICTATIME;
// The atime flags a mount keeps (MNT_ATIME_MASK); MS_STRICTATIME is none of them.
constexpr unsigned long kMountAtime = MS_NOATIME | MS_NODIRATIME | MS_RELATIME;
// What the kernel locks on a mount copied into a less privileged mount namespace
// (lock_mnt_tree), in MS_* flags: runc's mntLockFlags.
constexpr unsigned long kLockableFlags =
    MS_RDONLY | MS_NODEV | MS_NOEXEC | MS_NOSUID | kAtimeFlags | MS_NODIRATIME;

constexpr FlagWord kFlagWords[] = {
    {"ro", false, MS_RDONLY},
    {"rw", true, MS_RDONLY},
    {"nosuid", false, MS_NOSUID},
    {"suid", true, MS_NOSUID},
    {"nodev", false, MS_NODEV},
    {"dev", true, MS_NODEV},
    {"noexec", false, MS_NOEXEC},
    {"exec", true, MS_NOEXEC},
    {"sync", false, MS_SYNCHRONOUS},
    {"async", true, MS_SYNCHRONOUS},
    {"dirsync", false, MS_DIRSYNC},
    {"remount", false, MS_REMOUNT},
    {"mand", false, MS_MANDLOCK},
    {"nomand", true, MS_MANDLOCK},
    {"noatime", false, MS_NOATIME},
    {"atime", true, MS_NOATIME},
    {"nodiratime", false, MS_NODIRATIME},
    {"diratime", true, MS_NODIRATIME},
    {"relatime", false, MS_RELATIME},
    {"norelatime", true, MS_RELATIME},
    {"strictatime", false, MS_STRICTATIME},
    {"nostrictatime", true, MS_STRICTATIME},
    {"lazytime", false, MS_LAZYTIME},
    {"nolazytime", true, MS_LAZYTIME},
    {"silent", false, MS_SILENT},
    {"loud", true, MS_SILENT},
    {"iversion", false, MS_I_VERSION},
    {"noiversion", true, MS_I_VERSION},
    {"nosymfollow", false, MS_NOSYMFOLLOW},
    {"symfollow", true, MS_NOSYMFOLLOW},
};

struct PropagationWord {
    std::string_view word;
    unsigned long flags;
};

constexpr PropagationWord kPropagationWords[] = {
    {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
    {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
    {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
    {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
};

} // namespace

std::vector<std::string> known_mount_options() {
    std::vector<std::string> words = {"bind",        "rbind", "rro",   "tmpcopyup",
                                      "notmpcopyup", "idmap", "ridmap"};
    for (const auto& entry : kFlagWords) {
        words.emplace_back(entry.word);
    }
    for (const auto& entry : kPropagationWords) {
        words.emplace_back(entry.word);
    }
    return words;
}

unsigned long propagation_flags(const std::string& word) {
    for (const auto& entry : kPropagationWords) {
        if (entry.word == word) {
            return entry.flags;
        }
    }
    return 0;
}

MountOptions parse_mount_options(const std::vector<std::string>& options) {
    MountOptions out;
    for (const std::string& option : options) {
        if (option == "bind" || option == "rbind") {
            out.bind = true;
            out.recursive = out.recursive || option == "rbind";
            continue;
        }
        if (option == "rro") {
            out.flags |= MS_RDONLY;
            out.recursive_readonly = true;
            continue;
        }
        if (option == "idmap" || option == "ridmap") {
            // Not for mount(2) (the spec: SHOULD NOT be passed to it); mount_setattr applies
            // it (mount_idmap.cpp). The last word wins, as with tmpcopyup.
            out.idmap = true;
            out.recursive_idmap = option == "ridmap";
            continue;
        }
        if (option == "tmpcopyup" || option == "notmpcopyup") {
            out.tmpcopyup = option == "tmpcopyup";
            continue;
        }
        if (unsigned long propagation = propagation_flags(option); propagation != 0) {
            out.propagation = propagation;
            continue;
        }
        bool matched = false;
        for (const auto& entry : kFlagWords) {
            if (entry.word != option) {
                continue;
            }
            if (entry.clear) {
                out.flags &= ~entry.flag;
                out.cleared |= entry.flag;
            } else {
                out.cleared &= ~entry.flag;
                // The atime words exclude each other: the last one wins, as in mount(8).
                if ((entry.flag & kAtimeFlags) != 0) {
                    out.flags &= ~kAtimeFlags;
                }
                out.flags |= entry.flag;
            }
            matched = true;
            break;
        }
        if (!matched) {
            if (!out.data.empty()) {
                out.data += ',';
            }
            out.data += option;
        }
    }
    return out;
}

unsigned long locked_mount_flags(unsigned long statvfs_flags) {
    struct Pair {
        unsigned long st;
        unsigned long ms;
    };
    constexpr Pair kPairs[] = {
        {ST_RDONLY, MS_RDONLY},     {ST_NOSUID, MS_NOSUID},   {ST_NODEV, MS_NODEV},
        {ST_NOEXEC, MS_NOEXEC},     {ST_NOATIME, MS_NOATIME}, {ST_NODIRATIME, MS_NODIRATIME},
        {ST_RELATIME, MS_RELATIME},
    };
    unsigned long flags = 0;
    for (const auto& pair : kPairs) {
        if ((statvfs_flags & pair.st) != 0) {
            flags |= pair.ms;
        }
    }
    return flags;
}

unsigned long statvfs_mount_flags(unsigned long statvfs_flags) {
    unsigned long flags = locked_mount_flags(statvfs_flags);
    if ((flags & kAtimeFlags) == 0) {
        flags |= MS_STRICTATIME;
    }
    return flags;
}

bool bind_needs_remount(const MountOptions& options) {
    return (options.flags & ~static_cast<unsigned long>(MS_REMOUNT)) != 0 || options.cleared != 0;
}

bool locked_flags_allow(unsigned long current, unsigned long requested) {
    constexpr unsigned long kLocked = MS_RDONLY | MS_NODEV | MS_NOSUID | MS_NOEXEC;
    if ((current & kLocked & ~requested) != 0) {
        return false;
    }
    // The atime a bind remount gives (path_mount): the mount's own when none is asked for,
    // else relatime unless noatime, strictatime clearing both, nodiratime added.
    unsigned long before = current & kMountAtime;
    if ((requested & (kMountAtime | MS_STRICTATIME)) == 0) {
        return true;
    }
    unsigned long after = (requested & MS_NOATIME) != 0 ? MS_NOATIME : MS_RELATIME;
    if ((requested & MS_STRICTATIME) != 0) {
        after &= ~(MS_NOATIME | MS_RELATIME);
    }
    after |= requested & MS_NODIRATIME;
    return after == before;
}

Result<unsigned long> with_locked_flags(unsigned long requested, unsigned long cleared,
                                        unsigned long current) {
    if (unsigned long cannot = current & cleared & kLockableFlags; cannot != 0) {
        return Error(EPERM, cat("cannot clear locked flags ", mount_flag_words(cannot)));
    }
    // An atime asked for must be the source's: the kernel would silently ignore relatime
    // next to an inherited noatime, and anything next to an inherited strictatime.
    const unsigned long atime = kAtimeFlags | MS_NODIRATIME;
    if ((requested & atime) != 0 && (requested & atime) != (current & atime)) {
        return Error(EPERM,
                     cat("cannot change locked atime flags ", mount_flag_words(current & atime)));
    }
    return requested | (current & kLockableFlags);
}

std::string mount_flag_words(unsigned long flags) {
    std::string words;
    for (const auto& entry : kFlagWords) {
        if (!entry.clear && (flags & entry.flag) != 0) {
            words += cat(words.empty() ? "" : ",", entry.word);
            flags &= ~entry.flag;
        }
    }
    return words;
}

} // namespace minirun::runtime
