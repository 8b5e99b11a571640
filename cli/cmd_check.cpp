// mini-run check [--bundle DIR] [--config FILE] [--format text|json]: validate a bundle
// without running it (minirun/check.hpp). Exit 0: clean, 1: warnings only, 2: errors.
#include "commands.hpp"
#include "minirun/check.hpp"

#include <iostream>

namespace minirun::cli {
namespace {

struct CheckOptions {
    std::string bundle = ".";
    std::string config;
    std::string format = "text";
};

int check(const CheckOptions& options) {
    auto report = check::check_bundle(options.bundle, options.config);
    if (!report) {
        fail(report.error().message());
        return 2; // like a bundle with errors: nothing to run
    }
    std::cout << (options.format == "json" ? check::report_json(*report) + "\n"
                                           : check::report_text(*report));
    return check::exit_code(*report);
}

} // namespace

CommandRunner add_check_command(CLI::App& app, GlobalOptions& /*global*/) {
    auto options = std::make_shared<CheckOptions>();
    CLI::App* command = app.add_subcommand(
        "check", "validate a bundle without running it: every error, and risky settings");
    command->add_option("--bundle,-b", options->bundle, "bundle directory")->capture_default_str();
    command->add_option("--config", options->config,
                        "config file instead of <bundle>/config.json (relative to the bundle)");
    command->add_option("--format", options->format, "report format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    return [options]() {
        return check(*options);
    };
}

} // namespace minirun::cli
