#include "minirun/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace minirun::units {
namespace {

// Splits "<number><unit>" at the first letter.
struct Quantity {
    double value = 0;
    std::string unit; // lower case
};

Result<Quantity> split_quantity(std::string_view& rest, std::string_view whole,
                                std::string_view what) {
    Quantity quantity;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), quantity.value);
    if (ec != std::errc() || !std::isfinite(quantity.value) || quantity.value < 0) {
        return Error(EINVAL, cat("invalid ", what, " ", quoted(whole)));
    }
    rest.remove_prefix(static_cast<size_t>(end - rest.data()));
    while (!rest.empty() && std::isalpha(static_cast<unsigned char>(rest.front())) != 0) {
        quantity.unit += static_cast<char>(std::tolower(static_cast<unsigned char>(rest.front())));
        rest.remove_prefix(1);
    }
    return quantity;
}

} // namespace

Result<int64_t> parse_memory_size(std::string_view text) {
    if (text == "-1") {
        return -1;
    }
    std::string_view rest = text;
    MR_ASSIGN(Quantity quantity, split_quantity(rest, text, "memory size"));
    if (!rest.empty()) {
        return Error(EINVAL, cat("invalid memory size ", quoted(text)));
    }
    std::string unit = quantity.unit;
    // "b" alone is bytes; "kb", "kib" and "k" are all 1024 bytes.
    if (unit.size() > 1 && unit.back() == 'b') {
        unit.pop_back();
        if (unit.size() > 1 && unit.back() == 'i') {
            unit.pop_back();
        }
    }
    double scale = 0;
    if (unit.empty() || unit == "b") {
        scale = 1;
    } else if (unit == "k") {
        scale = 1024.0;
    } else if (unit == "m") {
        scale = 1024.0 * 1024;
    } else if (unit == "g") {
        scale = 1024.0 * 1024 * 1024;
    } else if (unit == "t") {
        scale = 1024.0 * 1024 * 1024 * 1024;
    } else if (unit == "p") {
        scale = 1024.0 * 1024 * 1024 * 1024 * 1024;
    } else {
        return Error(EINVAL, cat("invalid memory size ", quoted(text), ": unknown unit"));
    }
    double bytes = quantity.value * scale;
    if (bytes >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
        return Error(ERANGE, cat("memory size ", quoted(text), " is too large"));
    }
    return static_cast<int64_t>(bytes);
}

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
    if (text.empty()) {
        return Error(EINVAL, "invalid duration \"\"");
    }
    double total_ms = 0;
    std::string_view rest = text;
    while (!rest.empty()) {
        MR_ASSIGN(Quantity quantity, split_quantity(rest, text, "duration"));
        double scale = 0;
        if (quantity.unit == "ms") {
            scale = 1;
        } else if (quantity.unit == "s" || quantity.unit.empty()) {
            scale = 1000;
        } else if (quantity.unit == "m") {
            scale = 60 * 1000;
        } else if (quantity.unit == "h") {
            scale = 60 * 60 * 1000;
        } else {
            return Error(EINVAL, cat("invalid duration ", quoted(text), ": unknown unit ",
                                     quoted(quantity.unit)));
        }
        total_ms += quantity.value * scale;
    }
    if (total_ms < 1) {
        return Error(EINVAL, cat("duration ", quoted(text), " is shorter than 1ms"));
    }
    // A double at or above 2^63 has no int64_t: the conversion would be undefined (found by
    // tests/fuzz/units.cpp under UBSan: "2e90s").
    if (total_ms >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
        return Error(ERANGE, cat("duration ", quoted(text), " is too long"));
    }
    return std::chrono::milliseconds(static_cast<int64_t>(total_ms));
}

namespace {

// One number at the start of `rest`, which it leaves after the digits.
Result<uint32_t> take_number(std::string_view& rest, const NumberList& list, std::string_view whole,
                             std::string_view where) {
    uint32_t number = 0;
    auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
    if (end == rest.data()) {
        return Error(EINVAL, cat("bad ", list.noun, " list ", quoted(whole), ": expected a ",
                                 list.noun, " number ", where));
    }
    if (error != std::errc{} || number > list.max) {
        return Error(EINVAL,
                     cat("bad ", list.noun, " list ", quoted(whole), ": ", list.noun, " ",
                         std::string_view(rest.data(), end - rest.data()), " is above ", list.max));
    }
    rest.remove_prefix(static_cast<size_t>(end - rest.data()));
    return number;
}

} // namespace

Result<std::vector<uint32_t>> parse_number_list(std::string_view text, const NumberList& list) {
    // The ranges first, expanded once at the end: "0-8191,0-8191,..." costs its length, not
    // its length times 8192 (a 1 MB config of such ranges took minutes and gigabytes when
    // each range was expanded as it was read; found by tests/fuzz/cpu_list.cpp).
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    std::string_view rest = text;
    while (!rest.empty()) {
        MR_ASSIGN(uint32_t first, take_number(rest, list, text, "at the start of an entry"));
        uint32_t last = first;
        if (!rest.empty() && rest.front() == '-') {
            rest.remove_prefix(1);
            MR_ASSIGN(last, take_number(rest, list, text, "after '-'"));
            if (last < first) {
                return Error(EINVAL, cat("bad ", list.noun, " list ", quoted(text), ": range ",
                                         first, "-", last, " ends before it starts"));
            }
        }
        ranges.emplace_back(first, last);
        if (rest.empty()) {
            break;
        }
        if (rest.front() != ',') {
            return Error(EINVAL, cat("bad ", list.noun, " list ", quoted(text), ": unexpected ",
                                     quoted(rest.substr(0, 1)), " (", list.noun,
                                     "s are separated by ',')"));
        }
        rest.remove_prefix(1);
        if (rest.empty()) {
            return Error(EINVAL, cat("bad ", list.noun, " list ", quoted(text), ": ends with ','"));
        }
    }
    std::sort(ranges.begin(), ranges.end());
    std::vector<uint32_t> numbers;
    for (auto [first, last] : ranges) {
        // Past what is listed already: overlapping ranges add each number once.
        uint64_t from = numbers.empty() ? first : std::max<uint64_t>(first, numbers.back() + 1ULL);
        for (uint64_t number = from; number <= last; ++number) {
            numbers.push_back(static_cast<uint32_t>(number));
        }
    }
    return numbers;
}

Result<std::vector<uint32_t>> parse_cpu_list(std::string_view text) {
    return parse_number_list(text, {"cpu", kMaxCpu});
}

namespace {

Result<uint32_t> parse_user_id(std::string_view text, std::string_view noun,
                               std::string_view whole) {
    auto bad = [&](std::string_view why) {
        return Error(EINVAL, cat("--user ", quoted(whole), ": ", why,
                                 " (expected <uid>[:<gid>], decimal numbers)"));
    };
    if (text.empty()) {
        return bad(cat("the ", noun, " is empty"));
    }
    if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return bad(
            cat("the ", noun, " ", quoted(text), " is not a number; names are not looked up"));
    }
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value >= kNoId) {
        return bad(cat("the ", noun, " ", text, " is out of range: at most ", kNoId - 1));
    }
    return static_cast<uint32_t>(value);
}

} // namespace

Result<UserIds> parse_user_ids(std::string_view text) {
    UserIds ids;
    size_t colon = text.find(':');
    MR_ASSIGN(ids.uid, parse_user_id(text.substr(0, colon), "uid", text));
    if (colon != std::string_view::npos) {
        MR_ASSIGN(ids.gid, parse_user_id(text.substr(colon + 1), "gid", text));
    }
    return ids;
}

} // namespace minirun::units
