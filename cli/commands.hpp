// One file per command. Each registers a CLI11 subcommand and, when it runs, calls one
// function of the library; the library knows nothing about CLI11.
#pragma once

#include "minirun/runtime.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <functional>
#include <string>

namespace minirun::cli {

// Flags that come before the subcommand, as runc takes them.
struct GlobalOptions {
    std::string root = "/run/mini-run";
    std::string log_file;
    std::string log_format = "text";
    bool debug = false;
    bool systemd_cgroup = false;
    bool no_cgroups = false; // --cgroup-manager disabled
    std::string rootless = "auto";
    // The command line, for `create` and `run` to re-execute themselves from a protected view of
    // mini-run when their container cannot use the exec gate (runtime/security/exec_gate.hpp).
    char** argv = nullptr;
};

// A registered command: when its subcommand was given, `run` returns the exit code.
using CommandRunner = std::function<int()>;

CommandRunner add_create_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_start_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_run_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_state_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_kill_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_delete_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_exec_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_list_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_ps_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_features_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_spec_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_update_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_pause_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_resume_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_events_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_check_command(CLI::App& app, GlobalOptions& global); // check.cpp

// `exec ID -- COMMAND...`: the "--" only separates the command; CLI11 would take what
// follows it as positionals of mini-run itself. Removes it from `args` (argv as strings).
void drop_exec_separator(std::vector<std::string>& args);

// The options create and run share (create.cpp).
void add_create_options(CLI::App& command, CreateOptions& options);

// The container id positional, required.
inline void add_id(CLI::App& command, std::string& id) {
    command.add_option("id", id, "container id")->required();
}

// The caller's NOTIFY_SOCKET (sd_notify(3)), which create, run and start read as runc's
// do: "" when unset.
inline std::string notify_socket_of_caller() {
    const char* value = std::getenv("NOTIFY_SOCKET");
    return value != nullptr ? value : "";
}

// Prints "mini-run: <message>" (and logs it as JSON when asked) and returns 1.
int fail(const std::string& message);

} // namespace minirun::cli
