// The mount namespace (CLONE_NEWNS): the container's own file system tree.
//
// In a fresh mount namespace the init still sees a copy of the host's mounts. It builds the
// container's tree on the rootfs, then pivot_root()s into it and detaches the host's tree,
// so no path leads back out. The steps, in order (each reason is in mount.cpp):
//   1. "/" made rprivate (or rslave), so that nothing propagates to the host
//   2. bind the rootfs onto itself
//   3. mounts[] in order                    mount_entries.cpp, mount_cgroup.cpp
//      a bind gets its own propagation, or that of "/"; rshared keeps the host's peers
//      only under rootfsPropagation shared/rshared (bind_propagation)
//      an idmapped bind arrives idmapped already: the parent did it (mount_idmap.cpp)
//   4. default devices and /dev symlinks    mount_devices.cpp
//      then the read-only mounts that had mounts or devices to receive inside them
//   5. create process.cwd
//   6. pivot_root and detach the old root
//   7. rootfsPropagation on the container's "/", root.readonly
//   8. maskedPaths, readonlyPaths           mount_masks.cpp
//
// Without a mount namespace in the config (config-linux.md: one not listed is inherited)
// the same steps run in the caller's mount namespace, as runc runs them, except that
// step 1 leaves the host's "/" alone (only the rootfs bind of step 2 is made private or a
// slave) and step 6 is chroot(2), never pivot_root, which would move the host's root. The
// mounts stay in the host's table until `delete`, or a failed create, detaches them again
// (mount_host.cpp).
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "mountinfo.hpp"
#include "plan.hpp"
#include "sync.hpp"
#include "syscalls.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minirun::runtime::cgroup {
struct Host;
class Cgroup;
} // namespace minirun::runtime::cgroup

