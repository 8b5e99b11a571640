#include "minirun/state.hpp"

#include "fs.hpp"
#include "mountinfo.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>
#include <vector>

namespace minirun::state {
namespace {

constexpr const char* kStateFile = "state.json";
constexpr const char* kStateTemp = "state.json.tmp";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kConfigTemp = "config.json.tmp";
constexpr const char* kFifoName = "exec.fifo";

Error does_not_exist(const std::string& id) {
    return Error(ENOENT, cat("container ", quoted(id), " does not exist"));
}

// The caller validates ids against the allowed alphabet; this only guards the one property
// this file depends on: that <root>/<id> names a direct child of root.
bool escapes_root(const std::string& id) {
    return id.empty() || id == "." || id == ".." || id.find('/') != std::string::npos;
}

std::string join(const std::string& root, const std::string& name) {
    if (!root.empty() && root.back() == '/') {
        return root + name;
    }
    return cat(root, "/", name);
}

// mkdir -p: every missing component of `path` is created with `mode`.
minirun::Status make_dirs(const std::string& path, mode_t mode) {
    size_t pos = 0;
    while (pos != std::string::npos) {
        pos = path.find('/', pos + 1);
        std::string prefix = path.substr(0, pos);
        if (prefix.empty() || prefix.back() == '/') {
            continue;
        }
        if (::mkdir(prefix.c_str(), mode) < 0 && errno != EEXIST) {
            return Error::from_errno(cat("mkdir ", prefix));
        }
    }
    return {};
}

minirun::Status write_all(int fd, std::string_view content, const std::string& what) {
    while (!content.empty()) {
        ssize_t written = ::write(fd, content.data(), content.size());
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno(cat("write ", what));
        }
        content.remove_prefix(static_cast<size_t>(written));
    }
    return {};
}

// Readers must see either the old file or the new one, never a half-written one: a
// concurrent `state` or `list` takes no lock. Hence a temp file renamed over the target.
// No fsync: the state root lives on tmpfs (/run), which a crash empties anyway.
minirun::Status replace_file(int dir_fd, const std::string& dir_path, const char* name,
                             const char* temp_name, std::string_view content) {
    std::string temp_path = join(dir_path, temp_name);
    UniqueFd fd(
        ::openat(dir_fd, temp_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) {
        return Error::from_errno(cat("create ", temp_path));
    }
    minirun::Status written = write_all(fd.get(), content, temp_path);
    fd.reset();
    // Renaming over an existing file makes ext4 (auto_da_alloc) start writing the new
    // one's data back there and then, so that a crash cannot leave the name empty: about
    // 90 us per save on this machine. Exchanging the two names is just as atomic for a
    // reader and starts nothing; the old content then leaves under the temp name. The
    // plain rename remains for the first save (nothing to exchange with yet) and for file
    // systems without RENAME_EXCHANGE.
    if (written.ok() && ::renameat2(dir_fd, temp_name, dir_fd, name, RENAME_EXCHANGE) == 0) {
        ::unlinkat(dir_fd, temp_name, 0);
        return {};
    }
    if (written.ok() && ::renameat(dir_fd, temp_name, dir_fd, name) == 0) {
        return {};
    }
    if (written.ok()) {
        written = Error::from_errno(cat("rename ", temp_path, " to ", join(dir_path, name)));
    }
    ::unlinkat(dir_fd, temp_name, 0);
    return written;
}

Result<std::string> read_at(int dir_fd, const char* name, const std::string& path) {
    UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", path));
    }
    std::string content;
    std::array<char, 8192> buffer{};
    for (;;) {
        ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error::from_errno(cat("read ", path));
        }
        if (got == 0) {
            return content;
        }
        content.append(buffer.data(), static_cast<size_t>(got));
    }
}

using Json = nlohmann::json;

Json record_to_json(const Record& record) {
    Json out = Json::object();
    out["ociVersion"] = record.oci_version;
    out["id"] = record.id;
    out["pid"] = record.pid;
    out["pidStartTime"] = record.pid_start_time;
    out["bundle"] = record.bundle;
    out["rootfs"] = record.rootfs;
    out["created"] = record.created;
    out["owner"] = record.owner;
    out["annotations"] = record.annotations;
    out["paused"] = record.paused;
    out["cgroupPaths"] = record.cgroup_paths;
    if (record.cgroup_shared) {
        out["cgroupShared"] = true;
    }
    return out;
}

