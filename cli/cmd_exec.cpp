// mini-run exec [--process F | options] ID [COMMAND...]: run a new process in a container.
#include "commands.hpp"
#include "minirun/file.hpp"
#include "minirun/runtime.hpp"
#include "minirun/units.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <set>
#include <utility>

namespace minirun::cli {
namespace {

struct ExecFlags {
    ExecOptions options;
    std::string process_file;
    bool tty = false;
    std::string cwd;
    std::vector<std::string> env;
    std::string user;
    bool user_given = false; // "--user ''" too: refused, not read as "no --user"
    std::vector<uint32_t> additional_gids;
    std::vector<std::string> caps;
    bool no_new_privs = false;
    std::vector<std::string> command;
};

// --additional-gids: CLI11 refuses a sign or a non-number; (gid_t)-1 is refused here.
Status check_additional_gids(const std::vector<uint32_t>& gids) {
    for (uint32_t gid : gids) {
        if (gid == units::kNoId) {
            return Error(EINVAL, cat("--additional-gids ", gid, ": out of range: at most ",
                                     units::kNoId - 1));
        }
    }
    return {};
}

// "KEY=value" replaces an existing KEY or is appended.
void set_env(std::vector<std::string>& env, const std::string& entry) {
    std::string key = entry.substr(0, entry.find('=') + 1);
    for (std::string& existing : env) {
        if (existing.starts_with(key)) {
            existing = entry;
            return;
        }
    }
    env.push_back(entry);
}

void add_capability(std::vector<std::string>& set, const std::string& name) {
    if (std::find(set.begin(), set.end(), name) == set.end()) {
        set.push_back(name);
    }
}

// Applies the command line's changes to the container's own process (as runc builds it).
Result<spec::Process> with_flags(const ExecFlags& flags, spec::Process process) {
    process.args = flags.command;
    process.terminal = flags.tty;
    process.console_size.reset();
    if (!flags.cwd.empty()) {
        process.cwd = flags.cwd;
    }
    for (const std::string& entry : flags.env) {
        set_env(process.env, entry);
    }
    if (flags.user_given) {
        // As runc: --user UID keeps the process's gid; UID:GID sets both.
        MR_ASSIGN(units::UserIds ids, units::parse_user_ids(flags.user));
        process.user.uid = ids.uid;
        process.user.gid = ids.gid.value_or(process.user.gid);
    }
    if (!flags.additional_gids.empty()) {
        process.user.additional_gids = flags.additional_gids;
    }
    if (!flags.caps.empty()) {
        if (!process.capabilities) {
            process.capabilities.emplace();
        }
        // As runc 1.3: never into inheritable; into ambient only when the config has an
        // inheritable set (runc: "ambient capabilities can't be set without inheritable"),
        // so that a non-root user gets the capability across its exec when the container's
        // process could.
        spec::Capabilities& caps = *process.capabilities;
        for (const std::string& cap : flags.caps) {
            add_capability(caps.bounding, cap);
            add_capability(caps.effective, cap);
            add_capability(caps.permitted, cap);
            if (caps.inheritable_given) {
                add_capability(caps.ambient, cap);
            }
        }
    }
    process.no_new_privileges = process.no_new_privileges || flags.no_new_privs;
    return process;
}

// A --process file as given, with what it leaves out taken from the container's own: as
// runc, the file's scheduler, ioPriority and execCPUAffinity override the container's
// (runc's exec starts from the container's config and lets the process replace them,
// "should override the ioprio in config.json"); absent, the container's apply. So do its
// capabilities: a file without them gets the container's (runc's finalizeNamespace), not
// all of root's.
spec::Process with_defaults(spec::Process process, const spec::Process* own) {
    if (own == nullptr) {
        return process;
    }
    if (!process.scheduler) {
        process.scheduler = own->scheduler;
    }
    if (!process.io_priority) {
        process.io_priority = own->io_priority;
    }
    if (!process.exec_cpu_affinity) {
        process.exec_cpu_affinity = own->exec_cpu_affinity;
    }
    if (!process.capabilities) {
        process.capabilities = own->capabilities;
    }
    return process;
}

// The protected re-exec (runtime/security/sealed_exe.hpp) starts `exec` over after the --process
// file was read: from a pipe (`-p <(...)`, as runc's tests pass it) the new start would
// read nothing. So the text of a file that is not a regular one is passed on in the
// environment, as "PATH\nTEXT" (never to the container's process, whose environment is
// process.env), and taken back from there for the same path only.
constexpr const char* kProcessVariable = "_MINIRUN_EXEC_PROCESS";
constexpr size_t kMaxPassedProcess = size_t{96} * 1024; // below the kernel's 128 KiB per string

Result<std::string> read_process_file(const std::string& path) {
    if (const char* passed = std::getenv(kProcessVariable); passed != nullptr) {
        std::string_view value(passed);
        if (value.starts_with(path + "\n")) {
            std::string text(value.substr(path.size() + 1));
            ::unsetenv(kProcessVariable);
            return text;
        }
    }
    MR_ASSIGN(std::string text, fs::read_file(path));
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) &&
        text.size() <= kMaxPassedProcess) {
        ::setenv(kProcessVariable, cat(path, "\n", text).c_str(), 1);
    }
    return text;
}

