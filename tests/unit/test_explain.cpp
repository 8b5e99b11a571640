// --explain's texts: the flag names and the numbered line.
#include "minirun/explain.hpp"

#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/mount.h>

using namespace minirun;

TEST_CASE("explain: clone flags by name", "[explain]") {
    CHECK(explain::clone_flag_names(0) == "0");
    CHECK(explain::clone_flag_names(CLONE_NEWNS | CLONE_NEWPID) == "CLONE_NEWNS|CLONE_NEWPID");
    CHECK(explain::clone_flag_names(CLONE_NEWUSER | CLONE_NEWCGROUP | CLONE_NEWTIME) ==
          "CLONE_NEWUSER|CLONE_NEWCGROUP|CLONE_NEWTIME");
    // Bits without a name are shown in hex.
    CHECK(explain::clone_flag_names(CLONE_NEWNET | CLONE_VM) == "CLONE_NEWNET|0x100");
}

TEST_CASE("explain: mount flags by name", "[explain]") {
    CHECK(explain::mount_flag_names(0) == "0");
    CHECK(explain::mount_flag_names(MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY) ==
          "MS_RDONLY|MS_NOSUID|MS_NODEV|MS_NOEXEC");
    CHECK(explain::mount_flag_names(MS_BIND | MS_REC) == "MS_BIND|MS_REC");
    CHECK(explain::mount_flag_names(MS_PRIVATE | MS_REC) == "MS_REC|MS_PRIVATE");
}

TEST_CASE("explain: one numbered line per step, off by default", "[explain]") {
    CHECK(explain::format_line(7, "init", "pivot_root(\".\", \".\")") ==
          "[explain] 7. init: pivot_root(\".\", \".\")\n");
    CHECK_FALSE(explain::enabled());
    explain::step("not printed"); // off: no output, no counter
}

TEST_CASE("explain: a step card names the step and fills in the container", "[explain]") {
    explain::StepCard card;
    card.who = "init";
    card.number = 20;
    card.total = 43;
    card.name = "hostname";
    card.why = "in the container's UTS namespace, now ours";
    card.calls = "sethostname";
    card.isolates = "the hostname";
    card.look = "nsenter -t {pid} -u hostname; ls {state}; find {root} -name {} {unknown}";
    std::string text = explain::format_card(card, "web", "/run/mini-run", 4242);
    CHECK(text ==
          "\n--- step 20/43 (init): hostname\n"
          "    why:      in the container's UTS namespace, now ours\n"
          "    calls:    sethostname\n"
          "    isolates: the hostname\n"
          "    look:     nsenter -t 4242 -u hostname; ls /run/mini-run/web; find /run/mini-run "
          "-name {} {unknown}\n");
    // Before the clone the pid is not known yet; empty lines are left out.
    card.why = "";
    card.calls = "";
    text = explain::format_card(card, "web", "/run/mini-run", 0);
    CHECK(text.find("nsenter -t <pid> -u hostname") != std::string::npos);
    CHECK(text.find("why:") == std::string::npos);
    CHECK(text.find("calls:") == std::string::npos);
    // Stepping is off unless a command turns it on: no card, no wait.
    CHECK_FALSE(explain::stepping());
    CHECK(explain::pause(card));
    CHECK(explain::stepping_fd() == -1);
}
