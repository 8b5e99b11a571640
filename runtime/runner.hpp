// The runner: a recipe is a table of steps, each with a name, the reason it sits where it
// does, who takes it and the function that does it; run_recipe() carries one out.
//
// Three recipes use it: create's (create.cpp, kCreateRecipe) and exec's (exec.cpp,
// kExecRecipe) on the runtime's side, and the process recipe (recipe.cpp) of a container's
// processes between clone() and execve(), which the init and a process `exec` starts each
// take their part of: one table, never a second copy of it. docs/architecture.md shows
// them all, generated, and a unit test (test_recipe.cpp) keeps it true.
//
// The runner numbers the steps and, under --debug, logs each one's duration and a failing
// step's number and name. After a step that `seals` (the seccomp filter) it makes no call
// of its own: from there on mini-run calls only what the remaining steps need (the exec,
// and startContainer hooks, which the init forks and execs under the filter as runc does).
#pragma once

#include "minirun/error.hpp"
#include "minirun/explain.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace minirun::runtime {

// Who takes a step: the container's init, a process `exec` starts in it, or both; or
// mini-run itself, creating a container (create.cpp) or starting a process in one
// (exec.cpp).
enum class Taker : uint8_t { init = 1, process = 2, both = 3, create = 4, exec = 8 };

[[nodiscard]] constexpr bool takes(Taker step, Taker who) {
    return (static_cast<uint8_t>(step) & static_cast<uint8_t>(who)) != 0;
}

// A step of the runtime's own recipes (create, exec): one function over the run's context.
template <typename Context>
struct Step {
    std::string_view name;
    std::string_view why;
    Taker taker = Taker::create;
    Status (*run)(Context&) = nullptr;
    bool seals = false; // the runner is silent after it (see above)

    [[nodiscard]] Status operator()(Context& context) const { return run(context); }
};

// A step's name and reason, for the docs and their test.
struct StepOutline {
    std::string_view name;
    std::string_view why;
};
template <typename StepT>
std::vector<StepOutline> outline_of(std::span<const StepT> steps) {
    std::vector<StepOutline> outline;
    outline.reserve(steps.size());
    for (const StepT& step : steps) {
        outline.push_back({step.name, step.why});
    }
    return outline;
}
std::vector<StepOutline> create_recipe_outline();
std::vector<StepOutline> exec_recipe_outline();

// --explain=step (explain.hpp): what the learner is told about a step before it runs, one
// entry per step name of both recipes (step_guide.cpp; test_recipe.cpp keeps them in step).
// `look` may use {pid}, {id}, {root} and {state}.
struct StepGuide {
    std::string_view name;
    std::string_view calls;
    std::string_view isolates;
    std::string_view look;
};
std::span<const StepGuide> step_guides();

// Prints the step's card and waits (explain::pause), for the runner below.
Status pause_before_step(Taker who, size_t number, size_t total, std::string_view name,
                         std::string_view why);

// The runner's --debug side, kept out of the template: one clock read before and after a
// step, and one log line each, only when debug logging is on.
class StepLog {
public:
    explicit StepLog(std::string_view who);
    void begin();
    void done(size_t number, std::string_view name);
    void failed(size_t number, std::string_view name, const Error& error);

private:
    std::string_view who_;
    bool on_ = false;
    int64_t started_ns_ = 0;
};

// The name --debug lines and --explain cards give the taker.
[[nodiscard]] constexpr std::string_view taker_name(Taker who) {
    switch (who) {
    case Taker::init:
        return "init";
    case Taker::process:
        return "process";
    case Taker::create:
        return "create";
    case Taker::exec:
        return "exec";
    case Taker::both:
        break;
    }
    return "process";
}

// Runs the steps `who` takes, in order, until one fails. A step is called with the context
// (step(context)): the runtime's recipes hold one function per step, the process recipe
// one per kind of process (recipe.hpp). With `from`/`to` (step names) only that stretch
// runs: the unit tests run the privilege drop alone against a fake.
template <typename StepT, typename Context>
Status run_recipe(std::span<const StepT> steps, Taker who, Context& context,
                  std::string_view from = {}, std::string_view to = {}) {
    StepLog log(taker_name(who));
    size_t total = 0;
    if (explain::stepping()) {
        for (const StepT& step : steps) {
            total += takes(step.taker, who) ? 1 : 0;
        }
    }
    size_t number = 0;
    bool running = from.empty();
    bool sealed = false;
    for (const StepT& step : steps) {
        if (!takes(step.taker, who)) {
            continue;
        }
        ++number;
        running = running || step.name == from;
        if (!running) {
            continue;
        }
        if (!sealed && explain::stepping()) {
            MR_TRY(pause_before_step(who, number, total, step.name, step.why));
        }
        if (!sealed) {
            log.begin();
        }
        Status status = step(context);
        if (!status) {
            if (!sealed) {
                log.failed(number, step.name, status.error());
            }
            return status;
        }
        if (!sealed) {
            log.done(number, step.name);
        }
        sealed = sealed || step.seals;
        if (step.name == to) {
            break;
        }
    }
    return {};
}

} // namespace minirun::runtime
