// config.json's "process", and the process of `exec --process`: the command line, its
// user, capabilities and rlimits, its scheduling (scheduler, ioPriority, execCPUAffinity).
#include "minirun/spec.hpp"
#include "minirun/units.hpp"
#include "spec_reader.hpp"
#include "spec_rules.hpp"
#include "spec_sections.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
    MR_TRY(field(node, "additionalGids", user.additional_gids));
    // (uid_t)-1 is no id: setresuid(2) would leave the process root (units::kNoId). runc
    // fails on it later, at setuid (EINVAL); refused here, with the field's path.
    auto no_id = [&](std::string_view key, uint32_t id, std::optional<size_t> index = {}) {
        const std::string path =
            index ? cat(node.child_path(key), "[", *index, "]") : node.child_path(key);
        return Error(EINVAL, cat(path, ": ", id, " is (uid_t)-1, not an id (at most ",
                                 units::kNoId - 1, ")"));
    };
    if (user.uid == units::kNoId) {
        return no_id("uid", user.uid);
    }
    if (user.gid == units::kNoId) {
        return no_id("gid", user.gid);
    }
    for (size_t i = 0; i < user.additional_gids.size(); ++i) {
        if (user.additional_gids[i] == units::kNoId) {
            return no_id("additionalGids", user.additional_gids[i], i);
        }
    }
    return {};
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
    // runtime/security/capabilities.cpp warns and skips it when the container is made.
    MR_TRY(field(node, "bounding", caps.bounding));
    MR_TRY(field(node, "effective", caps.effective));
    MR_TRY(field(node, "permitted", caps.permitted));
    MR_TRY(field(node, "inheritable", caps.inheritable));
    caps.inheritable_given = member(node, "inheritable").has_value();
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

// The names sched_setattr(2) and ioprio_set(2) know, with their values (<linux/sched.h>,
// <linux/ioprio.h>; SCHED_ISO is reserved, and no mainline kernel accepts it).
constexpr std::array<std::pair<std::string_view, uint32_t>, 7> kPolicies = {{
    {"SCHED_OTHER", 0},
    {"SCHED_FIFO", 1},
    {"SCHED_RR", 2},
    {"SCHED_BATCH", 3},
    {"SCHED_ISO", 4},
    {"SCHED_IDLE", 5},
    {"SCHED_DEADLINE", 6},
}};
constexpr std::array<std::pair<std::string_view, uint64_t>, 7> kSchedulerFlags = {{
    {"SCHED_FLAG_RESET_ON_FORK", 0x01},
    {"SCHED_FLAG_RECLAIM", 0x02},
    {"SCHED_FLAG_DL_OVERRUN", 0x04},
    {"SCHED_FLAG_KEEP_POLICY", 0x08},
    {"SCHED_FLAG_KEEP_PARAMS", 0x10},
    {"SCHED_FLAG_UTIL_CLAMP_MIN", 0x20},
    {"SCHED_FLAG_UTIL_CLAMP_MAX", 0x40},
}};
constexpr std::array<std::pair<std::string_view, int>, 3> kIoClasses = {{
    {"IOPRIO_CLASS_RT", 1},
    {"IOPRIO_CLASS_BE", 2},
    {"IOPRIO_CLASS_IDLE", 3},
}};

template <typename Table>
auto value_of(const Table& table, std::string_view name)
    -> std::optional<typename Table::value_type::second_type> {
    for (const auto& [known, value] : table) {
        if (known == name) {
            return value;
        }
    }
    return std::nullopt;
}

