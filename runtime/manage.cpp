// state, kill, delete, list, ps and features: commands on containers that already exist.
#include "cgroup.hpp"
#include "fs.hpp"
#include "hooks.hpp"
#include "lifecycle.hpp"
#include "minirun/log.hpp"
#include "minirun/runtime.hpp"
#include "mount.hpp"
#include "mount_options.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <nlohmann/json.hpp>

namespace minirun {
namespace runtime {
namespace {

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

pid_t parent_of(pid_t pid) {
    auto stat = fs::read_file(cat("/proc/", pid, "/stat"));
    if (!stat) {
        return 0;
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    size_t close = stat->rfind(')');
    if (close == std::string::npos || close + 4 >= stat->size()) {
        return 0;
    }
    std::string_view rest = std::string_view(*stat).substr(close + 4);
    pid_t parent = 0;
    std::from_chars(rest.data(), rest.data() + rest.size(), parent);
    return parent;
}

long pidfd_open(pid_t pid) {
    return ::syscall(SYS_pidfd_open, pid, 0);
}

// A pidfd for the recorded init, or ESRCH if the pid is gone or was reused.
Result<UniqueFd> open_init(const state::Record& record) {
    UniqueFd pidfd(static_cast<int>(pidfd_open(record.pid)));
    if (!pidfd) {
        return Error::from_errno("container not running");
    }
    // Checked after taking the pidfd: from here on it can only ever mean this process.
    auto started = state::process_start_time(record.pid);
    if (!started || *started != record.pid_start_time) {
        return Error(ESRCH, "container not running");
    }
    return pidfd;
}

} // namespace

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

std::vector<pid_t> processes_of(const state::Record& record) {
    std::vector<pid_t> pids;
    bool init_alive = record.pid > 0 && state::process_start_time(record.pid).ok();
    if (init_alive) {
        pids.push_back(record.pid);
    }
    // The cgroups hold exactly the container's processes, whatever namespaces it shares,
    // and also those its init left behind when it died.
    if (!record.cgroup_paths.empty()) {
        auto members = cgroup::Cgroup::from_paths(record.cgroup_paths).pids();
        if (members) {
            for (pid_t pid : *members) {
                if (pid != record.pid) {
                    pids.push_back(pid);
                }
            }
            return pids;
        }
    }
    if (!init_alive) {
        return pids;
    }
    ino_t container_ns = pid_namespace_of(record.pid);
    bool own_namespace = container_ns != 0 && container_ns != pid_namespace_of(::getpid());
    std::vector<pid_t> candidates = all_pids();
    if (own_namespace) {
        for (pid_t pid : candidates) {
            if (pid != record.pid && pid_namespace_of(pid) == container_ns) {
                pids.push_back(pid);
            }
        }
        return pids;
    }
    // Sharing the host's PID namespace, the container is the init's process tree.
    for (size_t added = 1; added != 0;) {
        added = 0;
        for (pid_t pid : candidates) {
            if (std::find(pids.begin(), pids.end(), pid) == pids.end() &&
                std::find(pids.begin(), pids.end(), parent_of(pid)) != pids.end()) {
                pids.push_back(pid);
                ++added;
            }
        }
    }
    return pids;
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
    ::syscall(SYS_pidfd_send_signal, pidfd->get(), SIGKILL, nullptr, 0);
    // In a cgroup shared with others, only the init is ours to end (its PID namespace, if
    // it has one, takes its descendants along).
    if (!record.cgroup_shared) {
        for (pid_t pid : processes_of(record)) {
            if (pid != record.pid) {
                ::kill(pid, SIGKILL);
            }
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

Status destroy(Opened& container, const spec::Spec& spec, bool force) {
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
    // A container without a mount namespace left its mounts in ours (mount_host.cpp).
    MR_TRY_WRAP(mount::undo_host_mounts(container.dir.path()),
                cat("delete container ", quoted(container.record.id)));
    std::string state = state::oci_state_json(container.record, state::Status::stopped);
    if (auto hooks = hooks::run_hooks("poststop", spec.hooks.poststop, state); !hooks) {
        log::warning(hooks.error().message());
    }
    return container.dir.remove();
}

} // namespace runtime

Result<std::string> container_state(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id, runtime::Access::read));
    return state::oci_state_json(container.record, container.status);
}

Status kill_container(const std::string& root, const std::string& id, int signal, bool all) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id));
    bool alive =
        container.status != state::Status::stopped && container.status != state::Status::creating;
    if (all) {
        // Also for a stopped container: whatever its init left behind is still its own.
        for (pid_t pid : runtime::processes_of(container.record)) {
            if (pid != container.record.pid) {
                ::kill(pid, signal);
            }
        }
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
    auto container = runtime::open_container(root, id);
    if (!container) {
        // runc and crun: --force on an unknown container succeeds.
        if (force && container.error().errno_value() == ENOENT) {
            if (auto dir = state::StateDir::open(root, id)) {
                (void)dir->remove(); // a create that died before writing its state
            }
            return {};
        }
        return container.error();
    }
    auto spec = runtime::saved_spec(container->dir);
    return runtime::destroy(*container, spec ? *spec : spec::Spec{}, force);
}

Result<spec::Process> container_process(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id, runtime::Access::read));
    MR_ASSIGN(spec::Spec spec, runtime::saved_spec(container.dir));
    if (!spec.process) {
        return Error(EINVAL, cat("container ", quoted(id), " has no process"));
    }
    return *spec.process;
}

