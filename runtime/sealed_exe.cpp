#include "sealed_exe.hpp"

#include "minirun/fd.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace minirun::runtime {
namespace {

// Every seal: no writes, no size change, and no way to lift them.
constexpr int kSeals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;

#ifndef MFD_EXEC
constexpr unsigned int MFD_EXEC = 0x0010U; // Linux 6.3: executable memfd, explicitly
#endif

int memfd(unsigned int flags) {
    return static_cast<int>(::syscall(SYS_memfd_create, "mini-run", flags));
}

} // namespace

Status ensure_sealed_binary(char** argv) {
    UniqueFd self(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    if (!self) {
        return Error::from_errno("open /proc/self/exe");
    }
    int seals = ::fcntl(self.get(), F_GET_SEALS);
    if (seals >= 0 && (seals & kSeals) == kSeals) {
        return {};
    }
    struct stat info {};
    if (::fstat(self.get(), &info) < 0) {
        return Error::from_errno("stat /proc/self/exe");
    }
    // MFD_EXEC where the kernel knows it (a vm.memfd_noexec policy may demand it).
    UniqueFd copy(memfd(MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC));
    if (!copy && errno == EINVAL) {
        copy.reset(memfd(MFD_CLOEXEC | MFD_ALLOW_SEALING));
    }
    if (!copy) {
        return Error::from_errno("memfd_create for a sealed copy of mini-run");
    }
    for (off_t done = 0; done < info.st_size;) {
        ssize_t sent =
            ::sendfile(copy.get(), self.get(), &done, static_cast<size_t>(info.st_size - done));
        if (sent <= 0) {
            if (sent < 0 && errno == EINTR) {
                continue;
            }
            return Error::from_errno("copy mini-run into a sealed memfd");
        }
    }
    if (::fcntl(copy.get(), F_ADD_SEALS, kSeals) < 0) {
        return Error::from_errno("seal the copy of mini-run");
    }
    ::fexecve(copy.get(), argv, environ);
    return Error::from_errno("exec the sealed copy of mini-run");
}

} // namespace minirun::runtime
