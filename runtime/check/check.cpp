// `mini-run check` (minirun/check.hpp): every error in a bundle, and the risky settings.
//
// The parser reports the first problem only (MR_TRY all the way down), and that is right
// for `create`. To report all of them without a second parser, check parses again and
// again: each error's JSON path says which part of the document is wrong, that part is
// removed (the innermost array element on the path, else the field), and what is left is
// parsed again. The rules that relate fields run one by one on what parsed
// (rules::cross_reference_checks()), then the plan `create` would make (pure: it resolves
// paths only), with the same removal, then the rootfs is looked at. Nothing is created.
// The warning rules, for what parsed, are in check_rules.cpp.
#include "minirun/check.hpp"

#include "fs.hpp"
#include "mountinfo.hpp"
#include "plan.hpp"
#include "process/process.hpp"
#include "spec_rules.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

namespace minirun::check {

namespace {

using Json = nlohmann::json;
using spec::NamespaceType;

// ---- JSON paths, as spec_reader.cpp writes them: name, .name, [N], ."key"

struct Step {
    std::string key; // an object member (or map entry when `quoted`)
    std::optional<size_t> index;
    bool quoted = false;
};
using Path = std::vector<Step>;

std::string render(const Path& path, size_t length) {
    std::string out;
    for (size_t i = 0; i < length; ++i) {
        const Step& step = path[i];
        if (step.index) {
            out += cat("[", *step.index, "]");
        } else {
            out += (i == 0 ? std::string() : std::string(".")) +
                   (step.quoted ? minirun::quoted(step.key) : step.key);
        }
    }
    return out;
}

std::string render(const Path& path) {
    return render(path, path.size());
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The path that starts an error message ("linux.namespaces[2].type: unknown ..."), and
// where the rest of the message starts. None when the message does not start with one.
std::optional<std::pair<Path, size_t>> leading_path(std::string_view message) {
    Path path;
    size_t at = 0;
    auto read_name = [&]() -> bool {
        size_t start = at;
        while (at < message.size() && is_name_char(message[at])) {
            ++at;
        }
        if (at == start) {
            return false;
        }
        path.push_back({std::string(message.substr(start, at - start)), std::nullopt, false});
        return true;
    };
    if (!read_name()) {
        return std::nullopt;
    }
    while (at < message.size()) {
        if (message.substr(at).starts_with(": ")) {
            return std::pair{std::move(path), at + 2};
        }
        if (message[at] == '[') {
            size_t close = message.find(']', at);
            if (close == std::string_view::npos || close == at + 1) {
                return std::nullopt;
            }
            size_t index = 0;
            for (char c : message.substr(at + 1, close - at - 1)) {
                if (c < '0' || c > '9') {
                    return std::nullopt;
                }
                index = index * 10 + static_cast<size_t>(c - '0');
            }
            path.push_back({"", index, false});
            at = close + 1;
        } else if (message.substr(at).starts_with(".\"")) {
            // quoted() escapes '"' and '\' with a backslash and writes a newline as \n (other
            // control characters become '?', and such a key is not found: the object that
            // holds it is pruned instead).
            std::string key;
            at += 2;
            while (at < message.size() && message[at] != '"') {
                if (message[at] == '\\' && at + 1 < message.size()) {
                    ++at;
                    key += message[at] == 'n' ? '\n' : message[at];
                    ++at;
                    continue;
                }
                key += message[at++];
            }
            if (at == message.size()) {
                return std::nullopt;
            }
            ++at;
            path.push_back({std::move(key), std::nullopt, true});
        } else if (message[at] == '.') {
            ++at;
            if (!read_name()) {
                return std::nullopt;
            }
        } else {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

// `ancestor` is `path` or contains it: "mounts" of "mounts[2].type".
bool contains_path(std::string_view ancestor, std::string_view path) {
    return path.starts_with(ancestor) &&
           (path.size() == ancestor.size() || path[ancestor.size()] == '.' ||
            path[ancestor.size()] == '[');
}

// ---- removing what is wrong, and telling the user where it was

// The document being pruned, and what was removed from it. Removing an array element
// renumbers the ones after it: paths in later messages are mapped back to the numbering
// of the user's file.
class Pruner {
public:
    explicit Pruner(Json document) : document_(std::move(document)) {}

    [[nodiscard]] const Json& document() const { return document_; }

    // Takes the error `message` about the document: records it in `errors` (its path in
    // the file's numbering) unless it only follows from an earlier removal, and removes
    // the part it is about. false: nothing could be removed, parsing again would fail
    // again.
    bool take(std::string_view message, std::vector<Problem>& errors) {
        auto found = leading_path(message);
        if (!found) {
            errors.push_back({"", std::string(message)});
            return false;
        }
        const auto& [path, rest] = *found;
        Path original = to_original(path);
        std::string original_text = render(original);
        bool removed_itself = false;
        bool follows_removal = false;
        for (const std::string& removed : removed_) {
            removed_itself = removed_itself || removed == original_text;
            follows_removal = follows_removal || contains_path(original_text, removed);
        }
        if (!follows_removal) {
            errors.push_back({original_text, std::string(message.substr(rest))});
        }
        // A part that was removed and is now missing ("is required"): its parent goes.
        Path target = removed_itself ? Path(path.begin(), path.end() - 1) : path;
        return remove(target);
    }

    // Whether `path` (the file's numbering) is, or is inside or around, a removed part.
    [[nodiscard]] bool touches_removed(std::string_view path) const {
        return std::any_of(removed_.begin(), removed_.end(), [&](const std::string& removed) {
            return contains_path(removed, path) || contains_path(path, removed);
        });
    }

    // A path in the current numbering, in the file's.
    [[nodiscard]] Path to_original(const Path& path) const {
        Path out;
        for (const Step& step : path) {
            Step mapped = step;
            if (step.index) {
                if (auto gaps = gaps_.find(render(out)); gaps != gaps_.end()) {
                    size_t index = *step.index;
                    for (size_t gap : gaps->second) { // ascending
                        if (gap <= index) {
                            ++index;
                        }
                    }
                    mapped.index = index;
                }
            }
            out.push_back(std::move(mapped));
        }
        return out;
    }

    // The path of a message, as take() records it, without removing anything.
    [[nodiscard]] Problem problem_of(std::string_view message) const {
        if (auto found = leading_path(message)) {
            return {render(to_original(found->first)), std::string(message.substr(found->second))};
        }
        return {"", std::string(message)};
    }

private:
    // Removes the innermost array element on `path`; without one the field itself; when
    // the field is absent, the deepest part of the path that exists.
    bool remove(const Path& path) {
        Json* node = &document_;
        std::vector<Json*> parents;
        size_t existing = 0;
        std::optional<size_t> element;
        for (const Step& step : path) {
            Json* next = nullptr;
            if (step.index) {
                if (node->is_array() && *step.index < node->size()) {
                    next = &(*node)[*step.index];
                }
            } else if (node->is_object() && node->contains(step.key)) {
                next = &(*node)[step.key];
            }
            if (next == nullptr) {
                break;
            }
            parents.push_back(node);
            node = next;
            if (step.index) {
                element = existing;
            }
            ++existing;
        }
        size_t length = element ? *element + 1 : existing;
        if (length == 0) {
            return false; // the document itself
        }
        Path target(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(length));
        Path original = to_original(target);
        Json& parent = *parents[length - 1];
        const Step& last = target.back();
        if (last.index) {
            parent.erase(*last.index);
            std::vector<size_t>& gaps =
                gaps_[render(original, original.size() - 1)]; // the array's own path
            gaps.insert(std::upper_bound(gaps.begin(), gaps.end(), *original.back().index),
                        *original.back().index);
        } else {
            parent.erase(last.key);
        }
        removed_.push_back(render(original));
        return true;
    }

    Json document_;
    std::vector<std::string> removed_;                // the file's numbering
    std::map<std::string, std::vector<size_t>> gaps_; // array path -> removed indices
};

// More rounds than any real config has errors; each removes a part, so it ends anyway.
constexpr int kMaxRounds = 100;

// Parses the document's fields, removing each wrong part, until it parses.
std::optional<spec::Spec> parse_fields(Pruner& pruner, std::string_view source_name,
                                       std::vector<Problem>& errors) {
    for (int round = 0; round < kMaxRounds; ++round) {
        auto parsed = spec::rules::parse_spec_document(pruner.document(), source_name, false);
        if (parsed) {
            return std::move(*parsed);
        }
        if (!pruner.take(parsed.error().message(), errors)) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

// ---- the bundle itself

// The mounts that could put a file at `path`: a bind (the host's files) or any file system
// mounted at or above it, which the rootfs does not show.
bool covered_by_mount(const runtime::Plan& plan, std::string_view path) {
    return std::any_of(plan.mounts.begin(), plan.mounts.end(), [&](const runtime::MountStep& m) {
        return fs::at_or_below(m.destination, path);
    });
}

// process.args[0] as execve(2) will find it after pivot_root: a name with '/' as it is
// (from process.cwd when relative), any other through PATH. Resolved inside the rootfs
// with RESOLVE_IN_ROOT (fs::open_in_root): a symlink cannot lead out of it.
std::optional<Problem> check_executable(const runtime::Plan& plan) {
    const spec::Process& process = plan.process;
    const std::string& name = process.args.front();
    auto in_cwd = [&](std::string_view path) {
        return path.starts_with('/') ? std::string(path) : cat(process.cwd, "/", path);
    };
    std::vector<std::string> candidates;
    std::string search = runtime::process::search_path(process.env);
    if (name.find('/') != std::string::npos) {
        candidates.push_back(fs::clean_path(in_cwd(name)));
    } else {
        for (std::string_view dir : fs::split(search, ':')) {
            // An empty PATH entry is the current directory, as in execvp(3).
            candidates.push_back(fs::clean_path(cat(in_cwd(dir.empty() ? "." : dir), "/", name)));
        }
    }
    UniqueFd root(::open(plan.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) {
        return Problem{"root.path",
                       Error::from_errno(cat("open ", minirun::quoted(plan.rootfs))).message()};
    }
    for (const std::string& candidate : candidates) {
        if (covered_by_mount(plan, candidate)) {
            return std::nullopt; // a mount provides it, or hides what the rootfs has
        }
        auto fd = fs::open_in_root(root.get(), candidate, O_PATH);
        struct stat info {};
        if (fd && ::fstat(fd->get(), &info) == 0 && S_ISREG(info.st_mode) &&
            (info.st_mode & 0111) != 0) {
            return std::nullopt;
        }
    }
    if (name.find('/') != std::string::npos) {
        return Problem{"process.args[0]",
                       cat(minirun::quoted(name), ": no executable file at ",
                           minirun::quoted(candidates.front()), " in the rootfs")};
    }
    return Problem{"process.args[0]",
                   cat(minirun::quoted(name), ": executable file not found in the rootfs's $PATH ",
                       minirun::quoted(search))};
}

// The plan `create` would make, with each wrong part removed (`spec` is parsed again each
// time). A missing rootfs is planned as "/", so that the mounts and namespaces are still
// checked; there is then no plan to look into.
std::optional<runtime::Plan> plan_pruned(Pruner& pruner, spec::Spec& spec,
                                         std::string_view source_name, const std::string& bundle,
                                         std::vector<Problem>& errors) {
    bool rootfs_missing = false;
    for (int round = 0; round < kMaxRounds; ++round) {
        spec::Spec planned = spec;
        if (rootfs_missing) {
            planned.root.path = "/";
        }
        auto plan = runtime::make_plan(planned, {"check", bundle, 0});
        if (plan) {
            return rootfs_missing ? std::nullopt : std::optional(std::move(*plan));
        }
        const std::string& message = plan.error().message();
        if (message.starts_with("root.path: ") && !rootfs_missing) {
            errors.push_back(pruner.problem_of(message));
            rootfs_missing = true;
            continue;
        }
        if (!pruner.take(message, errors)) {
            return std::nullopt;
        }
        auto parsed = parse_fields(pruner, source_name, errors);
        if (!parsed) {
            return std::nullopt;
        }
        spec = std::move(*parsed);
    }
    return std::nullopt;
}

// The spec the rules across fields are checked on. When an entry of linux.namespaces was
// removed, its type is unknown: it may have been the namespace a rule asks for ("a hostname
// needs a UTS namespace"), so the rules get every type but user (which would ask for
// mappings itself). These rules only ever ask for a namespace to be there.
spec::Spec with_doubt(const spec::Spec& spec, const Pruner& pruner) {
    spec::Spec doubted = spec;
    if (!pruner.touches_removed("linux.namespaces")) {
        return doubted;
    }
    for (const spec::NamespaceKind& kind : spec::namespace_table()) {
        if (kind.type != NamespaceType::user && spec.linux.find_namespace(kind.type) == nullptr) {
            doubted.linux.namespaces.push_back({kind.type, ""});
        }
    }
    return doubted;
}

} // namespace

Report check_config(std::string_view text, std::string_view source_name,
                    const std::string& bundle) {
    Report report;
    report.bundle = bundle;
    Json document = Json::parse(text.begin(), text.end(), nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
        // One error: the parser's message for it.
        auto parsed = spec::parse_spec(text, source_name);
        report.errors.push_back({"", parsed ? "not a JSON object" : parsed.error().message()});
        return report;
    }
    Pruner pruner(std::move(document));
    std::optional<spec::Spec> spec = parse_fields(pruner, source_name, report.errors);
    if (!spec) {
        return report;
    }
    for (const spec::rules::CrossCheck& rule : spec::rules::cross_reference_checks()) {
        if (Status checked = rule.check(with_doubt(*spec, pruner)); !checked.ok()) {
            report.errors.push_back(pruner.problem_of(checked.error().message()));
        }
    }
    if (auto plan = plan_pruned(pruner, *spec, source_name, bundle, report.errors)) {
        if (auto missing = check_executable(*plan)) {
            report.errors.push_back(std::move(*missing));
        }
    }
    // What was removed could not be read: a warning about it would guess at the intent.
    for (Warning& warning : warnings_for(*spec)) {
        if (!pruner.touches_removed(warning.path)) {
            report.warnings.push_back(std::move(warning));
        }
    }
    return report;
}

Result<Report> check_bundle(const std::string& bundle, const std::string& config_file) {
    std::string path;
    MR_ASSIGN(std::string text, spec::rules::read_config(bundle, config_file, &path));
    return check_config(text, path, bundle);
}

int exit_code(const Report& report) {
    if (!report.errors.empty()) {
        return 2;
    }
    return report.warnings.empty() ? 0 : 1;
}

std::string report_text(const Report& report) {
    std::string out;
    for (const Problem& error : report.errors) {
        out += cat("error: ", error.path.empty() ? "" : error.path + ": ", error.message, "\n");
    }
    for (const Warning& warning : report.warnings) {
        out += cat("warning: ", warning.path, ": ", warning.message, " [", warning.rule, "]\n",
                   "    why: ", warning.why, "\n", "    fix: ", warning.fix, "\n");
    }
    auto count = [](size_t n, std::string_view word) {
        return cat(n, " ", word, n == 1 ? "" : "s");
    };
    out += cat(report.bundle, ": ", count(report.errors.size(), "error"), ", ",
               count(report.warnings.size(), "warning"), "\n");
    return out;
}

std::string report_json(const Report& report) {
    Json errors = Json::array();
    for (const Problem& error : report.errors) {
        errors.push_back({{"path", error.path}, {"message", error.message}});
    }
    Json warnings = Json::array();
    for (const Warning& warning : report.warnings) {
        warnings.push_back({{"rule", warning.rule},
                            {"path", warning.path},
                            {"message", warning.message},
                            {"why", warning.why},
                            {"fix", warning.fix}});
    }
    Json out = {{"bundle", report.bundle}, {"errors", errors}, {"warnings", warnings}};
    // Config values need not be UTF-8; the report must still print.
    return out.dump(2, ' ', false, Json::error_handler_t::replace);
}

} // namespace minirun::check
