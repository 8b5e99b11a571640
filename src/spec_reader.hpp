// Typed, path-aware access to a parsed JSON document, for the config.json parser.
//
// Every value is reached through a Node that knows its JSON path ("linux.namespaces[2].type"),
// so any type or value problem becomes a one-line Error "<path>: <problem>" without the
// parsing code having to build paths by hand. Nothing here throws: nlohmann's accessors are
// only used after the type has been checked.
#pragma once

#include "minirun/error.hpp"

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace minirun::spec::reader {

using Json = nlohmann::json;

class Node {
public:
    Node(const Json& value, std::string path) : value_(&value), path_(std::move(path)) {}

    [[nodiscard]] const Json& json() const { return *value_; }
    [[nodiscard]] const std::string& path() const { return path_; }

    // "<path>: <problem>".
    [[nodiscard]] Error error(std::string_view problem) const;

    // The path of a property / array element / map entry below this node. Map keys are
    // user data (sysctl names, annotation keys), so they are quoted: linux.sysctl."a.b".
    [[nodiscard]] std::string child_path(std::string_view key) const;
    [[nodiscard]] std::string element_path(size_t index) const;
    [[nodiscard]] std::string entry_path(std::string_view key) const;

private:
    const Json* value_;
    std::string path_;
};

// How a value shows up after "got": its type, or the number itself for numbers
// ("got string", "got -1", "got 1.5").
std::string describe(const Json& value);

Status expect_object(const Node& node);
Status expect_array(const Node& node);

// A property of an object node. Absent and null read the same: Go-based config generators
// emit null for nil slices, maps and pointers, and the Go runtimes read that as "not set".
std::optional<Node> member(const Node& object, std::string_view key);
Result<Node> required_member(const Node& object, std::string_view key);

Status read(const Node& node, std::string& out);
Status read(const Node& node, bool& out);

template <typename T>
constexpr std::string_view integer_kind() {
    if constexpr (std::same_as<T, uint16_t>) {
        return "an unsigned 16-bit integer";
    } else if constexpr (std::same_as<T, uint32_t>) {
        return "an unsigned 32-bit integer";
    } else if constexpr (std::same_as<T, uint64_t>) {
        return "an unsigned 64-bit integer";
    } else if constexpr (std::same_as<T, int32_t>) {
        return "a 32-bit integer";
    } else {
        static_assert(std::same_as<T, int64_t>, "add a description for this integer type");
        return "a 64-bit integer";
    }
}

template <typename T>
requires std::integral<T> &&(!std::same_as<T, bool>)Status read(const Node& node, T& out) {
    const Json& value = node.json();
    // nlohmann keeps non-negative integers as uint64 and negative ones as int64; floats
    // (even 1.0) are rejected like Go's encoding/json does for integer fields.
    if (value.is_number_unsigned()) {
        auto number = value.get<uint64_t>();
        if (number <= static_cast<uint64_t>(std::numeric_limits<T>::max())) {
            out = static_cast<T>(number);
            return {};
        }
    } else if (value.is_number_integer()) {
        auto number = value.get<int64_t>();
        if constexpr (std::is_signed_v<T>) {
            if (number >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                number <= static_cast<int64_t>(std::numeric_limits<T>::max())) {
                out = static_cast<T>(number);
                return {};
            }
        }
    }
    return node.error(cat("expected ", integer_kind<T>(), ", got ", describe(value)));
}

template <typename T>
Status read(const Node& node, std::optional<T>& out) {
    T value{};
    MR_TRY(read(node, value));
    out = std::move(value);
    return {};
}

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

template <typename T>
struct is_vector : std::false_type {};
template <typename T, typename A>
struct is_vector<std::vector<T, A>> : std::true_type {};

// Reads a value with a parse function `Status(const Node&, X&)`. The function may take the
// whole value (X = T), or one element: an optional's value, or each element of an array.
template <typename T, typename Parse>
Status read_with(const Node& node, T& out, Parse&& parse) {
    if constexpr (std::is_invocable_v<Parse&, const Node&, T&>) {
        return parse(node, out);
    } else if constexpr (is_optional<T>::value) {
        typename T::value_type value{};
        MR_TRY(read_with(node, value, parse));
        out = std::move(value);
        return {};
    } else {
        static_assert(is_vector<T>::value, "parse function does not fit the value");
        MR_TRY(expect_array(node));
        const Json& array = node.json();
        out.clear();
        out.reserve(array.size());
        for (size_t i = 0; i < array.size(); ++i) {
            typename T::value_type value{};
            MR_TRY(read_with(Node(array[i], node.element_path(i)), value, parse));
            out.push_back(std::move(value));
        }
        return {};
    }
}

template <typename T>
Status read(const Node& node, std::vector<T>& out) {
    return read_with(node, out, [](const Node& element, T& value) { return read(element, value); });
}

// An object used as a map (annotations, sysctl, unified, rdma): keys are free-form.
template <typename T, typename Parse>
Status read_map_with(const Node& node, std::map<std::string, T>& out, Parse&& parse) {
    MR_TRY(expect_object(node));
    out.clear();
    for (const auto& [key, value] : node.json().items()) {
        Node entry(value, node.entry_path(key));
        if (key.find('\0') != std::string::npos) {
            return entry.error("key must not contain a NUL byte");
        }
        T parsed{};
        MR_TRY(parse(entry, parsed));
        out.emplace(key, std::move(parsed));
    }
    return {};
}

inline Status read(const Node& node, std::map<std::string, std::string>& out) {
    return read_map_with(node, out,
                         [](const Node& entry, std::string& value) { return read(entry, value); });
}

// Value checks that several sections of config.json share (spec_reader.cpp).
// An absolute path; `path` is the value read from `node`.
Status check_absolute(const Node& node, const std::string& path);
Status read_absolute(const Node& node, std::string& out);
// environ(7) entries: NAME=value.
Status read_env_entry(const Node& node, std::string& out);

// Optional property: `out` keeps its default when the property is absent (or null).
template <typename T>
Status field(const Node& object, std::string_view key, T& out) {
    if (auto child = member(object, key)) {
        return read(*child, out);
    }
    return {};
}

template <typename T>
Status required_field(const Node& object, std::string_view key, T& out) {
    MR_ASSIGN(Node child, required_member(object, key));
    return read(child, out);
}

template <typename T, typename Parse>
Status field_with(const Node& object, std::string_view key, T& out, Parse&& parse) {
    if (auto child = member(object, key)) {
        return read_with(*child, out, parse);
    }
    return {};
}

template <typename T, typename Parse>
Status required_field_with(const Node& object, std::string_view key, T& out, Parse&& parse) {
    MR_ASSIGN(Node child, required_member(object, key));
    return read_with(child, out, parse);
}

} // namespace minirun::spec::reader
