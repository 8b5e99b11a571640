// mini-run demo [NAME]: see one namespace at a time, in a real container.
//
// Each demo (demo_<name>.cpp) runs the example busybox container with a mount namespace
// (mini-run needs one to build the root file system) plus the namespace it is about,
// makes the container print what it sees, looks at the same thing from the host, and
// checks that the facts it prints hold. This file has the command, the list of demos, the
// overview of all namespaces at once, and the helpers the demos share. The machinery
// (temporary bundle, cleanup, Ctrl-C) is in demo_session.cpp, demo_process.cpp and
// demo_output.cpp; docs/namespaces.md walks through the same ground in prose.
#include "demo.hpp"

#include "minirun/fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace minirun::cli {
namespace demo {

// ---- What the demos share (demo.hpp) ----

std::string ns_line(std::string_view name) {
    return cat("echo \"@ns $(readlink /proc/self/ns/", name, ")\"; ");
}

std::string pause(std::string_view marker) {
    return cat("echo @", marker, "; read line; ");
}

Status pause_while_running(const Context& context, const Session& session) {
    MR_ASSIGN(pid_t pid, session.init_pid());
    return pause_here(context, cat("the container runs as host pid ", pid, ": try `nsenter -t ",
                                   pid, " -a sh` in another terminal"));
}

std::vector<std::string> words_of(std::string_view text) {
    std::vector<std::string> words;
    std::istringstream in{std::string(text)};
    for (std::string word; in >> word;) {
        words.push_back(word);
    }
    return words;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : std::string(separator)) + item;
    }
    return out;
}

std::string status_field(pid_t pid, std::string_view name) {
    std::string prefix = cat(name, ":");
    for (const auto& line : lines_of(read_text(cat("/proc/", pid, "/status")))) {
        if (line.starts_with(prefix)) {
            return join(words_of(line.substr(prefix.size())), " ");
        }
    }
    return {};
}

void intro(const Context& context, std::string_view title, std::string_view text,
           std::string_view flag, std::string_view syscall, std::string_view code) {
    context.out.heading(title);
    context.out.text(text);
    context.out.field("flag", flag);
    context.out.field("syscall", syscall);
    context.out.field("code", code);
}

