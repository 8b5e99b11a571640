// The container's cgroup: its directories in every hierarchy, made, limited and entered.
// Which files a controller's limits go to is in its own file, listed in controllers.hpp;
// apply() walks that table and decides which directory handles which controller.
// Freezing, counting and removing the cgroup are in cgroup_running.cpp.
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"
#include "fs.hpp"
#include "minirun/log.hpp"
#include "mountinfo.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace minirun::runtime::cgroup {

namespace {

using files::collect_pids;
using files::is_directory;
using files::is_hierarchy_root;
using files::is_v2_key;

// The topmost directory above `dir` that still is a cgroup2 directory: the hierarchy's
// root (its parent, /sys/fs/cgroup or /sys/fs, has no cgroup.controllers).
std::string v2_root_of(const std::string& dir) {
    std::string root = dir;
    for (;;) {
        auto [parent, name] = fs::split_parent(root);
        if (parent == root || parent == "." || !files::exists(parent, "cgroup.controllers")) {
            return root;
        }
        root = parent;
    }
}

// The kernel gives a v2 cgroup only the controllers its parent enables in
// cgroup.subtree_control, so each ancestor down from the root enables what the root
// offers. Enabling is skipped where the kernel refuses it (an ancestor holding processes
// violates the no-internal-processes rule; a threaded subtree refuses domain
// controllers): the container then runs without that controller, as under runc.
void enable_v2_controllers(const std::string& dir) {
    std::string root = v2_root_of(dir);
    auto offered = files::read(root, "cgroup.controllers");
    if (!offered) {
        return;
    }
    std::vector<std::string> chain;
    for (std::string level = fs::split_parent(dir).first; level.size() >= root.size();
         level = fs::split_parent(level).first) {
        chain.insert(chain.begin(), level);
        if (level == root) {
            break;
        }
    }
    for (const auto& level : chain) {
        // The root's list was read just above: once per create is enough.
        auto available = level == root ? offered : files::read(level, "cgroup.controllers");
        auto enabled = files::read(level, "cgroup.subtree_control");
        if (!available || !enabled) {
            continue;
        }
        auto have = files::words(*enabled);
        for (const auto& controller : files::words(*offered)) {
            if (!files::words(*available).contains(controller) || have.contains(controller)) {
                continue;
            }
            // Quiet, as runc is (it ignores these writes): a limit that needs the
            // controller fails in apply(), saying what is missing.
            if (auto done = files::write(level, "cgroup.subtree_control", cat("+", controller));
                !done) {
                log::debug(cat("cgroup: controller ", controller,
                               " not enabled: ", done.error().message()));
            }
        }
    }
}

// A new v1 cpuset cgroup starts with no cpus and no mems, and a task cannot join it
// until both are set (ENOSPC): copy them from the parent, as runc does. A parent still
// empty was made a moment ago by a concurrent create that has not filled it yet: it is
// filled the same way first (both write the same values). The hierarchy's root never is.
Status copy_cpuset_from_parent(const std::string& dir) {
    std::string parent = fs::split_parent(dir).first;
    for (const char* name : {"cpuset.cpus", "cpuset.mems"}) {
        MR_ASSIGN(std::string mine, files::read(dir, name));
        if (!mine.empty()) {
            continue;
        }
        MR_ASSIGN(std::string theirs, files::read(parent, name));
        if (theirs.empty() && !is_hierarchy_root(parent)) {
            MR_TRY(copy_cpuset_from_parent(parent));
            MR_ASSIGN(theirs, files::read(parent, name));
        }
        MR_TRY(files::write(dir, name, theirs));
    }
    return {};
}

// An existing cgroup may be reused (runc allows it) when it is empty and not frozen. One
// that holds processes (in it or below it) is refused, as runc 1.2+ refuses it where 1.1
// warned and shared it (opencontainers/runc#3132: its limits, pause, kill and delete
// would act on the other processes too): runc's words, which tools look for. A frozen one
// would hang the container's init. runc checks in that order.
Status check_existing(const std::string& key, const std::string& dir) {
    std::vector<pid_t> pids;
    MR_TRY(collect_pids(dir, pids));
    if (!pids.empty()) {
        return Error(EBUSY,
                     cat("container's cgroup is not empty: ", pids.size(), " process(es) found"));
    }
    bool frozen = false;
    if (is_v2_key(key)) {
        auto state = files::read(dir, "cgroup.freeze");
        frozen = state && *state == "1";
    } else if (files::places_of({{key, dir}}).v1.contains("freezer")) {
        auto state = files::read(dir, "freezer.state");
        frozen = state && *state != "THAWED";
    }
    if (frozen) {
        // runc's words, which its users look for.
        return Error(EBUSY, cat("container's cgroup unexpectedly frozen: ", quoted(dir)));
    }
    return {};
}

// What a directory needs once it is there: a v1 cpuset one made just now gets its parent's
// cpus and mems (it starts with none), a cgroup2 one its children's controllers.
Status settle_directory(const std::string& key, const std::string& dir, bool made) {
    if (made && files::places_of({{key, dir}}).v1.contains("cpuset")) {
        MR_TRY_WRAP(copy_cpuset_from_parent(dir), cat("cgroup ", quoted(dir)));
    }
    if (is_v2_key(key)) {
        enable_v2_controllers(dir);
    }
    return {};
}

// `dir` below a missing parent (its mkdir said ENOENT): the missing levels made from the
// top. True when the last mkdir, of `dir` itself, made it (not a racing create).
Result<bool> make_with_parents(const std::string& key, const std::string& dir) {
    bool cpuset = files::places_of({{key, dir}}).v1.contains("cpuset");
    std::vector<std::string> missing{dir};
    for (std::string level = fs::split_parent(dir).first; !is_directory(level);
         level = fs::split_parent(level).first) {
        if (level == "/" || level == ".") {
            break;
        }
        missing.insert(missing.begin(), level);
    }
    bool made = false;
    for (const auto& level : missing) {
        made = ::mkdir(level.c_str(), 0755) == 0;
        if (!made && errno != EEXIST) {
            return Error::from_errno(cat("mkdir ", level));
        }
        if (cpuset) {
            MR_TRY_WRAP(copy_cpuset_from_parent(level), cat("cgroup ", quoted(level)));
        }
    }
    if (is_v2_key(key)) {
        enable_v2_controllers(dir);
    }
    return made;
}

// One controller's values: to its v1 hierarchy, or on a unified host (or a hybrid one whose
// v1 lacks it) to the cgroup2 directory; a cgroup2-only row to the cgroup2 directory
// whatever the layout.
Status write_controller(const files::Places& at, const controllers::Controller& controller,
                        const controllers::Request& request) {
    std::string name(controller.name);
    if (controller.v1 == nullptr) {
        if (at.v2.empty()) {
            return Error(EOPNOTSUPP, cat("linux.resources.", name,
                                         " needs cgroup v2, and this host mounts none"));
        }
        return controller.v2(at.v2, request);
    }
    if (std::string dir = at.v1_dir(name); !dir.empty() && !at.unified_host) {
        return controller.v1(dir, request);
    }
    if (at.in_v2(name, std::string(controller.v2_name))) {
        if (controller.v2 == nullptr) {
            return Error(EOPNOTSUPP, cat("cannot set ", name, " limits: cgroup v2 has no ", name,
                                         " controller"));
        }
        return controller.v2(at.v2, request);
    }
    return Error(EOPNOTSUPP, cat("cannot set ", name, " limits: no cgroup hierarchy holds the ",
                                 quoted(name), " controller"));
}

} // namespace

