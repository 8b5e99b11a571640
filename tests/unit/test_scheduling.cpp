// process.scheduler, process.ioPriority and process.execCPUAffinity: parsing (every field,
// every error with its path), the cpu list format, and where the recipe applies them, against
// the fake syscalls (runtime/process/scheduling.cpp, runtime/recipe.cpp).
#include "fake_syscalls.hpp"
#include "process/scheduling.hpp"
#include "recipe.hpp"
#include "recipe_fixture.hpp"

#include "minirun/spec.hpp"
#include "minirun/units.hpp"

#include <sched.h>
#include <sstream>

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace minirun;
using minirun::testing::FakeSyscalls;

namespace {

// A process with `fields` (a JSON object's members, without braces) added to a minimal one.
Result<spec::Process> process_with(const std::string& fields) {
    return spec::parse_process(cat(R"({"args": ["sh"], )", fields, "}"), "process.json");
}

std::string error_of(const std::string& fields) {
    auto parsed = process_with(fields);
    REQUIRE_FALSE(parsed.ok());
    return parsed.error().message();
}

std::vector<uint32_t> cpus(std::string_view text) {
    auto parsed = units::parse_cpu_list(text);
    REQUIRE(parsed.ok());
    return *parsed;
}

} // namespace

TEST_CASE("cpu lists: ranges and single cpus, sorted and unique", "[sched][units]") {
    CHECK(cpus("").empty());
    CHECK(cpus("0") == std::vector<uint32_t>{0});
    CHECK(cpus("0-3,7") == std::vector<uint32_t>{0, 1, 2, 3, 7});
    CHECK(cpus("7,1-2,2,0") == std::vector<uint32_t>{0, 1, 2, 7});
    CHECK(cpus("5-5") == std::vector<uint32_t>{5});
    CHECK(cpus("8191") == std::vector<uint32_t>{8191});
}

TEST_CASE("cpu lists: each malformed one says what is wrong", "[sched][units]") {
    auto message = [](std::string_view text) {
        auto parsed = units::parse_cpu_list(text);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().errno_value() == EINVAL);
        return parsed.error().message();
    };
    CHECK(message("0-") == R"(bad cpu list "0-": expected a cpu number after '-')");
    CHECK(message("-1") == R"(bad cpu list "-1": expected a cpu number at the start of an entry)");
    CHECK(message("3-1") == R"(bad cpu list "3-1": range 3-1 ends before it starts)");
    CHECK(message("1,") == R"(bad cpu list "1,": ends with ',')");
    CHECK(message(",1") == R"(bad cpu list ",1": expected a cpu number at the start of an entry)");
    CHECK(message("1;2") == R"(bad cpu list "1;2": unexpected ";" (cpus are separated by ','))");
    CHECK(message("0 1") == R"(bad cpu list "0 1": unexpected " " (cpus are separated by ','))");
    CHECK(message("a") == R"(bad cpu list "a": expected a cpu number at the start of an entry)");
    CHECK(message("8192") == R"(bad cpu list "8192": cpu 8192 is above 8191)");
    CHECK(message("99999999999") == R"(bad cpu list "99999999999": cpu 99999999999 is above 8191)");
}

// Found by tests/fuzz/cpu_list.cpp: each range was expanded as it was read, into a std::set
// for cpus and a vector for nodes, so a list of many wide ranges cost its length times their
// width: these lists took seconds and hundreds of megabytes, a 1 MB config minutes and
// gigabytes. The ranges are now merged first and expanded once.
TEST_CASE("cpu and node lists: many overlapping ranges cost their length, not their width",
          "[sched][units]") {
    std::string cpus_text;
    for (int i = 0; i < 20000; ++i) {
        cpus_text += "0-8191,";
    }
    cpus_text += "17";
    auto cpus = units::parse_cpu_list(cpus_text);
    REQUIRE(cpus.ok());
    CHECK(cpus->size() == 8192);
    CHECK((cpus->front() == 0 && cpus->back() == 8191));

    std::string nodes_text;
    for (int i = 0; i < 100000; ++i) {
        nodes_text += i % 2 == 0 ? "0-1023," : "512-1023,";
    }
    nodes_text += "3";
    auto nodes = units::parse_number_list(nodes_text, {"node", 1023});
    REQUIRE(nodes.ok());
    CHECK(nodes->size() == 1024);
    CHECK(std::adjacent_find(nodes->begin(), nodes->end()) == nodes->end());
}

