#include "child.hpp"

#include "minirun/explain.hpp"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>

namespace minirun::runtime {
namespace {

// The kernel's struct clone_args, version 0 (64 bytes).
struct CloneArgs {
    uint64_t flags;
    uint64_t pidfd;
    uint64_t child_tid;
    uint64_t parent_tid;
    uint64_t exit_signal;
    uint64_t stack;
    uint64_t stack_size;
    uint64_t tls;
};

} // namespace

Result<pid_t> clone_with(unsigned long flags) {
    CloneArgs args{};
    args.flags = flags;
    args.exit_signal = SIGCHLD;
    if (explain::enabled()) {
        explain::step(cat("clone3(", explain::clone_flag_names(flags),
                          "): the init starts in its new namespaces"));
    }
    long pid = ::syscall(SYS_clone3, &args, sizeof(args));
    if (pid < 0 && errno == ENOSYS) {
        pid = ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, 0);
    }
    if (pid < 0) {
        return Error::from_errno("clone");
    }
    return static_cast<pid_t>(pid);
}

ScopedChild::~ScopedChild() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
}

} // namespace minirun::runtime
