// mini-run features: what this runtime supports, as the OCI features document.
#include "commands.hpp"
#include "minirun/runtime.hpp"

#include <iostream>

namespace minirun::cli {

CommandRunner add_features_command(CLI::App& app, GlobalOptions& /*global*/) {
    app.add_subcommand("features", "print the features this runtime supports (JSON)");
    return []() {
        std::cout << features_json() << "\n";
        return 0;
    };
}

} // namespace minirun::cli
