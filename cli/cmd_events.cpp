// mini-run events [--stats] [--interval D] ID: the container's resource usage as JSON
// lines, once (--stats) or as a stream with OOM notices, in runc's event format.
#include "commands.hpp"
#include "minirun/runtime.hpp"
#include "minirun/units.hpp"

#include <iostream>

namespace minirun::cli {

CommandRunner add_events_command(CLI::App& app, GlobalOptions& global) {
    struct Options {
        std::string id;
        bool stats = false;
        std::string interval = "5s";
    };
    auto options = std::make_shared<Options>();
    CLI::App* command =
        app.add_subcommand("events", "print a container's resource usage and OOM events");
    command->add_flag("--stats", options->stats, "print the statistics once and exit");
    command->add_option("--interval", options->interval, "time between statistics (5s, 500ms)")
        ->capture_default_str();
    add_id(*command, options->id);
    return [options, &global]() {
        if (options->stats) {
            auto stats = container_stats(global.root, options->id);
            if (!stats) {
                return fail(stats.error().message());
            }
            std::cout << *stats << "\n";
            return 0;
        }
        auto interval = units::parse_duration(options->interval);
        if (!interval) {
            return fail(interval.error().wrap("--interval").message());
        }
        auto streamed =
            stream_events(global.root, options->id, *interval,
                          [](const std::string& line) { std::cout << line << std::endl; });
        if (!streamed) {
            return fail(streamed.error().message());
        }
        return 0;
    };
}

} // namespace minirun::cli
