// mini-run run [--bundle DIR] [--detach] [--pid-file F] [--console-socket S] [--keep] ID
// create + start; in the foreground, wait and exit with the container's exit code.
#include "commands.hpp"
#include "minirun/runtime.hpp"

namespace minirun::cli {

CommandRunner add_run_command(CLI::App& app, GlobalOptions& global) {
    auto options = std::make_shared<RunOptions>();
    CLI::App* command = app.add_subcommand(
        "run", "create and start a container; in the foreground, exit with its exit code");
    add_create_options(*command, *options);
    command->add_flag("--detach,-d", options->detach, "return once the container has started");
    command->add_flag("--keep", options->keep, "do not delete the container after it exits");
    return [options, &global]() {
        options->root = global.root;
        options->systemd_cgroup = global.systemd_cgroup;
        options->no_cgroups = global.no_cgroups;
        options->reexec_argv = global.argv;
        options->notify_socket = notify_socket_of_caller();
        auto exit_code = run_container(*options);
        if (!exit_code) {
            return fail(exit_code.error().message());
        }
        return *exit_code;
    };
}

} // namespace minirun::cli
