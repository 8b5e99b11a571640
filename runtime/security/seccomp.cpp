#include "security/seccomp.hpp"

#include "fd_passing.hpp"
#include "minirun/log.hpp"
#include "security/seccomp_bpf.hpp"

#include <linux/seccomp.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

namespace minirun::runtime::seccomp {
namespace {

// SECCOMP_RET_DATA is 16 bits wide: a larger errnoRet cannot be encoded in the action.
constexpr uint32_t kMaxActionData = 0xffff;

// runc switches libseccomp to its binary-tree layout above this many rules; a linear
// filter checks every rule in turn on every syscall. (libseccomp <= 2.5.4 mishandles the
// tree when there are no rules at all, so it is only asked for with many.)
constexpr size_t kOptimizeAbove = 32;

// The libseccomp action for a config action. `action_path` and `errno_path` name the JSON
// fields in messages.
Result<uint32_t> resolve_action(const std::string& action, std::optional<uint32_t> errno_ret,
                                std::string_view action_path, std::string_view errno_path) {
    // The spec: without errnoRet the errno is EPERM. runc uses the same default for
    // SCMP_ACT_TRACE, where the value is the message a ptrace tracer sees.
    uint32_t data = errno_ret.value_or(EPERM);
    if (data > kMaxActionData) {
        return Error(EINVAL, cat(errno_path, ": must be at most ", kMaxActionData, ", got ", data));
    }
    if (action == "SCMP_ACT_ALLOW") {
        return SCMP_ACT_ALLOW;
    }
    if (action == "SCMP_ACT_ERRNO") {
        return SCMP_ACT_ERRNO(data);
    }
    // libseccomp's SCMP_ACT_KILL has always meant killing the thread.
    if (action == "SCMP_ACT_KILL" || action == "SCMP_ACT_KILL_THREAD") {
        return SCMP_ACT_KILL_THREAD;
    }
    if (action == "SCMP_ACT_KILL_PROCESS") {
        return SCMP_ACT_KILL_PROCESS;
    }
    if (action == "SCMP_ACT_TRAP") {
        return SCMP_ACT_TRAP;
    }
    if (action == "SCMP_ACT_TRACE") {
        return SCMP_ACT_TRACE(data);
    }
    if (action == "SCMP_ACT_LOG") {
        return SCMP_ACT_LOG;
    }
    if (action == "SCMP_ACT_NOTIFY") {
        return SCMP_ACT_NOTIFY;
    }
    // The parser accepts only the names above; this guards a hand-built config.
    return Error(EINVAL, cat(action_path, ": unknown seccomp action ", quoted(action)));
}

std::optional<scmp_compare> resolve_operator(std::string_view op) {
    constexpr std::array<std::pair<std::string_view, scmp_compare>, 7> operators = {{
        {"SCMP_CMP_NE", SCMP_CMP_NE},
        {"SCMP_CMP_LT", SCMP_CMP_LT},
        {"SCMP_CMP_LE", SCMP_CMP_LE},
        {"SCMP_CMP_EQ", SCMP_CMP_EQ},
        {"SCMP_CMP_GE", SCMP_CMP_GE},
        {"SCMP_CMP_GT", SCMP_CMP_GT},
        {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
    }};
    for (const auto& [name, value] : operators) {
        if (name == op) {
            return value;
        }
    }
    return std::nullopt;
}

Result<std::vector<scmp_arg_cmp>> make_conditions(const std::vector<spec::SeccompArg>& args,
                                                  std::string_view path) {
    std::vector<scmp_arg_cmp> conditions;
    conditions.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
        const spec::SeccompArg& arg = args[i];
        auto op = resolve_operator(arg.op);
        if (!op) {
            return Error(EINVAL,
                         cat(path, ".args[", i, "].op: unknown seccomp operator ", quoted(arg.op)));
        }
        scmp_arg_cmp condition{};
        condition.arg = arg.index;
        condition.op = *op;
        condition.datum_a = arg.value;
        // Only MASKED_EQ has a second operand: the runtime-spec's "value" is the mask and
        // "valueTwo" the value the masked argument must equal (libseccomp's order).
        if (*op == SCMP_CMP_MASKED_EQ) {
            condition.datum_b = arg.value_two;
        }
        conditions.push_back(condition);
    }
    return conditions;
}

// Whether two conditions test the same argument. libseccomp ANDs the conditions of one
// rule, and "arg 0 == 1 AND arg 0 == 2" can never hold; profiles written for the old
// libseccomp (docker's, for personality and clone) mean OR there. runc then adds every
// condition as a rule of its own, and mini-run follows it so such profiles mean the same.
bool repeats_an_index(const std::vector<spec::SeccompArg>& args) {
    std::array<int, 6> seen{};
    for (const auto& arg : args) {
        if (arg.index < seen.size() && ++seen.at(arg.index) > 1) {
            return true;
        }
    }
    return false;
}

Status set_attribute(scmp_filter_ctx ctx, scmp_filter_attr attribute, uint32_t value,
                     std::string_view context) {
    int rc = seccomp_attr_set(ctx, attribute, value);
    if (rc < 0) {
        return Error::from_errno(-rc, context);
    }
    return {};
}

// The kernel's SECCOMP_FILTER_FLAG_* for `flag` go into `kernel_flags`, for load().
Status apply_flag(scmp_filter_ctx ctx, const std::string& flag, std::string_view path,
                  unsigned int& kernel_flags) {
    std::string context = cat(path, " ", flag);
    if (flag == "SECCOMP_FILTER_FLAG_LOG") {
        kernel_flags |= SECCOMP_FILTER_FLAG_LOG;
        return set_attribute(ctx, SCMP_FLTATR_CTL_LOG, 1, context);
    }
    if (flag == "SECCOMP_FILTER_FLAG_SPEC_ALLOW") {
        kernel_flags |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
        return set_attribute(ctx, SCMP_FLTATR_CTL_SSB, 1, context);
    }
    if (flag == "SECCOMP_FILTER_FLAG_TSYNC") {
        // Accepted and ignored, as runc does: the init loads its filter single-threaded, so
        // there is no other thread to synchronise (and with a listener the kernel would
        // want TSYNC_ESRCH too).
        return {};
    }
    if (flag == "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") {
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 6)
        return set_attribute(ctx, SCMP_FLTATR_CTL_WAITKILL, 1, context);
#else
        // Only libseccomp 2.6 can ask for it. The flag only changes how a notified syscall
        // waits for the agent (fatal signals only), not what the filter allows, so running
        // without it is safe.
        log::warning(cat(context, ": not supported by libseccomp ", SCMP_VER_MAJOR, ".",
                         SCMP_VER_MINOR, ", ignored"));
        return {};
#endif
    }
    return Error(EINVAL, cat(path, ": unknown seccomp flag ", quoted(flag)));
}

Result<uint32_t> add_architecture(scmp_filter_ctx ctx, const std::string& arch,
                                  std::string_view path) {
    constexpr std::string_view prefix = "SCMP_ARCH_";
    std::string name = arch.starts_with(prefix) ? arch.substr(prefix.size()) : std::string();
    // libseccomp names architectures in lower case without the prefix ("x86_64").
    for (char& c : name) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    uint32_t token = name.empty() ? 0 : seccomp_arch_resolve_name(name.c_str());
    if (token == 0) {
        return Error(EINVAL, cat(path, ": unknown architecture ", quoted(arch)));
    }
    int rc = seccomp_arch_add(ctx, token);
    // The native architecture is in every new filter already; listing it is no error.
    if (rc < 0 && rc != -EEXIST) {
        return Error::from_errno(-rc, cat(path, ": add architecture ", arch));
    }
    return token;
}

} // namespace

