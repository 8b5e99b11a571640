// Internal to state*.cpp: a Record as the files of a state directory hold it
// (state_json.cpp).
#pragma once

#include "minirun/error.hpp"
#include "state.hpp"

#include <string>
#include <string_view>

namespace minirun::state {

// The text of state.json (or recovery.json): JSON with 2-space indents and a final newline.
// EINVAL for a string that cannot be written as JSON (not UTF-8).
Result<std::string> record_text(const Record& record);
// The Record in such a text. The error says what is wrong with it (EINVAL), for the
// caller to put in context.
Result<Record> parse_record(std::string_view text);

} // namespace minirun::state
