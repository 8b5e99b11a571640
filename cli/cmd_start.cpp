// mini-run start ID: let a created container's process run.
#include "commands.hpp"
#include "minirun/runtime.hpp"

namespace minirun::cli {

CommandRunner add_start_command(CLI::App& app, GlobalOptions& global) {
    auto id = std::make_shared<std::string>();
    CLI::App* command = app.add_subcommand("start", "start a created container");
    add_id(*command, *id);
    return [id, &global]() {
        if (auto started = start_container(global.root, *id, notify_socket_of_caller()); !started) {
            return fail(started.error().message());
        }
        return 0;
    };
}

} // namespace minirun::cli