namespace minirun::runtime::mount {

// The sources of the bind mounts in mounts[], opened by the parent before clone(): one
// detached copy (open_tree(OPEN_TREE_CLONE)) per bind entry, an invalid fd for the others
// and for the sources opened late (below).
// The host's root opens them, so that a source the container's user namespace could not
// reach (a directory of mode 0700, say) still works, and so that the init never looks a
// host path up after its user namespace exists.
// At most kSourcesHeldAhead of them stay open: every source is opened here (so that a bad
// one fails the create before anything exists), but those past the first
// kSourcesHeldAhead are closed again at once (`reopened`) and the parent opens each anew,
// in its own mount namespace, when the init reaches its entry and asks (send_late_source),
// sends it and closes its copy. The fds held, here and in the init, never grow with the
// number of mounts: a config with thousands of binds works under `ulimit -n 1024` (runc
// 1.4.2 fixed the same "too many open files"). A normal config (a few binds) keeps all of
// them here and pays no round trip.
inline constexpr size_t kSourcesHeldAhead = 16;
struct BindSources {
    std::vector<UniqueFd> fds;  // per mounts[] entry; invalid: not a bind, late, or reopened
    std::vector<bool> reopened; // per entry: closed here, the parent opens it again on request
};
Result<BindSources> open_bind_sources(const Plan& plan, Syscalls& sys,
                                      size_t held_ahead = kSourcesHeldAhead);
// The parent's second opening of a `reopened` source: the same open_tree(OPEN_TREE_CLONE)
// in its own mount namespace, idmapped where the entry asks; errors name the entry.
Result<UniqueFd> reopen_bind_source(const Plan& plan, size_t index, Syscalls& sys);

// The idmapped ones among them (MountStep::idmap), mapped by the parent before clone()
// (mount_idmap.cpp): mount_setattr(MOUNT_ATTR_IDMAP) needs CAP_SYS_ADMIN where the
// source's filesystem was mounted, the host's user namespace.
Status idmap_bind_sources(const Plan& plan, std::vector<UniqueFd>& sources, Syscalls& sys);

// One entry's idmap (mount_idmap.cpp), for a source opened late by the parent's helper.
Status idmap_source(const Plan& plan, size_t index, int source, Syscalls& sys);

// Bind sources left to mount time (mount_sources.cpp): one inside the rootfs, or one that
// did not exist when open_bind_sources() ran, is opened when its entry's turn comes, so that
// it is what the earlier entries made there (runc resolves every source then).
// The source of bind entry `index`, the parent's (create: kMountSource), as the init gets it;
// an empty one: the init opens it itself (rootless).
using LateSource = std::function<Result<UniqueFd>(size_t index)>;
bool source_opened_late(const Plan& plan, const MountStep& step);
// Opens entry `index`'s source in the caller's mount namespace, one inside the rootfs
// resolved from `root_fd` (RESOLVE_IN_ROOT): a detached copy, not idmapped.
Result<UniqueFd> open_source_now(const Plan& plan, size_t index, int root_fd, Syscalls& sys);
// The parent's: a child of it joins the mount namespace of `init`, opens the source there
// (open_source_now) and idmaps it where the entry asks; the copy comes back over a socket.
Result<UniqueFd> open_source_in(pid_t init, const Plan& plan, size_t index, Syscalls& sys);
// Answers the init's kMountSource `request` (the entry's index): reopen_bind_source() for
// an entry open_bind_sources() `reopened`, open_source_in() for the others.
Status send_late_source(const Plan& plan, const BindSources& sources, pid_t init,
                        std::string_view request, ParentEnd& sync, Syscalls& sys);
// The init's LateSource: asks the parent over `sync`. Rootless only for the `reopened`
// entries; for the others it returns an invalid fd: the init opens them itself.
LateSource late_sources_from(InitEnd& sync, const BindSources& sources);

// Steps 1-5: returns an O_PATH fd of the prepared rootfs. `bind_sources` are
// open_bind_sources()'s, each used up (and closed) by its entry, and `late_source` opens
// those it left (source_opened_late); `cgroup_binds` are the "cgroup" entry's, planned by
// create (planned_cgroup_binds; empty: the init looks itself).
Result<UniqueFd> prepare_rootfs(const Plan& plan, std::vector<UniqueFd>& bind_sources,
                                Syscalls& sys, const std::vector<CgroupBind>& cgroup_binds = {},
                                const LateSource& late_source = {});

// Step 6: pivot_into() with a mount namespace of the container's own, chroot_into()
// without one.
Status enter_root(const Plan& plan, int root_fd, Syscalls& sys);
Status pivot_into(int root_fd, Syscalls& sys);
Status chroot_into(int root_fd, Syscalls& sys);

// Step 7, after pivot_root.
Status finalize_root(const Plan& plan, Syscalls& sys);

// Step 3, one entry (mount_entries.cpp). `source` is the entry's open_bind_sources() fd (a
// bind entry needs one). With `defer_readonly`, a read-only entry is mounted writable for
// now: finish_readonly() makes it read-only once what goes inside it exists. Returns an fd
// of the mount the entry made, where a later step needs one (invalid otherwise): the tree
// fd of a bind, so that finish_readonly() reaches that mount and no other.
Result<UniqueFd> mount_entry(const Plan& plan, int root_fd, const MountStep& configured,
                             UniqueFd source, bool defer_readonly,
                             const std::vector<CgroupBind>& cgroup_binds, Syscalls& sys);

// The read-only part of an entry: "ro" (MS_RDONLY) and "rro" (every mount below, too), on
// `mounted`, mount_entry()'s fd (looked up from the root if invalid: a cgroup entry).
// `source_locked` as apply_bind_flags'.
Status finish_readonly(int root_fd, const MountStep& step, UniqueFd mounted, bool source_locked,
                       Syscalls& sys);

// The "cgroup" entry (mount_cgroup.cpp).
// `binds`: planned_cgroup_binds()'s, or empty: the init looks itself.
Status mount_cgroup(const Plan& plan, const std::vector<CgroupBind>& binds, int root_fd,
                    const MountStep& step, Syscalls& sys);
// Its binds on a v1 or hybrid host, worked out by the parent from the host's hierarchies
// and the container's cgroup (InitPlan::cgroup_binds); empty where the init must look itself.
std::vector<CgroupBind> planned_cgroup_binds(const Plan& plan, const cgroup::Host& host,
                                             const cgroup::Cgroup& cgroup);

// Step 4 (mount_devices.cpp).
Status create_devices(const Plan& plan, int root_fd, Syscalls& sys);

// After pivot_root, where we made /dev (plan.setup_dev): each of stdin, stdout and stderr
// that is a null device (1:3), the caller's /dev/null, becomes the container's, as runc's
// reOpenDevNull does: an fd of the host's node would let the container's root fchown or
// fchmod the host's /dev/null. The container's /dev/null is opened without following a
// symlink at its name and must itself be the null device, or the create fails: a rootfs
// whose /dev/null leads to another file (a procfs one, /proc/sys/kernel/core_pattern)
// must not become the process's stdio (crun's CVE-2026-88265). Only fds, no path of ours:
// outside the seam, as the pty's dup2 is.
Status reopen_stdio_on_dev_null(const Plan& plan);

// Step 8, after pivot_root (mount_masks.cpp).
Status mask_paths(const Plan& plan, Syscalls& sys);
// The same below `root_fd` (mask_paths: "/").
Status mask_paths_below(int root_fd, const std::vector<std::string>& paths, Syscalls& sys);
Status make_paths_readonly(const Plan& plan, Syscalls& sys);

// The propagation "/" gets before anything is mounted: rslave when the config asks for
// slave or shared propagation, rprivate otherwise.
unsigned long setup_propagation(unsigned long configured);

// The propagation changes, in order, for a bind entry once it is in place
// (mount_entries.cpp): its own propagation word, or setup_propagation() without one; a
// shared one is made a slave first unless keeps_host_peers().
std::vector<unsigned long> bind_propagation(const Plan& plan, const MountStep& step);
// Whether a shared bind stays in its source's peer group on the host, so that mounts made
// in the container appear there too: rootfsPropagation shared or rshared, and no user
// namespace of the container's own.
bool keeps_host_peers(const Plan& plan);

// Containers without a mount namespace (mount_host.cpp). Their mounts are in the caller's
// mount table: all of them hang below the bind of the rootfs onto itself, which is
// stacked on the mount the rootfs path resolved to before create, the "anchor". The anchor's
// id is kept in the state directory; what is below that bind is detached again by
// `delete`, or when create fails. Mounts that were at or below the rootfs before create
// are not the container's and stay.
class HostMounts {
public:
    // Records the anchor when `plan` has no mount namespace of its own (else does nothing).
    static Result<HostMounts> record(const Plan& plan, const std::string& state_dir);