// Every field must be present with its type: the file is only ever written by save(), so
// anything else means it was damaged, and guessing defaults could make a dead container
// look alive.
Result<Record> record_from_json(const Json& in) {
    auto string_field = [&in](const char* key, std::string& out) {
        auto it = in.find(key);
        if (it == in.end() || !it->is_string()) {
            return false;
        }
        out = it->get<std::string>();
        return true;
    };
    if (!in.is_object()) {
        return Error(EINVAL, "not a JSON object");
    }
    Record record;
    for (auto [key, field] :
         {std::pair{"ociVersion", &record.oci_version}, std::pair{"id", &record.id},
          std::pair{"bundle", &record.bundle}, std::pair{"rootfs", &record.rootfs},
          std::pair{"created", &record.created}, std::pair{"owner", &record.owner}}) {
        if (!string_field(key, *field)) {
            return Error(EINVAL, cat("missing or invalid ", quoted(key)));
        }
    }
    auto pid = in.find("pid");
    if (pid == in.end() || !pid->is_number_integer() || *pid < 0 ||
        *pid > std::numeric_limits<pid_t>::max()) {
        return Error(EINVAL, "missing or invalid \"pid\"");
    }
    record.pid = pid->get<pid_t>();
    auto start = in.find("pidStartTime");
    if (start == in.end() || !start->is_number_unsigned()) {
        return Error(EINVAL, "missing or invalid \"pidStartTime\"");
    }
    record.pid_start_time = start->get<uint64_t>();
    auto paused = in.find("paused");
    if (paused == in.end() || !paused->is_boolean()) {
        return Error(EINVAL, "missing or invalid \"paused\"");
    }
    record.paused = paused->get<bool>();
    auto annotations = in.find("annotations");
    if (annotations == in.end() || !annotations->is_object()) {
        return Error(EINVAL, "missing or invalid \"annotations\"");
    }
    for (const auto& [key, value] : annotations->items()) {
        if (!value.is_string()) {
            return Error(EINVAL, cat("annotation ", quoted(key), " is not a string"));
        }
        record.annotations.emplace(key, value.get<std::string>());
    }
    auto cgroups = in.find("cgroupPaths");
    if (cgroups == in.end() || !cgroups->is_object()) {
        return Error(EINVAL, "missing or invalid \"cgroupPaths\"");
    }
    for (const auto& [key, value] : cgroups->items()) {
        if (!value.is_string() || value.get<std::string>().empty() ||
            value.get<std::string>().front() != '/') {
            return Error(EINVAL, cat("cgroup path ", quoted(key), " is not an absolute path"));
        }
        record.cgroup_paths.emplace(key, value.get<std::string>());
    }
    if (auto shared = in.find("cgroupShared"); shared != in.end()) {
        if (!shared->is_boolean()) {
            return Error(EINVAL, "invalid \"cgroupShared\"");
        }
        record.cgroup_shared = shared->get<bool>();
    }
    return record;
}

struct DirCloser {
    void operator()(DIR* dir) const { ::closedir(dir); }
};

} // namespace

std::string_view status_name(Status status) {
    switch (status) {
    case Status::creating:
        return "creating";
    case Status::created:
        return "created";
    case Status::running:
        return "running";
    case Status::paused:
        return "paused";
    case Status::stopped:
        return "stopped";
    }
    return "unknown";
}

namespace {

// The state's fields in runc's order; `list` puts the annotations before the owner and
// leaves them out when empty (runc's `containerState`), `state` always prints them, last.
nlohmann::ordered_json state_object(const Record& record, Status status, bool list_layout) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["ociVersion"] = record.oci_version;
    out["id"] = record.id;
    // runc prints 0 for a stopped container, and engines parse "pid" as a plain integer.
    // "creating" is printed in two cases: `state` before the init exists (no pid to
    // name), and the state handed to prestart/createRuntime/createContainer hooks, which
    // need the init's pid to find its namespaces (runtime-spec: hooks get the pid).
    if (status == Status::stopped) {
        out["pid"] = 0;
    } else if (status != Status::creating || record.pid != 0) {
        out["pid"] = record.pid;
    }
    out["status"] = status_name(status);
    out["bundle"] = record.bundle;
    out["rootfs"] = record.rootfs;
    out["created"] = record.created;
    nlohmann::ordered_json annotations = nlohmann::ordered_json::object();
    for (const auto& [key, value] : record.annotations) {
        annotations[key] = value;
    }
    if (list_layout) {
        if (!annotations.empty()) {
            out["annotations"] = std::move(annotations);
        }
        out["owner"] = record.owner;
    } else {
        out["owner"] = record.owner;
        out["annotations"] = std::move(annotations);
    }
    return out;
}

} // namespace

