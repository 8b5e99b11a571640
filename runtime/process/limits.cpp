#include "process/limits.hpp"

#include "fs.hpp"
#include "minirun/explain.hpp"
#include "minirun/fd.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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

Status write_below(int dir_fd, const std::string& name, std::string_view value) {
    open_how how{};
    how.flags = O_WRONLY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dir_fd, name.c_str(), &how, sizeof(how))));
    if (!fd) {
        return Error::from_errno(cat("open ", name));
    }
    if (::write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
        return Error::from_errno(cat("write ", name));
    }
    return {};
}

} // namespace

Status apply_rlimits(const std::vector<spec::Rlimit>& rlimits) {
    for (size_t i = 0; i < rlimits.size(); ++i) {
        const spec::Rlimit& limit = rlimits[i];
        rlimit value{limit.soft, limit.hard};
        if (explain::enabled()) {
            explain::step(
                cat("setrlimit(", limit.type, ", soft ", limit.soft, ", hard ", limit.hard, ")"));
        }
        if (::setrlimit(static_cast<__rlimit_resource>(limit.resource), &value) < 0) {
            return Error::from_errno(cat("process.rlimits[", i, "] ", limit.type));
        }
    }
    return {};
}

Status set_oom_score_adj(const std::optional<int>& score) {
    if (!score) {
        return {};
    }
    MR_ASSIGN(UniqueFd self, open_procfs("/proc/self"));
    MR_TRY_WRAP(write_below(self.get(), "oom_score_adj", std::to_string(*score)),
                "process.oomScoreAdj");
    return {};
}

Status set_personality(const std::optional<spec::Personality>& personality) {
    if (!personality) {
        return {};
    }
    unsigned long domain = personality->domain == "LINUX32" ? PER_LINUX32 : PER_LINUX;
    if (::personality(domain) < 0) {
        return Error::from_errno("linux.personality");
    }
    return {};
}

Status apply_sysctls(const std::map<std::string, std::string>& sysctls) {
    if (sysctls.empty()) {
        return {};
    }
    MR_ASSIGN(UniqueFd proc_sys, open_procfs("/proc/sys"));
    for (const auto& [key, value] : sysctls) {
        std::string path = key;
        std::replace(path.begin(), path.end(), '.', '/');
        MR_TRY_WRAP(write_below(proc_sys.get(), path, value), cat("linux.sysctl.", quoted(key)));
    }
    return {};
}

} // namespace minirun::runtime::limits