Status Cgroup::create() {
    // Each directory is made straight away (usually none exists: one mkdir each, no stat
    // before or after), and one that exists is checked; only then is anything written to
    // any of them. What this call made is removed again when a directory is refused or
    // cannot be made, so that a refused create leaves nothing behind: the caller only owns
    // (and removes) the cgroups once create() succeeded.
    std::vector<std::string> made;
    struct Settle {
        const std::string* key;
        const std::string* dir;
        bool made;
    };
    std::vector<Settle> to_settle;
    auto undo = [&made](const Error& error) -> Status {
        while (!made.empty()) { // the last made first
            if (::rmdir(made.back().c_str()) != 0 && errno != ENOENT) {
                log::warning(cat("undo a failed create: remove cgroup ", made.back(), ": ",
                                 Error::from_errno("rmdir").message()));
            }
            made.pop_back();
        }
        return error;
    };
    for (const auto& [key, dir] : paths_) {
        if (::mkdir(dir.c_str(), 0755) == 0) {
            made.push_back(dir);
            to_settle.push_back({&key, &dir, true});
        } else if (errno == EEXIST) {
            if (Status usable = check_existing(key, dir); !usable) {
                return undo(usable.error());
            }
            to_settle.push_back({&key, &dir, false});
        } else if (errno == ENOENT) {
            // A parent is missing (cgroupsPath /a/b, no /a yet): made level by level.
            auto chain = make_with_parents(key, dir);
            if (chain ? *chain : is_directory(dir)) { // failed after its mkdir: ours too
                made.push_back(dir);
            }
            if (!chain) {
                return undo(chain.error());
            }
        } else {
            return undo(Error::from_errno(cat("mkdir ", dir)));
        }
    }
    for (const Settle& one : to_settle) {
        if (Status settled = settle_directory(*one.key, *one.dir, one.made); !settled) {
            return undo(settled.error());
        }
    }
    return {};
}

