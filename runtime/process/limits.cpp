#include "process/limits.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"
#include "minirun/fd.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/personality.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>

namespace minirun::runtime::limits {
namespace {

// A /proc directory that is really procfs: the container's rootfs or mounts could have
// put something else there, and writes meant for the kernel would land in it.
Result<UniqueFd> open_procfs(const char* path) {
    UniqueFd fd(::open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", path));
    }
    struct statfs info {};
    if (::fstatfs(fd.get(), &info) < 0) {
        return Error::from_errno(cat("statfs ", path));
    }
    if (info.f_type != PROC_SUPER_MAGIC) {
        return Error(EPERM, cat(path, " is not procfs"));
    }
    return fd;
}

} // namespace

Status apply_rlimits(const std::vector<spec::Rlimit>& rlimits, Syscalls& sys) {
    for (size_t i = 0; i < rlimits.size(); ++i) {
        const spec::Rlimit& limit = rlimits[i];
        if (explain::enabled()) {
            explain::step(
                cat("setrlimit(", limit.type, ", soft ", limit.soft, ", hard ", limit.hard, ")"));
        }
        MR_TRY(checked(sys.setrlimit(limit.resource, limit.soft, limit.hard),
                       cat("process.rlimits[", i, "] ", limit.type)));
    }
    return {};
}

Status set_oom_score_adj(const std::optional<int>& score, Syscalls& sys) {
    if (!score) {
        return {};
    }
    MR_ASSIGN(UniqueFd self, open_procfs("/proc/self"));
    MR_TRY_WRAP(sys.write_proc(self.get(), "oom_score_adj", std::to_string(*score)),
                "process.oomScoreAdj");
    return {};
}

Status set_personality(const std::optional<spec::Personality>& personality, Syscalls& sys) {
    if (!personality) {
        return {};
    }
    unsigned long domain = personality->domain == "LINUX32" ? PER_LINUX32 : PER_LINUX;
    return checked(sys.personality(domain), "linux.personality");
}

Status apply_sysctls(const std::map<std::string, std::string>& sysctls, Syscalls& sys) {
    if (sysctls.empty()) {
        return {};
    }
    MR_ASSIGN(UniqueFd proc_sys, open_procfs("/proc/sys"));
    for (const auto& [key, value] : sysctls) {
        std::string path = key;
        std::replace(path.begin(), path.end(), '.', '/');
        MR_TRY_WRAP(sys.write_proc(proc_sys.get(), path, value), cat("linux.sysctl.", quoted(key)));
    }
    return {};
}

} // namespace minirun::runtime::limits
