// state, kill, delete, list and ps: commands on containers that already exist.
#include "lifecycle.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/intel_rdt.hpp"
#include "fs.hpp"
#include "minirun/log.hpp"
#include "minirun/rootless.hpp"
#include "minirun/runtime.hpp"
#include "mount/mount.hpp"
#include "mountinfo.hpp"
#include "process/hooks.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <map>
#include <optional>
#include <set>

namespace minirun {
namespace runtime {
namespace {

// The poststop hooks are in the saved config: without it they cannot run, which is said
// (delete goes on, as it does when a poststop hook fails).
void warn_poststop_not_run(const std::string& id, const Error& why) {
    log::warning(cat("container ", quoted(id),
                     ": poststop hooks not run: its saved config cannot be read: ", why.message()));
}

// The inode of a process's PID namespace, 0 if it is gone.
ino_t pid_namespace_of(pid_t pid) {
    struct stat info {};
    if (::stat(cat("/proc/", pid, "/ns/pid").c_str(), &info) < 0) {
        return 0;
    }
    return info.st_ino;
}

// Every numeric entry of /proc.
std::vector<pid_t> all_pids() {
    std::vector<pid_t> pids;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) {
        return pids;
    }
    while (dirent* entry = ::readdir(proc)) {
        pid_t pid = 0;
        std::string_view name = entry->d_name;
        auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
        if (ec == std::errc() && end == name.data() + name.size()) {
            pids.push_back(pid);
        }
    }
    ::closedir(proc);
    return pids;
}

// A process's parent and start time, from one read of /proc/<pid>/stat, so that both
// describe the same process.
struct StatFields {
    pid_t parent = 0;
    uint64_t start_time = 0;
};

std::optional<StatFields> stat_fields(pid_t pid) {
    auto stat = fs::read_file(cat("/proc/", pid, "/stat"));
    if (!stat) {
        return std::nullopt;
    }
    // "pid (comm) state ppid ... starttime(22) ...": comm may hold spaces and parentheses.
    size_t close = stat->rfind(')');
    if (close == std::string::npos || close + 2 >= stat->size()) {
        return std::nullopt;
    }
    std::vector<std::string_view> fields =
        fs::split(std::string_view(*stat).substr(close + 2), ' ');
    // fields[0] is field 3 (state), so field N is fields[N - 3].
    constexpr size_t kParent = 4 - 3;
    constexpr size_t kStartTime = 22 - 3;
    if (fields.size() <= kStartTime || fields[0] == "Z" || fields[0] == "X" || fields[0] == "x") {
        return std::nullopt;
    }
    StatFields out;
    auto parse = [](std::string_view text, auto& value) {
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        return ec == std::errc() && end == text.data() + text.size();
    };
    if (!parse(fields[kParent], out.parent) || !parse(fields[kStartTime], out.start_time)) {
        return std::nullopt;
    }
    return out;
}

long pidfd_open(pid_t pid) {
    return ::syscall(SYS_pidfd_open, pid, 0);
}

// True while the process of a pidfd has not exited: its pidfd turns readable at the exit.
bool still_alive(const UniqueFd& pidfd) {
    pollfd entry{pidfd.get(), POLLIN, 0};
    int ready = 0;
    do {
        ready = ::poll(&entry, 1, 0);
    } while (ready < 0 && errno == EINTR);
    return ready == 0;
}

// A pidfd for the recorded init, or ESRCH if the pid is gone or was reused.
Result<UniqueFd> open_init(const state::Record& record) {
    auto pidfd = open_process({record.pid, record.pid_start_time});
    if (!pidfd) {
        return Error(ESRCH, "container not running");
    }
    return pidfd;
}

// The processes that share the init's PID namespace (not the host's), by a scan of /proc.
// Each one's namespace is read between two reads of its start time: when both agree, the
// namespace was that very process's.
void add_namespace_members(const state::Record& record, ino_t container_ns,
                           std::vector<ProcessRef>& out) {
    for (pid_t pid : all_pids()) {
        if (pid == record.pid || pid_namespace_of(pid) != container_ns) {
            continue;
        }
        auto before = stat_fields(pid);
        if (before && pid_namespace_of(pid) == container_ns) {
            if (auto after = stat_fields(pid); after && after->start_time == before->start_time) {
                out.push_back({pid, before->start_time});
            }
        }
    }
}

// The init's descendants, for a container in the host's PID namespace without cgroups: its
// process tree is all there is to go by. /proc is read once, each process's parent and
// start time from the same read.
void add_descendants(const state::Record& record, std::vector<ProcessRef>& out) {
    std::map<pid_t, StatFields> table;
    for (pid_t pid : all_pids()) {
        if (auto fields = stat_fields(pid)) {
            table.emplace(pid, *fields);
        }
    }
    std::set<pid_t> members = {record.pid};
    for (size_t added = 1; added != 0;) {
        added = 0;
        for (const auto& [pid, fields] : table) {
            if (!members.contains(pid) && members.contains(fields.parent)) {
                members.insert(pid);
                out.push_back({pid, fields.start_time});
                ++added;
            }
        }
    }
}

} // namespace

Result<UniqueFd> open_process(const ProcessRef& process) {
    if (process.pid <= 0) {
        return Error(ESRCH, cat("no process ", process.pid));
    }
    UniqueFd pidfd(static_cast<int>(pidfd_open(process.pid)));
    if (!pidfd) {
        return Error::from_errno(cat("process ", process.pid));
    }
    // Checked after taking the pidfd: if the pid still has the start time now, the pidfd
    // was taken on that very process, and from here on it can only ever mean it.
    auto started = state::process_start_time(process.pid);
    if (!started || *started != process.start_time) {
        return Error(ESRCH, cat("process ", process.pid, " has exited (its pid is reused)"));
    }
    return pidfd;
}

Status signal_process(const ProcessRef& process, int signal) {
    MR_ASSIGN(UniqueFd pidfd, open_process(process));
    if (::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0) < 0) {
        return Error::from_errno(cat("signal process ", process.pid));
    }
    return {};
}