Status Cgroup::apply(const spec::Resources& resources, bool updating) {
    if (empty()) {
        return {};
    }
    files::Places at = files::places_of(paths_);
    controllers::Request request{resources, updating, at.v2_controllers};
    for (const controllers::Controller& controller : controllers::kTable) {
        if (controller.wanted(resources)) {
            MR_TRY(write_controller(at, controller, request));
        }
    }
    return {};
}

namespace {

// A v1 hierarchy's key names its controllers ("memory", or "cpu,cpuacct" where they are
// mounted together).
bool hierarchy_has(const std::string& key, std::string_view controller) {
    if (is_v2_key(key)) {
        return false;
    }
    auto names = fs::split(key, ',');
    return std::find(names.begin(), names.end(), controller) != names.end();
}

} // namespace

Result<Cgroup> Cgroup::for_exec(const std::vector<std::string>& requests) const {
    std::map<std::string, std::string> paths = paths_;
    for (const std::string& request : requests) {
        // "[controller[,controller...]:]path": without controllers, every hierarchy.
        size_t colon = request.find(':');
        std::string sub = colon == std::string::npos ? request : request.substr(colon + 1);
        std::vector<std::string> wanted;
        std::string controllers = colon == std::string::npos ? "" : request.substr(0, colon);
        if (colon != std::string::npos) {
            for (std::string_view name : fs::split(controllers, ',')) {
                if (!name.empty()) {
                    wanted.emplace_back(name);
                }
            }
        }
        // Below the container's own cgroup only: as runc's path.Join(dir, sub) and prefix
        // check, "a/../b" stays below, ".." and "a/../.." leave. The words are runc 1.3.6's
        // ("bad sub cgroup path", from opencontainers/cgroups' AddPid) and, after them, 1.1's,
        // which scripts of either age match.
        int depth = 0;
        for (std::string_view part : fs::split(sub, '/')) {
            depth += part == ".." ? -1 : (part.empty() || part == "." ? 0 : 1);
            if (depth < 0) {
                return Error(EINVAL, cat("--cgroup ", quoted(request), ": bad sub cgroup path: ",
                                         sub, " is not a sub cgroup path"));
            }
        }
        for (const std::string& controller : wanted) {
            if (std::none_of(paths_.begin(), paths_.end(), [&](const auto& entry) {
                    return hierarchy_has(entry.first, controller);
                })) {
                return Error(EINVAL, cat("--cgroup ", quoted(request), ": unknown controller ",
                                         quoted(controller)));
            }
        }
        std::string below = fs::clean_path("/" + sub);
        for (auto& entry : paths) {
            const std::string& key = entry.first;
            bool applies = wanted.empty() ||
                           std::any_of(wanted.begin(), wanted.end(), [&](const std::string& name) {
                               return hierarchy_has(key, name);
                           });
            if (applies) {
                entry.second = below == "/" ? paths_.at(key) : paths_.at(key) + below;
            }
        }
    }
    // A sub-cgroup must exist: exec joins cgroups, it never makes them. runc's words again,
    // which its users match on.
    for (const auto& [key, dir] : paths) {
        if (dir != paths_.at(key) && !files::exists(dir, "cgroup.procs")) {
            return Error(ENOENT, cat("--cgroup: adding pid to cgroups: open ", dir,
                                     "/cgroup.procs: no such file or directory"));
        }
    }
    return Cgroup(std::move(paths));
}

Result<SelfJoin> Cgroup::open_self_join() const {
    SelfJoin joiner;
    for (const auto& [key, dir] : paths_) {
        bool v2 = is_v2_key(key);
        std::string file = dir + (v2 ? "/cgroup.procs" : "/tasks");
        UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
        if (!fd) {
            return Error::from_errno(cat("open ", file));
        }
        joiner.targets_.push_back({dir, v2, std::move(fd)});
    }
    return joiner;
}

Status SelfJoin::join(bool born_in_v2) {
    for (Target& target : targets_) {
        if ((!born_in_v2 || !target.v2) && ::write(target.file.get(), "0", 1) != 1) {
            return Error::from_errno(cat("join cgroup ", quoted(target.dir)));
        }
        target.file.reset();
    }
    return {};
}

Result<UniqueFd> Cgroup::open_v2_dir() const {
    for (const auto& [key, dir] : paths_) {
        if (is_v2_key(key)) {
            UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!fd) {
                return Error::from_errno(cat("open ", dir));
            }
            return fd;
        }
    }
    return Error(ENOENT, "the container has no cgroup2 directory");
}

} // namespace minirun::runtime::cgroup
