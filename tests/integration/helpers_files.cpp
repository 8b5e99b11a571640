// The integration tests' helpers (helpers.hpp): temporary directories, files and bundles.
#include "helpers.hpp"
#include "helpers_detail.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace it {

using namespace detail;

// ---------------------------------------------------------------------------------------
// Temporary files

TempDir::TempDir(std::string_view prefix) {
    std::string pattern = "/tmp/" + std::string(prefix) + ".XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
        fail_errno("mkdtemp " + pattern);
    }
    path_ = pattern;
    // Traversable by other users: a container in a user namespace runs as another uid.
    chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
    remove_tree(path_);
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

std::vector<MountInfo> host_mounts_under(const std::string& path) {
    std::vector<MountInfo> found;
    for (const auto& mount : host_mounts()) {
        if (mount.mount_point == path || mount.mount_point.rfind(path + "/", 0) == 0) {
            found.push_back(mount);
        }
    }
    return found;
}

SharedDir::SharedDir(std::string_view prefix) : dir_(prefix) {
    if (::mount(dir_.path().c_str(), dir_.path().c_str(), nullptr, MS_BIND, nullptr) != 0) {
        throw std::runtime_error("bind mount " + dir_.path() + " failed");
    }
    mounted_ = true;
    if (::mount(nullptr, dir_.path().c_str(), nullptr, MS_SHARED, nullptr) != 0) {
        throw std::runtime_error("make-shared " + dir_.path() + " failed");
    }
}

SharedDir::~SharedDir() {
    detach_below();
    if (mounted_) {
        ::umount2(dir_.path().c_str(), MNT_DETACH);
    }
}

void SharedDir::detach_below() const {
    auto below = host_mounts_under(path());
    std::sort(below.begin(), below.end(), [](const MountInfo& a, const MountInfo& b) {
        return a.mount_point.size() > b.mount_point.size();
    });
    for (const auto& mount : below) {
        if (mount.mount_point != path()) {
            ::umount2(mount.mount_point.c_str(), MNT_DETACH);
        }
    }
}

std::string SharedDir::line() const {
    for (const auto& mount : host_mounts()) {
        if (mount.mount_point == path()) {
            return mount.line;
        }
    }
    return "";
}

