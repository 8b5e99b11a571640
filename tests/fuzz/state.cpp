// state.json (and recovery.json, the same format) as a later command reads it: a file any
// root process, a crash or a full disk may have written. Whatever it accepts must survive
// the round trip through the writer unchanged, and print as the OCI state JSON.
#include "state.hpp"
#include "fuzz.hpp"
#include "state_record.hpp"

#include <nlohmann/json.hpp>

using namespace minirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto record = state::parse_record(fuzz::text_of(data, size));
    fuzz::expect_clear_if_failed(record, "parse_record");
    if (!record) {
        return 0;
    }
    auto text = state::record_text(*record);
    fuzz::expect_clear_if_failed(text, "record_text");
    if (!text) {
        return 0; // a string the reader took that JSON cannot hold: refused when written
    }
    auto again = state::parse_record(*text);
    fuzz::expect(again.ok(), "a state.json written by record_text must read back");
    auto text_again = state::record_text(*again);
    fuzz::expect(text_again.ok() && *text_again == *text,
                 "state.json must not change when read and written again");
    for (state::Status status :
         {state::Status::creating, state::Status::running, state::Status::stopped}) {
        std::string printed = state::oci_state_json(*record, status);
        fuzz::expect(!nlohmann::json::parse(printed, nullptr, false).is_discarded(),
                     "the OCI state must be JSON");
    }
    return 0;
}
