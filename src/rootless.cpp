#include "minirun/rootless.hpp"

#include "minirun/file.hpp"
#include "mountinfo.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>

namespace minirun::rootless {
namespace {

std::optional<bool> g_override;

std::optional<uint64_t> to_number(std::string_view text) {
    uint64_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || text.empty()) {
        return std::nullopt;
    }
    return value;
}

std::optional<uid_t> owner_of(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        return std::nullopt;
    }
    return info.st_uid;
}

std::string range_text(uint64_t start, uint64_t count) {
    return cat(start, "-", start + count - 1);
}

} // namespace

bool uid_map_is_whole(std::string_view uid_map) {
    std::vector<std::string_view> fields = fs::split_words(uid_map); // one line only
    return fields.size() == 3 && to_number(fields[0]) == 0 && to_number(fields[1]) == 0 &&
           to_number(fields[2]) == 4294967295ULL;
}

void override_detection(std::optional<bool> rootless) {
    g_override = rootless;
}

bool active() {
    if (g_override) {
        return *g_override;
    }
    static const bool detected = [] {
        if (::geteuid() != 0) {
            return true;
        }
        auto map = fs::read_file("/proc/self/uid_map");
        return map && !uid_map_is_whole(*map);
    }();
    return detected;
}

Result<StateRoot> choose_state_root(const StateRootFacts& facts) {
    StateRoot root;
    if (facts.xdg_runtime_dir) {
        if (facts.xdg_owner == facts.euid) {
            root.path = *facts.xdg_runtime_dir + "/mini-run";
            return root;
        }
        root.warning =
            facts.xdg_owner
                ? cat("XDG_RUNTIME_DIR ", quoted(*facts.xdg_runtime_dir), " belongs to uid ",
                      *facts.xdg_owner, ", not to you (uid ", facts.euid, "): not used for state")
                : cat("XDG_RUNTIME_DIR ", quoted(*facts.xdg_runtime_dir),
                      " is not a directory: not used for state");
    }
    if (facts.run_user_owner == facts.euid) {
        root.path = cat("/run/user/", facts.euid, "/mini-run");
        return root;
    }
    std::string why = facts.xdg_runtime_dir ? root.warning : "XDG_RUNTIME_DIR is not set";
    return Error(EACCES, cat("running rootless, and no directory for container state: ", why,
                             ", and /run/user/", facts.euid,
                             " is not yours; set XDG_RUNTIME_DIR to a directory of yours, or "
                             "pass --root"));
}

Result<StateRoot> state_root() {
    StateRootFacts facts;
    facts.euid = ::geteuid();
    if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && *xdg != '\0') {
        facts.xdg_runtime_dir = xdg;
        facts.xdg_owner = owner_of(xdg);
    }
    facts.run_user_owner = owner_of(cat("/run/user/", facts.euid));
    return choose_state_root(facts);
}

std::vector<SubidRange> parse_subid(std::string_view text, std::string_view user, uid_t uid) {
    std::vector<SubidRange> ranges;
    const std::string uid_text = cat(uid);
    for (std::string_view line : fs::split(text, '\n')) {
        std::vector<std::string_view> fields = fs::split(line, ':');
        if (fields.size() != 3 || fields[0].empty() ||
            (fields[0] != user && fields[0] != uid_text)) {
            continue;
        }
        auto start = to_number(fields[1]);
        auto count = to_number(fields[2]);
        if (!start || !count || *count == 0 || *start + *count > 4294967296ULL) {
            continue;
        }
        ranges.push_back({*start, *count});
    }
    return ranges;
}

bool maps_only_own_id(const std::vector<spec::IdMapping>& mappings, uint32_t own) {
    return mappings.size() == 1 && mappings[0].host_id == own && mappings[0].size == 1;
}

Status check_subid_mappings(const std::vector<spec::IdMapping>& mappings, std::string_view path,
                            uint32_t own, std::string_view user, std::string_view file,
                            const std::vector<SubidRange>& ranges) {
    std::string yours;
    for (const SubidRange& range : ranges) {
        yours += cat(yours.empty() ? "" : ", ", range_text(range.start, range.count));
    }
    for (size_t i = 0; i < mappings.size(); ++i) {
        const spec::IdMapping& mapping = mappings[i];
        const uint64_t start = mapping.host_id;
        const uint64_t count = mapping.size;
        if (start == own && count == 1) {
            continue; // newuidmap and newgidmap let anyone map their own id
        }
        bool inside = false;
        for (const SubidRange& range : ranges) {
            inside = inside || (start >= range.start && start + count <= range.start + range.count);
        }
        if (inside) {
            continue;
        }
        if (ranges.empty()) {
            return Error(EPERM, cat(path, "[", i, "]: host ids ", range_text(start, count),
                                    " are not yours: ", file, " gives ", quoted(user), " (id ", own,
                                    ") no range; only ", own, " itself can be mapped"));
        }
        return Error(EPERM, cat(path, "[", i, "]: host ids ", range_text(start, count),
                                " are not yours: ", file, " gives ", quoted(user), " ", yours,
                                " (and its own id ", own, ")"));
    }
    return {};
}

} // namespace minirun::rootless