namespace {

Result<bool> demo_overview(Context& c) {
    intro(c, "all: every namespace at once",
          "One container with all eight namespaces: each /proc/self/ns link (a namespace's\n"
          "identity, the inode of an nsfs file) differs from the host's. Each demo after\n"
          "this one shows what one of them isolates.",
          "every CLONE_NEW* flag (CLONE_NEWTIME by unshare: see time)", "clone3(2), unshare(2)",
          "runtime/plan.cpp, runtime/process/child.cpp, runtime/recipe.cpp");
    const std::vector<std::string> names = {"cgroup", "ipc",  "mnt",  "net",
                                            "pid",    "time", "user", "uts"};
    Session session(c, "all");
    MR_TRY(session.open());
    session.set_namespaces({"pid", "network", "ipc", "uts", "user", "cgroup", "time"});
    const nlohmann::json mapping = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    session.config["linux"]["uidMappings"] = mapping;
    session.config["linux"]["gidMappings"] = mapping;
    session.config["linux"]["timeOffsets"] = {{"monotonic", {{"secs", kTimeOffset}}}};
    std::string script;
    for (const auto& name : names) {
        script += cat("echo \"@", name, " $(readlink /proc/self/ns/", name, ")\"; ");
    }
    session.set_script(script);
    MR_TRY(session.start());
    MR_TRY(session.finish());
    Check check(c.out);
    bool all_differ = true;
    for (const auto& name : names) {
        c.out.ns_compare(name, session.value(name), host_ns(name));
        all_differ =
            all_differ && !session.value(name).empty() && session.value(name) != host_ns(name);
    }
    check(all_differ, "every namespace differs from the host's");
    return check.ok();
}

// ---------------------------------------------------------------------------------------

struct Entry {
    const char* name;
    const char* summary;
    Result<bool> (*run)(Context&);
};

constexpr std::array<Entry, 8> kDemos = {{
    {"uts", "hostname: the container renames itself, the host keeps its name", demo_uts},
    {"ipc", "System V message queues: made on one side, invisible on the other", demo_ipc},
    {"pid", "process ids: the shell is pid 1 inside, another pid on the host", demo_pid},
    {"mount", "mounts and pivot_root: a tmpfs inside is not on the host", demo_mount},
    {"net", "only lo inside; a veth pair to the host, a ping across, removed", demo_net},
    {"user", "uid 0 inside is uid 100000 outside, and cannot touch the host's files", demo_user},
    {"cgroup", "/proc/self/cgroup says / inside, the real path outside", demo_cgroup},
    {"time", "a monotonic clock ten days ahead inside, unchanged outside", demo_time},
}};

void list_demos() {
    std::cout << "mini-run demo NAME: one namespace at a time, in a real container (root)\n\n";
    for (const Entry& entry : kDemos) {
        std::string name = entry.name;
        name.resize(8, ' ');
        std::cout << "  " << name << entry.summary << "\n";
    }
    std::cout << "  all     every namespace in one container, then each demo in turn\n\n"
              << "Each shows /proc/self/ns/NAME inside and outside, the clone flag, the file\n"
              << "of runtime/ that implements it, and removes what it made. The walkthrough:\n"
              << "docs/namespaces.md. Every step of a run: mini-run run --explain ID.\n"
              << "With --step, each container stops before each step of mini-run's recipes\n"
              << "(run --explain=step) and the demo pauses while it runs.\n";
}

// The chosen demos in turn ("all": the overview first); whether every fact held.
Result<bool> run_chosen(Context& context, const std::string& name,
                        const std::vector<const Entry*>& chosen) {
    MR_TRY(prepare_context(context));
    bool ok = true;
    if (name == "all") {
        MR_ASSIGN(ok, demo_overview(context));
    }
    for (const Entry* entry : chosen) {
        MR_ASSIGN(bool passed, entry->run(context));
        ok = passed && ok;
    }
    return ok;
}

int run_demo(const std::string& name, bool step, const std::string& bundle) {
    if (name.empty()) {
        list_demos();
        return 0;
    }
    std::vector<const Entry*> chosen;
    for (const Entry& entry : kDemos) {
        if (name == "all" || name == entry.name) {
            chosen.push_back(&entry);
        }
    }
    if (chosen.empty()) {
        return fail(cat("unknown demo ", quoted(name), " (mini-run demo lists them)"));
    }
    // `demo user` also runs rootless (docs/rootless.md): an unprivileged user maps its own
    // uid. The others make network devices, cgroups and mounts only root may.
    if (::geteuid() != 0 && name != "user") {
        return fail("the demos need root (they make network devices, cgroups and mounts), "
                    "except `demo user`, which runs rootless as any user");
    }
    if (step) {
        // Each container's run stops at its steps and waits for Enter there (explain.hpp).
        UniqueFd tty(::open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NOCTTY));
        if (!tty) {
            return fail(cat("demo --step waits for Enter on a terminal, and there is none (open "
                            "/dev/tty: ",
                            std::strerror(errno), ")"));
        }
    }
    Signals signals;
    if (auto opened = signals.open(); !opened) {
        return fail(opened.error().message());
    }
    Context context;
    context.signals = &signals;
    context.step = step;
    context.bundle = bundle;
    Result<bool> ok = run_chosen(context, name, chosen);
    if (!ok && is_interrupted(ok.error())) {
        context.out.note("interrupted: everything the demo made has been removed");
        return 130;
    }
    std::cout << std::flush;
    if (!ok) {
        return fail(cat("demo ", name, ": ", ok.error().message()));
    }
    return *ok ? 0 : 1;
}

} // namespace
} // namespace demo

CommandRunner add_demo_command(CLI::App& app, GlobalOptions& /*global*/) {
    auto name = std::make_shared<std::string>();
    auto step = std::make_shared<bool>(false);
    auto bundle = std::make_shared<std::string>();
    CLI::App* command = app.add_subcommand(
        "demo", "show one namespace at a time in a real container (without NAME: the list)");
    command->add_option("name", *name, "uts, ipc, pid, mount, net, user, cgroup, time or all");
    command->add_flag("--step", *step,
                      "stop before each step of each container's start (run --explain=step) "
                      "and while it runs, to look at it from another terminal");
    command->add_option("--bundle,-b", *bundle,
                        "run the demos on this bundle's rootfs and config.json (default: the "
                        "example bundle of the source tree, else a rootfs made for the demo)");
    return [name, step, bundle]() {
        return demo::run_demo(*name, *step, *bundle);
    };
}

} // namespace minirun::cli
