// The config harnesses' check (config.cpp takes raw bytes, config_json.cpp JSON-aware
// mutations of valid configs): config.json text through what `create` does with it before
// clone(), and through `mini-run check`, which must refuse whatever create refuses.
#pragma once

#include "fuzz.hpp"
#include "minirun/check.hpp"
#include "minirun/spec.hpp"
#include "plan.hpp"
#include "security/seccomp.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace minirun::fuzz {

// The bundle make_plan resolves root.path in: $MINIRUN_FUZZ_BUNDLE (scripts/fuzz.sh makes
// one and removes it), or a directory with an empty rootfs/ made here and removed at exit.
inline const std::string& fuzz_bundle() {
    static std::string made;
    static const std::string bundle = [] {
        if (const char* given = std::getenv("MINIRUN_FUZZ_BUNDLE"); given != nullptr) {
            return std::string(given);
        }
        char dir[] = "/tmp/minirun-fuzz-bundle.XXXXXX";
        if (::mkdtemp(dir) == nullptr ||
            ::mkdir((std::string(dir) + "/rootfs").c_str(), 0755) < 0) {
            fail("cannot make the fuzz bundle in /tmp");
        }
        made = dir;
        std::atexit([] {
            ::rmdir((made + "/rootfs").c_str());
            ::rmdir(made.c_str());
        });
        return made;
    }();
    return bundle;
}

inline void check_config_text(std::string_view text) {
    bool refused = false;
    auto spec = spec::parse_spec(text, "config.json");
    expect_clear_if_failed(spec, "parse_spec");
    if (spec) {
        auto seccomp = spec->linux.seccomp;
        auto plan = runtime::make_plan(std::move(*spec), {"fuzz", fuzz_bundle(), 0});
        expect_clear_if_failed(plan, "make_plan");
        refused = !plan.ok();
        if (seccomp) {
            // Compiled to BPF as create does before clone(); never loaded.
            auto filter = runtime::seccomp::Filter::build(*seccomp);
            expect_clear_if_failed(filter, "seccomp::Filter::build");
        }
    } else {
        refused = true;
    }
    check::Report report = check::check_config(text, "config.json", fuzz_bundle());
    for (const check::Problem& problem : report.errors) {
        expect(!problem.message.empty() &&
                   problem.message.find_first_of("\n\r") == std::string::npos,
               "check: an error message must be one non-empty line");
    }
    if (refused && report.errors.empty()) {
        fail("create refuses this config but `mini-run check` finds no error in it");
    }
}

} // namespace minirun::fuzz
