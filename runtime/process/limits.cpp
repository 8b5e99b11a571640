#include "process/limits.hpp"

#include "minirun/explain.hpp"

#include <sys/personality.h>

#include <algorithm>

namespace minirun::runtime::limits {

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

Status set_oom_score_adj(const std::optional<int>& score, const procfs::Handle* proc,
                         Syscalls& sys) {
    if (!score) {
        return {};
    }
    MR_TRY_WRAP(procfs::Handle::usable(proc), "process.oomScoreAdj");
    // "self": the caller, by its pid in the handle's PID namespace (the runtime's, an
    // ancestor of the init's).
    MR_TRY_WRAP(sys.write_proc(*proc, "self/oom_score_adj", std::to_string(*score)),
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

Status apply_sysctls(const std::map<std::string, std::string>& sysctls, const procfs::Handle* proc,
                     Syscalls& sys) {
    if (!sysctls.empty()) {
        MR_TRY_WRAP(procfs::Handle::usable(proc), "linux.sysctl");
    }
    for (const auto& [key, value] : sysctls) {
        std::string path = key;
        std::replace(path.begin(), path.end(), '.', '/');
        MR_TRY_WRAP(sys.write_proc(*proc, "sys/" + path, value), cat("linux.sysctl.", quoted(key)));
    }
    return {};
}

} // namespace minirun::runtime::limits
