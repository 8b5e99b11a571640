// mini-run ps [--format table|json] ID: the container's processes.
#include "commands.hpp"
#include "fs.hpp"
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
    command->allow_extras(); // runc passes `ps` arguments after the id; accepted, unused
    return [options, &global]() {
        auto pids = container_pids(global.root, options->id);
        if (!pids) {
            return fail(pids.error().message());
        }
        if (options->format == "json") {
            std::string out = "[";
            for (size_t i = 0; i < pids->size(); ++i) {
                out += cat(i == 0 ? "" : ",", (*pids)[i]);
            }
            std::cout << out << "]\n";
            return 0;
        }
        std::cout << "PID     CMD\n";
        for (pid_t pid : *pids) {
            auto cmdline = fs::read_file(cat("/proc/", pid, "/cmdline"));
            std::string text = cmdline ? *cmdline : "";
            std::replace(text.begin(), text.end(), '\0', ' ');
            std::printf("%-7d %s\n", pid, text.c_str());
        }
        return 0;
    };
}

} // namespace minirun::cli