TEST_CASE("process.scheduler: every field into the model", "[sched][spec]") {
    SECTION("SCHED_BATCH with a nice") {
        auto parsed = process_with(R"("scheduler": {"policy": "SCHED_BATCH", "nice": 5})");
        REQUIRE(parsed.ok());
        REQUIRE(parsed->scheduler);
        CHECK(parsed->scheduler->policy == "SCHED_BATCH");
        CHECK(parsed->scheduler->policy_value == 3);
        CHECK(parsed->scheduler->nice == 5);
        CHECK(parsed->scheduler->priority == 0);
        CHECK(parsed->scheduler->flag_bits == 0);
    }
    SECTION("SCHED_FIFO with a priority and flags") {
        auto parsed = process_with(R"("scheduler": {"policy": "SCHED_FIFO", "priority": 10,
            "flags": ["SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_KEEP_PARAMS"]})");
        REQUIRE(parsed.ok());
        CHECK(parsed->scheduler->policy_value == 1);
        CHECK(parsed->scheduler->priority == 10);
        CHECK(parsed->scheduler->flags ==
              std::vector<std::string>{"SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_KEEP_PARAMS"});
        CHECK(parsed->scheduler->flag_bits == (0x01 | 0x10));
    }
    SECTION("every policy and flag name is known") {
        int value = 0;
        for (const char* policy : {"SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH",
                                   "SCHED_ISO", "SCHED_IDLE", "SCHED_DEADLINE"}) {
            std::string extra = value == 1 || value == 2 ? R"(, "priority": 1)"
                                : value == 6             ? R"(, "runtime": 2000, "deadline": 3000)"
                                                         : "";
            auto parsed =
                process_with(cat(R"("scheduler": {"policy": ")", policy, "\"", extra, "}"));
            INFO(policy);
            REQUIRE(parsed.ok());
            CHECK(parsed->scheduler->policy_value == static_cast<uint32_t>(value));
            ++value;
        }
        auto parsed = process_with(R"("scheduler": {"policy": "SCHED_OTHER", "flags": [
            "SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_RECLAIM", "SCHED_FLAG_DL_OVERRUN",
            "SCHED_FLAG_KEEP_POLICY", "SCHED_FLAG_KEEP_PARAMS", "SCHED_FLAG_UTIL_CLAMP_MIN",
            "SCHED_FLAG_UTIL_CLAMP_MAX"]})");
        REQUIRE(parsed.ok());
        CHECK(parsed->scheduler->flag_bits == 0x7f);
    }
    SECTION("SCHED_DEADLINE with its three parameters") {
        auto parsed = process_with(R"("scheduler": {"policy": "SCHED_DEADLINE", "runtime": 42000,
            "deadline": 100000, "period": 1000000})");
        REQUIRE(parsed.ok());
        CHECK(parsed->scheduler->runtime == 42000);
        CHECK(parsed->scheduler->deadline == 100000);
        CHECK(parsed->scheduler->period == 1000000);
    }
    SECTION("absent, or null, is no scheduler") {
        CHECK_FALSE(process_with(R"("cwd": "/")")->scheduler);
        CHECK_FALSE(process_with(R"("scheduler": null)")->scheduler);
    }
}

