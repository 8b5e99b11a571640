// update, pause, resume and events: the commands that act on a live container through
// its cgroups (cgroup.hpp). Each opens the container, checks that it is in a state the
// command makes sense for (runc's rules and words), and works on the recorded cgroups.
#include "cgroup/cgroup.hpp"
#include "lifecycle.hpp"
#include "minirun/runtime.hpp"

#include <nlohmann/json.hpp>

#include <thread>

namespace minirun {
namespace {

bool is_alive(state::Status status) {
    return status == state::Status::created || status == state::Status::running ||
           status == state::Status::paused;
}

Result<runtime::cgroup::Cgroup> cgroup_of(const runtime::Opened& container) {
    if (container.record.cgroup_paths.empty()) {
        return Error(ENOTSUP, cat("container ", quoted(container.record.id),
                                  " has no cgroups of its own (created without root)"));
    }
    return runtime::cgroup::Cgroup::from_paths(container.record.cgroup_paths);
}

Error not_running(const std::string& id) {
    return Error(ESRCH, cat("container ", quoted(id), ": container not running"));
}

std::string event_line(std::string_view type, const std::string& id, const nlohmann::json* data) {
    nlohmann::ordered_json event;
    event["type"] = type;
    event["id"] = id;
    if (data != nullptr) {
        event["data"] = *data;
    }
    return event.dump();
}

} // namespace

Status update_container(const std::string& root, const std::string& id,
                        const spec::Resources& resources) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id));
    if (!is_alive(container.status)) {
        return not_running(id);
    }
    MR_ASSIGN(runtime::cgroup::Cgroup cgroup, cgroup_of(container));
    spec::Resources changes = resources;
    // runc's update leaves the device list alone: it is the container's, from create.
    changes.devices.clear();
    MR_TRY_WRAP(cgroup.apply(changes, true), cat("update container ", quoted(id)));
    return {};
}

Status pause_container(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id));
    if (container.status == state::Status::paused) {
        return Error(EINVAL, cat("container ", quoted(id), " is already paused"));
    }
    if (container.status != state::Status::running && container.status != state::Status::created) {
        return not_running(id);
    }
    MR_ASSIGN(runtime::cgroup::Cgroup cgroup, cgroup_of(container));
    MR_TRY_WRAP(cgroup.freeze(), cat("pause container ", quoted(id)));
    container.record.paused = true;
    if (auto saved = container.dir.save(container.record); !saved) {
        (void)cgroup.thaw(); // a state that says running must not hide frozen processes
        return saved.error();
    }
    return {};
}

Status resume_container(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id));
    if (container.status != state::Status::paused) {
        return Error(EINVAL, cat("container ", quoted(id), " is not paused"));
    }
    MR_ASSIGN(runtime::cgroup::Cgroup cgroup, cgroup_of(container));
    MR_TRY_WRAP(cgroup.thaw(), cat("resume container ", quoted(id)));
    container.record.paused = false;
    return container.dir.save(container.record);
}

Result<std::string> container_stats(const std::string& root, const std::string& id) {
    MR_ASSIGN(runtime::Opened container, runtime::open_container(root, id, runtime::Access::read));
    if (!is_alive(container.status)) {
        return not_running(id);
    }
    MR_ASSIGN(runtime::cgroup::Cgroup cgroup, cgroup_of(container));
    MR_ASSIGN(nlohmann::json data, cgroup.stats());
    return event_line("stats", id, &data);
}

Status stream_events(const std::string& root, const std::string& id,
                     std::chrono::milliseconds interval,
                     const std::function<void(const std::string&)>& emit) {
    runtime::cgroup::Cgroup cgroup;
    {
        MR_ASSIGN(runtime::Opened container,
                  runtime::open_container(root, id, runtime::Access::read));
        if (!is_alive(container.status)) {
            return not_running(id);
        }
        MR_ASSIGN(cgroup, cgroup_of(container));
    }
    // OOM kills show up as a growing counter; it is read often, so that an event comes
    // out soon after the kill, while stats come at the interval asked for.
    constexpr auto kOomPollPeriod = std::chrono::milliseconds(100);
    auto initial_kills = cgroup.oom_kill_count();
    uint64_t oom_kills = initial_kills ? *initial_kills : 0;
    auto next_stats = std::chrono::steady_clock::now() + interval;
    for (;;) {
        std::this_thread::sleep_for(std::min(kOomPollPeriod, interval));
        // Before looking at the status: an OOM kill of the init also ends the container.
        if (auto kills = cgroup.oom_kill_count(); kills && *kills > oom_kills) {
            oom_kills = *kills;
            emit(event_line("oom", id, nullptr));
        }
        auto container = runtime::open_container(root, id, runtime::Access::read);
        if (!container || !is_alive(container->status)) {
            return {};
        }
        if (std::chrono::steady_clock::now() >= next_stats) {
            next_stats += interval;
            if (auto data = cgroup.stats()) {
                emit(event_line("stats", id, &*data));
            }
        }
    }
}

} // namespace minirun