void remove_tree(const std::string& path) {
    // FTW_MOUNT: stay on this filesystem, so a mount left under the tree is never emptied.
    nftw(path.c_str(), unlink_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

TempBundle::TempBundle(std::string_view name) : dir_("minirun-it") {
    id_ = "it-" + std::string(name) + "-" + std::to_string(getpid()) + "-" +
          std::to_string(unique_counter());
    config = example_config();
    config["root"]["path"] = example_rootfs();
    for (const auto& mount : host_mounts()) {
        mounts_before_.push_back(mount.id);
    }
}

TempBundle::~TempBundle() {
    // Processes first: they may hold mounts.
    for (int round = 0; round < 50; ++round) {
        auto pids = processes_with_marker(id_);
        if (pids.empty()) {
            break;
        }
        for (pid_t pid : pids) {
            ::kill(pid, SIGKILL);
        }
        std::this_thread::sleep_for(20ms);
    }
    // Then mounts that appeared under the bundle (deepest first).
    std::vector<std::string> leaked;
    for (const auto& mount : host_mounts()) {
        bool is_new = std::find(mounts_before_.begin(), mounts_before_.end(), mount.id) ==
                      mounts_before_.end();
        if (is_new && path_is_under(mount.mount_point, dir())) {
            leaked.push_back(mount.mount_point);
        }
    }
    std::sort(leaked.begin(), leaked.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const auto& mount_point : leaked) {
        umount2(mount_point.c_str(), MNT_DETACH);
    }
}

void TempBundle::set_shell(std::string_view script) {
    config["process"]["args"] = {"sh", "-c", std::string(script), id_};
}

void TempBundle::set_args(const std::vector<std::string>& args) {
    config["process"]["args"] = args;
}

void TempBundle::add_capabilities(const std::vector<std::string>& caps) {
    auto& capabilities = config["process"]["capabilities"];
    for (const char* set : {"bounding", "effective", "permitted"}) {
        for (const auto& cap : caps) {
            auto& list = capabilities[set];
            if (std::find(list.begin(), list.end(), cap) == list.end()) {
                list.push_back(cap);
            }
        }
    }
}

void TempBundle::remove_namespaces(const std::vector<std::string>& types) {
    auto& namespaces = config["linux"]["namespaces"];
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& ns : namespaces) {
        if (std::find(types.begin(), types.end(), ns["type"].get<std::string>()) == types.end()) {
            kept.push_back(ns);
        }
    }
    namespaces = kept;
}

void TempBundle::add_namespace(std::string_view type) {
    config["linux"]["namespaces"].push_back({{"type", std::string(type)}});
}

void TempBundle::add_user_namespace() {
    add_namespace("user");
    const nlohmann::json mapping = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    config["linux"]["uidMappings"] = mapping;
    config["linux"]["gidMappings"] = mapping;
}

std::string TempBundle::copy_rootfs(std::optional<std::pair<uint32_t, uint32_t>> owner) {
    std::string copy = dir() + "/rootfs";
    auto copied = it::run({"/bin/cp", "-a", example_rootfs(), copy});
    if (copied.exit_code != 0) {
        throw std::runtime_error("cp -a failed: " + copied.describe());
    }
    if (owner) {
        // -h: change the links themselves, never what they point to.
        auto chowned =
            it::run({"/bin/chown", "-hR",
                     std::to_string(owner->first) + ":" + std::to_string(owner->second), copy});
        if (chowned.exit_code != 0) {
            throw std::runtime_error("chown failed: " + chowned.describe());
        }
    }
    config["root"]["path"] = copy;
    return copy;
}

void TempBundle::write_config() const {
    write_raw_config(config.dump(4) + "\n");
}

void TempBundle::write_raw_config(std::string_view text) const {
    std::ofstream out(config_path(), std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw std::runtime_error("cannot write " + config_path());
    }
}

std::vector<std::string> TempBundle::run_argv() const {
    return {minirun_binary(), "run", "--bundle", dir(), id_};
}

RunResult TempBundle::run(std::string_view stdin_text, Millis timeout) const {
    write_config();
    return it::run(run_argv(), stdin_text, timeout);
}

Child TempBundle::start() const {
    write_config();
    return Child(run_argv());
}

std::vector<std::string> TempBundle::leftovers(Millis timeout) const {
    std::vector<std::string> problems;
    auto deadline = Clock::now() + timeout;
    std::vector<pid_t> pids;
    while (true) {
        pids = processes_with_marker(id_);
        if (pids.empty() || Clock::now() >= deadline) {
            break;
        }
        std::this_thread::sleep_for(20ms);
    }
    for (pid_t pid : pids) {
        auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline").value_or("");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        problems.push_back("process " + std::to_string(pid) + " still runs: " + cmdline);
    }
    for (const auto& mount : host_mounts()) {
        if (std::find(mounts_before_.begin(), mounts_before_.end(), mount.id) ==
            mounts_before_.end()) {
            problems.push_back("new mount in the host's mount table: " + mount.line);
        }
    }
    // `run` deletes its container when it ends: no state may stay under the state root.
    const std::string state = "/run/mini-run/" + id_;
    struct stat st {};
    if (lstat(state.c_str(), &st) == 0) {
        problems.push_back("state left behind: " + state);
    }
    return problems;
}

void check_no_leftovers(const TempBundle& bundle) {
    for (const auto& problem : bundle.leftovers()) {
        FAIL_CHECK("left behind by container " << bundle.id() << ": " << problem);
    }
}

std::string value_of(std::string_view output, std::string_view key) {
    std::string prefix = std::string(key) + " ";
    for (const auto& line : split_lines(output)) {
        if (line.rfind(prefix, 0) == 0) {
            return line.substr(prefix.size());
        }
    }
    return "<" + std::string(key) + " not printed>";
}

} // namespace it
