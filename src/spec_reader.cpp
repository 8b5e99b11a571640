// The reader of spec_reader.hpp: path-aware errors, type checks, and the value checks that
// several sections of config.json share.
#include "spec_reader.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace minirun::spec::reader {

Error Node::error(std::string_view problem) const {
    return Error(cat(path_, ": ", problem));
}

std::string Node::child_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : cat(path_, ".", key);
}

std::string Node::element_path(size_t index) const {
    return cat(path_, "[", index, "]");
}

std::string Node::entry_path(std::string_view key) const {
    return cat(path_, ".", quoted(key));
}

std::string describe(const Json& value) {
    if (value.is_number()) {
        return value.dump();
    }
    return value.type_name();
}

Status expect_object(const Node& node) {
    if (!node.json().is_object()) {
        return node.error(cat("expected an object, got ", describe(node.json())));
    }
    return {};
}

Status expect_array(const Node& node) {
    if (!node.json().is_array()) {
        return node.error(cat("expected an array, got ", describe(node.json())));
    }
    return {};
}

std::optional<Node> member(const Node& object, std::string_view key) {
    const Json& json = object.json();
    auto found = json.find(key);
    if (found == json.end() || found->is_null()) {
        return std::nullopt;
    }
    return Node(*found, object.child_path(key));
}

Result<Node> required_member(const Node& object, std::string_view key) {
    if (auto child = member(object, key)) {
        return *child;
    }
    return Error(cat(object.child_path(key), ": is required"));
}

Status read(const Node& node, std::string& out) {
    if (!node.json().is_string()) {
        return node.error(cat("expected a string, got ", describe(node.json())));
    }
    const auto& text = node.json().get_ref<const std::string&>();
    // Strings end up as C strings in syscalls; an embedded NUL would silently cut them.
    if (text.find('\0') != std::string::npos) {
        return node.error("must not contain a NUL byte");
    }
    out = text;
    return {};
}

Status read(const Node& node, bool& out) {
    if (!node.json().is_boolean()) {
        return node.error(cat("expected a boolean, got ", describe(node.json())));
    }
    out = node.json().get<bool>();
    return {};
}

// ---- value checks ----

Status check_absolute(const Node& node, const std::string& path) {
    if (path.empty() || path.front() != '/') {
        return node.error(cat("must be an absolute path, got ", quoted(path)));
    }
    return {};
}

Status read_absolute(const Node& node, std::string& out) {
    MR_TRY(read(node, out));
    return check_absolute(node, out);
}

// environ(7) entries are NAME=value; without '=' execve passes the string but getenv never
// finds it, which is never what the config meant.
Status read_env_entry(const Node& node, std::string& out) {
    MR_TRY(read(node, out));
    size_t equals = out.find('=');
    if (equals == std::string::npos || equals == 0) {
        return node.error(cat("expected NAME=value, got ", quoted(out)));
    }
    return {};
}

} // namespace minirun::spec::reader
