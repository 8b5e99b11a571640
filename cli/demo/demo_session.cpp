// The machinery of `mini-run demo`: the context (where the example bundle is), temporary
// bundles and their cleanup, and small helpers. Signals and child processes are in
// demo_process.cpp, the output in demo_output.cpp, the demos in demo.cpp and
// demo_<name>.cpp.
#include "demo.hpp"

#include "minirun/runtime.hpp"
#include "minirun/spec.hpp"

#include <ftw.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace minirun::cli::demo {
namespace {

constexpr std::string_view kMarker = "mini-run-demo-";

std::string self_exe() {
    std::array<char, 4096> buffer{};
    ssize_t length = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
    return length > 0 ? std::string(buffer.data(), static_cast<size_t>(length)) : std::string();
}

bool is_source_dir(const std::string& dir) {
    struct stat info {};
    return !dir.empty() &&
           ::stat((dir + "/rootfs-examples/busybox/config.json").c_str(), &info) == 0 &&
           ::stat((dir + "/scripts/make-rootfs.sh").c_str(), &info) == 0;
}

// $MINIRUN_SOURCE_DIR, a directory above the binary (build/ inside the source tree), or
// the source directory this binary was built from; none: an installed binary whose tree is
// gone. A $MINIRUN_SOURCE_DIR that is not one is an error: the caller asked for it.
Result<std::optional<std::string>> find_source_dir() {
    if (const char* env = std::getenv("MINIRUN_SOURCE_DIR"); env != nullptr && *env != '\0') {
        if (is_source_dir(env)) {
            return std::optional<std::string>(env);
        }
        return Error(cat("MINIRUN_SOURCE_DIR=", env,
                         " has no rootfs-examples/busybox/"
                         "config.json and scripts/make-rootfs.sh"));
    }
    std::string dir = self_exe();
    while (!dir.empty()) {
        dir = dir.substr(0, dir.rfind('/'));
        if (is_source_dir(dir)) {
            return std::optional<std::string>(dir);
        }
    }
#ifdef MINIRUN_SOURCE_DIR
    if (is_source_dir(MINIRUN_SOURCE_DIR)) {
        return std::optional<std::string>(MINIRUN_SOURCE_DIR);
    }
#endif
    return std::optional<std::string>();
}

Result<nlohmann::json> read_config(const std::string& path) {
    std::ifstream file(path);
    if (!file) {
        return Error(cat("cannot read ", path, ": ", std::strerror(errno)));
    }
    try {
        return nlohmann::json::parse(file);
    } catch (const nlohmann::json::exception& e) {
        return Error(cat(path, ": ", e.what()));
    }
}

// --bundle DIR: its config and its root.path, which must hold a shell for the scripts.
Status use_bundle(Context& context) {
    const std::string& dir = context.bundle;
    MR_ASSIGN(context.base_config, read_config(dir + "/config.json"));
    const auto& root = context.base_config["root"];
    if (!root.is_object() || !root.contains("path") || !root["path"].is_string()) {
        return Error(cat(dir, "/config.json: root.path: missing"));
    }
    std::string rootfs = root["path"].get<std::string>();
    rootfs = rootfs.starts_with('/') ? rootfs : cat(dir, "/", rootfs);
    char* absolute = ::realpath(rootfs.c_str(), nullptr);
    if (absolute == nullptr) {
        return Error(cat(dir, "/config.json: root.path: ", rootfs, ": ", std::strerror(errno)));
    }
    context.rootfs = absolute;
    std::free(absolute); // NOLINT(cppcoreguidelines-no-malloc): realpath's own allocation
    struct stat info {};
    if (::lstat((context.rootfs + "/bin/sh").c_str(), &info) != 0) {
        return Error(cat(dir, "/config.json: root.path: ", context.rootfs,
                         " has no /bin/sh for the demos' scripts"));
    }
    return {};
}

int remove_entry(const char* path, const struct stat* /*info*/, int type, FTW* /*ftw*/) {
    if (type == FTW_DP) {
        ::rmdir(path);
    } else {
        ::unlink(path);
    }
    return 0;
}

// Without a bundle: `mini-run spec`'s config, with stdio on pipes (no terminal) and
// without the ambient capabilities the demos' own sets would not carry.
Status use_default_config(Context& context) {
    context.base_config = nlohmann::json::parse(spec::default_spec_json(false, 0, 0));
    context.base_config["process"]["terminal"] = false;
    context.base_config["process"]["capabilities"].erase("ambient");
    return {};
}

} // namespace