bool arch_usable(const std::string& arch) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == nullptr) {
        return false;
    }
    bool usable = add_architecture(ctx, arch, "").ok();
    seccomp_release(ctx);
    return usable;
}

bool flag_supported(std::string_view flag) {
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 6)
    constexpr bool kWaitKillableAsked = true;
#else
    constexpr bool kWaitKillableAsked = false; // apply_flag warns and ignores it
#endif
    struct Known {
        std::string_view name;
        unsigned int kernel_flags;
        bool asked; // this libseccomp can put it into a filter
    };
    const std::array<Known, 4> known = {{
        {"SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG, true},
        {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW, true},
        {"SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC, true},
        // The kernel takes it only together with a listener.
        {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
         SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV | SECCOMP_FILTER_FLAG_NEW_LISTENER,
         kWaitKillableAsked},
    }};
    auto entry = std::find_if(known.begin(), known.end(),
                              [&](const Known& candidate) { return candidate.name == flag; });
    if (entry == known.end() || !entry->asked) {
        return false;
    }
    // A null program: the kernel checks the flags first (EINVAL), then reads the program
    // (EFAULT), so nothing is ever loaded.
    long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, entry->kernel_flags, nullptr);
    return rc < 0 && errno == EFAULT;
}

namespace {

// What the rules added so far amount to.
struct RulesAdded {
    size_t count = 0;
    bool notify = false; // some rule is SCMP_ACT_NOTIFY
};

// The context's attributes, its architectures and linux.seccomp.flags (into
// `kernel_flags`): the architecture tokens the filter covers, the native one first.
Result<std::vector<uint32_t>> configure_context(scmp_filter_ctx ctx, const spec::Seccomp& config,
                                                unsigned int& kernel_flags) {
    // mini-run sets no_new_privs itself, only when process.noNewPrivileges asks for it;
    // libseccomp would otherwise set it on every load.
    MR_TRY(set_attribute(ctx, SCMP_FLTATR_CTL_NNP, 0, "linux.seccomp: clear the NNP attribute"));
    // Without this, libseccomp reports most kernel errors from seccomp_load as ECANCELED;
    // the real errno (EACCES: no CAP_SYS_ADMIN and no no_new_privs) is what explains them.
    MR_TRY(
        set_attribute(ctx, SCMP_FLTATR_API_SYSRAWRC, 1, "linux.seccomp: ask for raw error codes"));
    if (config.syscalls.size() > kOptimizeAbove) {
        if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0) {
            log::debug(cat("seccomp: no binary tree optimisation: ", std::strerror(-rc)));
        }
    }

