// Device cgroup rules for the cgroup_devices tests, written the way a config lists them:
// allow("c", 1, 3, "rw"), deny("a", any, any, "rwm").
#pragma once

#include "minirun/spec.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace minirun::testing::device_rules {

using Rules = std::vector<minirun::spec::DeviceCgroupRule>;
using Writes = std::vector<std::pair<std::string, std::string>>;

inline constexpr int64_t any = -1; // "no major/minor" in the helpers below

inline minirun::spec::DeviceCgroupRule rule(bool allow, const std::string& type, int64_t major,
                                            int64_t minor, const std::string& access) {
    minirun::spec::DeviceCgroupRule made;
    made.allow = allow;
    made.type = type;
    if (major != any) {
        made.major = major;
    }
    if (minor != any) {
        made.minor = minor;
    }
    made.access = access;
    return made;
}

inline minirun::spec::DeviceCgroupRule allow(const std::string& type, int64_t major, int64_t minor,
                                             const std::string& access) {
    return rule(true, type, major, minor, access);
}

inline minirun::spec::DeviceCgroupRule deny(const std::string& type, int64_t major, int64_t minor,
                                            const std::string& access) {
    return rule(false, type, major, minor, access);
}

inline minirun::spec::DeviceCgroupRule deny_all() {
    return deny("a", any, any, "rwm");
}

} // namespace minirun::testing::device_rules
