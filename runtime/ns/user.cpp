#include "ns/user.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"

#include "minirun/file.hpp"
#include "minirun/rootless.hpp"
#include "minirun/units.hpp"
#include "state.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <optional>

namespace minirun::runtime::user {

namespace {

// How each map gets written (rootless.hpp, MapWriter): by mini-run itself when it is root
// (of the host, or of the user namespace rootless podman made: the kernel checks those
// maps against its own), or when the map is only the caller's own id; else by the setuid
// helper, which checks /etc/subuid or /etc/subgid.
rootless::MapWriter writer_for(const std::vector<spec::IdMapping>& mappings, uint32_t own) {
    if (::geteuid() == 0 || rootless::maps_only_own_id(mappings, own)) {
        return rootless::MapWriter::direct;
    }
    return rootless::MapWriter::helper;
}

// newuidmap or newgidmap in the usual places: PATH is the caller's, and may be empty.
std::optional<std::string> find_helper(const char* name) {
    for (const char* dir : {"/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/", "/usr/local/bin/"}) {
        std::string path = cat(dir, name);
        if (::access(path.c_str(), X_OK) == 0) {
            return path;
        }
    }
    return std::nullopt;
}

struct MapKind {
    const char* path;   // "linux.uidMappings"
    const char* helper; // "newuidmap"
    const char* file;   // "/etc/subuid"
    const char* proc;   // "uid_map"
};
constexpr MapKind kUidMaps{"linux.uidMappings", "newuidmap", "/etc/subuid", "uid_map"};
constexpr MapKind kGidMaps{"linux.gidMappings", "newgidmap", "/etc/subgid", "gid_map"};

Status check_one(const MapKind& kind, const std::vector<spec::IdMapping>& mappings, uint32_t own) {
    if (writer_for(mappings, own) == rootless::MapWriter::direct) {
        return {};
    }
    if (!find_helper(kind.helper)) {
        return Error(ENOENT,
                     cat(kind.path, ": mapping more than your own id (", own, ") needs ",
                         kind.helper, ", which is not installed (Debian's uidmap package)"));
    }
    auto text = fs::read_file(kind.file);
    if (!text && text.error().errno_value() != ENOENT) {
        return text.error().wrap(kind.path);
    }
    const std::string name = state::owner_name(::geteuid());
    return rootless::check_subid_mappings(
        mappings, kind.path, own, name, kind.file,
        rootless::parse_subid(text ? *text : std::string(), name, ::geteuid()));
}

// Runs newuidmap/newgidmap PID C H S ...; its own message (it says why it refused) ends
// the error.
Status run_helper(const MapKind& kind, pid_t init_pid,
                  const std::vector<spec::IdMapping>& mappings) {
    std::optional<std::string> helper = find_helper(kind.helper);
    if (!helper) {
        return Error(ENOENT, cat(kind.path, ": ", kind.helper, " is not installed"));
    }
    std::vector<std::string> args = {*helper, cat(init_pid)};
    for (const spec::IdMapping& mapping : mappings) {
        args.push_back(cat(mapping.container_id));
        args.push_back(cat(mapping.host_id));
        args.push_back(cat(mapping.size));
    }
    if (explain::enabled()) {
        std::string line;
        for (const std::string& arg : args) {
            line += cat(line.empty() ? "" : " ", arg);
        }
        explain::step(cat("run ", line, ": the setuid helper checks ", kind.file));
    }
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        return Error::from_errno(cat(kind.path, ": pipe"));
    }
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
    std::array<char*, 2> env = {const_cast<char*>("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nullptr};
    pid_t pid = 0;
    int spawned = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    write_end.reset();
    if (spawned != 0) {
        return Error(spawned, cat(kind.path, ": run ", *helper));
    }
    std::string output;
    std::array<char, 512> chunk{};
    for (ssize_t n = 0; (n = ::read(read_end.get(), chunk.data(), chunk.size())) != 0;) {
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            break;
        }
        output.append(chunk.data(), static_cast<size_t>(n));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return {};
    }
    while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) {
        output.pop_back();
    }
    std::replace(output.begin(), output.end(), '\n', ' ');
    return Error(EPERM, cat(kind.path, ": ", kind.helper,
                            " refused: ", output.empty() ? std::string("no message") : output));
}

Status write_one(const MapKind& kind, pid_t init_pid, const std::vector<spec::IdMapping>& mappings,
                 uint32_t own, const std::string& text, const procfs::Handle& proc) {
    if (writer_for(mappings, own) == rootless::MapWriter::helper) {
        return run_helper(kind, init_pid, mappings);
    }
    std::string file = cat(init_pid, "/", kind.proc);
    if (explain::enabled()) {
        explain::step(cat("write /proc/", file, ": ", quoted(text)));
    }
    MR_TRY_WRAP(proc.write(file, text), kind.path);
    return {};
}

} // namespace

