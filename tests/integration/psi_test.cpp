// `events --stats` with pressure stall information: read from the container's cgroup2
// directory (cpu.pressure, memory.pressure, io.pressure) where the kernel has PSI. On a
// hybrid host such as this project's machines the cgroup2 part at /sys/fs/cgroup/unified
// has them; a host without cgroup2 or without PSI skips, saying why.
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace it;
namespace stdfs = std::filesystem;

namespace {

// Where the cgroup2 hierarchy is mounted: the hybrid leftover, or the whole tree.
std::string cgroup2_root() {
    if (stdfs::exists("/sys/fs/cgroup/unified/cgroup.procs")) {
        return "/sys/fs/cgroup/unified";
    }
    if (stdfs::exists("/sys/fs/cgroup/cgroup.controllers")) {
        return "/sys/fs/cgroup";
    }
    return "";
}

// The "total" of a pressure file's `kind` line ("some", "full"), -1 when it has none.
int64_t total_of(const std::string& text, const std::string& kind) {
    for (const std::string& line : split_lines(text)) {
        if (!line.starts_with(kind + " ")) {
            continue;
        }
        size_t at = line.find("total=");
        return at == std::string::npos ? -1 : std::stoll(line.substr(at + 6));
    }
    return -1;
}

} // namespace

TEST_CASE("events --stats: cpu, memory and io pressure from the container's cgroup2 directory",
          "[psi]") {
    std::string root = cgroup2_root();
    if (root.empty()) {
        skip_test("no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified: no PSI");
        return;
    }
    TempBundle bundle("psi");
    // Some CPU work, so that the pressure files have something to count.
    bundle.set_shell("i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exec sleep 300");
    Runtime runtime;
    auto started = runtime.run_detached(bundle);
    INFO("run --detach: " << started.describe());
    REQUIRE(started.exit_code == 0);
    const std::string dir = root + default_cgroup(bundle.id());
    auto cpu_before = read_file(dir + "/cpu.pressure");
    if (!cpu_before || !contains(*cpu_before, "some ")) {
        skip_test("the container's cgroup2 directory " + dir +
                  " has no readable cpu.pressure (a kernel without CONFIG_PSI, or psi=0)");
        return;
    }
    auto stats = runtime({"events", "--stats", bundle.id()});
    INFO("events --stats: " << stats.describe());
    REQUIRE(stats.exit_code == 0);
    auto event = nlohmann::json::parse(stats.out, nullptr, false);
    REQUIRE(event.is_object());
    const auto& data = event["data"];
    for (const auto& [section, file] :
         {std::pair{"cpu", "cpu.pressure"}, std::pair{"memory", "memory.pressure"},
          std::pair{"blkio", "io.pressure"}}) {
        INFO(section << " from " << file);
        auto text = read_file(dir + "/" + file);
        if (!text) {
            CHECK_FALSE(data[section].contains("psi")); // runc leaves it out
            continue;
        }
        REQUIRE(data[section].contains("psi"));
        const auto& psi = data[section]["psi"];
        for (const char* kind : {"some", "full"}) {
            INFO(kind << ": " << psi.dump());
            REQUIRE(psi[kind].is_object());
            for (const char* key : {"avg10", "avg60", "avg300", "total"}) {
                CHECK(psi[kind][key].is_number());
                CHECK(psi[kind][key].get<double>() >= 0);
            }
            // The totals only grow: what events read lies between what was there before
            // (cpu.pressure's, read before events ran) and what is there after.
            int64_t after = total_of(*text, kind);
            if (after < 0) {
                CHECK(psi[kind]["total"] == 0); // no "full" line: zero, as runc
                continue;
            }
            CHECK(psi[kind]["total"].get<int64_t>() <= after);
            if (std::string(section) == "cpu") {
                CHECK(psi[kind]["total"].get<int64_t>() >= total_of(*cpu_before, kind));
            }
        }
    }
    // The container's own: its cgroup's CPU stall differs from the host's /proc/pressure.
    CHECK(data["cpu"]["psi"]["some"]["total"].get<int64_t>() <
          total_of(read_file("/proc/pressure/cpu").value_or("some total=-1"), "some"));
    auto deleted = runtime({"delete", "--force", bundle.id()});
    INFO("delete: " << deleted.describe());
    CHECK(deleted.exit_code == 0);
}
