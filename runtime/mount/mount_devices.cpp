// /dev: the default devices every container gets, linux.devices, and the standard links.
//
// runtime-spec's default devices are null, zero, full, random, urandom and tty, plus
// /dev/ptmx pointing at the container's own devpts instance and the /dev/fd, stdin, stdout
// and stderr links into /proc/self/fd. Outside a user namespace they are made with
// mknod(2). Inside a user namespace mknod is refused (a user namespace must not create
// access to devices), so the host's nodes are bind-mounted onto empty files instead. That
// holds both for a container with its own user namespace and for a rootless caller, which
// is already in one when it starts (rootless podman runs its runtime as root of a user
// namespace of its own, and the container may have none of its own).
#include "fs.hpp"
#include "minirun/explain.hpp"
#include "minirun/rootless.hpp"
#include "mount/mount.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>

namespace minirun::runtime::mount {
namespace {

spec::Device char_device(const char* path, int64_t major, int64_t minor) {
    spec::Device device;
    device.type = 'c';
    device.path = path;
    device.major = major;
    device.minor = minor;
    device.file_mode = 0666;
    device.uid = 0;
    device.gid = 0;
    return device;
}

mode_t type_bits(char type) {
    switch (type) {
    case 'b':
        return S_IFBLK;
    case 'p':
        return S_IFIFO;
    default:
        return S_IFCHR;
    }
}

// An existing node is accepted only if it is exactly the device asked for; anything else
// at that path (a file, a symlink, another device) is an error, not silently replaced.
Status check_existing(int dir_fd, const std::string& name, const spec::Device& device) {
    struct stat existing {};
    if (::fstatat(dir_fd, name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) < 0) {
        return Error::from_errno(cat("stat ", device.path));
    }
    bool same =
        (existing.st_mode & S_IFMT) == type_bits(device.type) &&
        (device.type == 'p' || (static_cast<int64_t>(major(existing.st_rdev)) == device.major &&
                                static_cast<int64_t>(minor(existing.st_rdev)) == device.minor));
    if (!same) {
        return Error(EEXIST, cat(device.path, " exists and is not the requested device"));
    }
    return {};
}

// The directory the last node or link went into, kept open: all the default devices and
// links go into /dev, which is then resolved inside the rootfs once, not a dozen times.
// Nothing else runs in this mount namespace meanwhile to move it.
class DeviceDir {
public:
    Result<int> open(int root_fd, const std::string& path) {
        if (!fd_ || path_ != path) {
            MR_ASSIGN(fd_, fs::mkdir_all_in_root(root_fd, path, 0755));
            path_ = path;
        }
        return fd_.get();
    }

private:
    std::string path_;
    UniqueFd fd_;
};

Status make_node(int root_fd, const spec::Device& device, DeviceDir& dirs, Syscalls& sys) {
    auto [parent, name] = fs::split_parent(fs::clean_path(device.path));
    MR_ASSIGN(int dir, dirs.open(root_fd, parent));
    mode_t mode = type_bits(device.type) | (device.file_mode.value_or(0666) & 07777);
    dev_t number =
        makedev(static_cast<unsigned>(device.major), static_cast<unsigned>(device.minor));
    auto made = sys.mknodat(dir, name, mode, number);
    if (!made) {
        if (made.error().errno_value() != EEXIST) {
            return made;
        }
        return check_existing(dir, name, device);
    }
    return sys.fchownat(dir, name, device.uid.value_or(0), device.gid.value_or(0),
                        AT_SYMLINK_NOFOLLOW);
}

// The directory is resolved inside the root (a /dev that is a symlink leads where it
// leads there, never out); the node's own name is never followed: a /dev/null planted as a
// symlink to a procfs file of the container (CVE-2025-31133's) is refused, not covered.
Status bind_host_node(int root_fd, const spec::Device& device, DeviceDir& dirs, Syscalls& sys) {
    auto [parent, name] = fs::split_parent(fs::clean_path(device.path));
    MR_ASSIGN(int dir, dirs.open(root_fd, parent));
    MR_ASSIGN(UniqueFd target, fs::file_mount_point(dir, name, 0644, device.path));
    return sys.mount_on(device.path, target.get(), "", MS_BIND, "");
}

Status add_links(int root_fd, DeviceDir& dirs, Syscalls& sys) {
    struct Link {
        const char* name;
        const char* target;
    };
    constexpr std::array<Link, 5> kLinks = {{
        {"fd", "/proc/self/fd"},
        {"stdin", "/proc/self/fd/0"},
        {"stdout", "/proc/self/fd/1"},
        {"stderr", "/proc/self/fd/2"},
        // Every devpts instance has its own ptmx; the link makes openpty() inside the
        // container use the container's instance, not a host one.
        {"ptmx", "pts/ptmx"},
    }};
    MR_ASSIGN(int dev, dirs.open(root_fd, "/dev"));
    for (const Link& link : kLinks) {
        if (std::string_view(link.name) == "ptmx") {
            ::unlinkat(dev, link.name, 0);
        }
        auto linked = sys.symlinkat(link.target, dev, link.name);
        if (!linked && linked.error().errno_value() != EEXIST) {
            return linked;
        }
    }
    return {};
}

} // namespace

Status create_devices(const Plan& plan, int root_fd, Syscalls& sys) {
    std::vector<spec::Device> devices = {
        char_device("/dev/null", 1, 3),    char_device("/dev/zero", 1, 5),
        char_device("/dev/full", 1, 7),    char_device("/dev/random", 1, 8),
        char_device("/dev/urandom", 1, 9), char_device("/dev/tty", 5, 0),
    };
    devices.insert(devices.end(), plan.devices.begin(), plan.devices.end());
    bool in_user_namespace = plan.has_own(spec::NamespaceType::user) || rootless::active();
    if (explain::enabled()) {
        explain::step(cat(in_user_namespace ? "mount(host node, MS_BIND)" : "mknodat", " for ",
                          devices.size(), " devices, and the /dev/fd, stdin, ... links"));
    }
    DeviceDir dirs;
    for (const spec::Device& device : devices) {
        // /dev/ptmx is always the link into the container's devpts (add_links), as runc
        // makes it whatever linux.devices lists: a node made for it would only be replaced,
        // and a host node bound there (in a user namespace) could not be, being a mount
        // point, and would open the host's devpts instance, not the container's.
        if (fs::clean_path(device.path) == "/dev/ptmx") {
            continue;
        }
        auto created = in_user_namespace ? bind_host_node(root_fd, device, dirs, sys)
                                         : make_node(root_fd, device, dirs, sys);
        if (!created) {
            return created.error().wrap(device.path);
        }
    }
    // With a terminal, the pty's slave is bound onto /dev/console after pivot_root
    // (terminal.cpp); its mount point is made now, while a read-only /dev is still writable,
    // and as there: never through a symlink at /dev/console.
    if (plan.process.terminal) {
        MR_ASSIGN(int dev, dirs.open(root_fd, "/dev"));
        MR_TRY(fs::file_mount_point(dev, "console", 0600, "/dev/console"));
    }
    return add_links(root_fd, dirs, sys);
}

namespace {

bool is_dev_null(const struct stat& info) {
    return S_ISCHR(info.st_mode) && info.st_rdev == makedev(1, 3);
}

// The container's /dev/null, opened read-write: /dev resolved inside the root, the name
// never followed; looked at through O_PATH first (opening some other device could do
// something), then opened and checked again to be that same null device.
Result<UniqueFd> open_dev_null() {
    UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) {
        return Error::from_errno("open /");
    }
    MR_ASSIGN(UniqueFd dev, fs::open_in_root(root.get(), "/dev", O_PATH | O_DIRECTORY));
    UniqueFd path(::openat(dev.get(), "null", O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat looked {};
    if (!path || ::fstat(path.get(), &looked) < 0) {
        return Error::from_errno("open /dev/null");
    }
    if (!is_dev_null(looked)) {
        return Error(EPERM, "/dev/null in the container is not the null device (1:3)");
    }
    UniqueFd null(::openat(dev.get(), "null", O_RDWR | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC));
    struct stat opened {};
    if (!null || ::fstat(null.get(), &opened) < 0) {
        return Error::from_errno("open /dev/null");
    }
    if (!is_dev_null(opened) || opened.st_ino != looked.st_ino || opened.st_dev != looked.st_dev) {
        return Error(EPERM, "/dev/null in the container changed while it was opened");
    }
    return null;
}

} // namespace

Status reopen_stdio_on_dev_null(const Plan& plan) {
    if (!plan.setup_dev) {
        return {}; // a /dev bound from elsewhere is the user's, as with runc
    }
    UniqueFd null;
    for (int fd = 0; fd <= 2; ++fd) {
        struct stat info {};
        if (::fstat(fd, &info) < 0) {
            if (errno == EBADF) {
                continue; // closed: nothing to replace
            }
            return Error::from_errno(cat("stdio: fstat fd ", fd));
        }
        if (!is_dev_null(info)) {
            continue;
        }
        if (!null) {
            MR_ASSIGN(null, open_dev_null());
        }
        if (::dup3(null.get(), fd, 0) < 0) {
            return Error::from_errno(cat("stdio: /dev/null as fd ", fd));
        }
    }
    return {};
}

} // namespace minirun::runtime::mount
