// The recipe (runtime/recipe.cpp): its order as data, the privilege drop's exact system calls
// for representative configs, what a failing call at each point leads to, and the docs.
//
// Everything runs against FakeSyscalls, without root: the steps from "cwd while privileged"
// to "exec" are the init's own, with the fake standing in for the kernel.
#include "fake_syscalls.hpp"
#include "recipe.hpp"
#include "recipe_fixture.hpp"

#include "minirun/spec.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::FakeSyscalls;

namespace {

constexpr std::string_view kFirstDropStep = "cwd while privileged";

// A config as `mini-run spec` (runc spec) writes it, changed by `edit`.
template <typename Edit>
spec::Spec spec_with(Edit edit, bool with_seccomp = false) {
    auto json = nlohmann::json::parse(spec::default_spec_json(false, 0, 0, with_seccomp));
    json["process"]["args"] = {"/bin/sh"}; // found on the host: the fake does not chroot
    edit(json);
    auto parsed = spec::parse_spec(json.dump());
    REQUIRE(parsed.ok());
    return std::move(*parsed);
}

// One init taking the privilege drop's stretch of the recipe against `sys`.
security::ProcessSecurity prepared(const spec::Spec& spec) {
    auto security = security::prepare(*spec.process, spec.linux);
    REQUIRE(security.ok());
    return std::move(*security);
}

struct DropRun {
    minirun::testing::RecipeFixture fixture;
    ParentEnd& parent;
    Status status;

    DropRun(const spec::Spec& spec, FakeSyscalls& sys)
        : fixture(*spec.process, prepared(spec)), parent(fixture.parent) {
        status = fixture.run(Taker::init, sys, kFirstDropStep, "exec");
    }
};

// The privilege-relevant calls only, by name, in order.
std::vector<std::string> privileged(const FakeSyscalls& sys) {
    const std::vector<std::string> relevant = {"chdir",
                                               "prctl PR_CAPBSET_DROP",
                                               "prctl PR_SET_KEEPCAPS",
                                               "setgroups",
                                               "setresgid",
                                               "setresuid",
                                               "capset",
                                               "prctl PR_CAP_AMBIENT",
                                               "prctl PR_SET_NO_NEW_PRIVS",
                                               "seccomp",
                                               "execve"};
    std::vector<std::string> out;
    for (const std::string& name : sys.names()) {
        if (std::find(relevant.begin(), relevant.end(), name) == relevant.end()) {
            continue;
        }
        if (out.empty() || out.back() != name) { // one entry per run of the same call
            out.push_back(name);
        }
    }
    return out;
}

} // namespace

TEST_CASE("recipe: every step has a name, a reason and a taker; exec's list is the init's order",
          "[recipe]") {
    std::vector<std::string> init_steps;
    std::vector<std::string> exec_steps;
    for (const auto& step : process_recipe()) {
        CHECK_FALSE(step.name.empty());
        CHECK_FALSE(step.why.empty());
        // A step's function for each process that takes it, and none for one that does not.
        CHECK((step.init != nullptr) == takes(step.taker, Taker::init));
        CHECK((step.exec != nullptr) == takes(step.taker, Taker::process));
        if (takes(step.taker, Taker::init)) {
            init_steps.emplace_back(step.name);
        }
        if (takes(step.taker, Taker::process)) {
            exec_steps.emplace_back(step.name);
        }
    }
    // Names are unique: the runner's from/to and the docs go by them.
    std::vector<std::string> all = init_steps;
    all.insert(all.end(), exec_steps.begin(), exec_steps.end());
    std::sort(all.begin(), all.end());
    std::vector<std::string> shared;
    std::set_intersection(init_steps.begin(), init_steps.end(), exec_steps.begin(),
                          exec_steps.end(), std::back_inserter(shared));
    CHECK(init_steps.front() == "join cgroups");
    CHECK(init_steps.back() == "exec");
    CHECK(exec_steps.back() == "exec");
    // The filter is the last step of ours in both: only hooks under it and the exec follow.
    auto sealing = std::find_if(process_recipe().begin(), process_recipe().end(),
                                [](const auto& step) { return step.seals; });
    REQUIRE(sealing != process_recipe().end());
    CHECK(sealing->name == "seccomp filter");
    for (auto step = sealing + 1; step != process_recipe().end(); ++step) {
        CHECK((step->name == "startContainer hooks" || step->name == "exec"));
    }
}

