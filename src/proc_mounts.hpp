// Mount destinations under /proc: runc 1.3's checkProcMount (libcontainer/rootfs_linux.go).
//
// /proc is where a runtime writes security settings (sysctls, oom_score_adj, LSM labels)
// and where the container's view of the kernel comes from: a mount on one of its files is
// the foothold of CVE-2025-52881 (another procfs file bound over /proc/self/attr/exec or a
// sysctl, so a write lands elsewhere). So, as runc 1.3:
//   - on /proc itself: a fresh "proc" mount, or a bind whose source is the root of a
//     procfs (checked at mount time, on the opened source); anything else is refused;
//   - below /proc: only the files lxcfs emulates (the list below, runc 1.3.6's);
//   - anywhere else: no rule here.
// The rule runs twice: on the config's clean destination when it is read (with the JSON
// path, before anything exists; `mini-run check` too), and on the destination as resolved
// in the rootfs at mount time, so that a symlink (/foo -> /proc/sys) cannot lead a mount
// under /proc.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace minirun::proc_mounts {

// The files below /proc a mount may cover (runc 1.3.6's validProcMounts): what lxcfs
// emulates. runc's list has no /proc/net/dev.
std::span<const std::string_view> lxcfs_files();

enum class Where {
    outside,    // not /proc, nor below it
    proc_root,  // /proc itself
    lxcfs_file, // one of lxcfs_files()
    inside,     // anything else below /proc
};
// `destination`: absolute and lexically clean.
Where classify(std::string_view destination);

// The refusal in runc's words, or nothing: "\"/proc/x\" cannot be mounted because it is
// inside /proc", "\"/proc\" cannot be mounted because it is not of type proc". `bind`: a
// bind mount (whose source, onto /proc itself, must be a procfs root: checked separately,
// source_problem()), `type` the mount's type otherwise.
std::optional<std::string> destination_problem(std::string_view destination, std::string_view type,
                                               bool bind);

// The problem with the source of a bind onto /proc itself, an open fd of it: it must be the
// root of a procfs (PROC_SUPER_MAGIC, inode 1).
std::optional<std::string> source_problem(std::string_view destination, int source_fd);

} // namespace minirun::proc_mounts