TEST_CASE("process.scheduler: errors name the field", "[sched][spec]") {
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_FOO"})") ==
          R"(process.scheduler.policy: unknown policy "SCHED_FOO")");
    CHECK(error_of(R"("scheduler": {"nice": 1})") == "process.scheduler.policy: is required");
    CHECK(error_of(R"("scheduler": "SCHED_FIFO")") ==
          "process.scheduler: expected an object, got string");
    CHECK(error_of(R"("scheduler": {"policy": 3})") ==
          "process.scheduler.policy: expected a string, got 3");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_OTHER", "nice": 20})") ==
          "process.scheduler.nice: must be between -20 and 19, got 20");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_OTHER", "nice": -21})") ==
          "process.scheduler.nice: must be between -20 and 19, got -21");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_OTHER", "nice": 1.5})") ==
          "process.scheduler.nice: expected a 32-bit integer, got 1.5");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_BATCH", "priority": 5})") ==
          "process.scheduler.priority: only SCHED_FIFO and SCHED_RR take a priority, not "
          "SCHED_BATCH (got 5)");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_FIFO"})") ==
          "process.scheduler.priority: SCHED_FIFO needs a priority between 1 and 99, got 0");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_RR", "priority": 100})") ==
          "process.scheduler.priority: SCHED_RR needs a priority between 1 and 99, got 100");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_OTHER", "flags": ["SCHED_FLAG_RESET_ON_FORK",
          "SCHED_FLAG_X"]})") == R"(process.scheduler.flags[1]: unknown flag "SCHED_FLAG_X")");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_OTHER", "flags": "SCHED_FLAG_RECLAIM"})") ==
          "process.scheduler.flags: expected an array, got string");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_OTHER", "runtime": 1000})") ==
          "process.scheduler.runtime: only SCHED_DEADLINE takes a runtime, not SCHED_OTHER");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_FIFO", "priority": 1, "period": 1})") ==
          "process.scheduler.period: only SCHED_DEADLINE takes a period, not SCHED_FIFO");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_DEADLINE", "deadline": -1})") ==
          "process.scheduler.deadline: expected an unsigned 64-bit integer, got -1");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_DEADLINE", "runtime": 100,
          "deadline": 1000})") ==
          "process.scheduler.runtime: SCHED_DEADLINE needs a runtime of at least 1024 ns, got 100");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_DEADLINE", "runtime": 2000,
          "deadline": 1000})") ==
          "process.scheduler.deadline: must be at least the runtime (2000 ns), got 1000");
    CHECK(error_of(R"("scheduler": {"policy": "SCHED_DEADLINE", "runtime": 2000,
          "deadline": 3000, "period": 2500})") ==
          "process.scheduler.period: must be at least the deadline (3000 ns), got 2500");
}

TEST_CASE("process.ioPriority: fields and errors", "[sched][spec]") {
    auto parsed = process_with(R"("ioPriority": {"class": "IOPRIO_CLASS_BE", "priority": 5})");
    REQUIRE(parsed.ok());
    REQUIRE(parsed->io_priority);
    CHECK(parsed->io_priority->io_class == "IOPRIO_CLASS_BE");
    CHECK(parsed->io_priority->class_value == 2);
    CHECK(parsed->io_priority->priority == 5);
    CHECK(process_with(R"("ioPriority": {"class": "IOPRIO_CLASS_RT", "priority": 0})")
              ->io_priority->class_value == 1);
    // runc reads a missing priority as 0 (its own tests give IOPRIO_CLASS_IDLE alone).
    auto idle = process_with(R"("ioPriority": {"class": "IOPRIO_CLASS_IDLE"})");
    REQUIRE(idle.ok());
    CHECK(idle->io_priority->class_value == 3);
    CHECK(idle->io_priority->priority == 0);

    CHECK(error_of(R"("ioPriority": {"class": "IOPRIO_CLASS_NONE", "priority": 0})") ==
          R"(process.ioPriority.class: unknown class "IOPRIO_CLASS_NONE")");
    CHECK(error_of(R"("ioPriority": {"priority": 0})") == "process.ioPriority.class: is required");
    CHECK(error_of(R"("ioPriority": {"class": "IOPRIO_CLASS_BE", "priority": 8})") ==
          "process.ioPriority.priority: must be between 0 (highest) and 7 (lowest), got 8");
    CHECK(error_of(R"("ioPriority": {"class": "IOPRIO_CLASS_BE", "priority": -1})") ==
          "process.ioPriority.priority: must be between 0 (highest) and 7 (lowest), got -1");
    CHECK(error_of(R"("ioPriority": {"class": "IOPRIO_CLASS_BE", "priority": "4"})") ==
          "process.ioPriority.priority: expected a 32-bit integer, got string");
    CHECK(error_of(R"("ioPriority": [])") == "process.ioPriority: expected an object, got array");
}

