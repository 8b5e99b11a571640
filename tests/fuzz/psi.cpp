// Pressure stall information: a cgroup2 directory's cpu.pressure, memory.pressure and
// io.pressure, as `events --stats` reads them (runtime/cgroup/cgroup_psi.cpp). Accepted
// text comes out as runc's PSIStats: "some" and "full", each with avg10, avg60, avg300 (a
// non-negative finite number) and total (an unsigned one).
#include "cgroup/controllers.hpp"
#include "fuzz.hpp"

#include <cmath>

using namespace minirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto psi = runtime::cgroup::controllers::parse_psi(fuzz::text_of(data, size));
    fuzz::expect_clear_if_failed(psi, "parse_psi");
    if (!psi) {
        return 0;
    }
    fuzz::expect(psi->size() == 2, "PSIStats has some and full, nothing else");
    for (const char* kind : {"some", "full"}) {
        const auto& line = (*psi)[kind];
        fuzz::expect(line.is_object() && line.size() == 4, "each has four fields");
        for (const char* key : {"avg10", "avg60", "avg300"}) {
            fuzz::expect(line[key].is_number(), "an average is a number");
            double value = line[key].get<double>();
            fuzz::expect(std::isfinite(value) && value >= 0, "an average is finite, not negative");
        }
        fuzz::expect(line["total"].is_number_unsigned(), "a total is an unsigned number");
    }
    return 0;
}
