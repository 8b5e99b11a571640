// The container's cgroup: its directories in every hierarchy, made, limited, entered,
// frozen, counted and removed. Which file a limit goes to is in cgroup_v1.cpp and
// cgroup_v2.cpp; this file decides which directory handles which controller.
#include "cgroup.hpp"
#include "cgroup_devices.hpp"
#include "cgroup_files.hpp"
#include "fs.hpp"
#include "minirun/log.hpp"
#include "mountinfo.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

namespace minirun::runtime::cgroup {

namespace files {

bool exists(const std::string& dir, const std::string& name) {
    struct stat info {};
    return ::stat(cat(dir, "/", name).c_str(), &info) == 0;
}

Status write(const std::string& dir, const std::string& name, std::string_view value) {
    std::string path = cat(dir, "/", name);
    // O_TRUNC matters only for plain files (tests); cgroupfs ignores it. One write(2) per
    // value: the kernel parses each write as a whole.
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", path));
    }
    ssize_t written = ::write(fd.get(), value.data(), value.size());
    if (written < 0) {
        return Error::from_errno(cat("write ", quoted(value), " to ", path));
    }
    if (static_cast<size_t>(written) != value.size()) {
        return Error(EIO, cat("write ", quoted(value), " to ", path, ": short write"));
    }
    return {};
}

Result<std::string> read(const std::string& dir, const std::string& name) {
    MR_ASSIGN(std::string text, fs::read_file(cat(dir, "/", name)));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.pop_back();
    }
    return text;
}

Result<uint64_t> read_uint(const std::string& dir, const std::string& name) {
    MR_ASSIGN(std::string text, read(dir, name));
    if (text == "max") {
        return UINT64_MAX;
    }
    uint64_t value = 0;
    auto [end, failure] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (failure != std::errc() || end != text.data() + text.size()) {
        return Error(EINVAL, cat(dir, "/", name, ": not a number: ", quoted(text)));
    }
    return value;
}

std::map<std::string, uint64_t> key_values(std::string_view text) {
    std::map<std::string, uint64_t> out;
    for (std::string_view line : fs::split(text, '\n')) {
        size_t space = line.find(' ');
        if (space == std::string_view::npos) {
            continue;
        }
        std::string_view number = line.substr(space + 1);
        uint64_t value = 0;
        auto [end, failure] = std::from_chars(number.data(), number.data() + number.size(), value);
        if (failure == std::errc() && end == number.data() + number.size()) {
            out[std::string(line.substr(0, space))] = value;
        }
    }
    return out;
}

std::set<std::string> words(std::string_view text) {
    std::set<std::string> out;
    for (std::string_view word : fs::split_words(text)) {
        out.emplace(word);
    }
    return out;
}

bool parse_uint(std::string_view text, uint64_t& value) {
    auto [end, failure] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && failure == std::errc() && end == text.data() + text.size();
}

uint64_t uint_or_zero(const std::string& dir, const std::string& name) {
    auto value = read_uint(dir, name);
    return value ? *value : 0;
}

Status write_supported(const std::string& dir, const std::string& name, std::string_view value,
                       std::string_view field) {
    if (!exists(dir, name)) {
        return Error(ENOTSUP,
                     cat(field, ": cannot be applied: this kernel has no ", name, " in ", dir));
    }
    return write(dir, name, value);
}

Status check_page_size(const std::string& size) {
    if (size.empty() || size.find('/') != std::string::npos || size.starts_with('.')) {
        return Error(EINVAL, cat("hugepage limit: invalid page size ", quoted(size)));
    }
    return {};
}

Status check_usage(const std::string& dir, const std::string& usage_file,
                   const spec::MemoryResources& memory, bool updating) {
    if (!updating || !memory.check_before_update.value_or(false) || memory.limit.value_or(0) <= 0) {
        return {};
    }
    MR_ASSIGN(uint64_t usage, read_uint(dir, usage_file));
    if (static_cast<uint64_t>(*memory.limit) < usage) {
        return Error(EBUSY, cat("rejecting memory limit ", *memory.limit,
                                " below the current usage ", usage));
    }
    return {};
}

void set_nonzero(nlohmann::json& out, const char* name, uint64_t value) {
    if (value != 0) {
        out[name] = value;
    }
}