TEST_CASE("process.execCPUAffinity: fields and errors", "[sched][spec]") {
    auto parsed = process_with(R"("execCPUAffinity": {"initial": "0-3,7", "final": "1"})");
    REQUIRE(parsed.ok());
    REQUIRE(parsed->exec_cpu_affinity);
    CHECK(parsed->exec_cpu_affinity->initial == "0-3,7");
    CHECK(parsed->exec_cpu_affinity->initial_cpus == std::vector<uint32_t>{0, 1, 2, 3, 7});
    CHECK(parsed->exec_cpu_affinity->final == "1");
    CHECK(parsed->exec_cpu_affinity->final_cpus == std::vector<uint32_t>{1});
    auto only_final = process_with(R"("execCPUAffinity": {"final": ""})");
    REQUIRE(only_final.ok());
    CHECK_FALSE(only_final->exec_cpu_affinity->initial);
    CHECK(only_final->exec_cpu_affinity->final == "");

    CHECK(error_of(R"("execCPUAffinity": {"initial": "0-"})") ==
          R"(process.execCPUAffinity.initial: bad cpu list "0-": expected a cpu number after '-')");
    CHECK(error_of(R"("execCPUAffinity": {"final": "2-1"})") ==
          R"(process.execCPUAffinity.final: bad cpu list "2-1": range 2-1 ends before it starts)");
    CHECK(error_of(R"("execCPUAffinity": {"final": 1})") ==
          "process.execCPUAffinity.final: expected a string, got 1");
    CHECK(error_of(R"("execCPUAffinity": "0")") ==
          "process.execCPUAffinity: expected an object, got string");
}

TEST_CASE("process.scheduler in config.json: the path starts at process", "[sched][spec]") {
    auto json = nlohmann::json::parse(spec::default_spec_json(false, 0, 0, false));
    json["process"]["scheduler"] = {{"policy", "SCHED_FOO"}};
    auto parsed = spec::parse_spec(json.dump());
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message() == R"(process.scheduler.policy: unknown policy "SCHED_FOO")");
}

TEST_CASE("scheduling: what reaches the kernel", "[sched]") {
    FakeSyscalls sys;
    auto parsed = process_with(R"("scheduler": {"policy": "SCHED_DEADLINE", "runtime": 42000,
        "deadline": 100000, "period": 1000000, "flags": ["SCHED_FLAG_RESET_ON_FORK"]},
        "ioPriority": {"class": "IOPRIO_CLASS_IDLE", "priority": 7},
        "execCPUAffinity": {"initial": "0", "final": "1"})");
    REQUIRE(parsed.ok());
    REQUIRE(runtime::scheduling::apply_scheduler(parsed->scheduler, sys).ok());
    REQUIRE(runtime::scheduling::apply_io_priority(parsed->io_priority, sys).ok());
    REQUIRE(runtime::scheduling::apply_final_affinity(parsed->exec_cpu_affinity, sys).ok());
    CHECK(sys.calls == std::vector<std::string>{
                           "sched_setattr 6 flags 1 nice 0 priority 0 dl 42000/100000/1000000",
                           "ioprio_set 3 7", "sched_setaffinity 1"});

    SECTION("only initial: the final affinity goes back to every cpu") {
        FakeSyscalls reset;
        auto initial = process_with(R"("execCPUAffinity": {"initial": "0"})");
        REQUIRE(runtime::scheduling::apply_final_affinity(initial->exec_cpu_affinity, reset).ok());
        CHECK(reset.calls == std::vector<std::string>{"sched_setaffinity all"});
    }
    SECTION("nothing set: only the affinity, reset to every cpu (runc 1.3)") {
        FakeSyscalls none;
        auto plain = process_with(R"("cwd": "/")");
        REQUIRE(runtime::scheduling::apply_scheduler(plain->scheduler, none).ok());
        REQUIRE(runtime::scheduling::apply_io_priority(plain->io_priority, none).ok());
        REQUIRE(runtime::scheduling::apply_final_affinity(plain->exec_cpu_affinity, none).ok());
        CHECK(none.calls == std::vector<std::string>{"sched_setaffinity all"});
    }
    SECTION("a refused reset is no error: the process keeps the cpus it has (runc)") {
        FakeSyscalls refused;
        refused.fail("sched_setaffinity", EINVAL);
        auto plain = process_with(R"("cwd": "/")");
        REQUIRE(runtime::scheduling::apply_final_affinity(plain->exec_cpu_affinity, refused).ok());
        runtime::scheduling::reset_affinity(refused);
        CHECK(refused.calls.size() == 2);
    }
}

