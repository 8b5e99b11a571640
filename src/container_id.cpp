#include "minirun/runtime.hpp"

namespace minirun {

Status validate_container_id(std::string_view id) {
    if (id.empty()) {
        return Error(EINVAL, "container id must not be empty");
    }
    if (id.size() > 1024) {
        return Error(EINVAL, "container id is longer than 1024 characters");
    }
    // A leading '.' would make "." and ".." ids, which name other directories.
    if (id.front() == '.') {
        return Error(EINVAL, cat("invalid container id ", quoted(id), ": must not start with '.'"));
    }
    for (char c : id) {
        bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '+' || c == '.' || c == '-';
        if (!allowed) {
            return Error(EINVAL, cat("invalid container id ", quoted(id),
                                     ": only letters, digits and _+.- are allowed"));
        }
    }
    return {};
}

} // namespace minirun
