// mini-run delete [--force] ID: remove everything create made.
#include "commands.hpp"
#include "minirun/runtime.hpp"

namespace minirun::cli {

CommandRunner add_delete_command(CLI::App& app, GlobalOptions& global) {
    struct Options {
        std::string id;
        bool force = false;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("delete", "delete a stopped container");
    command->add_flag("--force,-f", options->force,
                      "kill a running container first; succeed for an unknown one");
    add_id(*command, options->id);
    return [options, &global]() {
        if (auto deleted = delete_container(global.root, options->id, options->force); !deleted) {
            return fail(deleted.error().message());
        }
        return 0;
    };
}

} // namespace minirun::cli
