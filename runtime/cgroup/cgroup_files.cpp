// Reading and writing cgroup interface files, the directories of a container's cgroup,
// and which of them holds which controller (cgroup_files.hpp).
#include "cgroup/cgroup_files.hpp"
#include "fs.hpp"
#include "mountinfo.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>

namespace minirun::runtime::cgroup::files {

bool exists(const std::string& dir, const std::string& name) {
    struct stat info {};
    return ::stat(cat(dir, "/", name).c_str(), &info) == 0;
}

namespace {

WriteObserver& observer() {
    static WriteObserver instance;
    return instance;
}

UniqueFd open_for_writing(const std::string& path) {
    // O_TRUNC matters only for plain files (tests); cgroupfs ignores it.
    return UniqueFd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
}

// One write(2) per value: the kernel parses each write as a whole.
Status write_value(int fd, const std::string& path, std::string_view value) {
    ssize_t written = ::write(fd, value.data(), value.size());
    if (written < 0) {
        return Error::from_errno(cat("write ", quoted(value), " to ", path));
    }
    if (static_cast<size_t>(written) != value.size()) {
        return Error(EIO, cat("write ", quoted(value), " to ", path, ": short write"));
    }
    if (observer()) {
        observer()(path, value);
    }
    return {};
}

} // namespace

void observe_writes(WriteObserver next) {
    observer() = std::move(next);
}

Status write(const std::string& dir, const std::string& name, std::string_view value) {
    std::string path = cat(dir, "/", name);
    UniqueFd fd = open_for_writing(path);
    if (!fd) {
        return Error::from_errno(cat("open ", path));
    }
    return write_value(fd.get(), path, value);
}

Status write_each(const std::string& dir,
                  const std::vector<std::pair<std::string, std::string>>& values) {
    UniqueFd fd;
    std::string path;
    for (const auto& [name, value] : values) {
        if (std::string next = cat(dir, "/", name); !fd || next != path) {
            path = std::move(next);
            fd = open_for_writing(path);
            if (!fd) {
                return Error::from_errno(cat("open ", path));
            }
        }
        MR_TRY(write_value(fd.get(), path, value));
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

void set_nonzero(nlohmann::json& out, const char* name, uint64_t value) {
    if (value != 0) {
        out[name] = value;
    }
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

// ---- directories ----

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

// A hierarchy's root holds the whole host: nothing here may ever kill or remove there.
// A cgroup directory's parent is a cgroup directory too; a root's is not.
bool is_hierarchy_root(const std::string& dir) {
    return !files::exists(fs::split_parent(dir).first, "cgroup.procs");
}

} // namespace minirun::runtime::cgroup::files
