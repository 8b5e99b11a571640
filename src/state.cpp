// Container state on disk (minirun/state.hpp): the state directory, its files and their
// locking, and the facts read from the live system. The JSON of the files is in
// state_json.cpp.
#include "state.hpp"

#include "fs.hpp"
#include "mountinfo.hpp"
#include "state_record.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <memory>
#include <vector>

namespace minirun::state {
namespace {

constexpr const char* kStateFile = "state.json";
constexpr const char* kStateTemp = "state.json.tmp";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kConfigTemp = "config.json.tmp";
constexpr const char* kFifoName = "exec.fifo";
constexpr const char* kRecoveryFile = "recovery.json";
constexpr const char* kRecoveryTemp = "recovery.json.tmp";

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

// Readers must see either the old file or the new one, never a half-written one: a
// concurrent `state` or `list` takes no lock. Hence a temp file renamed over the target.
// No fsync: a state describes processes, which a crash of the machine ends anyway (the
// state root is /run, a tmpfs on most hosts).
// `content` as `temp_name` in the directory, ready to be put in place.
minirun::Status write_temp(int dir_fd, const std::string& dir_path, const char* temp_name,
                           std::string_view content) {
    std::string temp_path = join(dir_path, temp_name);
    UniqueFd fd(
        ::openat(dir_fd, temp_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) {
        return Error::from_errno(cat("create ", temp_path));
    }
    minirun::Status written = fs::write_all(fd.get(), content, temp_path);
    if (!written) {
        ::unlinkat(dir_fd, temp_name, 0);
    }
    return written;
}

// `temp_name` (written by write_temp) becomes `name`, atomically for a reader.
minirun::Status install_temp(int dir_fd, const std::string& dir_path, const char* name,
                             const char* temp_name) {
    // Renaming over an existing file makes ext4 (auto_da_alloc) start writing the new
    // one's data back there and then, so that a crash cannot leave the name empty: about
    // 90 us per save on this machine. Exchanging the two names is just as atomic for a
    // reader and starts nothing; the old content then leaves under the temp name. The
    // plain rename remains for the first save (nothing to exchange with yet) and for file
    // systems without RENAME_EXCHANGE.
    if (::renameat2(dir_fd, temp_name, dir_fd, name, RENAME_EXCHANGE) == 0) {
        ::unlinkat(dir_fd, temp_name, 0);
        return {};
    }
    if (::renameat(dir_fd, temp_name, dir_fd, name) == 0) {
        return {};
    }
    minirun::Status renamed =
        Error::from_errno(cat("rename ", join(dir_path, temp_name), " to ", join(dir_path, name)));
    ::unlinkat(dir_fd, temp_name, 0);
    return renamed;
}

minirun::Status replace_file(int dir_fd, const std::string& dir_path, const char* name,
                             const char* temp_name, std::string_view content) {
    MR_TRY(write_temp(dir_fd, dir_path, temp_name, content));
    return install_temp(dir_fd, dir_path, name, temp_name);
}

// Bigger than any state or config this runtime writes; a file beyond it was not written by
// us, and reading it whole would only waste memory.
constexpr off_t kMaxFileSize = off_t{16} << 20;

Error too_large() {
    return Error(kCorrupt, cat("it is larger than ", kMaxFileSize >> 20, " MiB"));
}

// The content of `name` in the directory. Never through a symlink (O_NOFOLLOW: ELOOP), and
// never blocking on a fifo (O_NONBLOCK), which no file of ours is: such entries are not
// files this runtime wrote, reported with kCorrupt and the reason alone, for the caller
// to put in context. Other failures are ordinary errors naming `path`.
Result<std::string> read_at(int dir_fd, const char* name, const std::string& path) {
    UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        if (errno == ELOOP) {
            return Error(kCorrupt, "it is a symlink (not followed)");
        }
        return Error::from_errno(cat("open ", path));
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) < 0) {
        return Error::from_errno(cat("stat ", path));
    }
    if (!S_ISREG(info.st_mode)) {
        return Error(kCorrupt, "it is not a regular file");
    }
    if (info.st_size > kMaxFileSize) {
        return too_large();
    }
    auto content = fs::read_all(fd.get(), path, static_cast<size_t>(kMaxFileSize));
    if (!content && content.error().errno_value() == EFBIG) {
        return too_large();
    }
    return content;
}

struct DirCloser {
    void operator()(DIR* dir) const { ::closedir(dir); }
};

} // namespace

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
    std::string path = join(root, id);
    // The one mkdir is the whole claim on the id: of two concurrent creates, exactly one
    // gets past it. The root is made only when it is missing (the first create).
    int made = ::mkdir(path.c_str(), 0711);
    if (made < 0 && errno == ENOENT) {
        MR_TRY_WRAP(make_dirs(root, 0711), "create state root");
        made = ::mkdir(path.c_str(), 0711);
    }
    if (made < 0) {
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

namespace {

// A Record read back from `name` (state.json or recovery.json) in the state directory of
// container `id`. Every way it can be damaged is kCorrupt, said in one line.
Result<Record> load_record(int dir_fd, const std::string& dir_path, const std::string& id,
                           const char* name) {
    std::string path = join(dir_path, name);
    auto corrupt = [&](std::string_view why) {
        return Error(kCorrupt,
                     cat("container ", quoted(id), " has a corrupt state file ", path, ": ", why));
    };
    auto text = read_at(dir_fd, name, path);
    if (!text) {
        if (text.error().errno_value() == kCorrupt) {
            return corrupt(text.error().message());
        }
        return text.error();
    }
    if (text->empty()) {
        return corrupt("it is empty");
    }
    auto record = parse_record(*text);
    if (!record) {
        return corrupt(record.error().message());
    }
    if (record->id != id) {
        return corrupt(cat("its id ", quoted(record->id), " is not the directory's"));
    }
    return record;
}

} // namespace

minirun::Status StateDir::save(const Record& record) {
    auto text = record_text(record);
    if (!text) {
        // Storing a mangled bundle path would later point at the wrong directory.
        return Error(EINVAL, cat("save state of ", quoted(id_), ": ", text.error().message()));
    }
    return replace_file(fd_.get(), path_, kStateFile, kStateTemp, *text);
}

Result<Record> StateDir::load() const {
    auto record = load_record(fd_.get(), path_, id_, kStateFile);
    // A create that died before writing its state looks the same to the user: there is no
    // container to act on.
    if (!record && record.error().errno_value() == ENOENT) {
        return does_not_exist(id_);
    }
    return record;
}

minirun::Status StateDir::save_recovery(const Record& record) {
    auto text = record_text(record);
    if (!text) {
        return Error(EINVAL,
                     cat("save recovery state of ", quoted(id_), ": ", text.error().message()));
    }
    return replace_file(fd_.get(), path_, kRecoveryFile, kRecoveryTemp, *text);
}

minirun::Status StateDir::save_with_recovery(const Record& record) {
    MR_TRY(save(record));
    // Making a file is the dear part on ext4 (with many files made and removed, a new inode
    // is searched for past the recently deleted ones): a hard link makes none. No file
    // here is ever written in place, so the two names stay one content until save()
    // puts a new file under state.json. Where the link cannot be made (recovery.json
    // exists, a file system without hard links), recovery.json is written as a copy.
    if (::linkat(fd_.get(), kStateFile, fd_.get(), kRecoveryFile, 0) == 0) {
        return {};
    }
    return save_recovery(record);
}

Result<Record> StateDir::load_recovery() const {
    return load_record(fd_.get(), path_, id_, kRecoveryFile);
}

minirun::Status StateDir::save_config(std::string_view config_text) {
    return replace_file(fd_.get(), path_, kConfigFile, kConfigTemp, config_text);
}

Result<std::string> StateDir::load_config() const {
    std::string path = join(path_, kConfigFile);
    auto text = read_at(fd_.get(), kConfigFile, path);
    if (!text && text.error().errno_value() == kCorrupt) {
        return text.error().wrap(cat("container ", quoted(id_), ": ", path));
    }
    return text;
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

minirun::Status StateDir::add_mark(const char* name) {
    UniqueFd mark(
        ::openat(fd_.get(), name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600));
    if (!mark) {
        return Error::from_errno(cat("create ", path_, "/", name));
    }
    return {};
}

bool StateDir::has_mark(const char* name) const {
    struct stat info {};
    return ::fstatat(fd_.get(), name, &info, AT_SYMLINK_NOFOLLOW) == 0;
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

namespace {

// Deeper than any state directory gets; only a damaged one has subdirectories at all.
constexpr int kMaxRemoveDepth = 8;

// Unlinks every entry of the directory open at `dir_fd` by its name relative to that fd, so
// a symlink goes as the entry it is, whatever it points at; a subdirectory is emptied the
// same way, through its own O_NOFOLLOW fd, before it goes. `path` is for messages only.
minirun::Status empty_directory(int dir_fd, const std::string& path, int depth) {
    if (depth > kMaxRemoveDepth) {
        return Error(ELOOP, cat("remove ", path, ": nested too deeply"));
    }
    // Our own description of the directory: fdopendir() takes it over, and the rewind
    // makes a second removal (idempotence) list it from the start again.
    int listing_fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
    if (listing_fd < 0) {
        return Error::from_errno(cat("remove ", path));
    }
    std::unique_ptr<DIR, DirCloser> dir(::fdopendir(listing_fd));
    if (!dir) {
        Error error = Error::from_errno(cat("remove ", path));
        ::close(listing_fd);
        return error;
    }
    ::rewinddir(dir.get());
    std::vector<std::string> names;
    for (;;) {
        errno = 0;
        const dirent* entry = ::readdir(dir.get());
        if (entry == nullptr) {
            // A directory removed already reads as empty, or fails with ENOENT.
            if (errno != 0 && errno != ENOENT) {
                return Error::from_errno(cat("read ", path));
            }
            break;
        }
        std::string_view name = entry->d_name;
        if (name != "." && name != "..") {
            names.emplace_back(name);
        }
    }
    for (const std::string& name : names) {
        if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) {
            continue;
        }
        std::string entry_path = join(path, name);
        if (errno != EISDIR) {
            return Error::from_errno(cat("remove ", entry_path));
        }
        UniqueFd sub(
            ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub) {
            return Error::from_errno(cat("open ", entry_path));
        }
        MR_TRY(empty_directory(sub.get(), entry_path, depth + 1));
        if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) < 0 && errno != ENOENT) {
            return Error::from_errno(cat("remove ", entry_path));
        }
    }
    return {};
}

} // namespace

minirun::Status StateDir::remove() {
    if (path_.empty() || !fd_) {
        return Error(EINVAL, "remove state: no directory");
    }
    MR_TRY(empty_directory(fd_.get(), path_, 0));
    if (::rmdir(path_.c_str()) < 0 && errno != ENOENT) {
        return Error::from_errno(cat("remove ", path_));
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
