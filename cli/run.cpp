// mini-run run [--bundle DIR] ID: create a container and run its process in the foreground.
#include "commands.hpp"
#include "minirun/runtime.hpp"

namespace minirun::cli {

CommandRunner add_run_command(CLI::App& app, GlobalOptions& /*global*/) {
    auto options = std::make_shared<RunOptions>();
    CLI::App* command = app.add_subcommand(
        "run", "create a container and run it in the foreground; exits with its exit code");
    command->add_option("--bundle,-b", options->bundle,
                        "bundle directory holding config.json (default: the current directory)");
    command
        ->add_option("--preserve-fds", options->preserve_fds,
                     "pass this many fds after stdio (3, 4, ...) to the container")
        ->check(CLI::NonNegativeNumber);
    command->add_option("id", options->id, "container id")->required();
    return [options]() {
        auto exit_code = run_container(*options);
        if (!exit_code) {
            return fail(exit_code.error().message());
        }
        return *exit_code;
    };
}

} // namespace minirun::cli