TEST_CASE("scheduling: SCHED_DEADLINE refused says runc's words about AllowedCPUs", "[sched]") {
    // runc 1.3's scheduler.bats: a cpuset of cpu 0 with SCHED_DEADLINE fails with "process
    // scheduler can't be used together with AllowedCPUs" (sched_setattr(2) gives EPERM).
    auto parsed = process_with(R"("scheduler": {"policy": "SCHED_DEADLINE", "nice": 19,
        "runtime": 42000, "deadline": 1000000, "period": 1000000})");
    REQUIRE(parsed.ok());
    FakeSyscalls sys;
    sys.fail("sched_setattr", EPERM);
    auto scheduler = runtime::scheduling::apply_scheduler(parsed->scheduler, sys);
    REQUIRE_FALSE(scheduler.ok());
    CHECK(scheduler.error().errno_value() == EPERM);
    CHECK_THAT(scheduler.error().message(),
               Catch::StartsWith("process.scheduler: sched_setattr(SCHED_DEADLINE, nice 19, "
                                 "runtime/deadline/period 42000/1000000/1000000 ns): Operation not "
                                 "permitted (process scheduler can't be used together with "
                                 "AllowedCPUs: "));
}

TEST_CASE("scheduling: a refused call is an error naming the field", "[sched]") {
    auto parsed = process_with(R"("scheduler": {"policy": "SCHED_FIFO", "priority": 10},
        "ioPriority": {"class": "IOPRIO_CLASS_RT", "priority": 0},
        "execCPUAffinity": {"final": "1"})");
    REQUIRE(parsed.ok());
    FakeSyscalls sys;
    sys.fail("sched_setattr", EPERM);
    sys.fail("ioprio_set", EPERM);
    sys.fail("sched_setaffinity", EINVAL);
    auto scheduler = runtime::scheduling::apply_scheduler(parsed->scheduler, sys);
    REQUIRE_FALSE(scheduler.ok());
    CHECK(scheduler.error().errno_value() == EPERM);
    CHECK(scheduler.error().message() ==
          "process.scheduler: sched_setattr(SCHED_FIFO, nice 0, priority 10): Operation not "
          "permitted (a real-time policy or a lower nice needs CAP_SYS_NICE in the host's user "
          "namespace; a real-time one, with cgroup v1 real-time group scheduling, also runtime "
          "in the container's cpu cgroup: linux.resources.cpu.realtimeRuntime)");
    auto io = runtime::scheduling::apply_io_priority(parsed->io_priority, sys);
    REQUIRE_FALSE(io.ok());
    CHECK(io.error().message() ==
          "process.ioPriority: ioprio_set(IOPRIO_CLASS_RT, 0): Operation not permitted "
          "(IOPRIO_CLASS_RT needs CAP_SYS_NICE or CAP_SYS_ADMIN in the host's user namespace)");
    auto affinity = runtime::scheduling::apply_final_affinity(parsed->exec_cpu_affinity, sys);
    REQUIRE_FALSE(affinity.ok());
    CHECK(affinity.error().message().starts_with(
        R"(process.execCPUAffinity.final: sched_setaffinity("1"): Invalid argument)"));
}

TEST_CASE("scheduling: the recipe's places for them", "[sched][recipe]") {
    std::vector<std::string> init_steps;
    std::vector<std::string> exec_steps;
    for (const auto& step : runtime::process_recipe()) {
        if (takes(step.taker, runtime::Taker::init)) {
            init_steps.emplace_back(step.name);
        }
        if (takes(step.taker, runtime::Taker::process)) {
            exec_steps.emplace_back(step.name);
        }
    }
    auto position = [](const std::vector<std::string>& steps, std::string_view name) {
        auto found = std::find(steps.begin(), steps.end(), name);
        REQUIRE(found != steps.end());
        return found - steps.begin();
    };
    // Right after joining the cgroup, whose cpuset bounds it: the final affinity of an
    // exec'd process, the reset of both.
    for (const auto* steps : {&init_steps, &exec_steps}) {
        CHECK(position(*steps, "CPU affinity") == position(*steps, "join cgroups") + 1);
    }
    for (const auto* steps : {&init_steps, &exec_steps}) {
        // While still the host's root in the host's user namespace: before any is joined.
        CHECK(position(*steps, "scheduler") < position(*steps, "join namespaces"));
        CHECK(position(*steps, "I/O priority") == position(*steps, "scheduler") + 1);
        CHECK(position(*steps, "rlimits") < position(*steps, "scheduler"));
    }
    CHECK(position(exec_steps, "CPU affinity") < position(exec_steps, "scheduler"));
}

