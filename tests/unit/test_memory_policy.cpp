// linux.memoryPolicy: parsing (names, node lists, the combinations the kernel refuses, each
// error with its path), the set_mempolicy(2) arguments built from it, the call through the
// seam and its place in the recipe.
#include "fake_syscalls.hpp"
#include "minirun/units.hpp"
#include "process/memory_policy.hpp"
#include "recipe.hpp"
#include "recipe_fixture.hpp"
#include "spec_rules.hpp"
#include "temp_dir.hpp"

#include "minirun/spec.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace minirun;
using minirun::testing::FakeSyscalls;
using minirun::testing::TempDir;
namespace mempolicy = minirun::runtime::memory_policy;

namespace {

nlohmann::json config_with(const nlohmann::json& policy) {
    auto json = nlohmann::json::parse(spec::default_spec_json(false, 0, 0));
    json["linux"]["memoryPolicy"] = policy;
    return json;
}

spec::MemoryPolicy parsed(const nlohmann::json& policy) {
    auto spec = spec::parse_spec(config_with(policy).dump());
    INFO((spec ? std::string() : spec.error().message()));
    REQUIRE(spec.ok());
    REQUIRE(spec->linux.memory_policy.has_value());
    return *spec->linux.memory_policy;
}

std::string error_of(const nlohmann::json& policy) {
    auto spec = spec::parse_spec(config_with(policy).dump());
    REQUIRE_FALSE(spec.ok());
    return spec.error().message();
}

} // namespace

TEST_CASE("memoryPolicy: mode, nodes and flags are read; nodes expanded in order", "[mempolicy]") {
    auto policy =
        parsed({{"mode", "MPOL_BIND"}, {"nodes", "3,0-1,1"}, {"flags", {"MPOL_F_STATIC_NODES"}}});
    CHECK(policy.mode == "MPOL_BIND");
    CHECK(policy.nodes == "3,0-1,1");
    CHECK(policy.node_ids == std::vector<uint32_t>{0, 1, 3});
    CHECK(policy.flags == std::vector<std::string>{"MPOL_F_STATIC_NODES"});

    CHECK(parsed({{"mode", "MPOL_DEFAULT"}}).node_ids.empty());
    CHECK(parsed({{"mode", "MPOL_LOCAL"}, {"nodes", ""}}).node_ids.empty());
    CHECK(
        parsed(
            {{"mode", "MPOL_PREFERRED_MANY"}, {"nodes", "0"}, {"flags", {"MPOL_F_NUMA_BALANCING"}}})
            .flags.size() == 1);
    // Absent stays absent: no policy is set at all then.
    auto plain = spec::parse_spec(spec::default_spec_json(false, 0, 0));
    REQUIRE(plain.ok());
    CHECK_FALSE(plain->linux.memory_policy.has_value());
}

