// mini-run ps [--format table|json] ID: the container's processes.
#include "commands.hpp"
#include "minirun/runtime.hpp"

#include <iostream>

namespace minirun::cli {

CommandRunner add_ps_command(CLI::App& app, GlobalOptions& global) {
    struct Options {
        std::string id;
        std::string format = "table";
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("ps", "list the processes of a container");
    command->add_option("--format,-f", options->format, "table or json")
        ->check(CLI::IsMember({"table", "json"}));
    add_id(*command, options->id);
    // runc's form: `ps ID [PS-ARGS...]`, the arguments after the id being ps(1)'s.
    command->allow_extras();
    return [options, command, &global]() {
        if (options->format == "json") {
            auto pids = container_pids(global.root, options->id);
            if (!pids) {
                return fail(pids.error().message());
            }
            std::string out = "[";
            for (size_t i = 0; i < pids->size(); ++i) {
                out += cat(i == 0 ? "" : ",", (*pids)[i]);
            }
            std::cout << out << "]\n";
            return 0;
        }
        auto table = container_ps(global.root, options->id, command->remaining());
        if (!table) {
            return fail(table.error().message());
        }
        std::cout << *table;
        return 0;
    };
}

} // namespace minirun::cli
