#include "uts.hpp"

namespace minirun::runtime::uts {

Status set_names(const spec::Spec& spec, Syscalls& sys) {
    if (!spec.hostname.empty()) {
        MR_TRY_WRAP(sys.sethostname(spec.hostname), "hostname");
    }
    if (!spec.domainname.empty()) {
        MR_TRY_WRAP(sys.setdomainname(spec.domainname), "domainname");
    }
    return {};
}

} // namespace minirun::runtime::uts
