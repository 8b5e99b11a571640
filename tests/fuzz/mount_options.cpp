// mounts[].options and the mount they belong to: the option words (split at ',') become
// mount(2) flags, propagation and data, and the planner checks the whole entry. The first
// byte picks the mount's type, so that bind, tmpfs and idmapped mounts are all reached.
#include "mount/mount_options.hpp"
#include "fuzz.hpp"
#include "plan.hpp"

#include <sys/mount.h>

#include <string>
#include <vector>

using namespace minirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    static const char* const kTypes[] = {"bind", "tmpfs", "proc", "none", ""};
    spec::Mount mount;
    mount.type = kTypes[data[0] % std::size(kTypes)];
    mount.source = mount.type == "bind" ? "/tmp" : mount.type;
    mount.destination = "/mnt/target";
    std::string_view rest = fuzz::text_of(data + 1, size - 1);
    while (!rest.empty()) {
        size_t comma = rest.find(',');
        mount.options.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    runtime::MountOptions parsed = runtime::parse_mount_options(mount.options);
    fuzz::expect((parsed.flags & (MS_BIND | MS_REC)) == 0,
                 "bind and rec are kept apart from the flags");
    fuzz::expect(!parsed.recursive || parsed.bind, "rbind is a bind");
    fuzz::expect(!parsed.recursive_idmap || parsed.idmap, "ridmap is an idmap");
    for (const std::string& word : mount.options) {
        unsigned long propagation = runtime::propagation_flags(word);
        fuzz::expect((propagation & ~static_cast<unsigned long>(MS_REC | MS_PRIVATE | MS_SHARED |
                                                                MS_SLAVE | MS_UNBINDABLE)) == 0,
                     "a propagation word maps to propagation flags only");
    }
    auto step = runtime::plan_mount(mount, "/tmp");
    fuzz::expect_clear_if_failed(step, "plan_mount");
    return 0;
}
