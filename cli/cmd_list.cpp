// mini-run list [--format table|json] [--quiet]: the containers under --root.
#include "commands.hpp"
#include "minirun/runtime.hpp"

#include <cstdio>
#include <iostream>

namespace minirun::cli {

CommandRunner add_list_command(CLI::App& app, GlobalOptions& global) {
    struct Options {
        std::string format = "table";
        bool quiet = false;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("list", "list containers");
    command->add_option("--format,-f", options->format, "table or json")
        ->check(CLI::IsMember({"table", "json"}));
    command->add_flag("--quiet,-q", options->quiet, "only the ids");
    return [options, &global]() {
        if (options->format == "json" && !options->quiet) {
            auto json = list_containers_json(global.root);
            if (!json) {
                return fail(json.error().message());
            }
            std::cout << *json << "\n";
            return 0;
        }
        auto containers = list_containers(global.root);
        if (!containers) {
            return fail(containers.error().message());
        }
        if (options->quiet) {
            for (const auto& container : *containers) {
                std::cout << container.id << "\n";
            }
            return 0;
        }
        std::printf("%-20s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
                    "OWNER");
        for (const auto& c : *containers) {
            std::printf("%-20s %-8d %-10s %-40s %-32s %s\n", c.id.c_str(), c.pid, c.status.c_str(),
                        c.bundle.c_str(), c.created.c_str(), c.owner.c_str());
        }
        return 0;
    };
}

} // namespace minirun::cli