// What makes the process once the container is open (ExecOptions::make_process). What can
// be checked without the container is checked now: the --process file, the command, --env.
Status set_process_maker(const ExecFlags& flags, ExecOptions& options) {
    if (!flags.process_file.empty()) {
        MR_ASSIGN(std::string text, read_process_file(flags.process_file));
        MR_ASSIGN(spec::Process process, spec::parse_process(text, flags.process_file));
        process.terminal = process.terminal || flags.tty;
        options.make_process = [process = std::move(process)](const spec::Process* own) {
            return Result<spec::Process>(with_defaults(process, own));
        };
        return {};
    }
    if (flags.command.empty()) {
        return Error(EINVAL, "exec: no command given (use --process F or give the command)");
    }
    for (const std::string& entry : flags.env) {
        if (entry.find('=') == std::string::npos) {
            return Error(EINVAL, cat("--env ", quoted(entry), ": expected KEY=value"));
        }
    }
    if (flags.user_given) {
        MR_TRY(units::parse_user_ids(flags.user));
    }
    MR_TRY(check_additional_gids(flags.additional_gids));
    options.make_process = [&flags, id = options.id](const spec::Process* own) {
        if (own == nullptr) {
            return Result<spec::Process>(
                Error(EINVAL, cat("container ", quoted(id), " has no process")));
        }
        return with_flags(flags, *own);
    };
    return {};
}

} // namespace

void drop_exec_separator(std::vector<std::string>& args) {
    // Options of mini-run and of exec that take a separate value.
    static const std::set<std::string_view> kWithValue = {"--root",       "--log",
                                                          "--log-format", "--rootless",
                                                          "--process",    "-p",
                                                          "--pid-file",   "--console-socket",
                                                          "--cwd",        "--env",
                                                          "-e",           "--user",
                                                          "-u",           "--additional-gids",
                                                          "-g",           "--cap",
                                                          "-c",           "--preserve-fds",
                                                          "--cgroup",     "--pidfd-socket",
                                                          "--apparmor",   "--process-label"};
    bool in_exec = false;
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (kWithValue.contains(arg) || arg == "--cgroup-manager") {
            ++i;
            continue;
        }
        if (arg.starts_with("-")) {
            continue;
        }
        if (!in_exec) {
            if (arg != "exec") {
                return; // another command
            }
            in_exec = true;
            continue;
        }
        // `arg` is the id: a "--" right after it only separates the command.
        if (i + 1 < args.size() && args[i + 1] == "--") {
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
        return;
    }
}

CommandRunner add_exec_command(CLI::App& app, GlobalOptions& global) {
    auto flags = std::make_shared<ExecFlags>();
    CLI::App* command = app.add_subcommand("exec", "run a new process inside a container");
    command->add_option("--process,-p", flags->process_file, "an OCI process JSON file");
    command->add_flag("--detach,-d", flags->options.detach, "return once the process runs");
    command->add_option("--pid-file", flags->options.pid_file, "write the process's pid here");
    command->add_flag("--tty,-t", flags->tty, "give the process a terminal");
    command->add_option("--console-socket", flags->options.console_socket,
                        "unix socket to send the terminal's master fd to");
    command->add_option("--pidfd-socket", flags->options.pidfd_socket,
                        "unix socket to send a pidfd of the new process to");
    command->add_option("--cwd", flags->cwd, "working directory inside the container");
    // Repeatable, one value each: vector options would otherwise swallow the id.
    command->add_option("--env,-e", flags->env, "set an environment variable (KEY=value)")
        ->allow_extra_args(false);
    CLI::Option* user = command->add_option("--user,-u", flags->user, "UID[:GID] to run as");
    command->add_option("--additional-gids,-g", flags->additional_gids, "supplementary groups")
        ->allow_extra_args(false);
    command->add_option("--cap,-c", flags->caps, "add a capability (CAP_NET_ADMIN)")
        ->allow_extra_args(false);
    command->add_flag("--no-new-privs", flags->no_new_privs, "set no_new_privileges");
    command->add_option("--apparmor", flags->options.apparmor_profile,
                        "the process's AppArmor profile, instead of the container's");
    command->add_option("--process-label", flags->options.process_label,
                        "the process's SELinux label, instead of the container's");
    command->add_flag("--ignore-paused", flags->options.ignore_paused,
                      "exec in a paused container too (the process waits for resume)");
    command
        ->add_option("--cgroup", flags->options.cgroups,
                     "[CONTROLLER[,CONTROLLER...]:]PATH: a sub-cgroup to run in")
        ->allow_extra_args(false);
    command
        ->add_option("--preserve-fds", flags->options.preserve_fds,
                     "pass this many fds after stdio to the process")
        ->check(CLI::NonNegativeNumber);
    add_id(*command, flags->options.id);
    // Everything after the id is the command, with options of its own (sh -c ...): with no
    // positional left to fill, parsing stops at the command and leaves it in remaining().
    command->prefix_command();
    command->footer("COMMAND [ARG...] follows the id.");
    return [flags, command, user, &global]() {
        flags->options.root = global.root;
        flags->user_given = user->count() > 0;
        for (const std::string& extra : command->remaining()) {
            flags->command.push_back(extra);
        }
        // As runc: 255 when mini-run itself failed, so that it cannot be taken for the exit
        // code of the process (which a foreground exec returns).
        constexpr int kRuntimeFailed = 255;
        if (auto made = set_process_maker(*flags, flags->options); !made) {
            (void)fail(made.error().message());
            return kRuntimeFailed;
        }
        flags->options.reexec_argv = global.argv;
        auto exit_code = exec_in_container(flags->options);
        if (!exit_code) {
            (void)fail(exit_code.error().message());
            return kRuntimeFailed;
        }
        return *exit_code;
    };
}

} // namespace minirun::cli
