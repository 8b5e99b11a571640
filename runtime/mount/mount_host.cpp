// Containers without a mount namespace of their own: their mounts are the caller's.
//
// config-linux.md: a namespace type not listed is inherited from the runtime. The init
// then mounts into the caller's (usually the host's) mount table, as runc does, and
// nothing detaches those mounts when the init exits: no namespace dies with it. So create
// records where the container's tree will hang, and delete (or a create that fails)
// detaches exactly that tree again. What was mounted at or below the rootfs before create
// belongs to someone else (an engine's overlay on the rootfs, say) and is left alone.
#include "fs.hpp"
#include "minirun/log.hpp"
#include "mount/mount.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <map>

namespace minirun::runtime::mount {
namespace {

// In the state directory: the anchor's mount id, a newline, the rootfs path.
constexpr const char* kAnchorFile = "/host-mounts";

// The id of the mount `fd` (or `path`, with fd AT_FDCWD) is on, as /proc/self/mountinfo
// numbers them (statx STATX_MNT_ID, Linux 5.8).
Result<int> mount_id_of(int fd, const char* path, int flags) {
    struct statx info {};
    if (::statx(fd, path, flags | AT_NO_AUTOMOUNT, STATX_MNT_ID, &info) < 0) {
        return Error::from_errno("statx");
    }
    if ((info.stx_mask & STATX_MNT_ID) == 0) {
        return Error(ENOSYS, "statx: this kernel does not report mount ids (Linux 5.8 needed)");
    }
    return static_cast<int>(info.stx_mnt_id);
}

Status write_record(const std::string& path, const std::string& text) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
        return Error::from_errno(cat("write ", path));
    }
    return {};
}

Status detach(int anchor, const std::string& rootfs) {
    MR_ASSIGN(std::vector<fs::MountInfo> table, fs::read_mountinfo());
    std::vector<fs::MountInfo> ours = host_mounts_to_detach(table, anchor, rootfs);
    if (ours.empty()) {
        return {}; // never made, or detached already
    }
    for (const fs::MountInfo& mount : ours) {
        // By fd, after checking that the path still leads to this very mount: a mount of
        // ours may hide another one of ours (a tmpfs mounted over a directory that had
        // submounts), and then that one goes with its parent. MNT_DETACH: a process
        // outside the container may still use a file in there.
        UniqueFd at(::open(mount.mount_point.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!at) {
            continue;
        }
        auto id = mount_id_of(at.get(), "", AT_EMPTY_PATH);
        if (!id || *id != mount.id) {
            continue;
        }
        (void)::umount2(fs::fd_path(at.get()).c_str(), MNT_DETACH);
    }
    // The rootfs bind is last and takes whatever is still below it along (MNT_DETACH
    // detaches a whole tree); all that is left to check is that it is gone.
    MR_ASSIGN(table, fs::read_mountinfo());
    if (!host_mounts_to_detach(table, anchor, rootfs).empty()) {
        return Error(EBUSY, cat("rootfs ", quoted(rootfs),
                                ": the container's mounts could not be detached"));
    }
    return {};
}

} // namespace

std::vector<fs::MountInfo> host_mounts_to_detach(const std::vector<fs::MountInfo>& mounts,
                                                 int anchor, const std::string& rootfs) {
    // The rootfs bind: on the anchor, at the rootfs. Only one mount can sit directly on a
    // given mount at a given place; a later one there stacks on top of it (its child).
    auto top = std::find_if(mounts.begin(), mounts.end(), [&](const fs::MountInfo& mount) {
        return mount.parent_id == anchor && mount.mount_point == rootfs && mount.id != anchor;
    });
    if (top == mounts.end()) {
        return {};
    }
    std::multimap<int, const fs::MountInfo*> children;
    for (const fs::MountInfo& mount : mounts) {
        if (mount.id != mount.parent_id) {
            children.emplace(mount.parent_id, &mount);
        }
    }
    // Breadth first from the rootfs bind: every level deeper than the one before it.
    std::vector<const fs::MountInfo*> order = {&*top};
    for (size_t next = 0; next < order.size() && order.size() <= mounts.size(); ++next) {
        auto [first, last] = children.equal_range(order[next]->id);
        for (auto it = first; it != last; ++it) {
            order.push_back(it->second);
        }
    }
    std::vector<fs::MountInfo> deepest_first;
    deepest_first.reserve(order.size());
    std::transform(order.rbegin(), order.rend(), std::back_inserter(deepest_first),
                   [](const fs::MountInfo* mount) { return *mount; });
    return deepest_first;
}

Result<HostMounts> HostMounts::record(const Plan& plan, const std::string& state_dir) {
    if (plan.has_own(spec::NamespaceType::mount)) {
        return HostMounts();
    }
    // Before the init exists: the mount the rootfs path leads to now, which the rootfs
    // bind will be stacked on.
    auto anchor = mount_id_of(AT_FDCWD, plan.rootfs.c_str(), 0);
    if (!anchor) {
        return anchor.error().wrap(cat("root.path: rootfs ", quoted(plan.rootfs)));
    }
    MR_TRY(write_record(state_dir + kAnchorFile, cat(*anchor, '\n', plan.rootfs)));
    return HostMounts(*anchor, plan.rootfs);
}

HostMounts::~HostMounts() {
    if (anchor_ < 0) {
        return;
    }
    if (auto detached = detach(anchor_, rootfs_); !detached) {
        log::warning(cat("undo a failed create: detach the container's mounts: ",
                         detached.error().message()));
    }
}

Status undo_host_mounts(const std::string& state_dir) {
    auto text = fs::read_file(state_dir + kAnchorFile);
    if (!text) {
        // No record: the container had a mount namespace of its own, which took its
        // mounts along when its last process exited.
        if (text.error().errno_value() == ENOENT) {
            return {};
        }
        return text.error();
    }
    size_t newline = text->find('\n');
    int anchor = -1;
    if (newline == std::string::npos ||
        std::from_chars(text->data(), text->data() + newline, anchor).ec != std::errc() ||
        anchor < 0) {
        return Error(EINVAL, cat(state_dir, kAnchorFile, ": not a mount record"));
    }
    return detach(anchor, text->substr(newline + 1));
}

} // namespace minirun::runtime::mount
