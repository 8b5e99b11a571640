// A recipe: the steps a process takes between clone() and execve(), as data.
//
// Each step has a name, the reason it sits where it does, which processes take it and the
// function that does it. One table (init.cpp, process_recipe()) lists them in their one
// order; the container's init takes some, a process `exec` starts in the container takes
// others, and each process's own list is that table filtered, never a second copy of it.
// docs/architecture.md shows both lists, and a unit test (test_recipe.cpp) keeps it true.
//
// The runner numbers the steps and, under --debug, logs each one's duration and a failing
// step's number and name. After a step that `seals` (the seccomp filter) it makes no call
// of its own: from there on, the only system call mini-run makes is the exec.
#pragma once

#include "minirun/error.hpp"
#include "minirun/explain.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace minirun::runtime {

// Who takes a step: the container's init, a process `exec` starts in it, or both; or
// mini-run itself, creating a container (create.cpp).
enum class Taker : uint8_t { init = 1, exec = 2, both = 3, parent = 4 };

[[nodiscard]] constexpr bool takes(Taker step, Taker who) {
    return (static_cast<uint8_t>(step) & static_cast<uint8_t>(who)) != 0;
}

template <typename Context>
struct Step {
    std::string_view name;
    std::string_view why;
    Taker taker = Taker::both;
    Status (*run)(Context&) = nullptr;
    bool seals = false; // the runner is silent after it (see above)
};

// A step's name and reason, for the docs and their test (create's recipe lives in
// create.cpp with a context of its own).
struct StepOutline {
    std::string_view name;
    std::string_view why;
};
std::vector<StepOutline> create_recipe_outline();

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

// Runs the steps `who` takes, in order, until one fails. With `from`/`to` (step names) only
// that stretch runs: the unit tests run the privilege drop alone against a fake.
template <typename Context>
Status run_recipe(std::span<const Step<Context>> steps, Taker who, Context& context,
                  std::string_view from = {}, std::string_view to = {}) {
    StepLog log(who == Taker::init ? "init" : who == Taker::exec ? "exec" : "create");
    size_t total = 0;
    if (explain::stepping()) {
        for (const Step<Context>& step : steps) {
            total += takes(step.taker, who) ? 1 : 0;
        }
    }
    size_t number = 0;
    bool running = from.empty();
    bool sealed = false;
    for (const Step<Context>& step : steps) {
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
        Status status = step.run(context);
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
