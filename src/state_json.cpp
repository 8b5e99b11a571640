// The JSON of container state: the Record as state.json and recovery.json hold it
// (state_record.hpp), and the OCI state and `list` entries printed for users.
#include "state.hpp"
#include "state_record.hpp"

#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <utility>

namespace minirun::state {
namespace {

using Json = nlohmann::json;

Json record_to_json(const Record& record) {
    Json out = Json::object();
    out["ociVersion"] = record.oci_version;
    out["id"] = record.id;
    out["pid"] = record.pid;
    out["pidStartTime"] = record.pid_start_time;
    out["bundle"] = record.bundle;
    out["rootfs"] = record.rootfs;
    out["created"] = record.created;
    out["owner"] = record.owner;
    out["annotations"] = record.annotations;
    out["paused"] = record.paused;
    out["cgroupPaths"] = record.cgroup_paths;
    if (record.cgroup_shared) {
        out["cgroupShared"] = true;
    }
    return out;
}

// Every field must be present with its type: the file is only ever written by save(), so
// anything else means it was damaged, and guessing defaults could make a dead container
// look alive.
Result<Record> record_from_json(const Json& in) {
    auto string_field = [&in](const char* key, std::string& out) {
        auto it = in.find(key);
        if (it == in.end() || !it->is_string()) {
            return false;
        }
        out = it->get<std::string>();
        return true;
    };
    if (!in.is_object()) {
        return Error(EINVAL, "not a JSON object");
    }
    Record record;
    for (auto [key, field] :
         {std::pair{"ociVersion", &record.oci_version}, std::pair{"id", &record.id},
          std::pair{"bundle", &record.bundle}, std::pair{"rootfs", &record.rootfs},
          std::pair{"created", &record.created}, std::pair{"owner", &record.owner}}) {
        if (!string_field(key, *field)) {
            return Error(EINVAL, cat("missing or invalid ", quoted(key)));
        }
    }
    auto pid = in.find("pid");
    if (pid == in.end() || !pid->is_number_integer() || *pid < 0 ||
        *pid > std::numeric_limits<pid_t>::max()) {
        return Error(EINVAL, "missing or invalid \"pid\"");
    }
    record.pid = pid->get<pid_t>();
    auto start = in.find("pidStartTime");
    if (start == in.end() || !start->is_number_unsigned()) {
        return Error(EINVAL, "missing or invalid \"pidStartTime\"");
    }
    record.pid_start_time = start->get<uint64_t>();
    auto paused = in.find("paused");
    if (paused == in.end() || !paused->is_boolean()) {
        return Error(EINVAL, "missing or invalid \"paused\"");
    }
    record.paused = paused->get<bool>();
    auto annotations = in.find("annotations");
    if (annotations == in.end() || !annotations->is_object()) {
        return Error(EINVAL, "missing or invalid \"annotations\"");
    }
    for (const auto& [key, value] : annotations->items()) {
        if (!value.is_string()) {
            return Error(EINVAL, cat("annotation ", quoted(key), " is not a string"));
        }
        record.annotations.emplace(key, value.get<std::string>());
    }
    auto cgroups = in.find("cgroupPaths");
    if (cgroups == in.end() || !cgroups->is_object()) {
        return Error(EINVAL, "missing or invalid \"cgroupPaths\"");
    }
    for (const auto& [key, value] : cgroups->items()) {
        if (!value.is_string() || value.get<std::string>().empty() ||
            value.get<std::string>().front() != '/') {
            return Error(EINVAL, cat("cgroup path ", quoted(key), " is not an absolute path"));
        }
        record.cgroup_paths.emplace(key, value.get<std::string>());
    }
    if (auto shared = in.find("cgroupShared"); shared != in.end()) {
        if (!shared->is_boolean()) {
            return Error(EINVAL, "invalid \"cgroupShared\"");
        }
        record.cgroup_shared = shared->get<bool>();
    }
    return record;
}

} // namespace

Result<std::string> record_text(const Record& record) {
    try {
        std::string text = record_to_json(record).dump(2);
        text += '\n';
        return text;
    } catch (const Json::exception& e) {
        // dump() throws on a string that is not UTF-8.
        return Error(EINVAL, e.what());
    }
}

Result<Record> parse_record(std::string_view text) {
    Json parsed = Json::parse(text, nullptr, false);
    if (parsed.is_discarded()) {
        return Error(EINVAL, "not valid JSON (truncated or overwritten?)");
    }
    return record_from_json(parsed);
}

std::string_view status_name(Status status) {
    switch (status) {
    case Status::creating:
        return "creating";
    case Status::created:
        return "created";
    case Status::running:
        return "running";
    case Status::paused:
        return "paused";
    case Status::stopped:
        return "stopped";
    }
    return "unknown";
}

namespace {

// The state's fields in runc's order; `list` puts the annotations before the owner and
// leaves them out when empty (runc's `containerState`), `state` always prints them, last.
nlohmann::ordered_json state_object(const Record& record, Status status, bool list_layout) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["ociVersion"] = record.oci_version;
    out["id"] = record.id;
    // runc prints 0 for a stopped container, and engines parse "pid" as a plain integer.
    // "creating" is printed in two cases: `state` before the init exists (no pid to
    // name), and the state handed to prestart/createRuntime/createContainer hooks, which
    // need the init's pid to find its namespaces (runtime-spec: hooks get the pid).
    if (status == Status::stopped) {
        out["pid"] = 0;
    } else if (status != Status::creating || record.pid != 0) {
        out["pid"] = record.pid;
    }
    out["status"] = status_name(status);
    out["bundle"] = record.bundle;
    out["rootfs"] = record.rootfs;
    out["created"] = record.created;
    nlohmann::ordered_json annotations = nlohmann::ordered_json::object();
    for (const auto& [key, value] : record.annotations) {
        annotations[key] = value;
    }
    if (list_layout) {
        if (!annotations.empty()) {
            out["annotations"] = std::move(annotations);
        }
        out["owner"] = record.owner;
    } else {
        out["owner"] = record.owner;
        out["annotations"] = std::move(annotations);
    }
    return out;
}

} // namespace

std::string oci_state_json(const Record& record, Status status) {
    // Paths are bytes, not necessarily UTF-8; printing a replacement character beats
    // throwing out of a function that cannot fail.
    return state_object(record, status, false)
        .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string list_entry_json(const Record& record, Status status) {
    return state_object(record, status, true)
        .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace minirun::state
