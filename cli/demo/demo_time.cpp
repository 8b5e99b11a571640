// `mini-run demo time`: the monotonic and boot clocks run ten days ahead inside. The
// offsets are written in runtime/ns/time.cpp.
#include "demo.hpp"

#include <unistd.h>

#include <cmath>
#include <exception>
#include <string>
#include <vector>

namespace minirun::cli::demo {
namespace {

double first_number(std::string_view text) {
    try {
        return std::stod(std::string(text));
    } catch (const std::exception&) {
        return -1;
    }
}

} // namespace

Result<bool> demo_time(Context& c) {
    intro(c, "time: the monotonic and boot clocks",
          "A time namespace offsets CLOCK_MONOTONIC and CLOCK_BOOTTIME (not the wall clock),\n"
          "so a container moved to another machine can keep its clocks. The offsets\n"
          "(config.json's linux.timeOffsets, here ten days) are written before anyone is\n"
          "inside. /proc/uptime follows CLOCK_BOOTTIME.",
          "CLONE_NEWTIME",
          "unshare(CLONE_NEWTIME), write /proc/self/timens_offsets, setns(time_for_children)",
          "runtime/ns/time.cpp");
    if (::access("/proc/self/ns/time", F_OK) != 0) {
        c.out.note("this kernel has no time namespaces (Linux 5.6 or later): skipped");
        return true;
    }
    Session session(c, "time");
    MR_TRY(session.open());
    session.set_namespaces({"time"});
    const nlohmann::json offset = {{"secs", kTimeOffset}, {"nanosecs", 0}};
    session.config["linux"]["timeOffsets"] = {{"monotonic", offset}, {"boottime", offset}};
    session.set_script(ns_line("time") +
                       "echo @offsets; cat /proc/self/timens_offsets; echo @end; "
                       "echo \"@uptime $(cut -d' ' -f1 /proc/uptime)\"; " +
                       pause());
    MR_TRY(session.start("@ready"));
    const std::string host_uptime = words_of(read_text("/proc/uptime")).at(0);
    MR_TRY(pause_while_running(c, session));
    MR_TRY(session.resume());
    MR_TRY(session.finish());

    c.out.ns_compare("time", session.value("ns"), host_ns("time"));
    auto offsets = [](const std::vector<std::string>& lines) {
        std::vector<std::string> out;
        out.reserve(lines.size());
        for (const auto& line : lines) {
            out.push_back(join(words_of(line), " "));
        }
        return join(out, "; ");
    };
    c.out.inside("cat /proc/self/timens_offsets", offsets(session.block("offsets")));
    c.out.host("cat /proc/self/timens_offsets",
               offsets(lines_of(read_text("/proc/self/timens_offsets"))));
    c.out.inside("uptime in seconds (/proc/uptime)", session.value("uptime"));
    c.out.host("uptime in seconds (/proc/uptime)", host_uptime);
    const double difference = first_number(session.value("uptime")) - first_number(host_uptime);
    Check check(c.out);
    check(session.value("ns") != host_ns("time"), "the container has a time namespace of its own");
    bool monotonic = false;
    for (const auto& line : session.block("offsets")) {
        auto words = words_of(line);
        monotonic =
            monotonic || (words.size() == 3 && (words[0] == "monotonic" || words[0] == "1") &&
                          words[1] == std::to_string(kTimeOffset));
    }
    check(monotonic, cat("inside, CLOCK_MONOTONIC is ", kTimeOffset, " s ahead"));
    check(std::fabs(difference - static_cast<double>(kTimeOffset)) < 60,
          cat("the uptime inside is ten days ahead of the host's (", difference, " s)"));
    return check.ok();
}

} // namespace minirun::cli::demo