nlohmann::json memory_entry(uint64_t usage, uint64_t max, uint64_t failcnt, uint64_t limit) {
    nlohmann::json entry = {{"limit", limit}, {"failcnt", failcnt}};
    set_nonzero(entry, "usage", usage);
    set_nonzero(entry, "max", max);
    return entry;
}

std::string Places::v1_dir(const std::string& controller) const {
    auto found = v1.find(controller);
    return found == v1.end() ? std::string() : found->second;
}

bool Places::in_v2(const std::string& v1_controller, const std::string& v2_controller) const {
    if (v2.empty()) {
        return false;
    }
    if (unified_host) {
        return true;
    }
    return !v1.contains(v1_controller) && v2_controllers.contains(v2_controller);
}

Places places_of(const std::map<std::string, std::string>& paths) {
    Places places;
    for (const auto& [key, dir] : paths) {
        if (key.empty() || key == "unified") {
            places.v2 = dir;
            places.unified_host = key.empty();
            continue;
        }
        // The key is the mount point's name, which lists the hierarchy's controllers.
        for (std::string_view controller : fs::split(key, ',')) {
            places.v1.emplace(controller, dir);
        }
    }
    if (!places.v2.empty()) {
        if (auto text = read(places.v2, "cgroup.controllers")) {
            places.v2_controllers = words(*text);
        }
    }
    return places;
}

} // namespace files

namespace {

using namespace std::chrono_literals;

bool is_v2_key(const std::string& key) {
    return key.empty() || key == "unified";
}

bool is_directory(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::vector<std::string> subdirectories(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        std::error_code type_error;
        if (entry.is_directory(type_error) && !entry.is_symlink(type_error)) {
            out.push_back(entry.path().string());
        }
    }
    return out;
}

// cgroup.procs of `dir` and of every cgroup below it: the container may have made
// sub-cgroups of its own (systemd in a container does).
Status collect_pids(const std::string& dir, std::vector<pid_t>& out) {
    auto text = files::read(dir, "cgroup.procs");
    if (!text) {
        // A cgroup removed under us holds nothing.
        return text.error().errno_value() == ENOENT ? Status() : Status(text.error());
    }
    for (std::string_view line : fs::split(*text, '\n')) {
        pid_t pid = 0;
        auto [end, failure] = std::from_chars(line.data(), line.data() + line.size(), pid);
        if (failure == std::errc() && end == line.data() + line.size() && pid > 0) {
            out.push_back(pid);
        }
    }
    for (const auto& child : subdirectories(dir)) {
        MR_TRY(collect_pids(child, out));
    }
    return {};
}

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
            if (auto done = files::write(level, "cgroup.subtree_control", cat("+", controller));
                !done) {
                log::debug(cat("cgroup: controller ", controller,
                               " not enabled: ", done.error().message()));
            }
        }
    }
}