TEST_CASE("memoryPolicy: every wrong value is one line naming its field", "[mempolicy]") {
    CHECK(error_of({{"mode", "MPOL_FOO"}}) ==
          "linux.memoryPolicy.mode: unknown mode \"MPOL_FOO\" (expected MPOL_DEFAULT, MPOL_BIND, "
          "MPOL_INTERLEAVE, MPOL_WEIGHTED_INTERLEAVE, MPOL_PREFERRED, MPOL_PREFERRED_MANY or "
          "MPOL_LOCAL)");
    CHECK(error_of({{"nodes", "0"}}) == "linux.memoryPolicy.mode: is required");
    CHECK(error_of({{"mode", 2}}) == "linux.memoryPolicy.mode: expected a string, got 2");
    CHECK(error_of({{"mode", "MPOL_BIND"}}) ==
          "linux.memoryPolicy.nodes: required with MPOL_BIND (a list of memory nodes such as "
          "\"0-3,7\")");
    CHECK(error_of({{"mode", "MPOL_INTERLEAVE"}, {"nodes", ""}}) ==
          "linux.memoryPolicy.nodes: required with MPOL_INTERLEAVE (a list of memory nodes such "
          "as \"0-3,7\")");
    CHECK(error_of({{"mode", "MPOL_DEFAULT"}, {"nodes", "0"}}) ==
          "linux.memoryPolicy.nodes: must be empty with MPOL_DEFAULT, got \"0\"");
    CHECK(error_of({{"mode", "MPOL_LOCAL"}, {"nodes", "1"}}) ==
          "linux.memoryPolicy.nodes: must be empty with MPOL_LOCAL, got \"1\"");
    CHECK(error_of({{"mode", "MPOL_BIND"}, {"nodes", "a"}}) ==
          "linux.memoryPolicy.nodes: bad node list \"a\": expected a node number at the start of "
          "an entry");
    CHECK(error_of({{"mode", "MPOL_BIND"}, {"nodes", "3-1"}}) ==
          "linux.memoryPolicy.nodes: bad node list \"3-1\": range 3-1 ends before it starts");
    CHECK(error_of({{"mode", "MPOL_BIND"}, {"nodes", "0,"}}) ==
          "linux.memoryPolicy.nodes: bad node list \"0,\": ends with ','");
    CHECK(error_of({{"mode", "MPOL_BIND"}, {"nodes", "0,,1"}}) ==
          "linux.memoryPolicy.nodes: bad node list \"0,,1\": expected a node number at the "
          "start of an entry");
    CHECK(error_of({{"mode", "MPOL_BIND"}, {"nodes", "0-4096"}}) ==
          "linux.memoryPolicy.nodes: bad node list \"0-4096\": node 4096 is above 1023");
    CHECK(error_of(
              {{"mode", "MPOL_BIND"}, {"nodes", "0"}, {"flags", {"MPOL_F_STATIC_NODES", "X"}}}) ==
          "linux.memoryPolicy.flags[1]: unknown flag \"X\" (expected MPOL_F_NUMA_BALANCING, "
          "MPOL_F_RELATIVE_NODES or MPOL_F_STATIC_NODES)");
    CHECK(error_of({{"mode", "MPOL_BIND"},
                    {"nodes", "0"},
                    {"flags", {"MPOL_F_STATIC_NODES", "MPOL_F_RELATIVE_NODES"}}}) ==
          "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each "
          "other");
    CHECK(error_of({{"mode", "MPOL_LOCAL"}, {"flags", {"MPOL_F_STATIC_NODES"}}}) ==
          "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES says how nodes are read, and MPOL_LOCAL "
          "has none");
    CHECK(
        error_of(
            {{"mode", "MPOL_INTERLEAVE"}, {"nodes", "0"}, {"flags", {"MPOL_F_NUMA_BALANCING"}}}) ==
        "linux.memoryPolicy.flags: MPOL_F_NUMA_BALANCING needs MPOL_BIND or MPOL_PREFERRED_MANY, "
        "not MPOL_INTERLEAVE");
    CHECK(error_of(nlohmann::json::array()) == "linux.memoryPolicy: expected an object, got array");
}

TEST_CASE("memoryPolicy: the node list reader", "[mempolicy]") {
    auto nodes = [](std::string_view text) {
        return units::parse_number_list(text, {"node", spec::rules::kMaxNumaNode});
    };
    CHECK(nodes("")->empty());
    CHECK(*nodes("7") == std::vector<uint32_t>{7});
    CHECK(*nodes("0-3,7") == std::vector<uint32_t>{0, 1, 2, 3, 7});
    CHECK(*nodes("1023") == std::vector<uint32_t>{1023});
    CHECK_FALSE(nodes("-1").ok());
    CHECK_FALSE(nodes(" 1").ok());
    CHECK_FALSE(nodes("1-").ok());
    CHECK_FALSE(nodes("99999999999").ok());
}

TEST_CASE("memoryPolicy: the mask and mode set_mempolicy(2) is given", "[mempolicy]") {
    auto bind0 = mempolicy::request_for(parsed({{"mode", "MPOL_BIND"}, {"nodes", "0"}}));
    CHECK(bind0.mode == 2);
    CHECK(bind0.mask == std::vector<unsigned long>{0x1});
    CHECK(bind0.max_node == 65); // the kernel reads max_node - 1 bits: all 64 of the word

    auto several =
        mempolicy::request_for(parsed({{"mode", "MPOL_INTERLEAVE"}, {"nodes", "0-1,3"}}));
    CHECK(several.mode == 3);
    CHECK(several.mask == std::vector<unsigned long>{0xb});

    auto high = mempolicy::request_for(parsed({{"mode", "MPOL_PREFERRED"}, {"nodes", "64"}}));
    CHECK(high.mode == 1);
    CHECK(high.mask == std::vector<unsigned long>{0x0, 0x1});
    CHECK(high.max_node == 129);

    auto flagged = mempolicy::request_for(
        parsed({{"mode", "MPOL_BIND"},
                {"nodes", "0"},
                {"flags", {"MPOL_F_NUMA_BALANCING", "MPOL_F_STATIC_NODES"}}}));
    CHECK(flagged.mode == (2 | (1 << 13) | (1 << 15)));
    CHECK(mempolicy::request_for(parsed({{"mode", "MPOL_WEIGHTED_INTERLEAVE"}, {"nodes", "0"}}))
              .mode == 6);
    CHECK(mempolicy::request_for(parsed({{"mode", "MPOL_PREFERRED_MANY"}, {"nodes", "0"}})).mode ==
          5);
    CHECK(mempolicy::request_for(
              parsed({{"mode", "MPOL_BIND"}, {"nodes", "1"}, {"flags", {"MPOL_F_RELATIVE_NODES"}}}))
              .mode == (2 | (1 << 14)));

    auto none = mempolicy::request_for(parsed({{"mode", "MPOL_LOCAL"}}));
    CHECK(none.mode == 4);
    CHECK(none.mask.empty());
    CHECK(none.max_node == 0);
    CHECK(mempolicy::request_for(parsed({{"mode", "MPOL_DEFAULT"}})).mode == 0);
}

