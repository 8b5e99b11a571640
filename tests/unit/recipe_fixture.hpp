// Stretches of the process recipe (recipe.cpp) run against the fake system calls: a
// container plan, the init's plan around it and the sync socket's two ends, as create and
// exec would have made them before the clone.
#pragma once

#include "fake_syscalls.hpp"
#include "recipe.hpp"
#include "sync.hpp"

#include <catch2/catch.hpp>

#include <string_view>
#include <utility>

namespace minirun::testing {

struct RecipeFixture {
    runtime::Plan container;
    runtime::InitPlan init;
    runtime::ParentEnd parent;
    runtime::InitEnd child;

    RecipeFixture(spec::Process process, runtime::security::ProcessSecurity security) {
        container.process = process;
        init.container = &container;
        init.process.process = std::move(process);
        init.process.security = std::move(security);
        auto pair = runtime::create_sync_pair();
        REQUIRE(pair.ok());
        parent = std::move(pair->first);
        child = std::move(pair->second);
    }

    // The steps `who` takes from `from` to `to`: the init (Taker::init) or an exec'd process
    // (Taker::process) with init.process as its plan.
    Status run(runtime::Taker who, Syscalls& sys, std::string_view from = {},
               std::string_view to = {}) {
        if (who == runtime::Taker::init) {
            runtime::InitSetup setup(sys, init, child, false);
            return runtime::run_recipe(runtime::process_recipe(), who, setup, from, to);
        }
        runtime::ProcessSetup setup(sys, init.process, child, false);
        return runtime::run_recipe(runtime::process_recipe(), who, setup, from, to);
    }
};

} // namespace minirun::testing