// ---------------------------------------------------------------------------------------
// Context and session

Status prepare_context(Context& context) {
    context.self = self_exe();
    if (!context.bundle.empty()) {
        return use_bundle(context);
    }
    MR_ASSIGN(std::optional<std::string> source, find_source_dir());
    if (!source) {
        MR_ASSIGN(context.rootfs, make_rootfs(context));
        return use_default_config(context);
    }
    context.source_dir = *source;
    const std::string bundle = context.source_dir + "/rootfs-examples/busybox";
    context.rootfs = bundle + "/rootfs";
    struct stat info {};
    if (::stat((context.rootfs + "/bin/busybox").c_str(), &info) != 0) {
        context.out.note(
            cat("building the example rootfs: ", context.source_dir, "/scripts/make-rootfs.sh"));
        MR_ASSIGN(CommandResult built,
                  run_command({"/bin/sh", context.source_dir + "/scripts/make-rootfs.sh"},
                              *context.signals));
        if (built.exit_code != 0) {
            return Error(cat("scripts/make-rootfs.sh failed: ", trim(built.err)));
        }
    }
    MR_ASSIGN(context.base_config, read_config(bundle + "/config.json"));
    return {};
}

Status pause_here(const Context& context, std::string_view hint) {
    if (!context.step) {
        return {};
    }
    context.out.note(cat("[paused] ", hint));
    context.out.note("[paused] press Enter to go on");
    for (;;) {
        std::array<pollfd, 2> fds{{{context.signals->fd(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}}};
        if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) {
            return {};
        }
        MR_TRY(context.signals->check());
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) != 0) {
            std::array<char, 256> buffer{};
            ssize_t got = ::read(STDIN_FILENO, buffer.data(), buffer.size());
            if (got <= 0 || std::memchr(buffer.data(), '\n', static_cast<size_t>(got)) != nullptr) {
                return {};
            }
        }
    }
}

Session::Session(Context& context, std::string_view name) : context_(&context) {
    id_ = cat(kMarker, name, "-", ::getpid());
    config = context.base_config;
    config["root"]["path"] = context.rootfs;
    set_namespaces({});
}

Status Session::open() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = cat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/mini-run-demo.XXXXXX");
    if (::mkdtemp(templ.data()) == nullptr) {
        return Error(cat("mkdtemp ", templ, ": ", std::strerror(errno)));
    }
    dir_ = templ;
    // The container's root in a user namespace must reach a bind mount's source here.
    ::chmod(dir_.c_str(), 0755);
    ::mkdir(bundle().c_str(), 0755);
    return {};
}

Session::~Session() {
    cleanup();
}

void Session::set_namespaces(const std::vector<std::string>& types) {
    nlohmann::json list = nlohmann::json::array({{{"type", "mount"}}});
    auto has = [&](std::string_view type) {
        return std::find(types.begin(), types.end(), type) != types.end();
    };
    for (const auto& type : types) {
        if (type != "mount") {
            list.push_back({{"type", type}});
        }
    }
    config["linux"]["namespaces"] = list;
    if (has("uts")) {
        config["hostname"] = "mini-run-demo";
    } else {
        config.erase("hostname");
    }
    // An mqueue mount outside an ipc namespace of its own would show the host's queues.
    nlohmann::json mounts = nlohmann::json::array();
    for (const auto& mount : context_->base_config["mounts"]) {
        if (mount.value("type", "") != "mqueue" || has("ipc")) {
            mounts.push_back(mount);
        }
    }
    config["mounts"] = mounts;
}

void Session::add_capabilities(const std::vector<std::string>& caps) {
    for (const char* set : {"bounding", "effective", "permitted"}) {
        auto& list = config["process"]["capabilities"][set];
        for (const auto& cap : caps) {
            list.push_back(cap);
        }
    }
}

void Session::set_script(const std::string& script) {
    config["process"]["args"] = {"sh", "-c", script, id_};
}

