// mini-run state ID: the container's state as OCI JSON on stdout.
#include "commands.hpp"
#include "minirun/runtime.hpp"

#include <iostream>

namespace minirun::cli {

CommandRunner add_state_command(CLI::App& app, GlobalOptions& global) {
    auto id = std::make_shared<std::string>();
    CLI::App* command = app.add_subcommand("state", "print a container's state as JSON");
    add_id(*command, *id);
    return [id, &global]() {
        auto state = container_state(global.root, *id);
        if (!state) {
            return fail(state.error().message());
        }
        std::cout << *state << "\n";
        return 0;
    };
}

} // namespace minirun::cli
