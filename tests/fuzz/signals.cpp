// Signal names and numbers (`kill ID TERM`, `kill ID SIGRTMIN+3`, `kill ID 9`): an accepted
// one is a signal kill(2) takes, or 0 (`kill ID 0` only checks that the init exists).
#include "fuzz.hpp"
#include "minirun/runtime.hpp"

#include <csignal>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto signal = minirun::parse_signal(minirun::fuzz::text_of(data, size));
    minirun::fuzz::expect_clear_if_failed(signal, "parse_signal");
    minirun::fuzz::expect(!signal || (*signal >= 0 && *signal <= SIGRTMAX),
                          "a signal is between 0 and SIGRTMAX");
    return 0;
}