TEST_CASE("recipe: the privilege drop's order, as root with runc's default config", "[recipe]") {
    FakeSyscalls sys;
    DropRun run(spec_with([](nlohmann::json&) {}), sys);
    REQUIRE(run.status.ok());
    // runc spec: noNewPrivileges true, three capabilities, uid 0, no seccomp.
    CHECK(privileged(sys) ==
          std::vector<std::string>{"chdir", "prctl PR_CAPBSET_DROP", "prctl PR_SET_KEEPCAPS",
                                   "setgroups", "setresgid", "setresuid", "prctl PR_SET_KEEPCAPS",
                                   "capset", "prctl PR_CAP_AMBIENT", "prctl PR_SET_NO_NEW_PRIVS",
                                   "execve"});
    // The init told the parent it is created before it execs.
    auto created = run.parent.expect(ToParent::kCreated);
    CHECK(created.ok());
    CHECK(sys.calls.back().starts_with("execve /bin/sh"));
}

TEST_CASE("recipe: a non-root user and a filter with no_new_privs on: the filter is last",
          "[recipe]") {
    FakeSyscalls sys;
    DropRun run(
        spec_with(
            [](nlohmann::json& json) {
                json["process"]["user"] = {{"uid", 1000}, {"gid", 1000}, {"additionalGids", {5}}};
            },
            true),
        sys);
    REQUIRE(run.status.ok());
    CHECK(privileged(sys) ==
          std::vector<std::string>{"chdir", "prctl PR_CAPBSET_DROP", "prctl PR_SET_KEEPCAPS",
                                   "setgroups", "setresgid", "setresuid", "prctl PR_SET_KEEPCAPS",
                                   "capset", "prctl PR_CAP_AMBIENT", "prctl PR_SET_NO_NEW_PRIVS",
                                   "seccomp", "execve"});
    auto names = sys.calls;
    CHECK(std::find(names.begin(), names.end(), "setgroups 5") != names.end());
    CHECK(std::find(names.begin(), names.end(), "setresgid 1000") != names.end());
    CHECK(std::find(names.begin(), names.end(), "setresuid 1000") != names.end());
    // Between the filter and the exec: nothing of ours at all.
    auto filter = std::find_if(names.begin(), names.end(),
                               [](const std::string& call) { return call.starts_with("seccomp"); });
    REQUIRE(filter != names.end());
    CHECK(filter + 2 == names.end());
}

TEST_CASE("recipe: with no_new_privs off the filter goes on while privileged, before the ids",
          "[recipe]") {
    FakeSyscalls sys;
    DropRun run(
        spec_with([](nlohmann::json& json) { json["process"]["noNewPrivileges"] = false; }, true),
        sys);
    REQUIRE(run.status.ok());
    CHECK(privileged(sys) == std::vector<std::string>{"chdir", "seccomp", "prctl PR_CAPBSET_DROP",
                                                      "prctl PR_SET_KEEPCAPS", "setgroups",
                                                      "setresgid", "setresuid",
                                                      "prctl PR_SET_KEEPCAPS", "capset",
                                                      "prctl PR_CAP_AMBIENT", "execve"});
}

