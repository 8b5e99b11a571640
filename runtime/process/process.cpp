#include "process/process.hpp"

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
#include <cctype>
#include <climits>
#include <cstring>
#include <set>

namespace minirun::runtime::process {
namespace {

constexpr std::string_view kDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// strerror(3) as Go spells it ("no such file or directory"). Docker 20.10 turns a failed
// start into exit 127 or 126 by matching runc's wording case-sensitively (daemon/start.go:
// "no such file or directory", "executable file not found", "permission denied"), so the
// exec failures below are worded exactly as runc's (Go's exec.LookPath and os.PathError).
std::string go_error_text(int error) {
    std::string text = std::strerror(error);
    if (!text.empty()) {
        text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
    }
    return text;
}

// What Go's exec.LookPath checks of a candidate: it exists, is not a directory and has an
// execute bit; otherwise the error runc reports. The mode bits, not access(2): runc passes
// a file that only execve itself can refuse, and so do we.
Status check_executable(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) < 0) {
        int error = errno;
        return Error(error, cat("stat ", path, ": ", go_error_text(error)));
    }
    if (S_ISDIR(info.st_mode) || (info.st_mode & 0111) == 0) {
        return Error(EACCES, go_error_text(EACCES));
    }
    return {};
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

std::vector<std::string> dedup_env(const std::vector<std::string>& env) {
    // Backwards, so that the first entry seen of a name is its last one.
    std::vector<std::string> kept;
    std::set<std::string_view> seen;
    std::for_each(env.rbegin(), env.rend(), [&](const std::string& entry) {
        std::string_view name = std::string_view(entry).substr(0, entry.find('='));
        if (seen.insert(name).second && entry != "HOME=") {
            kept.push_back(entry);
        }
    });
    std::reverse(kept.begin(), kept.end());
    return kept;
}

Result<std::string> find_executable(const spec::Process& process) {
    const std::string& name = process.args.front();
    if (name.find('/') != std::string::npos) {
        if (Status checked = check_executable(name); !checked.ok()) {
            // runc: exec: "/x": stat /x: no such file or directory
            return checked.error().wrap(cat("exec: ", quoted(name)));
        }
        return name;
    }
    std::string path = search_path(process.env);
    for (std::string_view dir : fs::split(path, ':')) {
        // An empty PATH entry means the current directory, as in execvp(3).
        std::string candidate = cat(dir.empty() ? "." : dir, "/", name);
        if (check_executable(candidate).ok()) {
            return candidate;
        }
    }
    // runc (Go's LookPath) says "not found" also when only unusable files were found.
    return Error(ENOENT, cat("exec: ", quoted(name), ": executable file not found in $PATH"));
}

std::string home_in_passwd(std::string_view passwd, uid_t uid) {
    std::string wanted = std::to_string(uid);
    for (std::string_view line : fs::split(passwd, '\n')) {
        // name:password:uid:gid:gecos:home:shell
        auto fields = fs::split(line, ':');
        if (fields.size() >= 6 && fields[2] == wanted && !fields[5].empty()) {
            return std::string(fields[5]);
        }
    }
    return "/";
}

std::string missing_home(const spec::Process& process) {
    for (const std::string& entry : dedup_env(process.env)) {
        if (entry.starts_with("HOME=")) {
            return ""; // dedup_env keeps a HOME only when the last one is not empty
        }
    }
    // The container's file: a FIFO or /dev/zero behind it must not hang or fill memory.
    constexpr size_t kMaxPasswd = size_t{4} << 20;
    std::string passwd;
    UniqueFd fd(::open("/etc/passwd", O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    struct stat info {};
    if (fd && ::fstat(fd.get(), &info) == 0 && S_ISREG(info.st_mode) &&
        static_cast<size_t>(info.st_size) <= kMaxPasswd) {
        passwd.resize(static_cast<size_t>(info.st_size));
        ssize_t got = ::read(fd.get(), passwd.data(), passwd.size());
        passwd.resize(got > 0 ? static_cast<size_t>(got) : 0);
    }
    return cat("HOME=", home_in_passwd(passwd, process.user.uid));
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

Status enter_cwd(const spec::Process& process, Syscalls& sys) {
    MR_TRY(checked(sys.chdir(process.cwd), cat("process.cwd: chdir ", quoted(process.cwd))));
    return check_cwd_inside(process);
}

Result<bool> try_enter_cwd(const spec::Process& process, Syscalls& sys) {
    if (auto entered = sys.chdir(process.cwd); !entered) {
        int error = entered.error().errno_value();
        if (error == EACCES || error == EPERM) {
            return false;
        }
        return Error::from_errno(error, cat("process.cwd: chdir ", quoted(process.cwd)));
    }
    MR_TRY(check_cwd_inside(process));
    return true;
}

Status close_inherited_fds(int preserve_fds, std::vector<int> keep, Syscalls& sys) {
    std::sort(keep.begin(), keep.end());
    auto next = static_cast<unsigned>(3 + preserve_fds);
    for (int fd : keep) {
        if (fd < 0 || static_cast<unsigned>(fd) < next) {
            continue;
        }
        if (static_cast<unsigned>(fd) > next) {
            // The call's own error, not errno: a Syscalls need not set it (the fake does not).
            MR_TRY_WRAP(sys.close_range(next, static_cast<unsigned>(fd) - 1, 0U),
                        "close inherited fds");
        }
        next = static_cast<unsigned>(fd) + 1;
    }
    MR_TRY_WRAP(sys.close_range(next, ~0U, 0U), "close inherited fds");
    return {};
}

Status mark_inherited_cloexec(unsigned first, Syscalls& sys) {
    Status ranged = sys.close_range(first, ~0U, CLOSE_RANGE_CLOEXEC);
    if (ranged) {
        return {};
    }
    int error = ranged.error().errno_value();
    // Without no_new_privs the container's filter is already on (security.cpp), and a
    // profile written before close_range (Linux 5.9) refuses it: EPERM (the default action
    // SCMP_ACT_ERRNO) or ENOSYS (defaultErrnoRet 38, as runc's seccomp.bats and Docker's
    // profile answer unknown calls). EINVAL: a kernel before 5.11, without
    // CLOSE_RANGE_CLOEXEC. runc then marks each fd of /proc/self/fd (CloseExecFrom's
    // fdRangeFrom), and so do we.
    if (error != EPERM && error != ENOSYS && error != EINVAL) {
        return Error::from_errno(error, "mark inherited fds close-on-exec");
    }
    MR_TRY_WRAP(sys.cloexec_fds_from(first),
                cat("mark inherited fds close-on-exec (close_range: ", std::strerror(error), ")"));
    return {};
}

Status PreparedExec::prepare(const std::string& path, const spec::Process& process,
                             int preserve_fds, std::string_view home, Syscalls& sys,
                             const ExecGate& gate) {
    path_ = path;
    home_ = home;
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
    env_ = dedup_env(process.env);
    envp_.clear();
    envp_.reserve(env_.size() + 2);
    for (std::string& entry : env_) {
        envp_.push_back(entry.data());
    }
    if (!home_.empty()) {
        envp_.push_back(home_.data());
    }
    envp_.push_back(nullptr);

    // Callers leak fds into runtimes (containerd's shim socket, a shell's fd 10): none may
    // reach the container. Marking them close-on-exec rather than closing them keeps our
    // own sync socket usable to report a failing execve.
    MR_TRY(mark_inherited_cloexec(static_cast<unsigned>(3 + preserve_fds), sys));
    // The gate's two fds must outlive its execve; the gate marks them close-on-exec again.
    // fcntl: allowed by every seccomp profile, and this may run under one already.
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
                 "execve(", quoted(path), ", ", process.args.size(), " args, ", env_.size(),
                 " env): the container's process"));
    }
    return {};
}

std::vector<std::string> PreparedExec::environment() const {
    std::vector<std::string> env = env_;
    if (!home_.empty()) {
        env.push_back(home_);
    }
    return env;
}

Status PreparedExec::run(Syscalls& sys) const {
    if (gate_.program < 0) {
        Status failed = sys.execve(-1, path_, argv_.data(), envp_.data());
        int error = failed.ok() ? 0 : failed.error().errno_value();
        if (error == 0) {
            return {}; // only a fake's execve returns without an error
        }
        // runc: exec /x: exec format error (the gate, exec_gate/stub.cpp, words it the same)
        return Error(error, cat("exec ", path_, ": ", go_error_text(error)));
    }
    Status failed = sys.execve(gate_.program, "", argv_.data(), envp_.data());
    int error = failed.ok() ? 0 : failed.error().errno_value();
    if (error == EPERM || error == ENOSYS) {
        // execveat (Linux 3.19) refused by the container's seccomp filter, which is on by
        // now: a profile that lacks it (EPERM, or ENOSYS as runc's seccomp.bats answers
        // unknown calls). The same file through the container's /proc, as glibc's
        // fexecve falls back; an execve the profile refuses fails the container anyway.
        Status again =
            sys.execve(-1, cat("/proc/self/fd/", gate_.program), argv_.data(), envp_.data());
        if (again.ok()) {
            return {}; // only a fake's execve returns without an error
        }
        if (again.error().errno_value() != ENOENT) {
            failed = again; // ENOENT: no /proc in the container; report execveat's refusal
        }
    }
    if (failed.ok()) {
        return {};
    }
    return checked(failed, "exec the exec gate");
}

} // namespace minirun::runtime::process
