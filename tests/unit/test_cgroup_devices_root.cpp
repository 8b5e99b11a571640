// The device allow-list on a real cgroup2 directory: attach_device_program's program is
// enforced on a process inside it, and an update replaces it (root, cgroup2 at
// /sys/fs/cgroup/unified). The rules' meaning is tested without root in
// test_cgroup_devices.cpp.
#include "cgroup/cgroup_devices.hpp"
#include "cgroup_device_rules.hpp"

#include "minirun/fd.hpp"

#include "skips.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>

using minirun::UniqueFd;
using minirun::runtime::cgroup::attach_device_program;
using minirun::runtime::cgroup::effective_device_rules;
namespace spec = minirun::spec;
using namespace minirun::testing::device_rules;

// ---- attach_device_program, for real ----

namespace {

constexpr const char* unified_mount = "/sys/fs/cgroup/unified";

bool is_cgroup2(const char* path) {
    struct statfs fs {};
    return ::statfs(path, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

// The number of device programs attached to the directory itself.
long attached_count(int dir_fd) {
    std::array<uint32_t, 64> ids{};
    bpf_attr attr{};
    attr.query.target_fd = static_cast<uint32_t>(dir_fd);
    attr.query.attach_type = BPF_CGROUP_DEVICE;
    attr.query.prog_ids = reinterpret_cast<uintptr_t>(ids.data());
    attr.query.prog_cnt = ids.size();
    if (::syscall(SYS_bpf, BPF_PROG_QUERY, &attr, sizeof(attr)) < 0) {
        return -1;
    }
    return attr.query.prog_cnt;
}

// The errno of each open (0: it worked), from a child that moved itself into the cgroup.
struct Opens {
    int null_rdwr = -1;
    int zero_rdonly = -1;
    int urandom_rdonly = -1;
    int full_rdonly = -1;
};

// A scratch cgroup2 directory, removed (after its processes are gone) whatever happens.
class ScratchCgroup {
public:
    ScratchCgroup()
        : path_(std::string(unified_mount) + "/mini-run-devtest-" + std::to_string(::getpid())) {
        ::rmdir(path_.c_str()); // left over from a crashed run with the same pid
        if (::mkdir(path_.c_str(), 0755) == 0) {
            made_ = true;
            dir_.reset(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        }
    }
    ScratchCgroup(const ScratchCgroup&) = delete;
    ScratchCgroup& operator=(const ScratchCgroup&) = delete;
    ~ScratchCgroup() {
        dir_.reset();
        if (made_) {
            ::rmdir(path_.c_str());
        }
    }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] int fd() const { return dir_.get(); }

private:
    std::string path_;
    bool made_ = false;
    UniqueFd dir_;
};

// Forks a child that joins the cgroup, tries the opens and writes the errnos to a pipe.
// The child is always reaped before this returns, so the cgroup can be removed.
std::optional<Opens> opens_inside(const std::string& cgroup) {
    std::array<int, 2> pipe_fds{};
    if (::pipe2(pipe_fds.data(), O_CLOEXEC) != 0) {
        return std::nullopt;
    }
    UniqueFd reader(pipe_fds[0]);
    UniqueFd writer(pipe_fds[1]);
    const std::string procs = cgroup + "/cgroup.procs";
    const pid_t child = ::fork();
    if (child < 0) {
        return std::nullopt;
    }
    if (child == 0) {
        reader.reset();
        const int procs_fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
        if (procs_fd < 0 || ::write(procs_fd, "0", 1) != 1) {
            ::_exit(2);
        }
        ::close(procs_fd);
        auto try_open = [](const char* path, int flags) {
            const int fd = ::open(path, flags | O_CLOEXEC);
            if (fd < 0) {
                return errno;
            }
            ::close(fd);
            return 0;
        };
        Opens result;
        result.null_rdwr = try_open("/dev/null", O_RDWR);
        result.zero_rdonly = try_open("/dev/zero", O_RDONLY);
        result.urandom_rdonly = try_open("/dev/urandom", O_RDONLY);
        result.full_rdonly = try_open("/dev/full", O_RDONLY);
        const bool sent =
            ::write(writer.get(), &result, sizeof(result)) == static_cast<ssize_t>(sizeof(result));
        ::_exit(sent ? 0 : 3);
    }
    writer.reset();
    Opens result;
    const ssize_t got = ::read(reader.get(), &result, sizeof(result));
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (got != static_cast<ssize_t>(sizeof(result)) || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        return std::nullopt;
    }
    return result;
}

} // namespace

TEST_CASE("cgroup devices: attached program is enforced and an update replaces it",
          "[cgroup-devices-root]") {
    if (::geteuid() != 0) {
        minirun_tests::skip_test("needs root");
        return;
    }
    if (!is_cgroup2(unified_mount)) {
        minirun_tests::skip_test(std::string(unified_mount) + " is not a cgroup2 mount");
        return;
    }
    ScratchCgroup cgroup;
    REQUIRE(cgroup.fd() >= 0);

    const Rules first{deny_all(), allow("c", 1, 3, "rw"), allow("c", 1, 9, "r")};
    const minirun::Status attached = attach_device_program(cgroup.fd(), first);
    INFO((attached.ok() ? std::string() : attached.error().message()));
    REQUIRE(attached.ok());
    CHECK(attached_count(cgroup.fd()) == 1);

    const auto before = opens_inside(cgroup.path());
    REQUIRE(before.has_value());
    CHECK(before->null_rdwr == 0);
    CHECK(before->zero_rdonly == EPERM);
    CHECK(before->urandom_rdonly == 0);
    CHECK(before->full_rdonly == EPERM);

    const Rules second{deny_all(), allow("c", 1, 3, "rw"), allow("c", 1, 5, "r")};
    const minirun::Status updated = attach_device_program(cgroup.fd(), second);
    INFO((updated.ok() ? std::string() : updated.error().message()));
    REQUIRE(updated.ok());
    CHECK(attached_count(cgroup.fd()) == 1); // the old program is gone

    const auto after = opens_inside(cgroup.path());
    REQUIRE(after.has_value());
    CHECK(after->null_rdwr == 0);
    CHECK(after->zero_rdonly == 0);
    CHECK(after->urandom_rdonly == EPERM);
    CHECK(after->full_rdonly == EPERM);

    // The verifier takes every kind of block: partial denies, type "a" with numbers, an
    // allow-all that ends the program, and runc's defaults.
    const Rules mixed{allow("a", any, any, "rwm"), deny("c", 1, any, "w"), deny("a", 1, 7, "r"),
                      allow("b", 8, any, "m")};
    const minirun::Status replaced = attach_device_program(cgroup.fd(), mixed);
    INFO((replaced.ok() ? std::string() : replaced.error().message()));
    REQUIRE(replaced.ok());
    spec::Linux podman;
    podman.resources.emplace();
    podman.resources->devices = {deny_all(), allow("c", 10, 229, "rwm")};
    const minirun::Status defaults =
        attach_device_program(cgroup.fd(), effective_device_rules(podman));
    INFO((defaults.ok() ? std::string() : defaults.error().message()));
    REQUIRE(defaults.ok());
    CHECK(attached_count(cgroup.fd()) == 1);
    const auto last = opens_inside(cgroup.path());
    REQUIRE(last.has_value());
    CHECK(last->null_rdwr == 0);
    CHECK(last->zero_rdonly == 0);
    CHECK(last->full_rdonly == 0);
}
