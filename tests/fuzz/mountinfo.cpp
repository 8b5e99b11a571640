// /proc/<pid>/mountinfo and /proc/<pid>/cgroup: written by the kernel, but about mounts and
// cgroups whose names a container chose (a mount point with spaces, newlines, escapes). The
// first byte picks the parser.
#include "mountinfo.hpp"
#include "fuzz.hpp"

using namespace minirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    std::string_view text = fuzz::text_of(data + 1, size - 1);
    if (data[0] % 2 == 0) {
        (void)fs::parse_mountinfo(text);
    } else {
        (void)fs::parse_proc_cgroup(text);
    }
    return 0;
}
