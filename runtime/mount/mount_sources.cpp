// Bind sources opened when their entry's turn comes, in the container's mount namespace.
//
// Most sources are opened by the parent before clone() (open_bind_sources, mount.cpp). Not
// one inside the rootfs, nor one that does not exist yet: runc resolves each source at its
// mount, in config order (rootfs_linux.go: mountToRootfs, and the parent's helper thread in
// the container's mount namespace, process_linux.go goCreateMountSources), so that a source
// may be a mount an earlier entry made (mounts.bats "mount order": "$rootfs/mnt/x" after
// /mnt and /mnt/x). Opened before any mount it would be the directory beneath them.
//
// A source inside the rootfs is resolved from the rootfs with RESOLVE_IN_ROOT, like a
// destination: a symlink in the rootfs cannot make it a host path. The init asks the
// parent for it (kMountSource): a child of the parent, still the host's root, joins the
// init's mount namespace, opens the source there (open_tree(OPEN_TREE_CLONE), which the
// init's user namespace could not be allowed everywhere) and idmaps it where the entry asks
// (only the host's root may, mount_idmap.cpp). Rootless, the init opens it itself.
#include "fs.hpp"
#include "minirun/rootless.hpp"
#include "mount/mount.hpp"
#include "process/child.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <charconv>
#include <optional>
#include <string>
#include <vector>

namespace minirun::runtime::mount {
namespace {

// The part of `source` below the rootfs ("/mnt/x"), or nullopt for a host path outside it.
std::optional<std::string> inside_rootfs(const Plan& plan, const MountStep& step) {
    std::string source = fs::clean_path(step.source);
    if (!fs::at_or_below(plan.rootfs, source)) {
        return std::nullopt;
    }
    std::string below = source.substr(plan.rootfs == "/" ? 0 : plan.rootfs.size());
    return below.empty() ? "/" : below;
}

// The helper's half: in the init's mount namespace, open (and idmap) entry `index`'s
// source, and send it. Never returns.
[[noreturn]] void open_and_send(const Plan& plan, size_t index, int mount_ns, InitEnd& to_parent,
                                Syscalls& sys) {
    auto opened = [&]() -> Result<UniqueFd> {
        MR_TRY_WRAP(check_syscall(::setns(mount_ns, CLONE_NEWNS), "setns"),
                    "join the container's mount namespace");
        UniqueFd root(::open(plan.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!root) {
            return Error::from_errno(cat("open rootfs ", quoted(plan.rootfs)));
        }
        MR_ASSIGN(UniqueFd source, open_source_now(plan, index, root.get(), sys));
        MR_TRY(idmap_source(plan, index, source.get(), sys));
        return source;
    }();
    if (opened) {
        (void)to_parent.send(ToParent::kMountSource, "", opened->get());
    } else {
        to_parent.send_error(opened.error());
    }
    ::_exit(opened ? 0 : 1);
}

} // namespace

bool source_opened_late(const Plan& plan, const MountStep& step) {
    return step.options.bind && !step.is_cgroup && inside_rootfs(plan, step).has_value();
}

Result<UniqueFd> open_source_now(const Plan& plan, size_t index, int root_fd, Syscalls& sys) {
    const MountStep& step = plan.mounts.at(index);
    std::string path = step.source;
    UniqueFd resolved;
    if (auto below = inside_rootfs(plan, step)) {
        // The rootfs is "/" for the lookup: a symlink in it stays in it.
        auto inside = fs::open_in_root(root_fd, *below, O_PATH);
        if (!inside) {
            return inside.error().wrap(cat("source ", quoted(step.source)));
        }
        resolved = std::move(*inside);
        path = fs::fd_path(resolved.get());
    }
    auto cloned = sys.open_tree_clone(path, step.options.recursive);
    if (!cloned) {
        return cloned.error().wrap(cat("source ", quoted(step.source)));
    }
    return UniqueFd(*cloned);
}

Result<UniqueFd> open_source_in(pid_t init, const Plan& plan, size_t index, Syscalls& sys) {
    UniqueFd mount_ns(::open(cat("/proc/", init, "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    if (!mount_ns) {
        return Error::from_errno("open the init's mount namespace");
    }
    MR_ASSIGN(auto ends, create_sync_pair());
    ScopedChild helper;   // killed and reaped on the way out
    pid_t pid = ::fork(); // single-threaded: setns(CLONE_NEWNS) refuses a shared fs
    if (pid < 0) {
        return Error::from_errno("fork");
    }
    if (pid == 0) {
        ends.first.close();
        open_and_send(plan, index, mount_ns.get(), ends.second, sys);
    }
    helper.reset(pid);
    ends.second.close();
    MR_ASSIGN(auto event, ends.first.receive());
    if (event.eof) {
        return Error(ECHILD, "the mount source helper exited");
    }
    if (event.message == ToParent::kError) {
        return std::move(event.error);
    }
    if (event.message != ToParent::kMountSource || !event.fd) {
        return Error(EPROTO, "the mount source helper sent no source");
    }
    return std::move(event.fd);
}

Status send_late_source(const Plan& plan, const BindSources& sources, pid_t init,
                        std::string_view request, ParentEnd& sync, Syscalls& sys) {
    const std::vector<bool>& reopened = sources.reopened;
    size_t index = 0;
    auto parsed = std::from_chars(request.data(), request.data() + request.size(), index);
    if (parsed.ec != std::errc() || index >= plan.mounts.size() ||
        !plan.mounts[index].options.bind || plan.mounts[index].is_cgroup) {
        return Error(EPROTO, cat("the init asked for mount source ", quoted(request)));
    }
    const MountStep& step = plan.mounts[index];
    // A host source the parent opened before clone() and closed again (the fd budget,
    // open_bind_sources): opened again here, in the host's mount namespace, as then.
    // Either way, the parent's copy is closed on return: the init's is the only one left.
    if (index < reopened.size() && reopened[index]) {
        MR_ASSIGN(UniqueFd again, reopen_bind_source(plan, index, sys));
        return sync.send(ToInit::kMountSource, "", again.get());
    }
    auto opened = open_source_in(init, plan, index, sys);
    if (!opened) {
        return opened.error().wrap(cat("mounts[", index, "] on ", step.destination));
    }
    return sync.send(ToInit::kMountSource, "", opened->get());
}

LateSource late_sources_from(InitEnd& sync, const BindSources& sources) {
    const std::vector<bool>& reopened = sources.reopened;
    const bool rootless = rootless::active();
    return [&sync, &reopened, rootless](size_t index) -> Result<UniqueFd> {
        if (rootless && (index >= reopened.size() || !reopened[index])) {
            return UniqueFd(); // the init opens it itself: the parent could not join it
        }
        MR_TRY(sync.send(ToParent::kMountSource, std::to_string(index)));
        MR_ASSIGN(auto event, sync.expect(ToInit::kMountSource));
        if (!event.fd) {
            return Error(EPROTO, "no mount source from the parent");
        }
        return std::move(event.fd);
    };
}

} // namespace minirun::runtime::mount
