#include "minirun/runtime.hpp"

#include <csignal>

#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

namespace minirun {
namespace {

struct SignalName {
    std::string_view name;
    int number;
};

constexpr std::array<SignalName, 31> kSignals = {{
    {"HUP", SIGHUP},       {"INT", SIGINT},   {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},     {"ABRT", SIGABRT}, {"IOT", SIGIOT},       {"BUS", SIGBUS},
    {"FPE", SIGFPE},       {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},     {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},     {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},     {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH},   {"IO", SIGIO},     {"PWR", SIGPWR},
}};

std::optional<int> to_number(std::string_view text) {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

} // namespace

Result<int> parse_signal(std::string_view text) {
    auto invalid = [&] {
        return Error(EINVAL, cat("invalid signal ", quoted(text)));
    };
    if (auto number = to_number(text)) {
        // 0 sends nothing and only checks that the process exists: `runc kill ID 0`.
        if (*number < 0 || *number > SIGRTMAX) {
            return invalid();
        }
        return *number;
    }
    std::string name;
    for (char c : text) {
        name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    if (name.starts_with("SIG")) {
        name.erase(0, 3);
    }
    for (const SignalName& entry : kSignals) {
        if (entry.name == name) {
            return entry.number;
        }
    }
    // Real-time signals as kill(1) names them: RTMIN, RTMIN+3, RTMAX-1.
    for (auto [base, value, sign] : {std::tuple{"RTMIN", SIGRTMIN, 1}, {"RTMAX", SIGRTMAX, -1}}) {
        std::string_view prefix = base;
        if (!name.starts_with(prefix)) {
            continue;
        }
        std::string_view rest = std::string_view(name).substr(prefix.size());
        if (rest.empty()) {
            return value;
        }
        if ((sign > 0 && rest.front() == '+') || (sign < 0 && rest.front() == '-')) {
            auto offset = to_number(rest.substr(1));
            // In 64 bits: "RTMIN+2147483647" overflowed an int, which is undefined
            // (UBSan, under tests/fuzz/signals.cpp).
            int64_t result = offset ? int64_t{value} + int64_t{sign} * *offset : 0;
            if (offset && result >= SIGRTMIN && result <= SIGRTMAX) {
                return static_cast<int>(result);
            }
        }
    }
    return invalid();
}

} // namespace minirun
