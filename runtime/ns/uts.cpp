#include "ns/uts.hpp"

#include "minirun/explain.hpp"

namespace minirun::runtime::uts {

Status set_names(const spec::Spec& spec, Syscalls& sys) {
    if (!spec.hostname.empty()) {
        if (explain::enabled()) {
            explain::step(cat("sethostname(", quoted(spec.hostname), ")"));
        }
        MR_TRY_WRAP(sys.sethostname(spec.hostname), "hostname");
    }
    if (!spec.domainname.empty()) {
        if (explain::enabled()) {
            explain::step(cat("setdomainname(", quoted(spec.domainname), ")"));
        }
        MR_TRY_WRAP(sys.setdomainname(spec.domainname), "domainname");
    }
    return {};
}

} // namespace minirun::runtime::uts