std::string oci_state_json(const Record& record, Status status) {
    // Paths are bytes, not necessarily UTF-8; printing a replacement character beats
    // throwing out of a function that cannot fail.
    return state_object(record, status, false)
        .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string list_entry_json(const Record& record, Status status) {
    return state_object(record, status, true)
        .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<uint64_t> process_start_time(pid_t pid) {
    if (pid <= 0) {
        return Error(ESRCH, cat("no process ", pid));
    }
    std::string path = cat("/proc/", pid, "/stat");
    auto text = fs::read_file(path);
    if (!text) {
        int err = text.error().errno_value();
        if (err == ENOENT || err == ESRCH) {
            return Error(ESRCH, cat("no process ", pid));
        }
        return text.error();
    }
    auto malformed = [&path] {
        return Error(EINVAL, cat("parse ", path, ": unexpected format"));
    };
    // comm is printed raw between parentheses and may itself contain ") " and spaces; the
    // last ')' is the only reliable end of it.
    size_t close = text->rfind(')');
    if (close == std::string::npos || close + 2 >= text->size()) {
        return malformed();
    }
    std::string_view rest = std::string_view(*text).substr(close + 2);
    char state = rest.front();
    if (state == 'Z' || state == 'X' || state == 'x') {
        return Error(ESRCH, cat("process ", pid, " has exited"));
    }
    // `rest` starts at field 3 (state); starttime is field 22, 19 fields further on.
    constexpr int kFieldsToStartTime = 22 - 3;
    for (int i = 0; i < kFieldsToStartTime; ++i) {
        size_t space = rest.find(' ');
        if (space == std::string_view::npos) {
            return malformed();
        }
        rest.remove_prefix(space + 1);
    }
    uint64_t start_time = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), start_time);
    if (ec != std::errc() || end == rest.data() ||
        (end != rest.data() + rest.size() && *end != ' ')) {
        return malformed();
    }
    return start_time;
}

std::string owner_name(uid_t uid) {
    // /etc/passwd itself rather than getpwuid(): NSS modules would be loaded into a
    // statically linked runtime on every create, for a name that is only ever shown.
    auto text = fs::read_file("/etc/passwd");
    if (text) {
        std::string wanted = std::to_string(uid);
        for (std::string_view line : fs::split(*text, '\n')) {
            auto fields = fs::split(line, ':');
            if (fields.size() >= 3 && fields[2] == wanted && !fields[0].empty()) {
                return std::string(fields[0]);
            }
        }
    }
    return std::to_string(uid);
}

Result<StateDir> StateDir::create(const std::string& root, const std::string& id) {
    if (root.empty()) {
        return Error(EINVAL, "state root is empty");
    }
    if (escapes_root(id)) {
        return Error(EINVAL, cat("invalid container id ", quoted(id)));
    }
    MR_TRY_WRAP(make_dirs(root, 0711), "create state root");
    std::string path = join(root, id);
    // The one mkdir is the whole claim on the id: of two concurrent creates, exactly one
    // gets past it.
    if (::mkdir(path.c_str(), 0711) < 0) {
        if (errno == EEXIST) {
            return Error(EEXIST, cat("container ", quoted(id), " already exists"));
        }
        return Error::from_errno(cat("mkdir ", path));
    }
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        Error error = Error::from_errno(cat("open ", path));
        // Leaving the empty directory would block the id forever.
        ::rmdir(path.c_str());
        return error;
    }
    return StateDir(id, std::move(path), std::move(fd));
}