Result<Opened> open_container(const std::string& root, const std::string& id, Access access) {
    MR_TRY(validate_container_id(id));
    Opened opened;
    MR_ASSIGN(opened.dir, state::StateDir::open(root, id));
    // Readers do not wait for a lock: state.json is replaced by rename, never half written.
    if (access == Access::change) {
        MR_TRY(opened.dir.lock());
    }
    MR_ASSIGN(opened.record, opened.dir.load());
    opened.status = opened.dir.status_of(opened.record);
    return opened;
}

Result<spec::Spec> saved_spec(const state::StateDir& dir) {
    MR_ASSIGN(std::string text, dir.load_config());
    return spec::parse_spec(text, dir.path() + "/config.json");
}

Result<spec::Spec> saved_spec_for(const state::StateDir& dir,
                                  std::initializer_list<std::string_view> keys) {
    MR_ASSIGN(std::string text, dir.load_config());
    // A text cut short (damaged: every config here is written whole and renamed into place)
    // may have lost what it named: parsed, so that the damage is reported.
    std::string_view whole = text;
    whole.remove_suffix(whole.size() - (whole.find_last_not_of(" \t\r\n") + 1));
    bool complete = whole.starts_with('{') && whole.ends_with('}');
    bool named = text.find("\\u") != std::string::npos ||
                 std::any_of(keys.begin(), keys.end(), [&](std::string_view key) {
                     return text.find(cat("\"", key, "\"")) != std::string::npos;
                 });
    if (complete && !named) {
        return spec::Spec{};
    }
    return spec::parse_spec(text, dir.path() + "/config.json");
}

Status write_pid_file(const std::string& path, pid_t pid) {
    std::string temporary = cat(path, ".", ::getpid(), ".tmp");
    UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) {
        return Error::from_errno(cat("--pid-file ", quoted(path)));
    }
    std::string text = std::to_string(pid);
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::rename(temporary.c_str(), path.c_str()) < 0) {
        auto error = Error::from_errno(cat("--pid-file ", quoted(path)));
        ::unlink(temporary.c_str());
        return error;
    }
    return {};
}

