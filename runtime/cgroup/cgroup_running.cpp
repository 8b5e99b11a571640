// The container's cgroup while it runs and after: frozen and thawed, its processes and
// statistics read, its processes killed and its directories removed.
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"
#include "fs.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <thread>

namespace minirun::runtime::cgroup {

namespace {

using namespace std::chrono_literals;
using files::collect_pids;
using files::is_directory;
using files::is_hierarchy_root;
using files::is_v2_key;
using files::subdirectories;

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
        controllers::cpu_stats_v1(v1("cpu"), v1("cpuacct"), data["cpu"]);
    } else if (!at.v2.empty()) {
        // cpu.stat's usage lines are in every cgroup2 directory, controller or not.
        controllers::cpu_stats_v2(at.v2, data["cpu"]);
    }
    if (std::string dir = v1("memory"); !dir.empty()) {
        controllers::memory_stats_v1(dir, data["memory"]);
    } else if (at.in_v2("memory", "memory")) {
        controllers::memory_stats_v2(at.v2, data["memory"]);
    }
    if (std::string dir = v1("pids"); !dir.empty()) {
        controllers::pids_stats(dir, data["pids"]);
    } else if (at.in_v2("pids", "pids")) {
        controllers::pids_stats(at.v2, data["pids"]);
    }
    if (std::string dir = v1("blkio"); !dir.empty()) {
        controllers::blkio_stats_v1(dir, data["blkio"]);
    } else if (at.in_v2("blkio", "io")) {
        controllers::io_stats_v2(at.v2, data["blkio"]);
    }
    if (std::string dir = v1("hugetlb"); !dir.empty()) {
        controllers::hugetlb_stats(dir, false, data["hugetlb"]);
    } else if (at.in_v2("hugetlb", "hugetlb")) {
        controllers::hugetlb_stats(at.v2, true, data["hugetlb"]);
    }
    // Pressure stall information, as runc 1.2+ on cgroup v2: PSI is accounted in the
    // cgroup2 hierarchy alone, whichever hierarchy the controllers are in, so a hybrid
    // host's cgroup2 directory has it too (runc's v1 manager does not read it there).
    if (!at.v2.empty()) {
        MR_TRY(controllers::psi_stats(at.v2, "cpu.pressure", data["cpu"]));
        MR_TRY(controllers::psi_stats(at.v2, "memory.pressure", data["memory"]));
        MR_TRY(controllers::psi_stats(at.v2, "io.pressure", data["blkio"]));
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
        // A container's cgroup has a cgroup for a parent: one stat says so, the usual case.
        if (is_hierarchy_root(dir) && is_directory(dir)) {
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
    }
    return result;
}

} // namespace minirun::runtime::cgroup
