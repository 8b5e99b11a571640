// Pressure stall information (Linux 4.20, CONFIG_PSI): how long the cgroup's tasks waited
// for a CPU, for memory and for I/O, in each cgroup2 directory's cpu.pressure,
// memory.pressure and io.pressure:
//
//   some avg10=1.71 avg60=2.36 avg300=2.57 total=230548833
//   full avg10=1.00 avg60=1.01 avg300=1.00 total=157622356
//
// `events --stats` reports them as runc 1.2+ does (types.PSIStats under cpu, memory and
// blkio, "psi"), and leaves them out where the file is missing or PSI is off.
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"
#include "mountinfo.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <string_view>
#include <vector>

namespace minirun::runtime::cgroup::controllers {
namespace {

bool parse_average(std::string_view text, double& value) {
    auto [end, failure] =
        std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
    return failure == std::errc() && end == text.data() + text.size() && std::isfinite(value) &&
           value >= 0;
}

// A percentage as Go's encoding/json writes a float64: "0" and "100", not "0.0".
nlohmann::json average_json(double value) {
    if (value == std::floor(value) && value < 1e15) {
        return static_cast<uint64_t>(value);
    }
    return value;
}

// "avg10=1.71 avg60=2.36 avg300=2.57 total=230548833" (the fields after "some" or "full").
// Unknown keys are skipped, as runc's parsePSIData does: a later kernel may add some.
Result<nlohmann::json> parse_line(const std::vector<std::string_view>& fields) {
    nlohmann::json out = {{"avg10", 0}, {"avg60", 0}, {"avg300", 0}, {"total", uint64_t{0}}};
    for (size_t i = 1; i < fields.size(); ++i) {
        std::string_view field = fields[i];
        size_t equals = field.find('=');
        if (equals == std::string_view::npos) {
            return Error(EINVAL, cat("invalid PSI data ", quoted(field)));
        }
        std::string key(field.substr(0, equals));
        std::string_view value = field.substr(equals + 1);
        if (key == "avg10" || key == "avg60" || key == "avg300") {
            double average = 0;
            if (!parse_average(value, average)) {
                return Error(EINVAL, cat("invalid PSI value ", quoted(field)));
            }
            out[key] = average_json(average);
        } else if (key == "total") {
            uint64_t total = 0;
            if (!files::parse_uint(value, total)) {
                return Error(EINVAL, cat("invalid PSI value ", quoted(field)));
            }
            out[key] = total;
        }
    }
    return out;
}

} // namespace

Result<nlohmann::json> parse_psi(std::string_view text) {
    // runc's PSIStats has both as plain structs: "full" is there, at zero, also when the
    // file has no such line (cpu.pressure before Linux 5.13).
    nlohmann::json zero = {{"avg10", 0}, {"avg60", 0}, {"avg300", 0}, {"total", uint64_t{0}}};
    nlohmann::json out = {{"some", zero}, {"full", zero}};
    bool any = false;
    size_t number = 0;
    size_t at = 0;
    while (at <= text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        ++number;
        std::vector<std::string_view> fields = fs::split_words(line);
        if (fields.empty() || (fields[0] != "some" && fields[0] != "full")) {
            continue; // as runc: only the two lines it knows
        }
        auto parsed = parse_line(fields);
        if (!parsed) {
            return parsed.error().wrap(cat("line ", number));
        }
        out[std::string(fields[0])] = std::move(*parsed);
        any = true;
    }
    if (!any) {
        return Error(EINVAL, R"(no "some" or "full" line)");
    }
    return out;
}

Status psi_stats(const std::string& dir, const std::string& name, nlohmann::json& out) {
    auto text = files::read(dir, name);
    if (!text) {
        int error = text.error().errno_value();
        // Missing: a kernel before 4.20, without CONFIG_PSI, or PSI turned off for the
        // cgroup (cgroup.pressure 0, Linux 6.1). EOPNOTSUPP: a kernel that wants psi=1 on
        // its command line. runc leaves the section out then, and so do we.
        if (error == ENOENT || error == EOPNOTSUPP) {
            return {};
        }
        return text.error();
    }
    auto parsed = parse_psi(*text);
    if (!parsed) {
        return parsed.error().wrap(cat(dir, "/", name));
    }
    out["psi"] = std::move(*parsed);
    return {};
}

} // namespace minirun::runtime::cgroup::controllers