// A hierarchy's root holds the whole host: nothing here may ever kill or remove there.
// A cgroup directory's parent is a cgroup directory too; a root's is not.
bool is_hierarchy_root(const std::string& dir) {
    return !files::exists(fs::split_parent(dir).first, "cgroup.procs");
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

// An existing cgroup may be reused (runc allows it), but not a frozen one: joining it would
// hang the container's init. One that holds processes already is shared with them (runc
// warns and goes on, and so do we: the caller is told how many there are).
Result<size_t> processes_in_existing(const std::string& key, const std::string& dir) {
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
    std::vector<pid_t> pids;
    MR_TRY(collect_pids(dir, pids));
    return pids.size();
}

Status make_directory_once(const std::string& key, const std::string& dir) {
    bool cpuset = files::places_of({{key, dir}}).v1.contains("cpuset");
    // Usually only the last level is missing: one mkdir, no walk.
    const bool made = ::mkdir(dir.c_str(), 0755) == 0;
    if (made || errno == EEXIST) {
        if (cpuset && made) {
            MR_TRY_WRAP(copy_cpuset_from_parent(dir), cat("cgroup ", quoted(dir)));
        }
        if (is_v2_key(key)) {
            enable_v2_controllers(dir);
        }
        return {};
    }
    if (errno != ENOENT) {
        return Error::from_errno(cat("mkdir ", dir));
    }
    std::vector<std::string> missing;
    for (std::string level = dir; !is_directory(level); level = fs::split_parent(level).first) {
        if (level == "/" || level == ".") {
            break;
        }
        missing.insert(missing.begin(), level);
    }
    for (const auto& level : missing) {
        if (::mkdir(level.c_str(), 0755) != 0 && errno != EEXIST) {
            return Error::from_errno(cat("mkdir ", level));
        }
        if (cpuset) {
            MR_TRY_WRAP(copy_cpuset_from_parent(level), cat("cgroup ", quoted(level)));
        }
    }
    if (is_v2_key(key)) {
        enable_v2_controllers(dir);
    }
    return {};
}

// A delete elsewhere may remove the shared default parent just after we saw it (see
// remove()): the mkdir below it then fails with ENOENT, and the chain is made again.
Status make_directory(const std::string& key, const std::string& dir) {
    constexpr int kAttempts = 5;
    for (int attempt = 1;; ++attempt) {
        Status made = make_directory_once(key, dir);
        if (made || made.error().errno_value() != ENOENT || attempt == kAttempts) {
            return made;
        }
    }
}

// rmdir succeeds on a cgroup directory with its interface files still in it (the kernel
// owns them) but not with sub-cgroups, so those go first. EBUSY means tasks are still
// leaving (a killed task leaves its cgroup only when it has fully exited).
Status remove_tree(const std::string& dir) {
    // Usually there is nothing below: one rmdir, no listing.
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) {
        return {};
    }
    for (const auto& child : subdirectories(dir)) {
        MR_TRY(remove_tree(child));
    }
    constexpr int kAttempts = 100; // with kPause: about 1 s
    constexpr auto kPause = 10ms;
    for (int attempt = 0;; ++attempt) {
        if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) {
            return {};
        }
        if (errno != EBUSY || attempt == kAttempts) {
            return Error::from_errno(cat("remove cgroup ", dir));
        }
        std::this_thread::sleep_for(kPause);
    }
}

Status freeze_v1(const std::string& dir) {
    constexpr int kPolls = 200; // with kPause: about 2 s
    constexpr auto kPause = 10ms;
    std::string state;
    for (int poll = 0; poll < kPolls; ++poll) {
        // A task forking while the freeze is under way can leave the cgroup in FREEZING;
        // writing FROZEN again makes the kernel retry those tasks (runc does the same).
        if (poll % 10 == 0) {
            MR_TRY(files::write(dir, "freezer.state", "FROZEN"));
        }
        MR_ASSIGN(state, files::read(dir, "freezer.state"));
        if (state == "FROZEN") {
            return {};
        }
        std::this_thread::sleep_for(kPause);
    }
    (void)files::write(dir, "freezer.state", "THAWED");
    return Error(EBUSY, cat("freeze cgroup ", dir, ": still ", state, " after 2 s; thawed again"));
}

Status freeze_v2(const std::string& dir) {
    constexpr int kPolls = 200;
    constexpr auto kPause = 10ms;
    MR_TRY(files::write(dir, "cgroup.freeze", "1"));
    // cgroup.freeze is what was asked; cgroup.events' "frozen" says every task got there.
    for (int poll = 0; poll < kPolls; ++poll) {
        MR_ASSIGN(std::string events, files::read(dir, "cgroup.events"));
        if (files::key_values(events)["frozen"] == 1) {
            return {};
        }
        std::this_thread::sleep_for(kPause);
    }
    (void)files::write(dir, "cgroup.freeze", "0");
    return Error(EBUSY, cat("freeze cgroup ", dir, ": not frozen after 2 s; thawed again"));
}

// Where pids are counted: a hierarchy every container process is in.
std::string pids_dir(const files::Places& places, const std::map<std::string, std::string>& paths) {
    if (places.unified_host) {
        return places.v2;
    }
    for (const char* controller : {"freezer", "pids", "memory"}) {
        if (auto dir = places.v1_dir(controller); !dir.empty()) {
            return dir;
        }
    }
    for (const auto& [key, dir] : paths) {
        if (!is_v2_key(key)) {
            return dir;
        }
    }
    return places.v2;
}

} // namespace

Result<size_t> Cgroup::create() {
    // Every directory is checked before any is made, so that a refused create leaves
    // nothing behind.
    size_t found = 0;
    for (const auto& [key, dir] : paths_) {
        if (is_directory(dir)) {
            MR_ASSIGN(size_t here, processes_in_existing(key, dir));
            found = std::max(found, here);
        }
    }
    for (const auto& [key, dir] : paths_) {
        MR_TRY(make_directory(key, dir));
    }
    return found;
}

