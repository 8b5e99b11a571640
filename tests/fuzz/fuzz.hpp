// What every harness in tests/fuzz/ shares: the input as text, and the rule that bad input
// ends as it does everywhere else in mini-run.
//
// A harness feeds the fuzzer's bytes to one entry point that reads input mini-run does not
// control (config.json, state.json, command-line values, /proc files) and checks more than
// "it did not crash": a refusal must be an Error with a one-line message that names the
// problem, and an accepted value must keep the invariants its callers rely on. A broken
// rule calls fail(), which aborts, so libFuzzer saves the input as a crash.
#pragma once

#include "minirun/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace minirun::fuzz {

inline std::string_view text_of(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Aborts with `why`: the fuzzer keeps the input that got here.
[[noreturn]] inline void fail(std::string_view why) {
    std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(why.size()), why.data());
    std::abort();
}

inline void expect(bool holds, std::string_view why) {
    if (!holds) {
        fail(why);
    }
}

// A refusal's message is what the user sees on stderr after "mini-run: ": one line, not
// empty (input it quotes is escaped by quoted()).
inline void expect_clear_error(const Error& error, std::string_view where) {
    const std::string& message = error.message();
    if (message.empty() || message.find_first_of("\n\r") != std::string::npos) {
        std::fprintf(stderr, "%.*s: message \"%s\"\n", static_cast<int>(where.size()), where.data(),
                     message.c_str());
        fail("an error message must be one non-empty line");
    }
}

template <typename T>
void expect_clear_if_failed(const Result<T>& result, std::string_view where) {
    if (!result.ok()) {
        expect_clear_error(result.error(), where);
    }
}

} // namespace minirun::fuzz
