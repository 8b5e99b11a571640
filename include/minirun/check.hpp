// `mini-run check`: validates a bundle completely without running it, and points out the
// settings that weaken the container's isolation.
//
// Errors are what `create` would refuse, all of them at once, each with its JSON path; the
// parser itself stops at the first one, so check parses again with the offending part
// removed (runtime/check/check.cpp). Warnings come from one table of rules, each with the reason
// it matters and the fix (check_rules()). Nothing is created: no state, cgroup or mount.
#pragma once

#include "minirun/error.hpp"
#include "minirun/spec.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace minirun::check {

struct Problem {
    std::string path; // JSON path ("linux.namespaces[2].type"); empty: the file itself
    std::string message;
};

struct Warning {
    std::string rule; // the rule's id ("no-seccomp")
    std::string path;
    std::string message;
    std::string why;
    std::string fix;
};

struct Report {
    std::string bundle;
    std::vector<Problem> errors;
    std::vector<Warning> warnings;
};

// Where a rule fires: the path, and what it found there when the rule's message alone does
// not say it ("CAP_SYS_ADMIN, CAP_NET_ADMIN").
struct Hit {
    std::string path;
    std::string detail;
};

// One warning rule: the test finds the risky setting in a config that parsed.
struct Rule {
    std::string_view id;
    std::string_view message;
    std::string_view why;
    std::string_view fix;
    std::vector<Hit> (*test)(const spec::Spec& spec);
};
std::span<const Rule> check_rules();

// Every rule of check_rules() on `spec`, in the table's order.
std::vector<Warning> warnings_for(const spec::Spec& spec);

// Checks config text as if it were `bundle`'s config: the JSON, every field, the rules that
// relate fields, the plan `create` would make, the rootfs and the executable in it; then,
// for what parsed, the warning rules. `source_name` names the file in messages.
Report check_config(std::string_view text, std::string_view source_name, const std::string& bundle);

// Reads the bundle's config (crun's --config: another file, relative to the bundle) and
// checks it. An error: the bundle or its config cannot be read at all.
Result<Report> check_bundle(const std::string& bundle, const std::string& config_file);

// 0: clean, 1: warnings only, 2: any error.
int exit_code(const Report& report);

// One line per finding and a summary line.
std::string report_text(const Report& report);
// {"bundle":..., "errors":[{"path","message"}], "warnings":[{"rule","path","message","why","fix"}]}
std::string report_json(const Report& report);

} // namespace minirun::check
