// Container ids, from every command line: an id names a directory under --root, so an
// accepted id must be one plain path component of bounded length.
#include "fuzz.hpp"
#include "minirun/runtime.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view id = minirun::fuzz::text_of(data, size);
    auto checked = minirun::validate_container_id(id);
    minirun::fuzz::expect_clear_if_failed(checked, "validate_container_id");
    if (checked) {
        minirun::fuzz::expect(!id.empty() && id.size() <= 1024, "an id is 1 to 1024 bytes");
        minirun::fuzz::expect(id.find('/') == std::string_view::npos &&
                                  id.find('\0') == std::string_view::npos,
                              "an id is one path component");
        minirun::fuzz::expect(id != "." && id != "..", "an id names no other directory");
    }
    return 0;
}
