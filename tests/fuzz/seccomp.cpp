// linux.seccomp: the input is the seccomp object; it goes into a minimal config, through
// the config's rules, and is compiled to a BPF program with libseccomp as create does
// before clone(). The program is built, never loaded.
#include "security/seccomp.hpp"
#include "fuzz.hpp"
#include "minirun/spec.hpp"

#include <string>

using namespace minirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string config = R"({"ociVersion":"1.0.2","process":{"args":["sh"],"cwd":"/"},)"
                         R"("root":{"path":"rootfs"},"linux":{"seccomp":)";
    config.append(fuzz::text_of(data, size));
    config += "}}";
    auto spec = spec::parse_spec(config, "config.json");
    fuzz::expect_clear_if_failed(spec, "parse_spec");
    if (spec && spec->linux.seccomp) {
        auto filter = runtime::seccomp::Filter::build(*spec->linux.seccomp);
        fuzz::expect_clear_if_failed(filter, "seccomp::Filter::build");
    }
    return 0;
}
