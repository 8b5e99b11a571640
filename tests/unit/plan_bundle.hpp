// Plans made from JSON configs, for the tests of plan.cpp and of what reads a plan.
#pragma once

#include "plan.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

namespace minirun::testing {

// A bundle directory with a rootfs/ below it.
struct PlanBundle {
    TempDir dir;
    PlanBundle() { std::filesystem::create_directories(dir.path() + "/rootfs"); }
    [[nodiscard]] Result<runtime::Plan> plan(const nlohmann::json& config) const {
        auto spec = spec::parse_spec(config.dump());
        if (!spec) {
            return spec.error();
        }
        return runtime::make_plan(std::move(*spec), {"test", dir.path(), 0});
    }
};

} // namespace minirun::testing
