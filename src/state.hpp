// Container state on disk: one directory per container under the state root.
//
//   <root>/<id>/            made with one mkdir(2): a second create of the same id fails
//     state.json            the Record, written to a temp file and renamed into place
//     config.json           the exact config.json bytes read at create: later edits to the
//                           bundle's config have no effect (runtime-spec)
//     exec.fifo             exists from create until start: the init blocks reading it
//     recovery.json         a copy of the Record, for `delete --force` when state.json is
//                           damaged: written before the cgroups are made (with their
//                           directories), and again with the init's pid and start time
//                           where the cgroups alone cannot find the init (none of its own,
//                           or shared with others)
//
// Every file is opened relative to the directory's fd with O_NOFOLLOW: a state.json
// replaced by a symlink is reported corrupt, never followed.
//
// Status is never trusted from the file alone; it is derived from the live system: the
// recorded init pid must exist and have the start time recorded at create (otherwise the
// pid died, or was reused by an unrelated process: "stopped").
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::state {

// The errno of every "corrupt state" error: state.json (or recovery.json) exists but is
// not a file this runtime wrote (empty, truncated, garbage, a symlink, another type).
inline constexpr int kCorrupt = EUCLEAN;

enum class Status { creating, created, running, paused, stopped };
std::string_view status_name(Status status);

// What mini-run records about a container in state.json.
struct Record {
    std::string oci_version; // the config's ociVersion
    std::string id;
    pid_t pid = 0;               // host pid of the init; 0 while creating
    uint64_t pid_start_time = 0; // field 22 of /proc/<pid>/stat at create
    std::string bundle;          // absolute
    std::string rootfs;          // absolute
    std::string created;         // RFC 3339, UTC
    std::string owner;           // user name of the creator ("root"), or the uid as text
    std::map<std::string, std::string> annotations;
    bool paused = false; // set by pause/resume (cgroup freezer)
    // The container's cgroup directories, by hierarchy (runtime/cgroup/cgroup.hpp), recorded
    // before the init is cloned so that a delete after a crash still finds them.
    std::map<std::string, std::string> cgroup_paths;
    // The cgroups held other processes already at create (runc allows that, with a
    // warning): delete then ends only the container's own processes and leaves the
    // cgroups to their other users.
    bool cgroup_shared = false;
};

// The OCI state JSON (runtime-spec state schema; status may also be "paused", as runc
// and crun print it): ociVersion, id, pid (0 when stopped, as runc prints it; omitted
// while creating with no init yet, i.e. record.pid == 0; hooks run during creating get the
// init's pid), status, bundle, rootfs, created, owner, annotations (always an object).
// Pretty-printed with 2 spaces, like runc; no trailing newline.
std::string oci_state_json(const Record& record, Status status);

// One container as `runc list --format json` prints it, compact: runc's key order (ociVersion,
// id, pid, status, bundle, rootfs, created, annotations only when there are some, owner),
// which scripts written for runc match on.
std::string list_entry_json(const Record& record, Status status);

// The start time (clock ticks since boot, field 22 of /proc/<pid>/stat) of a live,
// non-zombie process; ESRCH when there is no such process or it is a zombie.
Result<uint64_t> process_start_time(pid_t pid);

// The user name of `uid` from the host's password database, or the number as text.
std::string owner_name(uid_t uid);

// A container's state directory, open. Every function returns errors whose messages
// contain the words engines match on: `container "X" does not exist`, `container "X"
// already exists`.
class StateDir {
public:
    // Creates <root>/<id> (and `root`, mode 0711, when missing). EEXIST -> "already exists".
    static Result<StateDir> create(const std::string& root, const std::string& id);
    // Opens an existing one. ENOENT -> "does not exist".
    static Result<StateDir> open(const std::string& root, const std::string& id);

    StateDir() = default;
    StateDir(StateDir&&) = default;
    StateDir& operator=(StateDir&&) = default;
    StateDir(const StateDir&) = delete;
    StateDir& operator=(const StateDir&) = delete;
    ~StateDir() = default;

    [[nodiscard]] const std::string& id() const { return id_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string fifo_path() const { return path_ + "/exec.fifo"; }

    // An exclusive flock(2) on the directory, held until this StateDir (its fd) is closed.
    // Every command that changes a container takes it first.
    minirun::Status lock();

    minirun::Status save(const Record& record); // state.json via a temp file + rename
    // A missing state.json is "does not exist" (ENOENT); a damaged one is kCorrupt, the
    // message naming the container, the file and what is wrong with it.
    Result<Record> load() const;
    // recovery.json, the same way; a missing one is ENOENT.
    minirun::Status save_recovery(const Record& record);
    Result<Record> load_recovery() const;
    // save(), and recovery.json the same record as a second name of the new state.json
    // (where it had none yet): the next save() replaces state.json by a new file, while
    // recovery.json keeps this one. A file fewer to make than save() + save_recovery().
    minirun::Status save_with_recovery(const Record& record);
    minirun::Status save_config(std::string_view config_text);
    Result<std::string> load_config() const;

    // mkfifo exec.fifo (mode 0600).
    minirun::Status make_fifo();
    [[nodiscard]] bool fifo_exists() const;

    // An empty file `name` (mode 0600): a mark one command leaves for the next ones
    // (exec_gate.hpp's kPtraceMark). Idempotent; gone with the directory.
    minirun::Status add_mark(const char* name);
    [[nodiscard]] bool has_mark(const char* name) const;

    // The status, from the record and the live system: creating (pid 0), stopped (the
    // init is gone, a zombie, or its pid now belongs to another process), paused
    // (record.paused and alive), created (exec.fifo still exists), running.
    [[nodiscard]] Status status_of(const Record& record) const;

    // Removes the directory and everything in it, through the directory's fd: whatever an
    // entry is (a symlink to a file elsewhere, a directory), only the entry goes, nothing
    // outside the state directory is touched. Idempotent.
    minirun::Status remove();

private:
    StateDir(std::string id, std::string path, UniqueFd fd)
        : id_(std::move(id)), path_(std::move(path)), fd_(std::move(fd)) {}
    std::string id_;
    std::string path_;
    UniqueFd fd_; // O_DIRECTORY, close-on-exec; holds the flock
};

// The ids of every container under `root`, sorted; an empty list if `root` is missing.
Result<std::vector<std::string>> list_ids(const std::string& root);

} // namespace minirun::state