std::vector<ProcessRef> processes_of(const state::Record& record) {
    std::vector<ProcessRef> out;
    // Only while the recorded pid still names the init: a reused pid is a stranger's, and
    // so are its children and its namespace.
    auto init = open_init(record);
    if (init) {
        out.push_back({record.pid, record.pid_start_time});
    }
    // The cgroups hold exactly the container's processes, whatever namespaces it shares,
    // and also those its init left behind when it died.
    if (!record.cgroup_paths.empty()) {
        auto members = cgroup::Cgroup::from_paths(record.cgroup_paths).pids();
        if (members) {
            for (pid_t pid : *members) {
                if (init && pid == record.pid) {
                    continue;
                }
                if (auto start_time = state::process_start_time(pid)) {
                    out.push_back({pid, *start_time});
                }
            }
            return out;
        }
    }
    if (!init) {
        return out;
    }
    ino_t container_ns = pid_namespace_of(record.pid);
    if (container_ns != 0 && container_ns != pid_namespace_of(::getpid())) {
        add_namespace_members(record, container_ns, out);
    } else {
        add_descendants(record, out);
    }
    // What was read by pid above is the init's only if the init lived throughout: then no
    // other process can have had its pid meanwhile.
    if (!still_alive(*init)) {
        return {};
    }
    return out;
}

Status signal_init(const state::Record& record, int signal) {
    MR_ASSIGN(UniqueFd pidfd, open_init(record));
    if (::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0) < 0) {
        return Error::from_errno(errno == ESRCH ? "container not running" : "kill");
    }
    return {};
}

Status kill_all_and_wait(const state::Record& record) {
    auto pidfd = open_init(record);
    if (!pidfd) {
        return {}; // already gone
    }
    // Listed before the init dies: without cgroups or a PID namespace of its own, its
    // children are found as its children, which they stop being when it is gone. In a
    // cgroup shared with others, only the init is ours to end (its PID namespace, if it
    // has one, takes its descendants along).
    std::vector<ProcessRef> others;
    if (!record.cgroup_shared) {
        others = processes_of(record);
    }
    ::syscall(SYS_pidfd_send_signal, pidfd->get(), SIGKILL, nullptr, 0);
    for (const ProcessRef& process : others) {
        if (process.pid != record.pid) {
            (void)signal_process(process, SIGKILL); // ESRCH: it exited meanwhile
        }
    }
    // A pidfd becomes readable when its process exits, even if we are not its parent.
    // When the init of a PID namespace exits, the kernel has already killed the rest.
    pollfd entry{pidfd->get(), POLLIN, 0};
    constexpr int kTimeoutMs = 10000;
    int ready = 0;
    do {
        ready = ::poll(&entry, 1, kTimeoutMs);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
        return Error(ETIMEDOUT,
                     cat("container ", quoted(record.id), " did not exit after SIGKILL"));
    }
    return {};
}

Status destroy(Opened& container, const spec::Spec& spec, bool force, const Error* spec_unread) {
    if (container.status != state::Status::stopped) {
        // A created container never ran the user's process: like runc, delete just ends it.
        if (!force && container.status != state::Status::created) {
            return Error(EBUSY,
                         cat("cannot delete container ", quoted(container.record.id),
                             " that is not stopped: ", state::status_name(container.status)));
        }
        // Frozen processes would not act on SIGKILL before they are thawed.
        if (container.status == state::Status::paused) {
            MR_TRY(cgroup::Cgroup::from_paths(container.record.cgroup_paths).thaw());
        }
        MR_TRY(kill_all_and_wait(container.record));
    }
    // Also kills what the init left behind in them (cgroup.cpp); a cgroup shared with
    // others at create is theirs as much as ours: left to them while they run.
    auto cgroup = cgroup::Cgroup::from_paths(container.record.cgroup_paths);
    MR_TRY_WRAP(container.record.cgroup_shared ? cgroup.remove_if_unused() : cgroup.remove(),
                cat("delete container ", quoted(container.record.id), ": remove its cgroups"));
    MR_TRY_WRAP(intel_rdt::remove_for_delete(spec.linux.intel_rdt, container.record.id),
                cat("delete container ", quoted(container.record.id)));
    // A container without a mount namespace left its mounts in ours (mount_host.cpp).
    MR_TRY_WRAP(mount::undo_host_mounts(container.dir.path()),
                cat("delete container ", quoted(container.record.id)));
    if (spec_unread != nullptr) {
        warn_poststop_not_run(container.record.id, *spec_unread);
    }
    if (!spec.hooks.poststop.empty()) {
        std::string state = state::oci_state_json(container.record, state::Status::stopped);
        (void)hooks::run_hooks_warning("poststop", spec.hooks.poststop, state);
    }
    return container.dir.remove();
}