    std::vector<uint32_t> arch_tokens = {seccomp_arch_native()};
    for (size_t i = 0; i < config.architectures.size(); ++i) {
        MR_ASSIGN(uint32_t token, add_architecture(ctx, config.architectures[i],
                                                   cat("linux.seccomp.architectures[", i, "]")));
        if (std::find(arch_tokens.begin(), arch_tokens.end(), token) == arch_tokens.end()) {
            arch_tokens.push_back(token);
        }
    }
    for (size_t i = 0; i < config.flags.size(); ++i) {
        MR_TRY(apply_flag(ctx, config.flags[i], cat("linux.seccomp.flags[", i, "]"), kernel_flags));
    }
    // No "flags" at all (not an empty list): SPEC_ALLOW where the kernel has it, as runc
    // does since 1.1 (speculative store bypass mitigation off: seccomp would otherwise turn
    // it on for the whole container, a cost the config did not ask for).
    if (!config.flags_given && flag_supported("SECCOMP_FILTER_FLAG_SPEC_ALLOW")) {
        MR_TRY(apply_flag(ctx, "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "linux.seccomp: SPEC_ALLOW",
                          kernel_flags));
    }
    return arch_tokens;
}

// The rules of one name of a linux.seccomp.syscalls entry: one with every condition, or,
// when the entry repeats an argument index, one per condition.
Status add_name_rules(scmp_filter_ctx ctx, const std::string& name, const std::string& name_path,
                      uint32_t action, const std::vector<scmp_arg_cmp>& conditions,
                      bool one_rule_per_condition, RulesAdded& added) {
    // The runtime itself still makes these once the filter is on, before the agent has the
    // listener fd: notifying them would wait for an answer that cannot come. sendmsg
    // carries the listener fd to the agent; write reports a failure (runc refuses it in
    // the same words).
    if (action == SCMP_ACT_NOTIFY && (name == "sendmsg" || name == "write")) {
        return Error(EINVAL, cat(name_path, ": SCMP_ACT_NOTIFY cannot be used for the ", name,
                                 " syscall: mini-run itself needs it after the "
                                 "filter is loaded"));
    }
    int number = seccomp_syscall_resolve_name(name.c_str());
    // A profile lists syscalls of many kernels and architectures; one this libseccomp does
    // not know cannot be made anyway.
    if (number == __NR_SCMP_ERROR) {
        log::debug(cat("seccomp: ", name_path, ": unknown syscall, skipped"));
        return {};
    }
    // Not the _exact variants: with several architectures, the same name may be a
    // different number or a multiplexed call (socketcall) on another one, and libseccomp
    // translates the rule for each.
    auto add = [&](unsigned int count, const scmp_arg_cmp* array) -> Status {
        int rc = seccomp_rule_add_array(ctx, action, number, count, array);
        if (rc < 0) {
            return Error::from_errno(-rc, cat(name_path, ": add rule"));
        }
        ++added.count;
        added.notify = added.notify || action == SCMP_ACT_NOTIFY;
        return {};
    };
    if (one_rule_per_condition) {
        for (const scmp_arg_cmp& condition : conditions) {
            MR_TRY(add(1, &condition));
        }
        return {};
    }
    return add(static_cast<unsigned int>(conditions.size()), conditions.data());
}

