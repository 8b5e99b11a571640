#include "process.hpp"

#include "minirun/explain.hpp"
#include "minirun/fd.hpp"
#include "mountinfo.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>

namespace minirun::runtime::process {
namespace {

constexpr std::string_view kDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// 0 when `path` is an executable regular file for us, otherwise the errno execve would
// give.
int executable_error(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) < 0) {
        return errno;
    }
    if (S_ISDIR(info.st_mode)) {
        return EACCES;
    }
    if (::access(path.c_str(), X_OK) < 0) {
        return errno;
    }
    return 0;
}

} // namespace

std::string search_path(const std::vector<std::string>& env) {
    std::string path(kDefaultPath);
    for (const std::string& entry : env) {
        if (entry.starts_with("PATH=")) {
            path = entry.substr(5);
        }
    }
    return path;
}

Result<std::string> find_executable(const spec::Process& process) {
    const std::string& name = process.args.front();
    if (name.find('/') != std::string::npos) {
        if (int error = executable_error(name); error != 0) {
            return Error::from_errno(error, cat("exec: ", quoted(name)));
        }
        return name;
    }
    int first_error = ENOENT;
    std::string path = search_path(process.env);
    for (std::string_view dir : fs::split(path, ':')) {
        // An empty PATH entry means the current directory, as in execvp(3).
        std::string candidate = cat(dir.empty() ? "." : dir, "/", name);
        int error = executable_error(candidate);
        if (error == 0) {
            return candidate;
        }
        if (error == EACCES && first_error == ENOENT) {
            first_error = EACCES;
        }
    }
    if (first_error == EACCES) {
        return Error::from_errno(EACCES, cat("exec: ", quoted(name)));
    }
    // Both runc's and crun's wordings, which podman and containerd match on.
    return Error(ENOENT, cat("exec: ", quoted(name),
                             ": executable file not found in $PATH: No such file or directory"));
}

namespace {

Status check_cwd_inside(const spec::Process& process) {
    std::array<char, PATH_MAX> here{};
    if (::getcwd(here.data(), here.size()) == nullptr || here[0] != '/') {
        return Error(EPERM, cat("process.cwd: ", quoted(process.cwd), " is outside the container"));
    }
    return {};
}

} // namespace

Status enter_cwd(const spec::Process& process) {
    if (::chdir(process.cwd.c_str()) < 0) {
        return Error::from_errno(cat("process.cwd: chdir ", quoted(process.cwd)));
    }
    return check_cwd_inside(process);
}

Result<bool> try_enter_cwd(const spec::Process& process) {
    if (::chdir(process.cwd.c_str()) < 0) {
        if (errno == EACCES || errno == EPERM) {
            return false;
        }
        return Error::from_errno(cat("process.cwd: chdir ", quoted(process.cwd)));
    }
    MR_TRY(check_cwd_inside(process));
    return true;
}

Status close_inherited_fds(int preserve_fds, std::vector<int> keep) {
    auto close_range = [](unsigned first, unsigned last) {
        return ::syscall(SYS_close_range, first, last, 0U);
    };
    std::sort(keep.begin(), keep.end());
    auto next = static_cast<unsigned>(3 + preserve_fds);
    for (int fd : keep) {
        if (fd < 0 || static_cast<unsigned>(fd) < next) {
            continue;
        }
        if (static_cast<unsigned>(fd) > next &&
            close_range(next, static_cast<unsigned>(fd) - 1) < 0) {
            return Error::from_errno("close inherited fds");
        }
        next = static_cast<unsigned>(fd) + 1;
    }
    if (close_range(next, ~0U) < 0) {
        return Error::from_errno("close inherited fds");
    }
    return {};
}

Status PreparedExec::prepare(const std::string& path, const spec::Process& process,
                             int preserve_fds, const ExecGate& gate) {
    path_ = path;
    gate_ = gate;
    gate_words_.clear();
    if (gate.program >= 0) {
        // The gate's command line (exec_gate/stub.cpp): sync socket, fifo, executable, argv.
        gate_words_ = {std::to_string(gate.report_to), std::to_string(gate.start_fifo), path};
    }
    argv_.clear();
    argv_.reserve(gate_words_.size() + process.args.size() + 1);
    // execve's prototype predates const; it does not write through these pointers.
    for (std::string& word : gate_words_) {
        argv_.push_back(word.data());
    }
    for (const std::string& arg : process.args) {
        argv_.push_back(
            const_cast<char*>(arg.c_str())); // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }
    argv_.push_back(nullptr);
    envp_.clear();
    envp_.reserve(process.env.size() + 1);
    for (const std::string& entry : process.env) {
        envp_.push_back(
            const_cast<char*>(entry.c_str())); // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }
    envp_.push_back(nullptr);

    // Callers leak fds into runtimes (containerd's shim socket, a shell's fd 10): none may
    // reach the container. Marking them close-on-exec rather than closing them keeps our
    // own sync socket usable to report a failing execve.
    auto first = static_cast<unsigned>(3 + preserve_fds);
    if (::syscall(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
        return Error::from_errno("mark inherited fds close-on-exec");
    }
    // The gate's two fds must outlive its execve; the gate marks them close-on-exec again.
    for (int fd : {gate.report_to, gate.start_fifo}) {
        if (gate.program >= 0 && fd >= 0 && ::fcntl(fd, F_SETFD, 0) < 0) {
            return Error::from_errno("keep an fd open for the exec gate");
        }
    }
    explanation_.clear();
    if (explain::enabled()) {
        explanation_ =
            (cat(gate.program < 0       ? ""
                 : gate.start_fifo >= 0 ? "execveat(exec gate), which waits for start, then "
                                        : "execveat(exec gate), then ",
                 "execve(", quoted(path), ", ", process.args.size(), " args, ", process.env.size(),
                 " env): the container's process"));
    }
    return {};
}

Status PreparedExec::run() const {
    if (gate_.program < 0) {
        ::execve(path_.c_str(), argv_.data(), envp_.data());
        return Error::from_errno(cat("exec ", quoted(path_)));
    }
    ::execveat(gate_.program, "", argv_.data(), envp_.data(), AT_EMPTY_PATH);
    return Error::from_errno("exec the exec gate");
}

} // namespace minirun::runtime::process
