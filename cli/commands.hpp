// One file per command. Each registers a CLI11 subcommand and, when it runs, calls one
// function of the library; the library knows nothing about CLI11.
#pragma once

#include <CLI/CLI.hpp>

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
    std::string rootless = "auto";
};

// A registered command: when its subcommand was given, `run` returns the exit code.
using CommandRunner = std::function<int()>;

CommandRunner add_run_command(CLI::App& app, GlobalOptions& global);
CommandRunner add_spec_command(CLI::App& app, GlobalOptions& global);

// Prints "mini-run: <message>" (and logs it as JSON when asked) and returns 1.
int fail(const std::string& message);

} // namespace minirun::cli
