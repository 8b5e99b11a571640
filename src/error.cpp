#include "minirun/error.hpp"

#include <cstring>

namespace minirun {

std::string Quote::operator()(std::string_view text) const {
    std::string out;
    out.reserve(text.size() + 2);
    out.push_back('"');
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
        }
        if (static_cast<unsigned char>(c) < 0x20) {
            out += c == '\n' ? "\\n" : "?";
            continue;
        }
        out.push_back(c);
    }
    out.push_back('"');
    return out;
}

Error Error::from_errno(std::string_view context) {
    return from_errno(errno, context);
}

Error Error::from_errno(int errno_value, std::string_view context) {
    return {errno_value, cat(context, ": ", std::strerror(errno_value))};
}

Error Error::wrap(std::string_view context) const& {
    return {errno_, cat(context, ": ", message_)};
}

Error Error::wrap(std::string_view context) && {
    message_.insert(0, ": ");
    message_.insert(0, context);
    return std::move(*this);
}

} // namespace minirun
