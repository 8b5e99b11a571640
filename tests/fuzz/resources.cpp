// `update --resources FILE`: a LinuxResources object from a file, read with config.json's
// rules for linux.resources.
#include "fuzz.hpp"
#include "minirun/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto resources =
        minirun::spec::parse_resources(minirun::fuzz::text_of(data, size), "resources.json");
    minirun::fuzz::expect_clear_if_failed(resources, "parse_resources");
    return 0;
}
