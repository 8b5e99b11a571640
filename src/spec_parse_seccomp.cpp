// config.json's "linux.seccomp": the actions, architectures, flags and syscall rules, by
// the names libseccomp knows (runtime/security/seccomp.cpp builds the filter).
#include "minirun/spec.hpp"
#include "spec_reader.hpp"
#include "spec_rules.hpp"
#include "spec_sections.hpp"

#include <string>

namespace minirun::spec::sections {

using namespace reader; // Node, read, field, member ...: the parser's vocabulary

namespace {

Status read_seccomp_action(const Node& node, std::string& action) {
    MR_TRY(read(node, action));
    if (!rules::is_seccomp_action(action)) {
        return node.error(cat("unknown seccomp action ", quoted(action)));
    }
    return {};
}

// The spec: an errno for an action that takes none MUST be an error. SCMP_ACT_TRACE takes
// the value as the tracer's message number.
Status check_errno_allowed(const Node& errno_node, const std::string& action) {
    if (action != "SCMP_ACT_ERRNO" && action != "SCMP_ACT_TRACE") {
        return errno_node.error(
            cat("only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno, not ", action));
    }
    return {};
}

Status parse_seccomp_arg(const Node& node, SeccompArg& arg) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node index, required_member(node, "index"));
    MR_TRY(read(index, arg.index));
    // A syscall has at most six arguments.
    if (arg.index > 5) {
        return index.error(cat("must be between 0 and 5, got ", arg.index));
    }
    MR_TRY(required_field(node, "value", arg.value));
    MR_TRY(field(node, "valueTwo", arg.value_two));
    MR_ASSIGN(Node op, required_member(node, "op"));
    MR_TRY(read(op, arg.op));
    if (!rules::is_seccomp_operator(arg.op)) {
        return op.error(cat("unknown seccomp operator ", quoted(arg.op)));
    }
    return {};
}

Status parse_seccomp_syscall(const Node& node, SeccompSyscall& syscall) {
    MR_TRY(expect_object(node));
    MR_ASSIGN(Node names, required_member(node, "names"));
    // Names libseccomp does not know are not checked here: the syscall may be missing on this
    // kernel or architecture, and runtimes skip such rules rather than fail.
    MR_TRY(read(names, syscall.names));
    if (syscall.names.empty()) {
        return names.error("must not be empty");
    }
    MR_TRY(required_field_with(node, "action", syscall.action, read_seccomp_action));
    if (auto errno_ret = member(node, "errnoRet")) {
        MR_TRY(read(*errno_ret, syscall.errno_ret));
        MR_TRY(check_errno_allowed(*errno_ret, syscall.action));
    }
    return field_with(node, "args", syscall.args, parse_seccomp_arg);
}

} // namespace

Status parse_seccomp(const Node& node, Seccomp& seccomp) {
    MR_TRY(expect_object(node));
    MR_TRY(required_field_with(node, "defaultAction", seccomp.default_action, read_seccomp_action));
    if (auto errno_ret = member(node, "defaultErrnoRet")) {
        MR_TRY(read(*errno_ret, seccomp.default_errno_ret));
        MR_TRY(check_errno_allowed(*errno_ret, seccomp.default_action));
    }
    MR_TRY(field_with(node, "architectures", seccomp.architectures,
                      [](const Node& element, std::string& arch) -> Status {
                          MR_TRY(read(element, arch));
                          if (!rules::is_seccomp_arch(arch)) {
                              return element.error(cat("unknown architecture ", quoted(arch)));
                          }
                          return {};
                      }));
    // Absent and empty differ: without "flags" the runtime picks SPEC_ALLOW (as runc does).
    seccomp.flags_given = member(node, "flags").has_value();
    MR_TRY(field_with(node, "flags", seccomp.flags,
                      [](const Node& element, std::string& flag) -> Status {
                          MR_TRY(read(element, flag));
                          if (!rules::is_seccomp_flag(flag)) {
                              return element.error(cat("unknown seccomp flag ", quoted(flag)));
                          }
                          return {};
                      }));
    MR_TRY(field(node, "listenerPath", seccomp.listener_path));
    MR_TRY(field(node, "listenerMetadata", seccomp.listener_metadata));
    return field_with(node, "syscalls", seccomp.syscalls, parse_seccomp_syscall);
}

} // namespace minirun::spec::sections
