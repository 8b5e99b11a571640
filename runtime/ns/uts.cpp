#include "ns/uts.hpp"

#include "minirun/explain.hpp"

namespace minirun::runtime::uts {

Status set_names(const std::string& hostname, const std::string& domainname, Syscalls& sys) {
    if (!hostname.empty()) {
        if (explain::enabled()) {
            explain::step(cat("sethostname(", quoted(hostname), ")"));
        }
        MR_TRY_WRAP(sys.sethostname(hostname), "hostname");
    }
    if (!domainname.empty()) {
        if (explain::enabled()) {
            explain::step(cat("setdomainname(", quoted(domainname), ")"));
        }
        MR_TRY_WRAP(sys.setdomainname(domainname), "domainname");
    }
    return {};
}

} // namespace minirun::runtime::uts
