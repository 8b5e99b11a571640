// config.json's "process", and the process of `exec --process`: the command line, its
// user, capabilities and rlimits.
#include "minirun/spec.hpp"
#include "spec_reader.hpp"
#include "spec_rules.hpp"
#include "spec_sections.hpp"

#include <string>
#include <vector>

namespace minirun::spec::sections {

using namespace reader; // Node, read, field, member ...: the parser's vocabulary

namespace {

Status parse_user(const Node& node, User& user) {
    MR_TRY(expect_object(node));
    // uid and gid are REQUIRED by the spec, but runc reads a missing one as 0 and generated
    // configs rely on that; so do we.
    MR_TRY(field(node, "uid", user.uid));
    MR_TRY(field(node, "gid", user.gid));
    if (auto umask = member(node, "umask")) {
        MR_TRY(read(*umask, user.umask));
        if (*user.umask > 0777) {
            return umask->error(cat("must be at most 0777 (511), got ", *user.umask));
        }
    }
    return field(node, "additionalGids", user.additional_gids);
}

Status parse_console_size(const Node& node, ConsoleSize& size) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field(node, "height", size.height));
    return required_field(node, "width", size.width);
}

Status parse_capabilities(const Node& node, Capabilities& caps) {
    MR_TRY(expect_object(node));
    // Names are only type-checked here: runtime-spec 1.1 and later make a capability that
    // cannot be granted (unknown to libcap or to the kernel) a warning, not an error, and
    // runtime/capabilities.cpp warns and skips it when the container is made.
    MR_TRY(field(node, "bounding", caps.bounding));
    MR_TRY(field(node, "effective", caps.effective));
    MR_TRY(field(node, "permitted", caps.permitted));
    MR_TRY(field(node, "inheritable", caps.inheritable));
    return field(node, "ambient", caps.ambient);
}

Status parse_rlimit(const Node& node, Rlimit& limit) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node type, required_member(node, "type"));
    MR_TRY(read(type, limit.type));
    auto resource = rules::rlimit_resource(limit.type);
    if (!resource) {
        return type.error(cat("unknown rlimit ", quoted(limit.type)));
    }
    limit.resource = *resource;
    MR_TRY(required_field(node, "soft", limit.soft));
    MR_TRY(required_field(node, "hard", limit.hard));
    // setrlimit(2) fails with EINVAL for this; say which entry is wrong instead.
    if (limit.soft > limit.hard) {
        return node.error(cat("soft limit ", limit.soft, " is above the hard limit ", limit.hard));
    }
    return {};
}

Status parse_rlimits(const Node& node, std::vector<Rlimit>& limits) {
    MR_TRY(read_with(node, limits, parse_rlimit));
    // The spec: "Each type MUST be unique" (a second entry would silently override the first).
    for (size_t i = 0; i < limits.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
            if (limits[i].resource == limits[j].resource) {
                return Error(cat(node.element_path(i), ".type: duplicate rlimit ",
                                 quoted(limits[i].type), " (also at ", node.element_path(j), ")"));
            }
        }
    }
    return {};
}

} // namespace

Status parse_process_object(const Node& node, Process& process) {
    MR_TRY(expect_object(node));
    MR_TRY(field(node, "terminal", process.terminal));
    MR_TRY(field_with(node, "consoleSize", process.console_size, parse_console_size));
    MR_TRY(field_with(node, "user", process.user, parse_user));

    MR_ASSIGN(Node args, required_member(node, "args"));
    MR_TRY(read(args, process.args));
    // The spec extends execve's argv: at least one entry is REQUIRED (the program to run).
    if (process.args.empty()) {
        return args.error("must not be empty");
    }

    MR_TRY(field_with(node, "env", process.env, read_env_entry));

    // cwd is REQUIRED and absolute per the spec. Missing (or "", which Go generators emit for
    // an unset cwd) is read leniently as "/"; a relative one is an error, since there is no
    // meaningful base to resolve it against.
    if (auto cwd = member(node, "cwd")) {
        MR_TRY(read(*cwd, process.cwd));
        if (process.cwd.empty()) {
            process.cwd = "/";
        }
        MR_TRY(check_absolute(*cwd, process.cwd));
    }

    MR_TRY(field_with(node, "capabilities", process.capabilities, parse_capabilities));
    MR_TRY(field_with(node, "rlimits", process.rlimits, parse_rlimits));
    MR_TRY(field(node, "noNewPrivileges", process.no_new_privileges));
    if (auto adj = member(node, "oomScoreAdj")) {
        MR_TRY(read(*adj, process.oom_score_adj));
        // The range /proc/<pid>/oom_score_adj accepts.
        if (*process.oom_score_adj < -1000 || *process.oom_score_adj > 1000) {
            return adj->error(cat("must be between -1000 and 1000, got ", *process.oom_score_adj));
        }
    }
    MR_TRY(field(node, "apparmorProfile", process.apparmor_profile));
    return field(node, "selinuxLabel", process.selinux_label);
}

} // namespace minirun::spec::sections