Status check_id_maps(const Plan& plan, const spec::Linux& linux) {
    if (::geteuid() == 0) {
        return {};
    }
    if (!plan.creates(spec::NamespaceType::user) &&
        !plan.joins_namespace(spec::NamespaceType::user)) {
        return Error(EPERM, cat("linux.namespaces: running as uid ", ::geteuid(),
                                " (not root), the container needs a user namespace "
                                "(mini-run spec --rootless writes one)"));
    }
    if (!plan.creates(spec::NamespaceType::user)) {
        return {};
    }
    MR_TRY(check_one(kUidMaps, linux.uid_mappings, ::geteuid()));
    MR_TRY(check_one(kGidMaps, linux.gid_mappings, ::getegid()));
    return {};
}

Status write_id_maps(pid_t init_pid, const Plan& plan, const spec::Linux& linux,
                     const procfs::Handle& proc) {
    // An unprivileged writer may only map its own gid after denying setgroups(2), or it
    // could drop a group that denies it access (CVE-2014-8989). Root has CAP_SETGID in
    // the parent namespace and keeps setgroups usable for additionalGids, and so does
    // newgidmap, which is setuid root and checks /etc/subgid.
    if (::geteuid() != 0 &&
        writer_for(linux.gid_mappings, ::getegid()) == rootless::MapWriter::direct) {
        MR_TRY_WRAP(proc.write(cat(init_pid, "/setgroups"), "deny"), "user namespace");
    }
    MR_TRY(write_one(kGidMaps, init_pid, linux.gid_mappings, ::getegid(), plan.gid_map, proc));
    MR_TRY(write_one(kUidMaps, init_pid, linux.uid_mappings, ::geteuid(), plan.uid_map, proc));
    return {};
}

Status become_namespace_root(Syscalls& sys) {
    MR_TRY_WRAP(sys.setresgid(0), "become root in the user namespace");
    MR_TRY_WRAP(sys.setresuid(0), "become root in the user namespace");
    return {};
}

Status apply_process_identity(const spec::User& user, Syscalls& sys) {
    // Always set the groups, even to none: otherwise the container inherits the runtime
    // caller's supplementary groups.
    std::vector<gid_t> groups(user.additional_gids.begin(), user.additional_gids.end());
    if (auto status = sys.setgroups(groups); !status) {
        // Where setgroups is denied (a user namespace made without privileges), an empty
        // list is what the process has anyway.
        if (!(groups.empty() && status.error().errno_value() == EPERM)) {
            return status.error().wrap("process.user.additionalGids");
        }
    }
    if (explain::enabled()) {
        explain::step(cat("setgroups(", groups.size(), " groups), setresgid(", user.gid,
                          "), setresuid(", user.uid, ")"));
    }
    // (uid_t)-1 would leave the ids unchanged (root): never passed on, whatever path the
    // value came by (the config and exec's parsers refuse it already).
    if (user.uid == units::kNoId || user.gid == units::kNoId) {
        return Error(EINVAL, "process.user: (uid_t)-1 is not an id");
    }
    MR_TRY_WRAP(sys.setresgid(user.gid), "process.user.gid");
    MR_TRY_WRAP(sys.setresuid(user.uid), "process.user.uid");
    return {};
}

} // namespace minirun::runtime::user