TEST_CASE("memoryPolicy: one call through the seam; a refusal names the field and the nodes",
          "[mempolicy]") {
    FakeSyscalls sys;
    auto bind = parsed({{"mode", "MPOL_BIND"}, {"nodes", "0-1,3"}});
    REQUIRE(mempolicy::apply(&bind, sys).ok());
    CHECK(sys.calls == std::vector<std::string>{"set_mempolicy 2 b 65"});

    FakeSyscalls local_sys;
    auto local = parsed({{"mode", "MPOL_LOCAL"}});
    REQUIRE(mempolicy::apply(&local, local_sys).ok());
    CHECK(local_sys.calls == std::vector<std::string>{"set_mempolicy 4 NULL 0"});

    FakeSyscalls untouched;
    REQUIRE(mempolicy::apply(nullptr, untouched).ok());
    CHECK(untouched.calls.empty());

    // The kernel's EINVAL for a node this process may not use: the allowed ones are read
    // from the status file and named.
    TempDir dir;
    std::string status = dir.path() + "/status";
    std::ofstream(status) << "Name:\tinit\nMems_allowed:\t00000001\nMems_allowed_list:\t0\n";
    FakeSyscalls refusing;
    refusing.fail("set_mempolicy", EINVAL);
    auto five = parsed({{"mode", "MPOL_BIND"}, {"nodes", "5"}});
    auto refused = mempolicy::apply(&five, refusing, status);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().errno_value() == EINVAL);
    CHECK(refused.error().message() ==
          "linux.memoryPolicy: set_mempolicy(MPOL_BIND, nodes \"5\"): Invalid argument: the "
          "container's processes may use memory node(s) 0 only");

    CHECK(mempolicy::refusal(parsed({{"mode", "MPOL_LOCAL"}}), ENOSYS, "").message() ==
          "linux.memoryPolicy: set_mempolicy(MPOL_LOCAL): Function not implemented: this kernel "
          "has no NUMA memory policies");
    CHECK_THAT(mempolicy::refusal(parsed({{"mode", "MPOL_WEIGHTED_INTERLEAVE"}, {"nodes", "0"}}),
                                  EINVAL, "0")
                   .message(),
               Catch::Matchers::EndsWith("(MPOL_WEIGHTED_INTERLEAVE needs Linux 6.9)"));
    CHECK(mempolicy::mode_text(parsed(
              {{"mode", "MPOL_BIND"}, {"nodes", "0"}, {"flags", {"MPOL_F_NUMA_BALANCING"}}})) ==
          "MPOL_BIND|MPOL_F_NUMA_BALANCING");
}

TEST_CASE("memoryPolicy: a step of both the init and exec, after the cgroups, before the "
          "namespaces",
          "[mempolicy][recipe]") {
    auto recipe = runtime::process_recipe();
    auto index = [&](std::string_view name) {
        auto found = std::find_if(recipe.begin(), recipe.end(),
                                  [&](const auto& step) { return step.name == name; });
        REQUIRE(found != recipe.end());
        return found - recipe.begin();
    };
    auto step = recipe.begin() + index("memory policy");
    CHECK(step->taker == runtime::Taker::both);
    CHECK(index("join cgroups") < index("memory policy"));
    CHECK(index("memory policy") < index("join namespaces"));
    CHECK(index("memory policy") < index("connect the seccomp listener"));

    // The step itself, for each taker: the policy the process was handed, nothing else.
    auto spec = spec::parse_spec(config_with({{"mode", "MPOL_INTERLEAVE"}, {"nodes", "0"}}).dump());
    REQUIRE(spec.ok());
    for (runtime::Taker taker : {runtime::Taker::init, runtime::Taker::process}) {
        FakeSyscalls sys;
        minirun::testing::RecipeFixture fixture(*spec->process, {});
        fixture.init.process.memory_policy = spec->linux.memory_policy;
        auto status = fixture.run(taker, sys, "memory policy", "memory policy");
        REQUIRE(status.ok());
        CHECK(sys.calls == std::vector<std::string>{"set_mempolicy 3 1 65"});
    }
}