// The checks are runc's (libcontainer/configs/validate) and the kernel's own
// (sched_setattr(2): nice -20..19, a real-time priority 1..99 and only for SCHED_FIFO and
// SCHED_RR, deadline parameters only for SCHED_DEADLINE, with runtime <= deadline <=
// period): an error here names the field, where the kernel would only say EINVAL.
Status parse_scheduler(const Node& node, Scheduler& scheduler) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node policy, required_member(node, "policy"));
    MR_TRY(read(policy, scheduler.policy));
    auto value = value_of(kPolicies, scheduler.policy);
    if (!value) {
        return policy.error(cat("unknown policy ", quoted(scheduler.policy)));
    }
    scheduler.policy_value = *value;
    const bool real_time = scheduler.policy == "SCHED_FIFO" || scheduler.policy == "SCHED_RR";
    const bool deadline = scheduler.policy == "SCHED_DEADLINE";

    if (auto nice = member(node, "nice")) {
        MR_TRY(read(*nice, scheduler.nice));
        if (scheduler.nice < -20 || scheduler.nice > 19) {
            return nice->error(cat("must be between -20 and 19, got ", scheduler.nice));
        }
    }
    auto priority = member(node, "priority");
    if (priority) {
        MR_TRY(read(*priority, scheduler.priority));
    }
    if (real_time && (scheduler.priority < 1 || scheduler.priority > 99)) {
        return Error(cat(priority ? priority->path() : node.child_path("priority"), ": ",
                         scheduler.policy, " needs a priority between 1 and 99, got ",
                         scheduler.priority));
    }
    if (!real_time && scheduler.priority != 0) {
        return priority->error(cat("only SCHED_FIFO and SCHED_RR take a priority, not ",
                                   scheduler.policy, " (got ", scheduler.priority, ")"));
    }

    MR_TRY(field(node, "flags", scheduler.flags));
    for (size_t i = 0; i < scheduler.flags.size(); ++i) {
        auto bit = value_of(kSchedulerFlags, scheduler.flags[i]);
        if (!bit) {
            return Error(cat(node.child_path("flags"), "[", i, "]: unknown flag ",
                             quoted(scheduler.flags[i])));
        }
        scheduler.flag_bits |= *bit;
    }

    for (auto [key, out] :
         {std::pair{"runtime", &scheduler.runtime}, std::pair{"deadline", &scheduler.deadline},
          std::pair{"period", &scheduler.period}}) {
        if (auto child = member(node, key)) {
            MR_TRY(read(*child, *out));
            if (!deadline && *out != 0) {
                return child->error(
                    cat("only SCHED_DEADLINE takes a ", key, ", not ", scheduler.policy));
            }
        }
    }
    if (deadline) {
        // The kernel's own rules (__checkparam_dl): a period of 0 means the deadline.
        if (scheduler.runtime < 1024) {
            return Error(cat(node.child_path("runtime"),
                             ": SCHED_DEADLINE needs a runtime of at least 1024 ns, got ",
                             scheduler.runtime));
        }
        if (scheduler.deadline < scheduler.runtime) {
            return Error(cat(node.child_path("deadline"), ": must be at least the runtime (",
                             scheduler.runtime, " ns), got ", scheduler.deadline));
        }
        if (scheduler.period != 0 && scheduler.period < scheduler.deadline) {
            return Error(cat(node.child_path("period"), ": must be at least the deadline (",
                             scheduler.deadline, " ns), got ", scheduler.period));
        }
    }
    return {};
}

Status parse_io_priority(const Node& node, IoPriority& priority) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node io_class, required_member(node, "class"));
    MR_TRY(read(io_class, priority.io_class));
    auto value = value_of(kIoClasses, priority.io_class);
    if (!value) {
        return io_class.error(cat("unknown class ", quoted(priority.io_class)));
    }
    priority.class_value = *value;
    // priority is REQUIRED by the spec, but runc reads a missing one as 0 (its own tests
    // give IOPRIO_CLASS_IDLE alone, which has no levels); so do we.
    if (auto level = member(node, "priority")) {
        MR_TRY(read(*level, priority.priority));
        if (priority.priority < 0 || priority.priority > 7) {
            return level->error(
                cat("must be between 0 (highest) and 7 (lowest), got ", priority.priority));
        }
    }
    return {};
}

Status parse_cpu_list_field(const Node& object, std::string_view key,
                            std::optional<std::string>& text, std::vector<uint32_t>& cpus) {
    auto child = member(object, key);
    if (!child) {
        return {};
    }
    MR_TRY(read(*child, text));
    auto parsed = units::parse_cpu_list(*text);
    if (!parsed) {
        return child->error(parsed.error().message());
    }
    cpus = std::move(*parsed);
    return {};
}

Status parse_exec_cpu_affinity(const Node& node, ExecCpuAffinity& affinity) {
    MR_TRY(expect_object(node));
    MR_TRY(parse_cpu_list_field(node, "initial", affinity.initial, affinity.initial_cpus));
    return parse_cpu_list_field(node, "final", affinity.final, affinity.final_cpus);
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
    MR_TRY(field(node, "selinuxLabel", process.selinux_label));
    MR_TRY(field_with(node, "scheduler", process.scheduler, parse_scheduler));
    MR_TRY(field_with(node, "ioPriority", process.io_priority, parse_io_priority));
    return field_with(node, "execCPUAffinity", process.exec_cpu_affinity, parse_exec_cpu_affinity);
}

} // namespace minirun::spec::sections
