// Sizes and durations as people type them (`update --memory 512m`, `--step-delay`,
// resources given as text): the first byte picks the parser.
#include "minirun/units.hpp"
#include "fuzz.hpp"

using namespace minirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    std::string_view text = fuzz::text_of(data + 1, size - 1);
    if (data[0] % 2 == 0) {
        auto bytes = units::parse_memory_size(text);
        fuzz::expect_clear_if_failed(bytes, "parse_memory_size");
        fuzz::expect(!bytes || *bytes >= -1, "a size is -1 (unlimited) or at least 0");
    } else {
        auto duration = units::parse_duration(text);
        fuzz::expect_clear_if_failed(duration, "parse_duration");
        fuzz::expect(!duration || duration->count() > 0, "a duration is at least 1ms");
    }
    return 0;
}