Result<std::vector<ContainerSummary>> list_containers(const std::string& root) {
    MR_ASSIGN(std::vector<std::string> ids, state::list_ids(root));
    std::vector<ContainerSummary> out;
    for (const std::string& id : ids) {
        auto dir = state::StateDir::open(root, id);
        if (!dir) {
            continue;
        }
        auto record = dir->load();
        if (!record) {
            continue; // being created or deleted right now
        }
        state::Status status = dir->status_of(*record);
        out.push_back({id, status == state::Status::stopped ? 0 : record->pid,
                       std::string(state::status_name(status)), record->bundle, record->created,
                       record->owner});
    }
    return out;
}

Result<std::string> list_containers_json(const std::string& root) {
    MR_ASSIGN(std::vector<std::string> ids, state::list_ids(root));
    std::string out = "[";
    for (const std::string& id : ids) {
        auto dir = state::StateDir::open(root, id);
        auto record = dir ? dir->load() : Result<state::Record>(dir.error());
        if (record) {
            out += out.size() > 1 ? "," : "";
            out += state::list_entry_json(*record, dir->status_of(*record));
        }
    }
    return out + "]";
}

Result<std::vector<pid_t>> container_pids(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id, runtime::Access::read));
    return runtime::processes_of(container.record);
}

std::string features_json() {
    nlohmann::ordered_json features;
    features["ociVersionMin"] = "1.0.0";
    features["ociVersionMax"] = kSpecVersion;
    features["hooks"] = {"prestart",       "createRuntime", "createContainer",
                         "startContainer", "poststart",     "poststop"};
    features["mountOptions"] = runtime::known_mount_options();
    nlohmann::ordered_json linux;
    linux["namespaces"] = {"cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts"};
    std::vector<std::string> capabilities;
    for (cap_value_t cap = 0; cap <= CAP_LAST_CAP; ++cap) {
        char* name = cap_to_name(cap);
        if (name != nullptr) {
            std::string upper = name;
            cap_free(name);
            std::transform(upper.begin(), upper.end(), upper.begin(),
                           [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
            capabilities.push_back(upper);
        }
    }
    linux["capabilities"] = capabilities;
    linux["cgroup"] = {{"v1", true}, {"v2", true}, {"systemd", false}, {"systemdUser", false}};
    nlohmann::ordered_json seccomp;
    seccomp["enabled"] = true;
    seccomp["actions"] = {"SCMP_ACT_ALLOW",        "SCMP_ACT_ERRNO",       "SCMP_ACT_KILL",
                          "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",
                          "SCMP_ACT_NOTIFY",       "SCMP_ACT_TRACE",       "SCMP_ACT_TRAP"};
    seccomp["operators"] = {"SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT",       "SCMP_CMP_LE",
                            "SCMP_CMP_LT", "SCMP_CMP_NE", "SCMP_CMP_MASKED_EQ"};
    seccomp["archs"] = {"SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM", "SCMP_ARCH_X86", "SCMP_ARCH_X86_64",
                        "SCMP_ARCH_X32"};
    seccomp["knownFlags"] = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                             "SECCOMP_FILTER_FLAG_SPEC_ALLOW"};
    seccomp["supportedFlags"] = seccomp["knownFlags"];
    linux["seccomp"] = seccomp;
    // Labels are applied when the host has the LSM enabled (and warned about otherwise).
    linux["apparmor"] = {{"enabled", true}};
    linux["selinux"] = {{"enabled", true}};
    features["linux"] = linux;
    features["annotations"] = {{"io.github.mini-run.version", MINIRUN_VERSION}};
    return features.dump(2);
}

} // namespace minirun
