// The hugetlb controller: one limit per page size, and its reservation alike where the
// kernel has one (Linux 5.7), and their statistics.
//
//   v1  hugetlb.<size>.limit_in_bytes, hugetlb.<size>.rsvd.limit_in_bytes
//   v2  hugetlb.<size>.max, hugetlb.<size>.rsvd.max
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"

#include <filesystem>

namespace minirun::runtime::cgroup::controllers {
namespace {

// A hugepage size ("2MB") becomes part of a file name: nothing that leaves the directory.
Status check_page_size(const std::string& size) {
    if (size.empty() || size.find('/') != std::string::npos || size.starts_with('.')) {
        return Error(EINVAL, cat("hugepage limit: invalid page size ", quoted(size)));
    }
    return {};
}

// Each page size's limit to hugetlb.<size><suffix>; the reservation's too where it exists.
Status write_limits(const std::string& dir, const std::vector<spec::HugepageLimit>& limits,
                    const char* suffix) {
    for (const auto& limit : limits) {
        MR_TRY(check_page_size(limit.page_size));
        MR_TRY(files::write(dir, cat("hugetlb.", limit.page_size, suffix), cat(limit.limit)));
        // Reservations (Linux 5.7) are charged separately; runc limits both alike.
        if (std::string rsvd = cat("hugetlb.", limit.page_size, ".rsvd", suffix);
            files::exists(dir, rsvd)) {
            MR_TRY(files::write(dir, rsvd, cat(limit.limit)));
        }
    }
    return {};
}

} // namespace

bool hugetlb_wanted(const spec::Resources& resources) {
    return !resources.hugepage_limits.empty();
}

Status hugetlb_v1(const std::string& dir, const Request& request) {
    return write_limits(dir, request.resources.hugepage_limits, ".limit_in_bytes");
}

Status hugetlb_v2(const std::string& dir, const Request& request) {
    return write_limits(dir, request.resources.hugepage_limits, ".max");
}

void hugetlb_stats(const std::string& dir, bool v2, nlohmann::json& out) {
    using files::uint_or_zero;
    // One set of files per page size the kernel supports: hugetlb.<size>.max (v2) or
    // hugetlb.<size>.limit_in_bytes (v1), reservations (".rsvd.") aside.
    const std::string suffix = v2 ? ".max" : ".limit_in_bytes";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        std::string name = entry.path().filename().string();
        if (!name.starts_with("hugetlb.") || !name.ends_with(suffix) ||
            name.find(".rsvd.") != std::string::npos) {
            continue;
        }
        std::string size = name.substr(8, name.size() - 8 - suffix.size());
        std::string base = cat("hugetlb.", size);
        nlohmann::json stats;
        if (v2) {
            files::set_nonzero(stats, "usage", uint_or_zero(dir, base + ".current"));
            uint64_t failcnt = 0;
            if (auto events = files::read(dir, base + ".events")) {
                failcnt = files::key_values(*events)["max"];
            }
            stats["failcnt"] = failcnt;
        } else {
            files::set_nonzero(stats, "usage", uint_or_zero(dir, base + ".usage_in_bytes"));
            files::set_nonzero(stats, "max", uint_or_zero(dir, base + ".max_usage_in_bytes"));
            stats["failcnt"] = uint_or_zero(dir, base + ".failcnt");
        }
        out[size] = stats;
    }
}

} // namespace minirun::runtime::cgroup::controllers
