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
            } else {
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

} // namespace minirun::runtime