// linux.seccomp.syscalls[index]: a rule for each of its names.
Status add_syscall_rules(scmp_filter_ctx ctx, const spec::SeccompSyscall& syscall, size_t index,
                         uint32_t default_action, RulesAdded& added) {
    std::string path = cat("linux.seccomp.syscalls[", index, "]");
    MR_ASSIGN(uint32_t action, resolve_action(syscall.action, syscall.errno_ret, path + ".action",
                                              path + ".errnoRet"));
    // libseccomp refuses a rule that repeats the default action; such a rule changes
    // nothing, so it is dropped (as runc does). The comparison includes the errno.
    if (action == default_action) {
        log::debug(cat("seccomp: ", path, " has the default action, skipped"));
        return {};
    }
    MR_ASSIGN(std::vector<scmp_arg_cmp> conditions, make_conditions(syscall.args, path));
    bool one_rule_per_condition = repeats_an_index(syscall.args);
    for (size_t j = 0; j < syscall.names.size(); ++j) {
        const std::string& name = syscall.names[j];
        MR_TRY(add_name_rules(ctx, name, cat(path, ".names[", j, "] ", quoted(name)), action,
                              conditions, one_rule_per_condition, added));
    }
    return {};
}

// The BPF program, made here, so that load() in the container's init only installs it,
// behind the -ENOSYS stub (seccomp_bpf.hpp) unless new syscalls would be allowed or get
// ENOSYS anyway.
Result<std::vector<sock_filter>> assemble_program(scmp_filter_ctx ctx, const spec::Seccomp& config,
                                                  uint32_t default_action,
                                                  const std::vector<uint32_t>& arch_tokens) {
    MR_ASSIGN(std::vector<sock_filter> program, export_program(ctx));
    uint32_t enosys = SCMP_ACT_ERRNO(ENOSYS);
    bool allows_unknown = default_action == SCMP_ACT_ALLOW || default_action == SCMP_ACT_LOG ||
                          (default_action & 0xffff0000U) == SCMP_ACT_TRACE(0);
    std::vector<sock_filter> out;
    if (!allows_unknown && default_action != enosys) {
        out = enosys_stub(last_syscalls(config, arch_tokens));
    }
    out.insert(out.end(), program.begin(), program.end());
    if (out.size() > BPF_MAXINSNS) {
        return Error(E2BIG, cat("linux.seccomp: the filter takes ", out.size(),
                                " BPF instructions, more than the kernel's ", BPF_MAXINSNS));
    }
    return out;
}

} // namespace

Result<Filter> Filter::build(const spec::Seccomp& config) {
    MR_ASSIGN(uint32_t default_action,
              resolve_action(config.default_action, config.default_errno_ret,
                             "linux.seccomp.defaultAction", "linux.seccomp.defaultErrnoRet"));
    // The process that loads the filter then sends the listener fd with sendmsg; were every
    // syscall handed to the agent, that send would wait for an agent that has no fd yet.
    if (default_action == SCMP_ACT_NOTIFY) {
        return Error(EINVAL, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the "
                             "default action (the listener fd could never be sent)");
    }

    Filter filter;
    filter.ctx_ = seccomp_init(default_action);
    if (filter.ctx_ == nullptr) {
        return Error(EINVAL, cat("linux.seccomp.defaultAction: libseccomp cannot use ",
                                 config.default_action, " with this kernel"));
    }
    MR_ASSIGN(std::vector<uint32_t> arch_tokens,
              configure_context(filter.ctx_, config, filter.kernel_flags_));
    RulesAdded added;
    for (size_t i = 0; i < config.syscalls.size(); ++i) {
        MR_TRY(add_syscall_rules(filter.ctx_, config.syscalls[i], i, default_action, added));
    }
    filter.rule_count_ = added.count;
    filter.uses_notify_ = added.notify;
    MR_ASSIGN(filter.program_, assemble_program(filter.ctx_, config, default_action, arch_tokens));
    // runc's words and number (its seccomp.bats reads them at --debug): the flags the
    // kernel gets from linux.seccomp.flags, before a listener's own.
    log::debug(cat("seccomp filter flags: ", filter.kernel_flags_));
    if (filter.uses_notify_) {
        filter.kernel_flags_ |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    }
    return filter;
}

