#include "security/capabilities.hpp"

#include "minirun/explain.hpp"
#include "minirun/fd.hpp"
#include "minirun/log.hpp"
#include "syscalls.hpp"

#include <fcntl.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>

namespace minirun::runtime::caps {
namespace {

// capset()'s version 3 ABI carries each set as two 32-bit words, so no kernel can have a
// capability above 63; a 64-bit mask holds any set.
constexpr int highest_representable_cap = 63;
using Mask = uint64_t;

Mask bit(int cap) {
    return Mask{1} << static_cast<unsigned>(cap);
}

int lowest_cap(Mask mask) {
    for (int cap = 0; cap <= highest_representable_cap; ++cap) {
        if ((mask & bit(cap)) != 0) {
            return cap;
        }
    }
    return -1;
}

// prctl() is variadic and the kernel reads every argument as an unsigned long; an int
// passed through `...` may leave the upper half of the register undefined, and the
// capability options reject unused arguments that are not zero. So every argument goes in
// as a full unsigned long.
int prctl_ul(int option, unsigned long arg2 = 0, unsigned long arg3 = 0) {
    return ::prctl(option, arg2, arg3, 0UL, 0UL);
}

// "CAP_NET_BIND_SERVICE" for error messages (libcap spells names in lower case).
std::string cap_name(int cap) {
    std::string out;
    if (char* name = cap_to_name(cap); name != nullptr) {
        out = name;
        cap_free(name);
    }
    // libcap names a capability it does not know by its number.
    if (!out.starts_with("cap_")) {
        return cat("capability ", cap);
    }
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return out;
}

// "CAP_KILL,CAP_CHOWN", or "none", for --explain.
std::string names_of(const std::vector<int>& caps) {
    std::string out;
    for (int cap : caps) {
        out += out.empty() ? "" : ",";
        out += cap_name(cap);
    }
    return out.empty() ? "none" : out;
}

// The same rule as the spec parser: the "CAP_" spelling only (libcap alone would also take
// "12" or "sys_admin"); the rest of the name in any case.
bool lookup(const std::string& name, cap_value_t& value) {
    if (!name.starts_with("CAP_")) {
        return false;
    }
    // libcap 2.66 compares case-insensitively already; older ones knew only lower case.
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return cap_from_name(lower.c_str(), &value) == 0 && value >= 0;
}

// A name libcap does not know, or one this kernel does not have (CAP_BPF on 5.4, say), is
// skipped with a warning: runtime-spec 1.1 and later (config.md, "capabilities") make a
// capability that cannot be granted a warning, and runc and crun run such a config.
void resolve_set(const std::vector<std::string>& names, std::string_view set, int last_cap,
                 std::vector<int>& out) {
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        cap_value_t value = -1;
        if (!lookup(name, value)) {
            log::warning(cat("process.capabilities.", set, "[", i, "]: unknown capability ",
                             quoted(name), "; skipped"));
            continue;
        }
        if (value > last_cap) {
            log::warning(cat("process.capabilities.", set, "[", i, "]: capability ", name,
                             " is not supported by this kernel; skipped"));
            continue;
        }
        if (std::find(out.begin(), out.end(), value) == out.end()) {
            out.push_back(value);
        }
    }
}

Result<Mask> mask_of(const std::vector<int>& caps, std::string_view set) {
    Mask mask = 0;
    for (int cap : caps) {
        if (cap < 0 || cap > highest_representable_cap) {
            return Error(EINVAL, cat(set, " capabilities: no capability number ", cap));
        }
        mask |= bit(cap);
    }
    return mask;
}

struct KernelSets {
    Mask effective = 0;
    Mask permitted = 0;
    Mask inheritable = 0;
};

// Version 3 of the capset() ABI: each set as two 32-bit words, the low one first.
static_assert(_LINUX_CAPABILITY_U32S_3 == 2);
using CapData = std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3>;

KernelSets from_data(const CapData& data) {
    auto join = [](uint32_t low, uint32_t high) {
        return Mask{low} | (Mask{high} << 32U);
    };
    return {join(data[0].effective, data[1].effective), join(data[0].permitted, data[1].permitted),
            join(data[0].inheritable, data[1].inheritable)};
}

// The kernel answers every capset() rule violation with a bare EPERM; name the capability
// that broke a rule, checked in the kernel's order (security/commoncap.c, cap_capset).
std::string capset_hint(const KernelSets& wanted) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    CapData data{};
    if (::syscall(SYS_capget, &header, data.data()) != 0) {
        return {};
    }
    const KernelSets now = from_data(data);
    bool has_setpcap = (now.effective & bit(CAP_SETPCAP)) != 0;
    // Without CAP_SETPCAP, a new inheritable capability must be permitted already.
    if (!has_setpcap) {
        if (int cap = lowest_cap(wanted.inheritable & ~(now.inheritable | now.permitted));
            cap >= 0) {
            return cat(" (", cap_name(cap),
                       " is to be inheritable but is neither permitted nor inheritable now)");
        }
    }
    // Even with CAP_SETPCAP, a new inheritable capability must still be in the bounding set.
    for (Mask rest = wanted.inheritable & ~now.inheritable; rest != 0;) {
        int cap = lowest_cap(rest);
        rest &= ~bit(cap);
        if (prctl_ul(PR_CAPBSET_READ, static_cast<unsigned long>(cap)) == 0) {
            return cat(" (", cap_name(cap),
                       " is to be inheritable but is not in the bounding set)");
        }
    }
    // The permitted set can only shrink.
    if (int cap = lowest_cap(wanted.permitted & ~now.permitted); cap >= 0) {
        return cat(" (", cap_name(cap), " is to be permitted but is not permitted now)");
    }
    if (int cap = lowest_cap(wanted.effective & ~wanted.permitted); cap >= 0) {
        return cat(" (", cap_name(cap), " is in the effective set but not in the permitted set)");
    }
    return {};
}

} // namespace