Result<StateDir> StateDir::open(const std::string& root, const std::string& id) {
    if (escapes_root(id)) {
        return Error(EINVAL, cat("container ", quoted(id), " does not exist: invalid id"));
    }
    if (root.empty()) {
        return Error(EINVAL, "state root is empty");
    }
    std::string path = join(root, id);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) {
            return does_not_exist(id);
        }
        return Error::from_errno(cat("open ", path));
    }
    return StateDir(id, std::move(path), std::move(fd));
}

minirun::Status StateDir::lock() {
    while (::flock(fd_.get(), LOCK_EX) < 0) {
        if (errno != EINTR) {
            return Error::from_errno(cat("lock ", path_));
        }
    }
    return {};
}

minirun::Status StateDir::save(const Record& record) {
    std::string text;
    try {
        text = record_to_json(record).dump(2);
    } catch (const Json::exception& e) {
        // Storing a mangled bundle path would later point at the wrong directory.
        return Error(EINVAL, cat("save state of ", quoted(id_), ": ", e.what()));
    }
    text += '\n';
    return replace_file(fd_.get(), path_, kStateFile, kStateTemp, text);
}

Result<Record> StateDir::load() const {
    std::string path = join(path_, kStateFile);
    auto text = read_at(fd_.get(), kStateFile, path);
    if (!text) {
        // A create that died before writing its state looks the same to the user: there
        // is no container to act on.
        if (text.error().errno_value() == ENOENT) {
            return does_not_exist(id_);
        }
        return text.error();
    }
    Json parsed = Json::parse(*text, nullptr, false);
    if (parsed.is_discarded()) {
        return Error(EINVAL, cat(path, ": corrupt state: invalid JSON"));
    }
    auto record = record_from_json(parsed);
    if (!record) {
        return record.error().wrap(cat(path, ": corrupt state"));
    }
    if (record->id != id_) {
        return Error(EINVAL, cat(path, ": corrupt state: id ", quoted(record->id),
                                 " does not match the directory"));
    }
    return record;
}

minirun::Status StateDir::save_config(std::string_view config_text) {
    return replace_file(fd_.get(), path_, kConfigFile, kConfigTemp, config_text);
}

Result<std::string> StateDir::load_config() const {
    return read_at(fd_.get(), kConfigFile, join(path_, kConfigFile));
}

minirun::Status StateDir::make_fifo() {
    if (::mkfifoat(fd_.get(), kFifoName, 0600) < 0) {
        return Error::from_errno(cat("mkfifo ", fifo_path()));
    }
    return {};
}

bool StateDir::fifo_exists() const {
    struct stat info {};
    return ::fstatat(fd_.get(), kFifoName, &info, AT_SYMLINK_NOFOLLOW) == 0;
}

Status StateDir::status_of(const Record& record) const {
    if (record.pid == 0) {
        return Status::creating;
    }
    auto start_time = process_start_time(record.pid);
    if (!start_time || *start_time != record.pid_start_time) {
        return Status::stopped;
    }
    if (record.paused) {
        return Status::paused;
    }
    return fifo_exists() ? Status::created : Status::running;
}

minirun::Status StateDir::remove() {
    if (path_.empty()) {
        return Error(EINVAL, "remove state: no directory");
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    if (ec) {
        return Error(ec.value(), cat("remove ", path_, ": ", ec.message()));
    }
    return {};
}

Result<std::vector<std::string>> list_ids(const std::string& root) {
    std::vector<std::string> ids;
    UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) {
            return ids;
        }
        return Error::from_errno(cat("open ", root));
    }
    std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd.get()));
    if (!dir) {
        return Error::from_errno(cat("open ", root));
    }
    int dir_fd = fd.release(); // now owned by `dir`
    for (;;) {
        errno = 0;
        const dirent* entry = ::readdir(dir.get());
        if (entry == nullptr) {
            if (errno != 0) {
                return Error::from_errno(cat("read ", root));
            }
            break;
        }
        std::string_view name = entry->d_name;
        if (name.empty() || name.front() == '.' || name.ends_with(".tmp")) {
            continue;
        }
        bool is_dir = entry->d_type == DT_DIR;
        if (entry->d_type == DT_UNKNOWN) {
            struct stat info {};
            is_dir = ::fstatat(dir_fd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
                     S_ISDIR(info.st_mode);
        }
        if (is_dir) {
            ids.emplace_back(name);
        }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

} // namespace minirun::state
