// Errors as values.
//
// mini-run never throws between clone() and execve(): the child reports a failure to the
// parent over the sync socket and exits. So every fallible function returns a Result<T>
// (C++20 has no std::expected) carrying an Error: an errno (0 when none applies) and a
// one-line message. Callers add context on the way up with wrap(), so the final message
// reads like a path through the code: "mount /proc: mount proc on /proc: Permission denied".
#pragma once

#include <array>
#include <cerrno>
#include <charconv>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace minirun {

namespace detail {

template <typename T>
inline constexpr bool kIsChar =
    std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>;
template <typename T>
inline constexpr bool kIsInteger = std::is_integral_v<T> && !kIsChar<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kIsText = std::is_convertible_v<const T&, std::string_view>;

// One part of cat() that needs no stream: what `<<` would write, appended.
template <typename T>
void append_part(std::string& out, const T& part) {
    if constexpr (kIsChar<T>) {
        out.push_back(static_cast<char>(part)); // `<<` writes these as characters
    } else if constexpr (std::is_convertible_v<const T&, const char*>) {
        if (const char* text = part; text != nullptr) { // `<<` writes nothing for null
            out.append(text);
        }
    } else if constexpr (kIsText<T>) {
        out.append(std::string_view(part));
    } else {
        static_assert(kIsInteger<T>);
        std::array<char, 24> digits{};
        auto written = std::to_chars(digits.data(), digits.data() + digits.size(), part);
        out.append(digits.data(), written.ptr);
    }
}

} // namespace detail

// Concatenates anything streamable into one string; our stand-in for std::format (GCC 12
// does not ship <format>). Text and integers, which make most paths and messages, are
// appended without a stream (an ostringstream costs a locale and a sentry per part);
// a line with anything else (a double, a path, a manipulator such as std::hex that changes
// how the next part is written) goes through one stream, as `<<` writes it. Not inlined:
// where GCC 12 sees the whole string built, it warns of a string move out of bounds that
// cannot happen (a false -Warray-bounds).
template <typename... Parts>
[[gnu::noinline]] std::string cat(const Parts&... parts) {
    if constexpr (((detail::kIsChar<Parts> || detail::kIsText<Parts> ||
                    detail::kIsInteger<Parts>)&&...)) {
        std::string out;
        (detail::append_part(out, parts), ...);
        return out;
    } else {
        std::ostringstream out;
        (out << ... << parts);
        return out.str();
    }
}

// Quotes a value the way error messages show user input: "foo". '"' and '\' get a backslash,
// a newline is written \n and other control characters ?, so that a message stays one line.
//
// An object, not a function: a call of a function named quoted with a std::string argument
// finds std::quoted too, by argument-dependent lookup, and std::quoted(std::string&) is the
// better match. It leaves newlines as they are, so a config value with a newline made a
// two-line error (found by tests/fuzz/config_json.cpp). A call through an object does no
// such lookup.
struct Quote {
    std::string operator()(std::string_view text) const;
};
inline constexpr Quote quoted{};

class Error {
public:
    Error() = default;
    Error(int errno_value, std::string message)
        : errno_(errno_value), message_(std::move(message)) {}
    explicit Error(std::string message) : message_(std::move(message)) {}

    // The message for the errno currently set, after `context`: "open x: No such file or
    // directory".
    static Error from_errno(std::string_view context);
    static Error from_errno(int errno_value, std::string_view context);

    [[nodiscard]] int errno_value() const { return errno_; }
    [[nodiscard]] const std::string& message() const { return message_; }

    // Adds the caller's context in front: "context: message". The errno is kept.
    [[nodiscard]] Error wrap(std::string_view context) const&;
    [[nodiscard]] Error wrap(std::string_view context) &&;

private:
    int errno_ = 0;
    std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(const T& value) : state_(value) {}         // NOLINT(google-explicit-constructor)
    Result(T&& value) : state_(std::move(value)) {}   // NOLINT(google-explicit-constructor)
    Result(Error error) : state_(std::move(error)) {} // NOLINT(google-explicit-constructor)

    [[nodiscard]] bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(state_); }
    const T& value() const& { return std::get<0>(state_); }
    T&& value() && { return std::get<0>(std::move(state_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    [[nodiscard]] const Error& error() const { return std::get<1>(state_); }

private:
    std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error)
        : error_(std::move(error)), failed_(true) {} // NOLINT(google-explicit-constructor)

    [[nodiscard]] bool ok() const { return !failed_; }
    explicit operator bool() const { return ok(); }
    [[nodiscard]] const Error& error() const { return error_; }

private:
    Error error_;
    bool failed_ = false;
};

using Status = Result<void>;

// A failure from the errno of the syscall that just failed, or success.
inline Status check_syscall(int rc, std::string_view context) {
    if (rc < 0) {
        return Error::from_errno(context);
    }
    return {};
}

} // namespace minirun

// Return early with the error of a failed Status / Result.
#define MR_TRY(expr)                                                                               \
    do {                                                                                           \
        if (auto mr_try_result_ = (expr); !mr_try_result_.ok()) {                                  \
            return mr_try_result_.error();                                                         \
        }                                                                                          \
    } while (0)

// Same, adding context in front of the message.
#define MR_TRY_WRAP(expr, context)                                                                 \
    do {                                                                                           \
        if (auto mr_try_result_ = (expr); !mr_try_result_.ok()) {                                  \
            return mr_try_result_.error().wrap(context);                                           \
        }                                                                                          \
    } while (0)

#define MR_CONCAT_INNER(a, b) a##b
#define MR_CONCAT(a, b) MR_CONCAT_INNER(a, b)

// `MR_ASSIGN(auto fd, open_something());` declares fd from the value, or returns the error.
#define MR_ASSIGN(decl, expr) MR_ASSIGN_IMPL(MR_CONCAT(mr_assign_result_, __LINE__), decl, expr)
// NOLINTBEGIN(bugprone-macro-parentheses): `decl` is a declaration, `tmp` a fresh name.
#define MR_ASSIGN_IMPL(tmp, decl, expr)                                                            \
    auto tmp = (expr);                                                                             \
    if (!tmp.ok()) {                                                                               \
        return tmp.error();                                                                        \
    }                                                                                              \
    decl = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