namespace {

// A directory strictly below one of the host's cgroup mounts, named without "." or "..":
// the only kind a record of ours holds. A damaged file may say anything; nothing else it
// names is ever killed in or removed.
bool inside_a_hierarchy(const cgroup::Host& host, const std::string& dir) {
    if (dir != fs::clean_path(dir)) {
        return false;
    }
    return std::any_of(host.hierarchies.begin(), host.hierarchies.end(), [&](const auto& h) {
        return dir.size() > h.mount_point.size() + 1 && dir.starts_with(h.mount_point) &&
               dir[h.mount_point.size()] == '/';
    });
}

bool cgroups_plausible(const state::Record& record) {
    if (record.cgroup_paths.empty()) {
        return true;
    }
    auto host = cgroup::detect_host();
    return host &&
           std::all_of(record.cgroup_paths.begin(), record.cgroup_paths.end(),
                       [&](const auto& entry) { return inside_a_hierarchy(*host, entry.second); });
}

// Without recovery.json (a state directory of an older mini-run, or that file damaged too),
// the cgroups are found the way create found them, from the id and the saved config. Whether
// create found one in use and shared it was recorded in those files only: the default
// "/<id>" may be a cgroup of the host's (an id such as "system.slice"), so it is treated as
// an explicit absolute one is, only removed if nothing is left in it. Relative and systemd
// paths depended on the creator's cgroup and flags: not guessed.
state::Record record_from_config(const state::StateDir& dir, const spec::Spec* spec) {
    state::Record record;
    record.id = dir.id();
    if (spec == nullptr) {
        log::warning(cat("container ", quoted(dir.id()),
                         ": no readable config.json either: its cgroups cannot be found"));
        return record;
    }
    record.oci_version = spec->oci_version;
    record.annotations = spec->annotations;
    const std::string& path = spec->linux.cgroups_path;
    if (rootless::active()) {
        return record; // cgroups, if any, are in state.json: none to guess
    }
    if (!path.empty() && !path.starts_with('/')) {
        log::warning(cat("container ", quoted(dir.id()), ": linux.cgroupsPath ", quoted(path),
                         " is relative to its creator's cgroup: its cgroups are left alone"));
        return record;
    }
    auto host = cgroup::detect_host();
    auto relative = cgroup::resolve_path(path, dir.id(), false, "/");
    if (!host || !relative) {
        return record;
    }
    record.cgroup_paths = cgroup::Cgroup::for_path(*host, *relative).paths();
    record.cgroup_shared = true;
    log::warning(cat("container ", quoted(dir.id()), ": its cgroup ", quoted(*relative),
                     " may be shared with others: removed only if nothing is left in it"));
    return record;
}

} // namespace

Status destroy_damaged(state::StateDir& dir, const Error& damage) {
    log::warning(cat(damage.message(), "; deleting the container from what else is recorded"));
    auto spec = saved_spec(dir);
    state::Record record;
    bool complete = false; // bundle and all: the poststop hooks can be given the state
    if (auto saved = dir.load_recovery(); saved && cgroups_plausible(*saved)) {
        record = std::move(*saved);
        complete = true;
    } else {
        if (!saved && saved.error().errno_value() != ENOENT) {
            log::warning(saved.error().message());
        } else if (saved) {
            log::warning(cat("container ", quoted(dir.id()),
                             ": recovery.json names cgroups outside the cgroup hierarchies"));
        }
        record = record_from_config(dir, spec ? &*spec : nullptr);
    }
    // Whether it was paused is not known: frozen processes would not act on SIGKILL.
    auto cgroup = cgroup::Cgroup::from_paths(record.cgroup_paths);
    if (auto frozen = cgroup.frozen(); frozen && *frozen) {
        MR_TRY_WRAP(cgroup.thaw(), cat("delete container ", quoted(dir.id())));
    }
    spec::Spec hooks;
    if (complete && spec) {
        hooks = *spec;
    } else if (spec && !spec->hooks.poststop.empty()) {
        log::warning(cat("container ", quoted(dir.id()),
                         ": poststop hooks not run: its bundle is not known"));
    }
    Opened container{std::move(dir), std::move(record), state::Status::stopped};
    container.status = container.dir.status_of(container.record);
    return destroy(container, hooks, true, spec ? nullptr : &spec.error());
}

} // namespace runtime

Result<std::string> container_state(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id, runtime::Access::read));
    return state::oci_state_json(container.record, container.status);
}

