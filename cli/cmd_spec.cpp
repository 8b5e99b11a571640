// mini-run spec [--bundle DIR] [--rootless]: write a default config.json to start from.
#include "commands.hpp"
#include "minirun/spec.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace minirun::cli {
namespace {

struct SpecOptions {
    std::string bundle = ".";
    bool rootless = false;
    bool seccomp = false;
};

// runc's cgroups.IsCgroup2UnifiedMode: /sys/fs/cgroup is a cgroup2 file system.
bool cgroup2_unified() {
    struct statfs info {};
    return ::statfs("/sys/fs/cgroup", &info) == 0 && info.f_type == CGROUP2_SUPER_MAGIC;
}

int write_spec(const SpecOptions& options) {
    std::string path = options.bundle + "/config.json";
    std::string text = spec::default_spec_json(options.rootless, ::geteuid(), ::getegid(),
                                               options.seccomp, cgroup2_unified());
    // O_EXCL: like runc, never overwrite someone's config.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST) {
            return fail(cat(quoted(path), " already exists: remove it first"));
        }
        return fail(Error::from_errno(cat("create ", quoted(path))).message());
    }
    ssize_t written = ::write(fd, text.data(), text.size());
    ::close(fd);
    if (written != static_cast<ssize_t>(text.size())) {
        return fail(cat("write ", quoted(path), ": short write"));
    }
    return 0;
}

} // namespace

CommandRunner add_spec_command(CLI::App& app, GlobalOptions& /*global*/) {
    auto options = std::make_shared<SpecOptions>();
    CLI::App* command = app.add_subcommand("spec", "write a default config.json");
    command->add_option("--bundle,-b", options->bundle, "directory to write config.json into");
    command->add_flag("--rootless", options->rootless,
                      "a config for an unprivileged user (a user namespace mapping the caller)");
    command->add_flag("--seccomp", options->seccomp,
                      "add a seccomp profile denying the syscalls containers should not have");
    return [options]() {
        return write_spec(*options);
    };
}

} // namespace minirun::cli
