// OCI hooks: programs the runtime runs at fixed points of a container's life.
//
// runtime-spec (config.md, "POSIX-platform Hooks"): each hook is {path, args, env,
// timeout}; `path` is absolute and exec'd directly (no shell, no PATH search); args[0]
// is argv[0] (args may be empty: argv is then just the path); env is exactly the given
// list, or the runtime's own environment when the hook has no `env` (as runc's hooks; a
// startContainer hook gets the process's, see run_hooks); the
// container's state JSON is written to the hook's stdin.
// Hooks of one kind run in order; the first failure stops the rest, except for poststop,
// where every hook runs and each failure is a warning (runtime.md, delete).
//   prestart, createRuntime   runtime namespace, after the environment is made, before pivot_root
//   createContainer           container namespace, before pivot_root (run by the init)
//   startContainer            container namespace, at `start`, before the user process (init)
//   poststart                 runtime namespace, after the user process started; a failure
//                             stops the container and fails `start` (runtime-spec 1.3)
//   poststop                  runtime namespace, after delete; failures only warn
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::runtime::hooks {

// Runs one hook to completion. Errors: "exit status N", "killed by signal N",
// "timed out after N s" (the hook is SIGKILLed and reaped), or the exec's errno
// ("No such file or directory"). The hook inherits the caller's stdout and stderr; its
// stdin gets `state_json` then EOF (a hook that does not read it is fine). The hook starts
// with an empty signal mask and default signal dispositions, whatever the caller blocked.
Status run_hook(const spec::Hook& hook, std::string_view state_json);

// Runs `list` in order; the first failure is returned as
// "hooks.<kind>[<i>] <path>: <problem>", e.g. `hooks.prestart[1] /bin/false: exit status 1`.
// `kind` is the spec's JSON name ("prestart", "createRuntime", ...). With `default_env`, a
// hook whose env is missing or empty gets that one instead of the caller's environment: the
// startContainer hooks, which runc runs with the container process's env (its
// standard_init_linux.go, SetDefaultEnv: "a de facto historical thing", hooks.bats).
Status run_hooks(std::string_view kind, const std::vector<spec::Hook>& list,
                 std::string_view state_json,
                 const std::optional<std::vector<std::string>>& default_env = std::nullopt);

// Runs every hook of `list`, also after a failure, logging a warning for each failure in
// run_hooks' words; returns how many failed. For poststop: the container is gone already,
// and each hook cleans up something of its own.
size_t run_hooks_warning(std::string_view kind, const std::vector<spec::Hook>& list,
                         std::string_view state_json);

} // namespace minirun::runtime::hooks
