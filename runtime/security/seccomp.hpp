// seccomp: a filter on the system calls the container's processes may make.
//
// The filter is compiled from linux.seccomp with libseccomp in the parent, before clone(),
// so a config error is reported before anything exists; the init (and every exec'd
// process) loads it as late as possible, so that mini-run's own setup never runs under
// it: just before the capabilities are dropped when no_new_privs is off (loading a filter
// then needs CAP_SYS_ADMIN), just before execve when it is on.
#pragma once

#include "minirun/error.hpp"
#include "minirun/fd.hpp"
#include "minirun/spec.hpp"
#include "syscalls.hpp"

#include <linux/filter.h>
#include <seccomp.h>

#include <string>
#include <string_view>
#include <vector>

namespace minirun::runtime::seccomp {

class Filter {
public:
    // Errors name the JSON path: `linux.seccomp.syscalls[2].action: ...`. Syscall names this
    // libseccomp or architecture does not know are skipped with a debug message (as runc).
    static Result<Filter> build(const spec::Seccomp& config);

    Filter() = default;
    Filter(Filter&& other) noexcept;
    Filter& operator=(Filter&& other) noexcept;
    Filter(const Filter&) = delete;
    Filter& operator=(const Filter&) = delete;
    ~Filter();

    [[nodiscard]] bool empty() const { return ctx_ == nullptr; }
    // The filter has SCMP_ACT_NOTIFY rules: loading it yields a listener fd.
    [[nodiscard]] bool uses_notify() const { return uses_notify_; }
    // Rules added (after skipping unknown names), for --explain and tests.
    [[nodiscard]] size_t rule_count() const { return rule_count_; }

    // Loads the filter into the calling process. With notify rules, returns the listener
    // fd (close-on-exec); otherwise an invalid fd.
    [[nodiscard]] Result<UniqueFd> load(Syscalls& sys) const;

private:
    scmp_filter_ctx ctx_ = nullptr;
    std::vector<sock_filter> program_; // the -ENOSYS stub, then libseccomp's filter
    unsigned int kernel_flags_ = 0;    // SECCOMP_FILTER_FLAG_*
    bool uses_notify_ = false;
    size_t rule_count_ = 0;
};

// Whether a linux.seccomp.flags name takes effect here, for `features`' supportedFlags: the
// kernel knows the flag (seccomp(2) with a null program fails with EFAULT, not EINVAL, as
// runc and libseccomp probe it) and this libseccomp can ask for it.
bool flag_supported(std::string_view flag);

// Whether a filter here can have the linux.seccomp.architectures entry `arch`: libseccomp
// knows it and it has the native byte order (a filter cannot mix them; such a config is
// refused when the filter is built), for `features`' archs.
bool arch_usable(const std::string& arch);

// runtime-spec's seccomp listener: connect (before pivot_root, while the host path is
// reachable) ...
Result<UniqueFd> connect_listener(const std::string& path);

// ... and, once the filter is loaded, send the container process state
// ({"ociVersion","fds":["seccompFd"],"pid","metadata","state":{...}}) with the listener fd
// in one message (SCM_RIGHTS).
Status send_to_listener(int socket, int notify_fd, std::string_view oci_version, pid_t pid,
                        std::string_view metadata, std::string_view state_json);

} // namespace minirun::runtime::seccomp
