// `exec --process FILE`: a process object from a file, read with config.json's rules.
#include "fuzz.hpp"
#include "minirun/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto process = minirun::spec::parse_process(minirun::fuzz::text_of(data, size), "process.json");
    minirun::fuzz::expect_clear_if_failed(process, "parse_process");
    if (process) {
        minirun::fuzz::expect(!process->args.empty(), "an accepted process has something to run");
    }
    return 0;
}