Status Session::start(std::string_view marker) {
    std::ofstream(bundle() + "/config.json") << config.dump(4) << "\n";
    auto run = std::make_unique<Process>(*context_->signals);
    std::vector<std::string> argv = {context_->self, "--root", root(), "run"};
    if (context_->step) {
        // --step: the run stops at each step of its recipes too (explain.hpp), on the
        // terminal, for as long as the learner takes.
        argv.emplace_back("--explain=step");
    }
    argv.insert(argv.end(), {"--bundle", bundle(), id_});
    MR_TRY(run->start(argv, context_->step));
    run_ = std::move(run);
    if (!marker.empty()) {
        auto started = run_->wait_for(marker, context_->step ? Seconds(24 * 3600) : Seconds(30));
        if (!started && run_->err().find("(--explain=step)") != std::string::npos) {
            return interrupted(); // Ctrl-C at a card: the run has removed its container
        }
        if (!started) {
            return started.error();
        }
    }
    return {};
}

Result<pid_t> Session::init_pid() const {
    auto state = container_state(root(), id_);
    if (!state) {
        return Error(cat("mini-run state ", id_, ": ", state.error().message()));
    }
    auto pid = nlohmann::json::parse(*state).value("pid", 0);
    if (pid <= 0) {
        return Error(cat("mini-run state ", id_, ": no pid"));
    }
    return pid;
}

Status Session::resume(std::string_view marker) {
    MR_TRY(run_->send("go\n"));
    if (!marker.empty()) {
        MR_TRY(run_->wait_for(marker));
    }
    return {};
}

Status Session::finish() {
    MR_ASSIGN(int code, run_->wait());
    if (code != 0) {
        return Error(cat("the container exited with ", code, ": ", trim(run_->err())));
    }
    return {};
}

void Session::on_cleanup(std::string what, std::function<Status()> action) {
    cleanups_.emplace_back(std::move(what), std::move(action));
}

std::string Session::value(std::string_view key) const {
    std::string prefix = cat("@", key, " ");
    for (const auto& line : lines_of(run_ ? run_->out() : "")) {
        if (line.starts_with(prefix)) {
            return line.substr(prefix.size());
        }
    }
    return {};
}

std::vector<std::string> Session::block(std::string_view key) const {
    std::vector<std::string> out;
    bool in_block = false;
    for (const auto& line : lines_of(run_ ? run_->out() : "")) {
        if (in_block && line == "@end") {
            break;
        }
        if (in_block) {
            out.push_back(line);
        }
        in_block = in_block || line == cat("@", key);
    }
    return out;
}

void Session::cleanup() noexcept {
    if (dir_.empty()) {
        return; // never opened: nothing was made
    }
    try {
        std::vector<std::string> done;
        if (run_ && !run_->exited()) {
            // The container first (every process in it), then `run` itself, which deletes
            // the container once its process is gone.
            (void)kill_container(root(), id_, SIGKILL, true);
            if (!run_->wait(Seconds(10))) {
                run_->kill_and_reap();
            }
            done.emplace_back("stopped the container");
        }
        run_.reset();
        if (auto state = container_state(root(), id_); state) {
            (void)delete_container(root(), id_, true);
            done.emplace_back("deleted its state");
        }
        std::reverse(cleanups_.begin(), cleanups_.end()); // newest first
        for (auto& [what, action] : cleanups_) {
            if (Status status = action(); status) {
                done.push_back(what);
            } else {
                context_->out.bad(cat("cleanup: ", what, ": ", status.error().message()));
            }
        }
        remove_tree(dir_);
        done.push_back(cat("removed ", dir_));
        std::string list;
        for (const auto& item : done) {
            list += (list.empty() ? "" : "; ") + item;
        }
        context_->out.note(cat("cleanup: ", list));
    } catch (...) {
        // A destructor must not throw (std::bad_alloc, say); what was left is reported
        // above where possible.
    }
}

// ---------------------------------------------------------------------------------------
// Helpers

std::string host_ns(std::string_view name) {
    std::array<char, 256> buffer{};
    std::string path = cat("/proc/self/ns/", name);
    ssize_t length = ::readlink(path.c_str(), buffer.data(), buffer.size() - 1);
    return length > 0 ? std::string(buffer.data(), static_cast<size_t>(length)) : "(none)";
}

std::string read_text(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> lines;
    while (!text.empty()) {
        size_t end = text.find('\n');
        lines.emplace_back(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    return lines;
}

std::string trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
        text.remove_suffix(1);
    }
    return std::string(text);
}

std::string shell_quote(std::string_view text) {
    std::string out = "'";
    for (char c : text) {
        out += c == '\'' ? std::string(R"('\'')") : std::string(1, c);
    }
    return out + "'";
}

void remove_tree(const std::string& path) {
    if (!path.empty()) {
        ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    }
}

} // namespace minirun::cli::demo
