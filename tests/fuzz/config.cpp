// config.json from raw bytes (with tests/fuzz/dict/config.dict, the spec's keys and values):
// parse, validate, plan and compile the seccomp filter, as create does before clone().
#include "config_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    minirun::fuzz::check_config_text(minirun::fuzz::text_of(data, size));
    return 0;
}