    HostMounts() = default;
    HostMounts(HostMounts&& other) noexcept
        : anchor_(std::exchange(other.anchor_, -1)), rootfs_(std::move(other.rootfs_)) {}
    HostMounts& operator=(HostMounts&&) = delete;
    HostMounts(const HostMounts&) = delete;
    HostMounts& operator=(const HostMounts&) = delete;
    // Detaches the container's mounts unless commit() was called: a failed create.
    ~HostMounts();
    void commit() { anchor_ = -1; }

private:
    HostMounts(int anchor, std::string rootfs) : anchor_(anchor), rootfs_(std::move(rootfs)) {}
    int anchor_ = -1;
    std::string rootfs_;
};

// For `delete`: detaches the mounts HostMounts::record() kept track of for the container
// whose state directory this is; nothing to do for a container with a mount namespace.
Status undo_host_mounts(const std::string& state_dir);

// The container's mounts in `mounts` (a mountinfo table), deepest first, the rootfs bind
// last: the one stacked on mount `anchor` at `rootfs`, and every mount below it.
std::vector<fs::MountInfo> host_mounts_to_detach(const std::vector<fs::MountInfo>& mounts,
                                                 int anchor, const std::string& rootfs);

// Remounts the bind mount whose root `target_fd` (an O_PATH fd) is with `flags`
// (MS_RDONLY, MS_NOSUID, ...), keeping the flags the kernel locks inside a user namespace.
// For the runtime's own binds (root.readonly, readonlyPaths, the cgroup entry's), which add
// to what is there.
Status remount_bind(int target_fd, unsigned long flags, Syscalls& sys);

// A mounts[] bind's remount (mount_options.hpp: runc 1.3's rules), on the bind whose root
// `target_fd` is. With `source_locked` the source's flags are taken as locked, as runc finds
// them in a container with a user namespace of its own: there its mounts[] sources are
// bound from the mounts the container's mount namespace copied from the host, which the
// kernel locks (lock_mnt_tree). mini-run's parent clones most sources from the host's own
// mount namespace instead, where nothing is locked: the rule is applied here, so that the
// container gets the same mount as with runc (and the same refusal).
Status apply_bind_flags(int target_fd, const MountOptions& options, bool source_locked,
                        Syscalls& sys);
// Whether a container's bind sources count as locked: it has a user namespace of its own.
bool sources_locked(const Plan& plan);

} // namespace minirun::runtime::mount