int kernel_last_cap() {
    UniqueFd fd(::open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC));
    if (fd) {
        std::array<char, 16> buffer{};
        ssize_t length = ::read(fd.get(), buffer.data(), buffer.size());
        int value = -1;
        if (length > 0 &&
            std::from_chars(buffer.data(), buffer.data() + length, value).ec == std::errc{} &&
            value >= 0 && value <= highest_representable_cap) {
            return value;
        }
    }
    // No /proc (kernels before 3.2 lack the file; a container's /proc may not be mounted
    // yet): libcap probes the kernel with PR_CAPBSET_READ when it loads, and failing that
    // the headers we were built against know the last one of their time.
    if (int bits = cap_max_bits(); bits > 0 && bits - 1 <= highest_representable_cap) {
        return bits - 1;
    }
    return CAP_LAST_CAP;
}

Result<CapabilitySets> resolve(const spec::Capabilities& names, int last_cap) {
    CapabilitySets sets;
    resolve_set(names.bounding, "bounding", last_cap, sets.bounding);
    resolve_set(names.effective, "effective", last_cap, sets.effective);
    resolve_set(names.permitted, "permitted", last_cap, sets.permitted);
    resolve_set(names.inheritable, "inheritable", last_cap, sets.inheritable);
    std::vector<int> ambient;
    resolve_set(names.ambient, "ambient", last_cap, ambient);
    // The kernel raises an ambient capability only when it is both permitted and
    // inheritable (PR_CAP_AMBIENT_RAISE), and the container runs without it, as with runc
    // and crun. runc 1.3 says so at its default level ("can't raise ambient capability
    // CAP_X: ...", capabilities.bats checks it), and so does mini-run, in its words. Since
    // runc 1.3 `runc spec` (and `mini-run spec`) list no ambient capabilities, so the
    // warning is for configs that ask for what the kernel will not give.
    for (int cap : ambient) {
        auto in = [cap](const std::vector<int>& set) {
            return std::find(set.begin(), set.end(), cap) != set.end();
        };
        if (in(sets.permitted) && in(sets.inheritable)) {
            sets.ambient.push_back(cap);
        } else {
            log::warning(cat("process.capabilities.ambient: can't raise ambient capability ",
                             cap_name(cap), ": it is not ",
                             in(sets.permitted) ? "inheritable" : "permitted and inheritable"));
        }
    }
    return sets;
}

