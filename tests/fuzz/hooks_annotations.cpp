// hooks and annotations: the input is a JSON object whose members join a minimal config
// ({"hooks": ..., "annotations": ...}). Accepted hooks are absolute paths with a positive
// timeout; accepted annotations reach the state JSON that hooks read on stdin, and
// state.json, unchanged.
#include "fuzz.hpp"
#include "minirun/spec.hpp"
#include "state.hpp"
#include "state_record.hpp"

#include <nlohmann/json.hpp>

#include <string>

using namespace minirun;

namespace {

void check_hooks(const std::vector<spec::Hook>& hooks) {
    for (const spec::Hook& hook : hooks) {
        fuzz::expect(!hook.path.empty() && hook.path.front() == '/', "a hook's path is absolute");
        fuzz::expect(!hook.timeout || *hook.timeout > 0, "a hook's timeout is positive");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto members = nlohmann::json::parse(data, data + size, nullptr, false);
    if (members.is_discarded() || !members.is_object()) {
        return 0;
    }
    nlohmann::json config = {{"ociVersion", "1.0.2"},
                             {"process", {{"args", {"sh"}}, {"cwd", "/"}}},
                             {"root", {{"path", "rootfs"}}}};
    for (auto& [key, value] : members.items()) {
        config[key] = value;
    }
    std::string text;
    try {
        text = config.dump();
    } catch (const nlohmann::json::exception&) {
        return 0; // not UTF-8: no config file can hold it
    }
    auto spec = spec::parse_spec(text, "config.json");
    fuzz::expect_clear_if_failed(spec, "parse_spec");
    if (!spec) {
        return 0;
    }
    const spec::Hooks& hooks = spec->hooks;
    for (const auto* list : {&hooks.prestart, &hooks.create_runtime, &hooks.create_container,
                             &hooks.start_container, &hooks.poststart, &hooks.poststop}) {
        check_hooks(*list);
    }
    state::Record record;
    record.oci_version = spec->oci_version;
    record.id = "fuzz";
    record.pid = 1;
    record.bundle = "/bundle";
    record.rootfs = "/bundle/rootfs";
    record.created = "2026-12-02T00:00:00Z";
    record.owner = "root";
    record.annotations = spec->annotations;
    auto hook_state = nlohmann::json::parse(state::oci_state_json(record, state::Status::created),
                                            nullptr, false);
    fuzz::expect(!hook_state.is_discarded(), "the hooks' state is JSON");
    fuzz::expect(hook_state["annotations"].get<std::map<std::string, std::string>>() ==
                     spec->annotations,
                 "the hooks' state has the config's annotations");
    auto saved = state::record_text(record);
    fuzz::expect(saved.ok(), "state.json can hold every accepted annotation");
    auto loaded = state::parse_record(*saved);
    fuzz::expect(loaded.ok() && loaded->annotations == spec->annotations,
                 "state.json keeps the annotations");
    return 0;
}