TEST_CASE("recipe: no capabilities object drops every one, as runc and crun do", "[recipe]") {
    FakeSyscalls sys;
    DropRun run(spec_with([](nlohmann::json& json) {
                    json["process"].erase("capabilities");
                    json["process"]["user"] = {{"uid", 7}, {"gid", 8}};
                }),
                sys);
    REQUIRE(run.status.ok());
    CHECK(privileged(sys) ==
          std::vector<std::string>{"chdir", "prctl PR_CAPBSET_DROP", "prctl PR_SET_KEEPCAPS",
                                   "setgroups", "setresgid", "setresuid", "prctl PR_SET_KEEPCAPS",
                                   "capset", "prctl PR_CAP_AMBIENT", "prctl PR_SET_NO_NEW_PRIVS",
                                   "execve"});
    // Every set empty: the bounding set loses every capability, capset keeps none.
    auto names = sys.calls;
    CHECK(std::count_if(names.begin(), names.end(), [](const std::string& call) {
              return call.starts_with("prctl PR_CAPBSET_DROP");
          }) == caps::kernel_last_cap() + 1);
    CHECK(std::find(names.begin(), names.end(), "capset 0 0 0") != names.end());
}

TEST_CASE("recipe: whichever call of the privilege drop fails, the process is never exec'd",
          "[recipe][fault]") {
    // The only calls the recipe survives, each for a stated reason: a chdir refused to root
    // is tried again as the user (process.cpp); setgroups() refused with no groups to set
    // leaves what the process has anyway (user.cpp). A bounding-set drop refused is
    // followed by one read of that capability (capabilities.cpp: was it there at all?),
    // which here finds it present, so the drop's failure stands. close_range with
    // CLOSE_RANGE_CLOEXEC (4) refused falls back to each fd of /proc/self/fd (process.cpp:
    // a seccomp profile older than close_range); the close_range of step 3 (flags 0) does not.
    auto survivable = [](const std::string& call) {
        return call.starts_with("chdir") || call.starts_with("setgroups -> ") ||
               (call.starts_with("close_range ") && call.ends_with(" 4 -> failed"));
    };
    FakeSyscalls probe;
    DropRun clean(spec_with([](nlohmann::json&) {}, true), probe);
    REQUIRE(clean.status.ok());
    const size_t total = probe.calls.size();
    REQUIRE(total > 10);
    size_t stopped = 0;
    for (size_t number = 1; number <= total; ++number) {
        FakeSyscalls sys;
        sys.fail_call(number, EPERM);
        DropRun run(spec_with([](nlohmann::json&) {}, true), sys);
        if (number > sys.calls.size()) {
            continue; // an unrecorded call (umask, sigprocmask) at that position: cannot fail
        }
        const std::string& failed = sys.calls.at(number - 1);
        INFO("call " << number << ": " << failed);
        if (!failed.ends_with(" -> failed")) {
            continue; // umask and the signal mask cannot fail
        }
        bool execd =
            sys.calls.back().starts_with("execve") && !sys.calls.back().ends_with(" -> failed");
        if (run.status.ok()) {
            CHECK(survivable(failed));
            CHECK(execd);
            continue;
        }
        ++stopped;
        CHECK_FALSE(execd);
        CHECK(run.status.error().errno_value() == EPERM);
        // The recipe stopped at the failure: no call after it but that read.
        const std::string drop = "prctl PR_CAPBSET_DROP ";
        const std::string refused = " -> failed";
        if (failed.starts_with(drop)) {
            std::string cap =
                failed.substr(drop.size(), failed.size() - drop.size() - refused.size()); // "12 0"
            REQUIRE(sys.calls.size() == number + 1);
            CHECK(sys.calls.back() == "prctl PR_CAPBSET_READ " + cap);
        } else {
            CHECK(sys.calls.size() == number);
        }
    }
    CHECK(stopped > 10);
}