Status drop_bounding(const CapabilitySets& sets, int last_cap, Syscalls& sys) {
    MR_ASSIGN(Mask keep, mask_of(sets.bounding, "bounding"));
    if (explain::enabled()) {
        explain::step(cat("prctl(PR_CAPBSET_DROP) for every capability but ",
                          names_of(sets.bounding), ": the bounding set"));
    }
    for (int cap = 0; cap <= last_cap && cap <= highest_representable_cap; ++cap) {
        if ((keep & bit(cap)) != 0) {
            continue;
        }
        // The drop first: with CAP_SETPCAP (the usual case) it succeeds whether or not the
        // capability is still there, one call instead of a read and a drop for each of
        // the ~40. Without CAP_SETPCAP even a capability already gone cannot be dropped
        // (EPERM); then a read tells a bounding set its parent has already narrowed, which
        // an unprivileged runtime keeps, from one it would really fail to narrow.
        auto dropped = sys.prctl(PR_CAPBSET_DROP, static_cast<unsigned long>(cap));
        if (dropped || dropped.error().errno_value() == EINVAL) {
            continue; // dropped, or unknown to this kernel: nothing to drop
        }
        if (dropped.error().errno_value() == EPERM) {
            auto present = sys.prctl(PR_CAPBSET_READ, static_cast<unsigned long>(cap));
            if (present && *present == 0) {
                continue;
            }
        }
        return checked(dropped, cat("drop ", cap_name(cap), " from the bounding set"));
    }
    return {};
}

Status keep_across_uid_switch(Syscalls& sys) {
    // When all of a process's uids leave 0, the kernel clears its permitted and effective
    // sets unless keepcaps is set; we need the permitted set afterwards to choose from it.
    return checked(sys.prctl(PR_SET_KEEPCAPS, 1UL), "prctl(PR_SET_KEEPCAPS, 1)");
}

Status apply(const CapabilitySets& sets, Syscalls& sys) {
    KernelSets wanted;
    MR_ASSIGN(wanted.effective, mask_of(sets.effective, "effective"));
    MR_ASSIGN(wanted.permitted, mask_of(sets.permitted, "permitted"));
    MR_ASSIGN(wanted.inheritable, mask_of(sets.inheritable, "inheritable"));
    MR_ASSIGN(Mask ambient, mask_of(sets.ambient, "ambient"));

    // keepcaps has done its job once the uid is switched. execve() would reset it anyway;
    // clearing it now means nothing before then keeps capabilities across a uid change.
    MR_TRY(checked(sys.prctl(PR_SET_KEEPCAPS, 0UL), "prctl(PR_SET_KEEPCAPS, 0)"));

    if (explain::enabled()) {
        explain::step(cat("capset(effective ", names_of(sets.effective), ", permitted ",
                          names_of(sets.permitted), ", inheritable ", names_of(sets.inheritable),
                          "), ambient ", names_of(sets.ambient), ": every other one is dropped"));
    }
    if (auto set = sys.capset(wanted.effective, wanted.permitted, wanted.inheritable); !set) {
        int saved = set.error().errno_value();
        std::string hint = saved == EPERM ? capset_hint(wanted) : std::string();
        return Error(saved, Error::from_errno(saved, "capset").message() + hint);
    }

    // capset() removes from the ambient set whatever is no longer both permitted and
    // inheritable, but keeps the rest; so clear it outright, then raise exactly ours.
    // Ambient capabilities come last: the kernel only raises one that is permitted and
    // inheritable at that moment.
    if (auto cleared = sys.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL); !cleared) {
        // Kernels before 4.3 have no ambient set (EINVAL): nothing to clear there, and
        // only an error when the config asks for ambient capabilities.
        if (cleared.error().errno_value() != EINVAL || ambient != 0) {
            return Error::from_errno(cleared.error().errno_value(),
                                     "clear the ambient capabilities");
        }
    }
    for (int cap : sets.ambient) {
        if (auto raised =
                sys.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, static_cast<unsigned long>(cap));
            !raised) {
            int saved = raised.error().errno_value();
            Error error = Error::from_errno(saved, cat("raise ambient capability ", cap_name(cap)));
            if (saved == EPERM && (wanted.permitted & wanted.inheritable & bit(cap)) == 0) {
                return Error(saved, error.message() +
                                        " (an ambient capability must also be permitted and "
                                        "inheritable)");
            }
            return error;
        }
    }
    return {};
}

} // namespace minirun::runtime::caps
