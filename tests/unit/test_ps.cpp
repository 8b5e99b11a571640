// `ps ID [ARGS...]`: ps(1)'s table narrowed down to the container's processes.
#include "minirun/runtime.hpp"

#include <catch2/catch.hpp>

using minirun::filter_ps_output;

TEST_CASE("ps: the header and the lines whose PID column is the container's", "[ps]") {
    const char* ef =
        "UID          PID    PPID  C STIME TTY          TIME CMD\n"
        "root           1       0  0 10:00 ?        00:00:01 /sbin/init\n"
        "root         812     790  0 10:01 pts/0    00:00:00 sh -c sleep 1000\n"
        "root         813     812  0 10:01 pts/0    00:00:00 sleep 1000\n"
        "user        9000       1  0 10:02 ?        00:00:00 812 a pid in the command\n";
    auto table = filter_ps_output(ef, {812, 813});
    REQUIRE(table);
    CHECK(*table == "UID          PID    PPID  C STIME TTY          TIME CMD\n"
                    "root         812     790  0 10:01 pts/0    00:00:00 sh -c sleep 1000\n"
                    "root         813     812  0 10:01 pts/0    00:00:00 sleep 1000\n");

    // Wherever ps puts the PID column ("-o comm,pid", "-e -x").
    auto reordered = filter_ps_output("COMMAND  PID\nsh       812\ninit       1\n", {812});
    REQUIRE(reordered);
    CHECK(*reordered == "COMMAND  PID\nsh       812\n");

    auto no_pid = filter_ps_output("COMMAND\nsh\n", {812});
    REQUIRE_FALSE(no_pid);
    CHECK_THAT(no_pid.error().message(), Catch::Contains("no PID column"));
    CHECK_FALSE(filter_ps_output("", {812}));
}
