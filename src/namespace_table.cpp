// The namespace table: each namespace type's spec name, /proc name and clone flag, once.
//
// What mini-run does with each namespace lives in its own file under runtime/ (user.cpp,
// pid.cpp, mount*.cpp, net.cpp, ipc.cpp, uts.cpp, cgroup_ns.cpp, time.cpp); this is only
// what the type is called and which flag creates it.
#include "minirun/spec.hpp"

#include <sched.h>

#include <array>

namespace minirun::spec {
namespace {

constexpr std::array<NamespaceKind, 8> kNamespaces = {{
    {NamespaceType::user, "user", "user", CLONE_NEWUSER},
    {NamespaceType::mount, "mount", "mnt", CLONE_NEWNS},
    {NamespaceType::ipc, "ipc", "ipc", CLONE_NEWIPC},
    {NamespaceType::uts, "uts", "uts", CLONE_NEWUTS},
    {NamespaceType::network, "network", "net", CLONE_NEWNET},
    {NamespaceType::cgroup, "cgroup", "cgroup", CLONE_NEWCGROUP},
    {NamespaceType::time, "time", "time", CLONE_NEWTIME},
    {NamespaceType::pid, "pid", "pid", CLONE_NEWPID},
}};

} // namespace

std::span<const NamespaceKind> namespace_table() {
    return kNamespaces;
}

const NamespaceKind& namespace_kind(NamespaceType type) {
    for (const NamespaceKind& kind : kNamespaces) {
        if (kind.type == type) {
            return kind;
        }
    }
    static constexpr NamespaceKind kUnknown{NamespaceType::pid, "unknown", "", 0};
    return kUnknown; // not an enumerator
}

std::string_view namespace_type_name(NamespaceType type) {
    return namespace_kind(type).spec_name;
}

std::optional<NamespaceType> namespace_type_from_name(std::string_view name) {
    for (const NamespaceKind& kind : kNamespaces) {
        if (kind.spec_name == name) {
            return kind.type;
        }
    }
    return std::nullopt;
}

} // namespace minirun::spec