Filter::Filter(Filter&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)), program_(std::move(other.program_)),
      kernel_flags_(std::exchange(other.kernel_flags_, 0)),
      uses_notify_(std::exchange(other.uses_notify_, false)),
      rule_count_(std::exchange(other.rule_count_, 0)) {}

Filter& Filter::operator=(Filter&& other) noexcept {
    if (this != &other) {
        if (ctx_ != nullptr) {
            seccomp_release(ctx_);
        }
        ctx_ = std::exchange(other.ctx_, nullptr);
        program_ = std::move(other.program_);
        kernel_flags_ = std::exchange(other.kernel_flags_, 0);
        uses_notify_ = std::exchange(other.uses_notify_, false);
        rule_count_ = std::exchange(other.rule_count_, 0);
    }
    return *this;
}

Filter::~Filter() {
    if (ctx_ != nullptr) {
        seccomp_release(ctx_);
    }
}

Result<UniqueFd> Filter::load(Syscalls& sys) const {
    if (ctx_ == nullptr) {
        return UniqueFd();
    }
    // The program was made in the parent: one system call installs it.
    const unsigned int flags = kernel_flags_;
    sock_fprog program{static_cast<unsigned short>(program_.size()),
                       const_cast<sock_filter*>(program_.data())}; // NOLINT: the kernel reads it
    MR_ASSIGN(int rc, sys.seccomp_set_filter(flags, program));
    // With a listener the kernel returns it, close-on-exec already, so no fcntl is needed;
    // and none is wanted: from here on, every syscall may be one the agent has to answer.
    return (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) != 0 ? UniqueFd(rc) : UniqueFd();
}

Result<UniqueFd> connect_listener(const std::string& path) {
    std::string context = cat("linux.seccomp.listenerPath ", quoted(path));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    // sun_path needs room for the terminating NUL.
    if (path.empty() || path.size() >= sizeof(address.sun_path)) {
        return Error::from_errno(path.empty() ? ENOENT : ENAMETOOLONG, context);
    }
    std::memcpy(static_cast<char*>(address.sun_path), path.data(), path.size());
    UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket) {
        return Error::from_errno(cat(context, ": socket"));
    }
    int rc = 0;
    do {
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
        rc = ::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address));
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        // runc's words, which its users look for.
        return Error::from_errno(cat(context, ": failed to connect with seccomp agent"));
    }
    return socket;
}

Status send_to_listener(int socket, int notify_fd, std::string_view oci_version, pid_t pid,
                        std::string_view metadata, std::string_view state_json) {
    using Json = nlohmann::ordered_json;
    Json state = Json::parse(state_json, nullptr, /*allow_exceptions=*/false);
    if (state.is_discarded() || !state.is_object()) {
        return Error(EINVAL, "seccomp listener: the container state is not a JSON object");
    }
    // The runtime-spec's "container process state"; the order of the keys is the spec's.
    Json message = {
        {"ociVersion", oci_version},
        {"fds", Json::array({"seccompFd"})},
        {"pid", pid},
    };
    // "metadata" is optional; like runc, leave it out when there is none.
    if (!metadata.empty()) {
        message["metadata"] = metadata;
    }
    message["state"] = std::move(state);
    // `replace`: metadata is any string from the config; dump() would throw on bad UTF-8.
    std::string payload = message.dump(-1, ' ', false, Json::error_handler_t::replace);

    ssize_t sent = send_with_fd(socket, payload.data(), payload.size(), notify_fd);
    if (sent < 0) {
        return Error::from_errno("seccomp listener: send the listener fd");
    }
    // A stream socket may take less than all of it (a signal mid-send); the spec allows
    // more sendmsg calls as long as the fd travels with the first.
    auto done = static_cast<size_t>(sent);
    while (done < payload.size()) {
        sent = send_with_fd(socket, payload.data() + done, payload.size() - done);
        if (sent < 0) {
            return Error::from_errno("seccomp listener: send the container state");
        }
        done += static_cast<size_t>(sent);
    }
    return {};
}

} // namespace minirun::runtime::seccomp