namespace {

// The recipe's first stretch, up to joining the namespaces, as `who` takes it, against `sys`.
std::vector<std::string> first_calls(const spec::Process& process, runtime::Taker who) {
    FakeSyscalls sys;
    spec::Linux linux_section;
    auto security = runtime::security::prepare(process, linux_section);
    REQUIRE(security.ok());
    minirun::testing::RecipeFixture fixture(process, std::move(*security));
    auto status = fixture.run(who, sys, "join cgroups", "join namespaces");
    REQUIRE(status.ok());
    return sys.calls;
}

} // namespace

TEST_CASE("scheduling: the calls in the recipe's order, init and exec", "[sched][recipe]") {
    auto parsed = process_with(R"("scheduler": {"policy": "SCHED_BATCH", "nice": 5},
        "ioPriority": {"class": "IOPRIO_CLASS_BE", "priority": 5},
        "execCPUAffinity": {"initial": "0", "final": "1"})");
    REQUIRE(parsed.ok());
    auto relevant = [](std::vector<std::string> calls) {
        std::erase_if(calls, [](const std::string& call) {
            return !call.starts_with("sched_") && !call.starts_with("ioprio") &&
                   !call.starts_with("close_range") && !call.starts_with("prctl PR_SET_DUMPABLE");
        });
        return calls;
    };
    const std::string batch = "sched_setattr 3 flags 0 nice 5 priority 0 dl 0/0/0";
    // The init: not execCPUAffinity (runtime-spec: not the init's), but every cpu, not the
    // caller's (runc 1.3); scheduler and I/O priority.
    auto init = relevant(first_calls(*parsed, runtime::Taker::init));
    REQUIRE(init.size() == 5);
    CHECK(init[0] == "sched_setaffinity all");
    CHECK(init[1].starts_with("close_range"));
    CHECK(init[2].starts_with("prctl PR_SET_DUMPABLE 0"));
    CHECK(init[3] == batch);
    CHECK(init[4] == "ioprio_set 2 5");
    // An exec'd process: the final affinity first (it joined the cgroup just before).
    auto exec = relevant(first_calls(*parsed, runtime::Taker::process));
    REQUIRE(exec.size() == 5);
    CHECK(exec[0] == "sched_setaffinity 1");
    CHECK(exec[1].starts_with("close_range"));
    CHECK(exec[2].starts_with("prctl PR_SET_DUMPABLE 0"));
    CHECK(exec[3] == batch);
    CHECK(exec[4] == "ioprio_set 2 5");
}

TEST_CASE("scheduling: the affinity mask in runc's debug line", "[sched]") {
    cpu_set_t own;
    CPU_ZERO(&own);
    REQUIRE(::sched_getaffinity(0, sizeof(own), &own) == 0);
    std::vector<int> cpus;
    for (int cpu = 0; cpu < 64; ++cpu) {
        if (CPU_ISSET(cpu, &own)) {
            cpus.push_back(cpu);
        }
    }
    REQUIRE_FALSE(cpus.empty());
    auto on = [](std::vector<int> some) {
        cpu_set_t set;
        CPU_ZERO(&set);
        uint64_t mask = 0;
        for (int cpu : some) {
            CPU_SET(cpu, &set);
            mask |= uint64_t{1} << cpu;
        }
        REQUIRE(::sched_setaffinity(0, sizeof(set), &set) == 0);
        std::ostringstream hex;
        hex << "0x" << std::hex << mask;
        return hex.str();
    };
    CHECK(runtime::scheduling::affinity_mask_text() != "0x0");
    std::string expected = on({cpus.front()});
    CHECK(runtime::scheduling::affinity_mask_text() == expected);
    if (cpus.size() > 1) {
        expected = on({cpus.front(), cpus.back()});
        CHECK(runtime::scheduling::affinity_mask_text() == expected);
    }
    REQUIRE(::sched_setaffinity(0, sizeof(own), &own) == 0);
}