namespace {

std::string table_cell(std::string_view text) {
    std::string cell(text);
    std::replace(cell.begin(), cell.end(), '|', '/');
    return cell;
}

// The text between `<!-- NAME: generated ... -->` and `<!-- NAME end -->` in
// docs/architecture.md must be `expected`; with MINIRUN_UPDATE_DOCS set it is made so.
void check_generated(const std::string& name, const std::string& expected) {
    // This file is tests/unit/test_recipe.cpp of the source tree.
    std::string path = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() /
                       "docs/architecture.md";
    std::ifstream in(path);
    REQUIRE(in.good());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string begin = "<!-- " + name +
                              ": generated from the code; checked by tests/unit/test_recipe.cpp "
                              "-->\n";
    const std::string end = "<!-- " + name + " end -->";
    auto from = text.find(begin);
    auto to = text.find(end);
    REQUIRE(from != std::string::npos);
    REQUIRE(to != std::string::npos);
    std::string shown = text.substr(from + begin.size(), to - from - begin.size());
    if (shown != expected && std::getenv("MINIRUN_UPDATE_DOCS") != nullptr) {
        text.replace(from + begin.size(), to - from - begin.size(), expected);
        std::ofstream(path) << text;
        shown = expected;
    }
    INFO("docs/architecture.md is stale: run MINIRUN_UPDATE_DOCS=1 build/minirun-unit '[docs]'");
    CHECK(shown == expected);
}

} // namespace

TEST_CASE("recipe: docs/architecture.md shows the recipes as they are", "[recipe][docs]") {
    std::ostringstream table;
    table << "| # | step | init | exec | why here |\n|---|---|---|---|---|\n";
    size_t number = 0;
    for (const auto& step : process_recipe()) {
        table << "| " << ++number << " | " << step.name << " | "
              << (takes(step.taker, Taker::init) ? "yes" : "") << " | "
              << (takes(step.taker, Taker::process) ? "yes" : "") << " | " << table_cell(step.why)
              << " |\n";
    }
    check_generated("recipe", table.str());

    std::ostringstream create;
    create << "| # | step | why here |\n|---|---|---|\n";
    number = 0;
    for (const StepOutline& step : create_recipe_outline()) {
        create << "| " << ++number << " | " << step.name << " | " << table_cell(step.why) << " |\n";
    }
    check_generated("create recipe", create.str());

    std::ostringstream exec;
    exec << "| # | step | why here |\n|---|---|---|\n";
    number = 0;
    for (const StepOutline& step : exec_recipe_outline()) {
        exec << "| " << ++number << " | " << step.name << " | " << table_cell(step.why) << " |\n";
    }
    check_generated("exec recipe", exec.str());
}

TEST_CASE("recipe: every step of the recipes has its --explain=step card, and no card is stale",
          "[recipe][explain]") {
    std::vector<std::string> steps;
    for (const auto& step : create_recipe_outline()) {
        steps.emplace_back(step.name);
    }
    // exec's: a step create has too (protect the runtime binary, ...) shares its card.
    for (const auto& step : exec_recipe_outline()) {
        if (std::find(steps.begin(), steps.end(), step.name) == steps.end()) {
            steps.emplace_back(step.name);
        }
    }
    for (const auto& step : process_recipe()) {
        steps.emplace_back(step.name);
    }
    std::vector<std::string> guided;
    for (const StepGuide& guide : step_guides()) {
        guided.emplace_back(guide.name);
        INFO(guide.name);
        CHECK_FALSE(guide.calls.empty());
        CHECK_FALSE(guide.isolates.empty());
        // Only the placeholders format_card fills ({} is find's own).
        std::string look(guide.look);
        for (size_t open = look.find('{'); open != std::string::npos;
             open = look.find('{', open + 1)) {
            std::string key = look.substr(open, look.find('}', open) - open + 1);
            CHECK((key == "{pid}" || key == "{id}" || key == "{root}" || key == "{state}" ||
                   key == "{}"));
        }
    }
    // Same names, same order: the guide reads as the recipes do.
    CHECK(guided == steps);
}