namespace {

// runc 1.3's Container.Signal: SIGKILL to a container without a PID namespace of its own
// kills every process in its cgroups, also once its init is gone (the container is then
// stopped, but what the init left there is still the container's: kill.bats "kill KILL
// [host pidns + init gone]"). With its own PID namespace the kernel does that when the
// init dies. runc tests the config's namespace list, a joined PID namespace counting as
// its own (IsPrivate), and so do we.
bool kills_every_process(const runtime::Opened& container, int signal) {
    if (signal != SIGKILL) {
        return false;
    }
    auto spec = runtime::saved_spec_for(container.dir, {"namespaces"});
    if (!spec) {
        return false; // a damaged config: the init alone, as before
    }
    return std::none_of(
        spec->linux.namespaces.begin(), spec->linux.namespaces.end(),
        [](const spec::Namespace& ns) { return ns.type == spec::NamespaceType::pid; });
}

// Each process of the container but a live init, with the cgroups frozen meanwhile where
// they can be (runc's signalAllProcesses): a process forked between the listing and the
// signals would otherwise escape. A paused container stays frozen.
void signal_all_but_init(const runtime::Opened& container, int signal, bool alive) {
    std::optional<runtime::cgroup::Cgroup> frozen;
    if (!container.record.cgroup_paths.empty() && container.status != state::Status::paused) {
        auto cgroup = runtime::cgroup::Cgroup::from_paths(container.record.cgroup_paths);
        if (cgroup.freeze()) {
            frozen.emplace(std::move(cgroup));
        }
    }
    for (const runtime::ProcessRef& process : runtime::processes_of(container.record)) {
        if (process.pid != container.record.pid || !alive) {
            (void)runtime::signal_process(process, signal); // ESRCH: exited meanwhile
        }
    }
    if (frozen) {
        (void)frozen->thaw();
    }
}

} // namespace

Status kill_container(const std::string& root, const std::string& id, int signal, bool all) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id));
    bool alive =
        container.status != state::Status::stopped && container.status != state::Status::creating;
    if (all || kills_every_process(container, signal)) {
        // Also for a stopped container: whatever its init left behind in its cgroups is still
        // its own. Without cgroups a stopped container has nothing left to find (runc 1.1:
        // "stopped and no cgroup" is success); the recorded pid is never used then.
        signal_all_but_init(container, signal, alive);
        if (!alive) {
            return {};
        }
    }
    if (!alive) {
        return Error(ESRCH, cat("container ", quoted(id), ": container not running"));
    }
    MR_TRY_WRAP(runtime::signal_init(container.record, signal), cat("container ", quoted(id)));
    return {};
}

Status delete_container(const std::string& root, const std::string& id, bool force) {
    MR_TRY(validate_container_id(id));
    auto dir = state::StateDir::open(root, id);
    if (!dir) {
        // runc and crun: --force on an unknown container succeeds.
        return force && dir.error().errno_value() == ENOENT ? Status() : Status(dir.error());
    }
    MR_TRY(dir->lock());
    auto record = dir->load();
    if (!record) {
        int failure = record.error().errno_value();
        if (force && failure == ENOENT) {
            return dir->remove(); // a create that died before writing its state
        }
        if (force && failure == state::kCorrupt) {
            return runtime::destroy_damaged(*dir, record.error());
        }
        if (failure == state::kCorrupt) {
            return record.error().wrap(
                cat("cannot delete container ", quoted(id), " (use --force)"));
        }
        return record.error();
    }
    if (force && record->pid == 0) {
        // A create that died before it recorded its init (we hold the lock: it is gone)
        // may have left it running; without cgroups to find it by, recovery.json has its
        // pid from right after the clone (create.cpp, clone_the_init).
        if (auto saved = dir->load_recovery(); saved && saved->pid != 0) {
            record->pid = saved->pid;
            record->pid_start_time = saved->pid_start_time;
        }
    }
    runtime::Opened container{std::move(*dir), std::move(*record), state::Status::stopped};
    container.status = container.dir.status_of(container.record);
    auto spec = runtime::saved_spec_for(container.dir, {"poststop", "intelRdt"});
    return runtime::destroy(container, spec ? *spec : spec::Spec{}, force,
                            spec ? nullptr : &spec.error());
}

} // namespace minirun