Status Cgroup::apply(const spec::Resources& resources, bool updating) {
    if (empty()) {
        return {};
    }
    files::Places at = files::places_of(paths_);
    // A controller's values go to its v1 hierarchy, or on a unified host (or a hybrid one
    // whose v1 lacks it) to the cgroup2 directory.
    auto route = [&](const std::string& v1, const std::string& v2, const auto& write_v1,
                     const auto& write_v2) -> Status {
        if (std::string dir = at.v1_dir(v1); !dir.empty() && !at.unified_host) {
            return write_v1(dir);
        }
        if (at.in_v2(v1, v2)) {
            return write_v2(at.v2);
        }
        return Error(EOPNOTSUPP, cat("cannot set ", v1, " limits: no cgroup hierarchy holds the ",
                                     quoted(v1), " controller"));
    };
    auto v1_only = [&](const std::string& v1, const auto& write_v1) -> Status {
        return route(v1, "", write_v1, [&](const std::string&) -> Status {
            return Error(EOPNOTSUPP,
                         cat("cannot set ", v1, " limits: cgroup v2 has no ", v1, " controller"));
        });
    };

    const auto& cpu = resources.cpu;
    if (cpu && (!cpu->cpus.empty() || !cpu->mems.empty())) {
        auto write = [&](const std::string& dir) {
            return files::cpuset(dir, *cpu);
        };
        MR_TRY(route("cpuset", "cpuset", write, write));
    }
    if (!resources.devices.empty()) {
        // On a hybrid host the v1 devices controller decides; a BPF program is a
        // cgroup2-only device filter.
        MR_TRY(route(
            "devices", "",
            [&](const std::string& dir) { return files::devices_v1(dir, resources.devices); },
            [&](const std::string& dir) { return files::devices_v2(dir, resources.devices); }));
    }
    const auto& memory = resources.memory;
    if (memory && (memory->limit || memory->reservation || memory->swap || memory->kernel ||
                   memory->kernel_tcp || memory->swappiness || memory->disable_oom_killer)) {
        MR_TRY(route(
            "memory", "memory",
            [&](const std::string& dir) { return files::memory_v1(dir, *memory, updating); },
            [&](const std::string& dir) { return files::memory_v2(dir, *memory, updating); }));
    }
    if (cpu && (cpu->shares || cpu->quota || cpu->period || cpu->burst || cpu->realtime_runtime ||
                cpu->realtime_period || cpu->idle)) {
        MR_TRY(route(
            "cpu", "cpu", [&](const std::string& dir) { return files::cpu_v1(dir, *cpu); },
            [&](const std::string& dir) { return files::cpu_v2(dir, *cpu); }));
    }
    if (resources.pids) {
        auto write = [&](const std::string& dir) {
            return files::pids(dir, *resources.pids);
        };
        MR_TRY(route("pids", "pids", write, write));
    }
    const auto& block_io = resources.block_io;
    if (block_io &&
        (block_io->weight || block_io->leaf_weight || !block_io->weight_device.empty() ||
         !block_io->throttle_read_bps_device.empty() ||
         !block_io->throttle_write_bps_device.empty() ||
         !block_io->throttle_read_iops_device.empty() ||
         !block_io->throttle_write_iops_device.empty())) {
        MR_TRY(route(
            "blkio", "io", [&](const std::string& dir) { return files::blkio_v1(dir, *block_io); },
            [&](const std::string& dir) { return files::io_v2(dir, *block_io); }));
    }
    if (!resources.hugepage_limits.empty()) {
        const auto& limits = resources.hugepage_limits;
        MR_TRY(route(
            "hugetlb", "hugetlb",
            [&](const std::string& dir) { return files::hugetlb_v1(dir, limits); },
            [&](const std::string& dir) { return files::hugetlb_v2(dir, limits); }));
    }
    if (const auto& network = resources.network) {
        if (network->class_id) {
            MR_TRY(v1_only("net_cls", [&](const std::string& dir) {
                return files::net_cls_v1(dir, *network);
            }));
        }
        if (!network->priorities.empty()) {
            MR_TRY(v1_only("net_prio", [&](const std::string& dir) {
                return files::net_prio_v1(dir, *network);
            }));
        }
    }
    if (!resources.rdma.empty()) {
        auto write = [&](const std::string& dir) {
            return files::rdma(dir, resources.rdma);
        };
        MR_TRY(route("rdma", "rdma", write, write));
    }
    // Last, as runc: raw cgroup2 values may override what the typed fields wrote.
    if (!resources.unified.empty()) {
        if (at.v2.empty()) {
            return Error(EOPNOTSUPP,
                         "linux.resources.unified needs cgroup v2, and this host mounts none");
        }
        MR_TRY(files::unified_v2(at.v2, resources.unified, at.v2_controllers));
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
        // Below the container's own cgroup only; the words are runc's.
        auto parts = fs::split(sub, '/');
        if (std::find(parts.begin(), parts.end(), "..") != parts.end()) {
            return Error(EINVAL,
                         cat("--cgroup ", quoted(request), ": ", sub, " is not a sub cgroup path"));
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

Status Cgroup::freeze() const {
    if (empty()) {
        return {};
    }
    files::Places at = files::places_of(paths_);
    // On a hybrid host the v1 freezer is the one that exists for sure (and the one runc
    // uses); cgroup.freeze needs Linux 5.2.
    if (std::string dir = at.v1_dir("freezer"); !dir.empty()) {
        return freeze_v1(dir);
    }
    if (!at.v2.empty()) {
        return freeze_v2(at.v2);
    }
    return Error(EOPNOTSUPP, "no freezer cgroup: the container cannot be frozen");
}

Status Cgroup::thaw() const {
    if (empty()) {
        return {};
    }
    files::Places at = files::places_of(paths_);
    if (std::string dir = at.v1_dir("freezer"); !dir.empty()) {
        return files::write(dir, "freezer.state", "THAWED");
    }
    if (!at.v2.empty()) {
        return files::write(at.v2, "cgroup.freeze", "0");
    }
    return Error(EOPNOTSUPP, "no freezer cgroup: the container cannot be thawed");
}

Result<bool> Cgroup::frozen() const {
    if (empty()) {
        return false;
    }
    files::Places at = files::places_of(paths_);
    std::string dir = at.v1_dir("freezer");
    std::string name = "freezer.state";
    if (dir.empty()) {
        dir = at.v2;
        name = "cgroup.freeze";
    }
    if (dir.empty()) {
        return false;
    }
    auto state = files::read(dir, name);
    if (!state) {
        // No cgroup (already removed) or no freezer file (a kernel before 5.2): nothing
        // there can be frozen.
        if (state.error().errno_value() == ENOENT) {
            return false;
        }
        return state.error();
    }
    // FREEZING counts: some tasks are stopped already, and a kill must thaw them first.
    return *state == "FROZEN" || *state == "FREEZING" || *state == "1";
}

Result<std::vector<pid_t>> Cgroup::pids() const {
    std::vector<pid_t> out;
    if (empty()) {
        return out;
    }
    std::string dir = pids_dir(files::places_of(paths_), paths_);
    MR_TRY(collect_pids(dir, out));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Result<nlohmann::json> Cgroup::stats() const {
    nlohmann::json data = {
        {"cpu",
         {{"usage", {{"kernel", 0}, {"user", 0}}}, {"throttling", nlohmann::json::object()}}},
        {"memory", nlohmann::json::object()},
        {"pids", nlohmann::json::object()},
        {"blkio", nlohmann::json::object()},
        {"hugetlb", nlohmann::json::object()},
    };
    if (empty()) {
        return data;
    }
    files::Places at = files::places_of(paths_);
    auto v1 = [&](const char* controller) {
        return at.unified_host ? std::string() : at.v1_dir(controller);
    };
    if (!v1("cpu").empty() || !v1("cpuacct").empty()) {
        files::cpu_stats_v1(v1("cpu"), v1("cpuacct"), data["cpu"]);
    } else if (!at.v2.empty()) {
        // cpu.stat's usage lines are in every cgroup2 directory, controller or not.
        files::cpu_stats_v2(at.v2, data["cpu"]);
    }
    if (std::string dir = v1("memory"); !dir.empty()) {
        files::memory_stats_v1(dir, data["memory"]);
    } else if (at.in_v2("memory", "memory")) {
        files::memory_stats_v2(at.v2, data["memory"]);
    }
    if (std::string dir = v1("pids"); !dir.empty()) {
        files::pids_stats(dir, data["pids"]);
    } else if (at.in_v2("pids", "pids")) {
        files::pids_stats(at.v2, data["pids"]);
    }
    if (std::string dir = v1("blkio"); !dir.empty()) {
        files::blkio_stats_v1(dir, data["blkio"]);
    } else if (at.in_v2("blkio", "io")) {
        files::io_stats_v2(at.v2, data["blkio"]);
    }
    if (std::string dir = v1("hugetlb"); !dir.empty()) {
        files::hugetlb_stats(dir, false, data["hugetlb"]);
    } else if (at.in_v2("hugetlb", "hugetlb")) {
        files::hugetlb_stats(at.v2, true, data["hugetlb"]);
    }
    return data;
}

Result<uint64_t> Cgroup::oom_kill_count() const {
    files::Places at = files::places_of(paths_);
    std::string dir = at.unified_host ? std::string() : at.v1_dir("memory");
    std::string name = "memory.oom_control";
    if (dir.empty() && at.in_v2("memory", "memory")) {
        dir = at.v2;
        name = "memory.events";
    }
    if (dir.empty()) {
        return uint64_t{0}; // no memory controller, no OOM kills of its own
    }
    MR_ASSIGN(std::string text, files::read(dir, name));
    return files::key_values(text)["oom_kill"];
}

Status Cgroup::remove_if_unused() const {
    if (auto left = pids(); !left || !left->empty()) {
        return {}; // still another's, or gone
    }
    for (const auto& [key, dir] : paths_) {
        if (is_directory(dir) && !is_hierarchy_root(dir) && ::rmdir(dir.c_str()) != 0 &&
            errno != ENOENT && errno != EBUSY && errno != ENOTEMPTY) {
            return Error::from_errno(cat("remove cgroup ", dir));
        }
    }
    return {};
}

Status Cgroup::remove() const {
    if (empty()) {
        return {};
    }
    for (const auto& [key, dir] : paths_) {
        if (is_directory(dir) && is_hierarchy_root(dir)) {
            return Error(EINVAL, cat("refusing to remove cgroup ", quoted(dir),
                                     ": it is the root of its hierarchy"));
        }
    }
    files::Places at = files::places_of(paths_);
    // Tasks frozen by the v1 freezer do not act on SIGKILL until thawed.
    if (auto frozen_now = frozen(); frozen_now && *frozen_now) {
        MR_TRY(thaw());
    }
    // cgroup.kill (Linux 5.14) kills the whole subtree at once, forks included; without
    // it, SIGKILL every pid and look again, for whatever was forked meanwhile.
    bool killed_at_once = false;
    if (!at.v2.empty() && files::exists(at.v2, "cgroup.kill")) {
        killed_at_once = files::write(at.v2, "cgroup.kill", "1").ok();
    }
    constexpr int kRounds = 100; // with kPause: about 1 s
    constexpr auto kPause = 10ms;
    for (int round = 0;; ++round) {
        MR_ASSIGN(std::vector<pid_t> left, pids());
        if (left.empty()) {
            break;
        }
        if (round == kRounds) {
            return Error(EBUSY, cat("cgroup ", quoted(pids_dir(at, paths_)), " still has ",
                                    left.size(), " processes after SIGKILL"));
        }
        // After cgroup.kill, a second round still signals what is left: a process in
        // the v1 hierarchies but moved out of the cgroup2 one escaped it.
        if (!killed_at_once || round > 0) {
            for (pid_t pid : left) {
                (void)::kill(pid, SIGKILL); // ESRCH: it exited meanwhile
            }
        }
        std::this_thread::sleep_for(kPause);
    }
    Status result;
    for (const auto& [key, dir] : paths_) {
        if (auto removed = remove_tree(dir); !removed && result.ok()) {
            result = removed;
        }
        // The default parent, "/mini-run", goes with its last container, so that no
        // directory of ours stays behind. It fails harmlessly (EBUSY, ENOTEMPTY) while
        // other containers live there.
        std::string parent = fs::split_parent(dir).first;
        if (fs::split_parent(parent).second == kDefaultParent && !is_hierarchy_root(parent)) {
            (void)::rmdir(parent.c_str());
        }
    }
    return result;
}

} // namespace minirun::runtime::cgroup
