// cpu and node lists ("0-3,7"): process.execCPUAffinity, linux.memoryPolicy.nodes. The
// first byte picks the parser. Accepted lists come out sorted, without duplicates, within
// the kernel's limits; the time and memory a list costs are bounded by its length and
// that limit (libFuzzer's -timeout and -rss_limit_mb watch them).
#include "fuzz.hpp"
#include "minirun/units.hpp"
#include "spec_rules.hpp"

#include <algorithm>
#include <functional>

using namespace minirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    std::string_view text = fuzz::text_of(data + 1, size - 1);
    bool cpus = data[0] % 2 == 0;
    auto list = cpus ? units::parse_cpu_list(text)
                     : units::parse_number_list(text, {"node", spec::rules::kMaxNumaNode});
    fuzz::expect_clear_if_failed(list, cpus ? "parse_cpu_list" : "parse_number_list (nodes)");
    if (list) {
        fuzz::expect(std::adjacent_find(list->begin(), list->end(), std::greater_equal<>()) ==
                         list->end(),
                     "a list is sorted and has no duplicates");
        uint32_t max = cpus ? units::kMaxCpu : spec::rules::kMaxNumaNode;
        fuzz::expect(list->empty() || list->back() <= max, "a list stays within the limit");
    }
    return 0;
}
