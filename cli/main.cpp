// mini-run: an OCI container runtime. `mini-run --help` lists the commands.
#include "commands.hpp"
#include "demo/demo.hpp"
#include "minirun/explain.hpp"
#include "minirun/log.hpp"
#include "minirun/rootless.hpp"
#include "minirun/runtime.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <vector>

namespace minirun::cli {

int fail(const std::string& message) {
    log::error(message);
    return 1;
}

namespace {

std::string version_text() {
    return cat("mini-run version ", MINIRUN_VERSION, "\ncommit: ", MINIRUN_COMMIT,
               "\nspec: ", kSpecVersion);
}

// The subcommand, found without building the parser: global options with a value
// ("--root DIR") are skipped, "--root=DIR" is one word.
std::string_view subcommand_of(int argc, char** argv) {
    constexpr std::array<std::string_view, 5> kWithValue = {"--root", "--log", "--log-format",
                                                            "--rootless", "--cgroup-manager"};
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (std::find(kWithValue.begin(), kWithValue.end(), arg) != kWithValue.end()) {
            ++i;
        } else if (!arg.starts_with('-')) {
            return arg;
        }
    }
    return {};
}

// `check` exits 1 for warnings only (check.hpp): a command line it cannot use is an error, 2.
int usage_error_status(std::string_view command) {
    return command == "check" ? 2 : 1;
}

using Commands = std::vector<std::pair<CLI::App*, CommandRunner>>;

// The options before the command. Returns --root's option, to learn whether it was given.
CLI::Option* add_global_options(CLI::App& app, GlobalOptions& global, std::string& cgroup_manager) {
    CLI::Option* root_option =
        app.add_option("--root", global.root,
                       "directory for container state (rootless: $XDG_RUNTIME_DIR/mini-run)")
            ->capture_default_str();
    app.add_option("--log", global.log_file, "append log messages to this file");
    app.add_option("--log-format", global.log_format, "log file format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    app.add_flag("--debug", global.debug, "log debug messages");
    app.add_flag("--systemd-cgroup", global.systemd_cgroup,
                 "cgroupsPath is \"slice:prefix:name\" (mapped onto cgroupfs)");
    app.add_option("--rootless", global.rootless, "true, false or auto")
        ->check(CLI::IsMember({"true", "false", "auto"}));
    // crun's spelling, which podman passes to the runtimes in runtime_supports_nocgroup.
    // "disabled": the container stays in the caller's cgroups (conmon's), as with crun.
    app.add_option("--cgroup-manager", cgroup_manager, "cgroupfs, systemd or disabled")
        ->check(CLI::IsMember({"cgroupfs", "systemd", "disabled"}));
    return root_option;
}

// Building a command's options costs more than `state` or `delete` does itself: only
// the command named on the command line is registered; all of them when none is (or
// one we do not know), for --help and CLI11's own errors.
Commands add_commands(CLI::App& app, GlobalOptions& global, std::string_view named) {
    using AddCommand = CommandRunner (*)(CLI::App&, GlobalOptions&);
    static constexpr std::array<std::pair<std::string_view, AddCommand>, 17> kCommands = {{
        {"create", add_create_command},
        {"start", add_start_command},
        {"run", add_run_command},
        {"state", add_state_command},
        {"kill", add_kill_command},
        {"delete", add_delete_command},
        {"exec", add_exec_command},
        {"list", add_list_command},
        {"ps", add_ps_command},
        {"features", add_features_command},
        {"spec", add_spec_command},
        {"update", add_update_command},
        {"pause", add_pause_command},
        {"resume", add_resume_command},
        {"events", add_events_command},
        {"demo", add_demo_command}, // demo.cpp
        {"check", add_check_command},
    }};
    const bool known = std::any_of(kCommands.begin(), kCommands.end(),
                                   [&](const auto& command) { return command.first == named; });
    Commands commands;
    for (const auto& [name, add_command] : kCommands) {
        if (!known || name == named) {
            CommandRunner runner = add_command(app, global);
            commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
        }
    }
    return commands;
}

// --explain[=step] and --step-delay: include/minirun/explain.hpp.
struct ExplainOptions {
    std::string mode;
    double step_delay = 0;
};

void add_explain_options(const Commands& commands, ExplainOptions& explain) {
    for (const auto& [subcommand, runner] : commands) {
        if (subcommand->get_name() != "run" && subcommand->get_name() != "create") {
            continue;
        }
        // A flag with an optional value: `--explain ID` must not take the id for its value.
        subcommand
            ->add_flag("--explain{lines}", explain.mode,
                       "print each step the runtime takes, on stderr; =step: also stop "
                       "before each step, say what it does, and wait for Enter")
            ->check(CLI::IsMember({"lines", "step"}))
            ->option_text("[=step]");
        subcommand
            ->add_option("--step-delay", explain.step_delay,
                         "with --explain=step: go on by itself after SECONDS (no terminal "
                         "needed)")
            ->check(CLI::NonNegativeNumber)
            ->option_text("SECONDS");
    }
}

// Parses the command line; the exit status when that ends the call (help, version, a
// usage error), nothing when the command is to run.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv,
                                      std::string_view named) {
    std::vector<std::string> args(argv, argv + argc);
    drop_exec_separator(args);
    std::vector<char*> arg_pointers;
    arg_pointers.reserve(args.size());
    for (std::string& arg : args) {
        arg_pointers.push_back(arg.data());
    }
    try {
        app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
    } catch (const CLI::CallForHelp& e) {
        // `checkpoint --help` is how podman asks whether a command exists: rc 0 means yes.
        if (std::vector<std::string> extras = app.remaining();
            app.get_subcommands().empty() && !extras.empty() && !extras.front().starts_with('-')) {
            return fail(cat("unknown command ", quoted(extras.front()), " (see mini-run --help)"));
        }
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        std::cout << version_text() << "\n";
        return 0;
    } catch (const CLI::ExtrasError& e) {
        std::vector<std::string> extras = app.remaining();
        if (app.get_subcommands().empty() && !extras.empty()) {
            return fail(cat("unknown command ", quoted(extras.front()), " (see mini-run --help)"));
        }
        std::cerr << "mini-run: " << e.what() << " (see mini-run --help)\n";
        return usage_error_status(named);
    } catch (const CLI::ParseError& e) {
        // One line, like every other error.
        std::cerr << "mini-run: " << e.what() << " (see mini-run --help)\n";
        return usage_error_status(named);
    }
    return std::nullopt;
}

// The log (log.hpp), --rootless and the state root, from the parsed global options.
Status apply_global_options(GlobalOptions& global, const CLI::Option& root_option,
                            const std::string& cgroup_manager, std::string_view named) {
    global.systemd_cgroup = global.systemd_cgroup || cgroup_manager == "systemd";
    global.no_cgroups = cgroup_manager == "disabled";

    log::Options log_options;
    log_options.file = global.log_file;
    log_options.format = global.log_format == "json" ? log::Format::json : log::Format::text;
    log_options.min_level = global.debug ? log::Level::debug : log::Level::warning;
    MR_TRY(log::configure(log_options));

    // --rootless true|false overrides what rootless.hpp detects, as runc's flag does.
    if (global.rootless != "auto") {
        rootless::override_detection(global.rootless == "true");
    }
    // A rootless caller's state lives in its own runtime directory (rootless.hpp), never in
    // /run/mini-run; --root still wins. spec, features, demo and check keep no state.
    if (root_option.count() == 0 && rootless::active() && named != "spec" && named != "features" &&
        named != "demo" && named != "check" && !named.empty()) {
        MR_ASSIGN(auto chosen, rootless::state_root());
        if (!chosen.warning.empty()) {
            log::warning(chosen.warning);
        }
        global.root = chosen.path;
    }
    return {};
}

// Runs the command the command line named, with its --explain mode.
int run_named_command(Commands& commands, const ExplainOptions& explain) {
    for (auto& [subcommand, runner] : commands) {
        if (!subcommand->parsed()) {
            continue;
        }
        if (explain.mode == "lines") {
            explain::enable();
        } else if (explain.mode == "step") {
            explain::SteppingOptions stepping;
            stepping.delay =
                std::chrono::milliseconds(static_cast<int64_t>(explain.step_delay * 1000));
            stepping.pause_after_created = subcommand->get_name() == "run";
            if (auto enabled = explain::enable_stepping(stepping); !enabled) {
                return fail(enabled.error().message());
            }
        } else if (explain.step_delay > 0) {
            return fail("--step-delay needs --explain=step");
        }
        return runner();
    }
    return fail("no command given (see mini-run --help)");
}

int main_impl(int argc, char** argv) {
    // `mini-run --version` (engines ask it) needs none of the 17 commands that a command line
    // without one otherwise registers for CLI11's help: 0.6 ms instead of 2.3 here.
    if (argc == 2 &&
        (std::string_view(argv[1]) == "--version" || std::string_view(argv[1]) == "-v")) {
        std::cout << version_text() << "\n";
        return 0;
    }
    CLI::App app{"mini-run: a small, readable and fast OCI container runtime"};
    app.name("mini-run");
    app.set_version_flag("--version,-v", version_text());
    app.require_subcommand(0, 1);
    // Options must not be matched after the subcommand's positionals: `run ID` is last.
    app.allow_extras(false);

    GlobalOptions global;
    global.argv = argv;
    std::string cgroup_manager;
    CLI::Option* root_option = add_global_options(app, global, cgroup_manager);
    const std::string_view named = subcommand_of(argc, argv);
    Commands commands = add_commands(app, global, named);
    ExplainOptions explain;
    add_explain_options(commands, explain);

    if (std::optional<int> ended = parse_command_line(app, argc, argv, named)) {
        return *ended;
    }
    if (auto applied = apply_global_options(global, *root_option, cgroup_manager, named);
        !applied) {
        return fail(applied.error().message());
    }
    return run_named_command(commands, explain);
}

} // namespace
} // namespace minirun::cli

int main(int argc, char** argv) {
    try {
        return minirun::cli::main_impl(argc, argv);
    } catch (const std::exception& e) {
        return minirun::cli::fail(e.what());
    }
}
