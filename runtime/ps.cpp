// What there is: `list` (the containers under a root) and `ps ID [ARGS...]`: ps(1) run on
// the host with the caller's arguments, its table narrowed down to the container's
// processes, as runc's `ps` does (its default arguments, "-ef", too). The container's
// processes are its cgroup's; which columns to show is ps's business.
#include "lifecycle.hpp"
#include "minirun/fd.hpp"
#include "minirun/log.hpp"
#include "minirun/runtime.hpp"
#include "mountinfo.hpp"
#include "state.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace minirun {
namespace {

// Runs `argv` (looked up in PATH, or the default search path when there is none: an engine
// may call us with an empty environment) and returns its standard output.
Result<std::string> output_of(const std::vector<std::string>& argv) {
    std::array<int, 2> pipe_fds{};
    if (::pipe2(pipe_fds.data(), O_CLOEXEC) < 0) {
        return Error::from_errno("pipe");
    }
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& arg : argv) {
        args.push_back(
            const_cast<char*>(arg.c_str())); // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }
    args.push_back(nullptr);
    pid_t pid = 0;
    int spawned = ::posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
        return Error::from_errno(spawned, cat("ps: run ", quoted(argv[0])));
    }
    write_end.reset();
    std::string out;
    std::array<char, 4096> buffer{};
    for (;;) {
        ssize_t got = ::read(read_end.get(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        out.append(buffer.data(), static_cast<size_t>(got));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return Error(EIO, cat("ps failed: ", quoted(argv[0]), " exited with ",
                              WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
    }
    return out;
}

} // namespace

Result<std::string> filter_ps_output(std::string_view output, const std::vector<pid_t>& pids) {
    auto lines = fs::split(output, '\n');
    if (lines.empty() || lines.front().empty()) {
        return Error(EIO, "ps printed no header");
    }
    auto header = fs::split_words(lines.front());
    auto pid_column = std::find(header.begin(), header.end(), "PID");
    if (pid_column == header.end()) {
        return Error(EINVAL, "ps: no PID column in its output (add -o pid, or a format with it)");
    }
    auto index = static_cast<size_t>(pid_column - header.begin());
    std::string out = cat(lines.front(), "\n");
    for (size_t i = 1; i < lines.size(); ++i) {
        auto fields = fs::split_words(lines[i]);
        if (fields.size() <= index) {
            continue;
        }
        pid_t pid = 0;
        std::string_view field = fields[index];
        if (std::from_chars(field.data(), field.data() + field.size(), pid).ec != std::errc() ||
            std::find(pids.begin(), pids.end(), pid) == pids.end()) {
            continue;
        }
        out += cat(lines[i], "\n");
    }
    return out;
}

Result<std::string> container_ps(const std::string& root, const std::string& id,
                                 const std::vector<std::string>& ps_args) {
    MR_ASSIGN(std::vector<pid_t> pids, container_pids(root, id));
    std::vector<std::string> argv = {"ps"};
    if (ps_args.empty()) {
        argv.emplace_back("-ef");
    } else {
        argv.insert(argv.end(), ps_args.begin(), ps_args.end());
    }
    MR_ASSIGN(std::string output, output_of(argv));
    return filter_ps_output(output, pids);
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
            // Listed, so that it is seen and can be deleted; the reason goes to stderr.
            if (record.error().errno_value() == state::kCorrupt) {
                log::warning(record.error().message());
                out.push_back({id, 0, "corrupt", "", "", ""});
            }
            continue; // otherwise being created or deleted right now
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
        } else if (record.error().errno_value() == state::kCorrupt) {
            // No state object can be made of it; engines parse every entry as one.
            log::warning(record.error().message());
        }
    }
    return out + "]";
}

Result<std::vector<pid_t>> container_pids(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id, runtime::Access::read));
    std::vector<pid_t> pids;
    for (const runtime::ProcessRef& process : runtime::processes_of(container.record)) {
        pids.push_back(process.pid);
    }
    return pids;
}

} // namespace minirun
