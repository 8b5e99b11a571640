#include "spawn.hpp"

#include "minirun/explain.hpp"
#include "minirun/log.hpp"
#include "process/scheduling.hpp"
#include "process/terminal.hpp"
#include "security/exec_gate.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

namespace minirun::runtime {

Status check_terminal_options(bool terminal, const std::string& console_socket, bool relayed_here,
                              std::string_view terminal_option) {
    if (terminal && console_socket.empty() && !relayed_here) {
        return Error(EINVAL, cat(terminal_option, " is set: a detached process needs "
                                                  "--console-socket to hand the terminal to"));
    }
    if (!terminal && !console_socket.empty()) {
        return Error(EINVAL, cat("--console-socket given, but ", terminal_option, " is not set"));
    }
    return {};
}

bool needs_procfs_handle(const Plan& plan) {
    const spec::Process& process = plan.process;
    return plan.creates(spec::NamespaceType::user) || process.oom_score_adj.has_value() ||
           !plan.sysctls.empty() || plan.new_time_namespace || !process.apparmor_profile.empty() ||
           !process.selinux_label.empty();
}

Result<procfs::Handle> open_procfs_handle(bool needed) {
    if (!needed) {
        return procfs::Handle();
    }
    MR_ASSIGN(procfs::Handle handle, procfs::Handle::open());
    std::string text = cat("procfs: writes under /proc go through ", handle.description());
    if (explain::enabled()) {
        explain::step(text);
    } else {
        log::debug(text);
    }
    return handle;
}

Result<UniqueFd> protect_runtime_binary(std::string ruled_out, std::string_view gate_text,
                                        char** reexec_argv, const sigset_t* reexec_mask) {
    exec_gate::Protection protection;
    protection.ruled_out = std::move(ruled_out);
    protection.gate_text = gate_text;
    protection.say = [](std::string_view text) {
        if (explain::enabled()) {
            explain::step(text);
        } else {
            log::debug(text);
        }
    };
    protection.reexec_argv = reexec_argv;
    // The new start blocks the signals again itself, and would take this mask for the
    // container's process.
    protection.reexec_mask = reexec_mask;
    return exec_gate::protect_runtime_binary(protection);
}

void log_clone_affinity() {
    if (log::enabled(log::Level::debug)) {
        log::debug(cat("nsexec: affinity: ", scheduling::affinity_mask_text()));
    }
}

Error child_error_or(ParentEnd& sync, const Error& fallback) {
    auto event = sync.receive_within(std::chrono::milliseconds(200)); // past its log lines
    if (event && *event && !(*event)->eof && (*event)->message == ToParent::kError) {
        return (*event)->error;
    }
    return fallback;
}

Status hand_over_terminal(const std::string& console_socket, UniqueFd& master) {
    if (console_socket.empty()) {
        return {};
    }
    MR_TRY(terminal::send_to_console_socket(console_socket, master.get()));
    master.reset();
    return {};
}

Status hand_over_pidfd(const std::string& pidfd_socket, pid_t pid) {
    if (pidfd_socket.empty()) {
        return {};
    }
    // Our child, not reaped yet: the pid cannot have been reused, so the pidfd is its.
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd) {
        // runc: "--pidfd-socket requires >= v5.3 kernel"
        return Error::from_errno(cat("--pidfd-socket: pidfd_open ", pid));
    }
    // "pidfd": the name runc's sendPidFD gives the file (utils.SendFile).
    return terminal::send_to_socket(pidfd_socket, pidfd.get(), "pidfd", "--pidfd-socket");
}

} // namespace minirun::runtime
