// mini-run create [--bundle DIR] [--config FILE] [--pid-file F] [--console-socket S]
// [--preserve-fds N] ID Sets the container up; its process waits for `mini-run start`.
#include "commands.hpp"
#include "minirun/runtime.hpp"

namespace minirun::cli {

void add_create_options(CLI::App& command, CreateOptions& options) {
    command.add_option("--bundle,-b", options.bundle,
                       "bundle directory holding config.json (default: the current directory)");
    // crun's flag, which crun users' scripts pass.
    command.add_option("--config,-f", options.config,
                       "the config file to use instead of BUNDLE/config.json (relative to the "
                       "bundle)");
    command.add_option("--pid-file", options.pid_file, "write the init's pid to this file");
    command.add_option("--console-socket", options.console_socket,
                       "unix socket to send the terminal's master fd to (process.terminal)");
    command.add_option("--pidfd-socket", options.pidfd_socket,
                       "unix socket to send a pidfd of the container's init to");
    command
        .add_option("--preserve-fds", options.preserve_fds,
                    "pass this many fds after stdio (3, 4, ...) to the container")
        ->check(CLI::NonNegativeNumber);
    // Accepted for compatibility with runc's callers; mini-run always pivots and never
    // creates a session keyring.
    command.add_flag("--no-pivot")->description("accepted for runc compatibility");
    command.add_flag("--no-new-keyring")->description("accepted for runc compatibility");
    add_id(command, options.id);
}

CommandRunner add_create_command(CLI::App& app, GlobalOptions& global) {
    auto options = std::make_shared<CreateOptions>();
    CLI::App* command =
        app.add_subcommand("create", "create a container; its process waits for `start`");
    add_create_options(*command, *options);
    return [options, &global]() {
        options->root = global.root;
        options->systemd_cgroup = global.systemd_cgroup;
        options->no_cgroups = global.no_cgroups;
        options->reexec_argv = global.argv;
        options->notify_socket = notify_socket_of_caller();
        if (auto created = create_container(*options); !created) {
            return fail(created.error().message());
        }
        return 0;
    };
}

} // namespace minirun::cli
