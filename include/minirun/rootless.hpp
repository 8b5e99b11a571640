// Rootless: mini-run run by a user who is not the host's root (docs/rootless.md).
//
// Two callers are rootless: an unprivileged user (euid not 0), and a process that is root
// only inside a user namespace that does not map the whole uid range, which is how rootless
// podman calls its runtime (it makes the user namespace with newuidmap first). crun tells the
// second from /proc/self/uid_map, and so does mini-run.
//
// What follows from it: state under $XDG_RUNTIME_DIR/mini-run instead of /run/mini-run,
// id maps written through newuidmap/newgidmap when they map more than the caller's own id,
// and no cgroups unless a writable cgroup v2 subtree is delegated to the caller.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::rootless {

// Whether a uid_map(5) text maps the whole uid range onto itself: the initial user
// namespace's "0 0 4294967295".
bool uid_map_is_whole(std::string_view uid_map);

// Whether this process is rootless (euid and /proc/self/uid_map, read once), unless
// --rootless true|false said otherwise (override).
bool active();
void override_detection(std::optional<bool> rootless);

// Where a rootless caller keeps its containers' state when --root is not given.
struct StateRootFacts {
    uid_t euid = 0;
    std::optional<std::string> xdg_runtime_dir; // the environment's, if set and not empty
    std::optional<uid_t> xdg_owner;             // its owner, if it is a directory
    std::optional<uid_t> run_user_owner;        // /run/user/<euid>'s owner, if a directory
};
struct StateRoot {
    std::string path;
    std::string warning; // why $XDG_RUNTIME_DIR was not used, or empty
};
// $XDG_RUNTIME_DIR/mini-run when that is the caller's own directory, else
// /run/user/<euid>/mini-run when that one is, else an error that says what to set.
Result<StateRoot> choose_state_root(const StateRootFacts& facts);
// The same, from this process's environment and the file system.
Result<StateRoot> state_root();

// One range of /etc/subuid or /etc/subgid: `count` ids from `start`.
struct SubidRange {
    uint64_t start = 0;
    uint64_t count = 0;
};
// The ranges of the lines "NAME:START:COUNT" or "UID:START:COUNT" that name this user.
// Malformed lines are skipped, as shadow's own tools skip them.
std::vector<SubidRange> parse_subid(std::string_view text, std::string_view user, uid_t uid);

// How the id maps of a new user namespace get written by a caller without the host's root.
enum class MapWriter {
    direct, // one write(2) by mini-run: root in its own user namespace, or only its own id
    helper, // newuidmap/newgidmap, setuid root, checking /etc/subuid and /etc/subgid
};
// Whether `mappings` map nothing but the caller's own id (`own`), once.
bool maps_only_own_id(const std::vector<spec::IdMapping>& mappings, uint32_t own);

// Checks, before anything is created, that an unprivileged caller (euid `own`) may map
// `mappings` (at JSON path `path`, e.g. "linux.uidMappings"): its own id, or ids inside
// its ranges of `file` ("/etc/subuid"). `ranges` are that file's for the user `user`.
Status check_subid_mappings(const std::vector<spec::IdMapping>& mappings, std::string_view path,
                            uint32_t own, std::string_view user, std::string_view file,
                            const std::vector<SubidRange>& ranges);

} // namespace minirun::rootless
