#include "minirun/explain.hpp"

#include "minirun/error.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <new>
#include <utility>

namespace minirun::explain {
namespace {

struct Shared {
    std::atomic<unsigned> counter{0};
};

// The counter lives in a shared anonymous page: clone() without CLONE_VM copies ordinary
// memory, but a MAP_SHARED mapping stays one page for the runtime and its init.
Shared* shared = nullptr;   // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
unsigned local_counter = 0; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
pid_t enabling_pid = 0;     // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

unsigned next_number() {
    if (shared != nullptr) {
        return shared->counter.fetch_add(1, std::memory_order_relaxed) + 1;
    }
    return ++local_counter;
}

void write_all(std::string_view text) {
    while (!text.empty()) {
        ssize_t written = ::write(STDERR_FILENO, text.data(), text.size());
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        text.remove_prefix(static_cast<size_t>(written));
    }
}

template <size_t N>
std::string flag_names(unsigned long flags,
                       const std::array<std::pair<unsigned long, const char*>, N>& names) {
    if (flags == 0) {
        return "0";
    }
    std::string out;
    for (const auto& [bit, name] : names) {
        if ((flags & bit) == bit) {
            out += out.empty() ? "" : "|";
            out += name;
            flags &= ~bit;
        }
    }
    if (flags != 0) {
        out += out.empty() ? "" : "|";
        std::array<char, 24> hex{};
        int length = std::snprintf(hex.data(), hex.size(), "%#lx", flags);
        out.append(hex.data(), static_cast<size_t>(length));
    }
    return out;
}

} // namespace

void enable() {
    detail::on = true;
    enabling_pid = ::getpid();
    if (shared == nullptr) {
        void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page != MAP_FAILED) {
            shared = new (page) Shared(); // a fresh page is all zeros; this makes it official
        }
    }
}

std::string format_line(unsigned number, std::string_view who, std::string_view what) {
    return cat("[explain] ", number, ". ", who, ": ", what, "\n");
}

void step(std::string_view what) {
    if (!enabled()) {
        return;
    }
    // The init is a clone: another pid (1 in a new pid namespace).
    std::string_view who = ::getpid() == enabling_pid ? "runtime" : "init";
    write_all(format_line(next_number(), who, what));
}

std::string clone_flag_names(unsigned long flags) {
    static constexpr std::array<std::pair<unsigned long, const char*>, 8> kNames = {{
        {CLONE_NEWNS, "CLONE_NEWNS"},
        {CLONE_NEWUTS, "CLONE_NEWUTS"},
        {CLONE_NEWIPC, "CLONE_NEWIPC"},
        {CLONE_NEWPID, "CLONE_NEWPID"},
        {CLONE_NEWNET, "CLONE_NEWNET"},
        {CLONE_NEWUSER, "CLONE_NEWUSER"},
        {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
        {CLONE_NEWTIME, "CLONE_NEWTIME"},
    }};
    return flag_names(flags, kNames);
}

std::string mount_flag_names(unsigned long flags) {
    static constexpr std::array<std::pair<unsigned long, const char*>, 21> kNames = {{
        {MS_RDONLY, "MS_RDONLY"},
        {MS_NOSUID, "MS_NOSUID"},
        {MS_NODEV, "MS_NODEV"},
        {MS_NOEXEC, "MS_NOEXEC"},
        {MS_SYNCHRONOUS, "MS_SYNCHRONOUS"},
        {MS_REMOUNT, "MS_REMOUNT"},
        {MS_MANDLOCK, "MS_MANDLOCK"},
        {MS_DIRSYNC, "MS_DIRSYNC"},
        {MS_NOATIME, "MS_NOATIME"},
        {MS_NODIRATIME, "MS_NODIRATIME"},
        {MS_BIND, "MS_BIND"},
        {MS_MOVE, "MS_MOVE"},
        {MS_REC, "MS_REC"},
        {MS_SILENT, "MS_SILENT"},
        {MS_UNBINDABLE, "MS_UNBINDABLE"},
        {MS_PRIVATE, "MS_PRIVATE"},
        {MS_SLAVE, "MS_SLAVE"},
        {MS_SHARED, "MS_SHARED"},
        {MS_RELATIME, "MS_RELATIME"},
        {MS_STRICTATIME, "MS_STRICTATIME"},
        {MS_LAZYTIME, "MS_LAZYTIME"},
    }};
    return flag_names(flags, kNames);
}

} // namespace minirun::explain
