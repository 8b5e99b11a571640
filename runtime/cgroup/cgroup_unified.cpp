// linux.resources.unified: raw cgroup2 files and values, written as given into the cgroup2
// directory (whatever the layout: on a hybrid host that is /sys/fs/cgroup/unified), after
// every typed field, so that they may override those.
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"
#include "fs.hpp"

namespace minirun::runtime::cgroup::controllers {

bool unified_wanted(const spec::Resources& resources) {
    return !resources.unified.empty();
}

Status unified_v2(const std::string& dir, const Request& request) {
    for (const auto& [key, value] : request.resources.unified) {
        if (key.empty() || key.find('/') != std::string::npos || key == "." || key == "..") {
            return Error(EINVAL, cat("linux.resources.unified: ", quoted(key),
                                     " is not a file name of the cgroup's directory"));
        }
        size_t dot = key.find('.');
        if (dot == std::string::npos || dot == 0) {
            return Error(EINVAL, cat("linux.resources.unified: ", quoted(key),
                                     " is not of the form CONTROLLER.PARAMETER"));
        }
        std::string controller = key.substr(0, dot);
        // "cgroup." files are the core's, in every directory.
        if (controller != "cgroup" && !request.v2_controllers.contains(controller) &&
            !files::exists(dir, key)) {
            // runtime-spec: an error. "invalid configuration" is runc's word for it.
            return Error(EOPNOTSUPP, cat("linux.resources.unified: ", quoted(key),
                                         ": invalid configuration: controller ", quoted(controller),
                                         " is not available in ", dir));
        }
        // Multi-line values are one write per line, as the kernel parses them (io.max
        // takes one device per write).
        for (std::string_view line : fs::split(value, '\n')) {
            if (!line.empty()) {
                MR_TRY(files::write(dir, key, line));
            }
        }
    }
    return {};
}

} // namespace minirun::runtime::cgroup::controllers
