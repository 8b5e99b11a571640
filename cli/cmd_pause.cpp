// mini-run pause ID / mini-run resume ID: freeze and thaw every process of a container.
#include "commands.hpp"
#include "minirun/runtime.hpp"

namespace minirun::cli {

CommandRunner add_pause_command(CLI::App& app, GlobalOptions& global) {
    auto id = std::make_shared<std::string>();
    CLI::App* command = app.add_subcommand("pause", "freeze every process of a container");
    add_id(*command, *id);
    return [id, &global]() {
        if (auto paused = pause_container(global.root, *id); !paused) {
            return fail(paused.error().message());
        }
        return 0;
    };
}

CommandRunner add_resume_command(CLI::App& app, GlobalOptions& global) {
    auto id = std::make_shared<std::string>();
    CLI::App* command = app.add_subcommand("resume", "thaw a paused container");
    add_id(*command, *id);
    return [id, &global]() {
        if (auto resumed = resume_container(global.root, *id); !resumed) {
            return fail(resumed.error().message());
        }
        return 0;
    };
}

} // namespace minirun::cli
