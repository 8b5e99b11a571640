// mini-run kill [--all] ID [SIGNAL]: signal a container's init (TERM by default).
#include "commands.hpp"
#include "minirun/runtime.hpp"

namespace minirun::cli {

CommandRunner add_kill_command(CLI::App& app, GlobalOptions& global) {
    struct Options {
        std::string id;
        std::string signal = "TERM";
        bool all = false;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("kill", "send a signal to a container's init");
    command->add_flag("--all,-a", options->all, "signal every process of the container");
    add_id(*command, options->id);
    command->add_option("signal", options->signal, "a number (9) or a name (KILL, SIGKILL)")
        ->capture_default_str();
    return [options, &global]() {
        auto signal = parse_signal(options->signal);
        if (!signal) {
            return fail(signal.error().message());
        }
        if (auto killed = kill_container(global.root, options->id, *signal, options->all);
            !killed) {
            return fail(killed.error().message());
        }
        return 0;
    };
}

} // namespace minirun::cli
