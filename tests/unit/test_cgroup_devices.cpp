// The device allow-list: the rules a container gets, their v1 lines and the v2 BPF program.
//
// The program is not compared byte for byte: a small interpreter for the instructions it
// uses runs it on (type, major, minor, access) requests, and its answers are checked by hand
// and against a model of the rules' meaning (per access, the last matching rule decides;
// nothing matching: denied). The [cgroup-devices-root] test attaches programs to a real
// cgroup2 directory and opens devices from a process inside it.
#include "cgroup/cgroup_devices.hpp"
#include "skips.hpp"

#include "minirun/fd.hpp"

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
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using minirun::UniqueFd;
using minirun::runtime::cgroup::attach_device_program;
using minirun::runtime::cgroup::device_program;
using minirun::runtime::cgroup::effective_device_rules;
using minirun::runtime::cgroup::v1_device_writes;
namespace spec = minirun::spec;

namespace {

using Rules = std::vector<spec::DeviceCgroupRule>;
using Writes = std::vector<std::pair<std::string, std::string>>;

constexpr int64_t any = -1; // "no major/minor" in the helpers below

spec::DeviceCgroupRule rule(bool allow, const std::string& type, int64_t major, int64_t minor,
                            const std::string& access) {
    spec::DeviceCgroupRule made;
    made.allow = allow;
    made.type = type;
    if (major != any) {
        made.major = major;
    }
    if (minor != any) {
        made.minor = minor;
    }
    made.access = access;
    return made;
}

spec::DeviceCgroupRule allow(const std::string& type, int64_t major, int64_t minor,
                             const std::string& access) {
    return rule(true, type, major, minor, access);
}

spec::DeviceCgroupRule deny(const std::string& type, int64_t major, int64_t minor,
                            const std::string& access) {
    return rule(false, type, major, minor, access);
}

spec::DeviceCgroupRule deny_all() {
    return deny("a", any, any, "rwm");
}

std::string describe(const spec::DeviceCgroupRule& r) {
    auto number = [](const std::optional<int64_t>& n) {
        return n ? std::to_string(*n) : std::string("*");
    };
    return (r.allow ? "allow " : "deny ") + r.type + " " + number(r.major) + ":" + number(r.minor) +
           " " + r.access;
}

std::vector<std::string> describe(const Rules& rules) {
    std::vector<std::string> lines;
    for (const auto& r : rules) {
        lines.push_back(describe(r));
    }
    return lines;
}

// ---- a request, the interpreter and the model ----

struct Request {
    char type; // 'c' or 'b'
    uint32_t major;
    uint32_t minor;
    std::string access; // letters of r, w, m
};

uint32_t access_bits(const std::string& access) {
    uint32_t bits = 0;
    for (char c : access) {
        bits |= c == 'r'   ? BPF_DEVCG_ACC_READ
                : c == 'w' ? BPF_DEVCG_ACC_WRITE
                : c == 'm' ? BPF_DEVCG_ACC_MKNOD
                           : 0;
    }
    return bits;
}

// Runs `program` as the kernel would for `request`: returns r0, or nullopt (with a failed
// CHECK) on an instruction outside the subset the generator may emit, an out-of-range jump
// or a backward one.
std::optional<uint64_t> run(const std::vector<bpf_insn>& program, const Request& request) {
    bpf_cgroup_dev_ctx context{};
    context.access_type = (access_bits(request.access) << 16) |
                          (request.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
    context.major = request.major;
    context.minor = request.minor;

    std::array<uint64_t, 11> reg{};
    std::array<bool, 11> set{};
    set[BPF_REG_1] = true; // r1 is the context pointer; only LDX reads through it
    bool r1_is_context = true;
    size_t pc = 0;
    while (pc < program.size()) {
        const bpf_insn& insn = program[pc];
        const uint8_t cls = BPF_CLASS(insn.code);
        const uint8_t dst = insn.dst_reg;
        const uint8_t src = insn.src_reg;
        if (dst > 10 || src > 10) {
            FAIL_CHECK("bad register at " << pc);
            return std::nullopt;
        }
        if (cls == BPF_LDX) {
            if (BPF_MODE(insn.code) != BPF_MEM || BPF_SIZE(insn.code) != BPF_W ||
                src != BPF_REG_1 || !r1_is_context || insn.off < 0 ||
                static_cast<size_t>(insn.off) + 4 > sizeof(context) || insn.off % 4 != 0) {
                FAIL_CHECK("bad load at " << pc);
                return std::nullopt;
            }
            uint32_t word = 0;
            std::memcpy(&word, reinterpret_cast<const char*>(&context) + insn.off, 4);
            reg[dst] = word;
            set[dst] = true;
            if (dst == BPF_REG_1) {
                r1_is_context = false;
            }
            ++pc;
        } else if (cls == BPF_ALU) {
            const bool from_reg = BPF_SRC(insn.code) == BPF_X;
            if (from_reg && !set[src]) {
                FAIL_CHECK("read of unset r" << int(src) << " at " << pc);
                return std::nullopt;
            }
            const auto operand =
                from_reg ? static_cast<uint32_t>(reg[src]) : static_cast<uint32_t>(insn.imm);
            const auto value = static_cast<uint32_t>(reg[dst]);
            switch (BPF_OP(insn.code)) {
            case BPF_MOV:
                reg[dst] = operand;
                break;
            case BPF_AND:
                reg[dst] = value & operand;
                break;
            case BPF_RSH:
                reg[dst] = operand < 32 ? value >> operand : 0;
                break;
            default:
                FAIL_CHECK("unexpected ALU op at " << pc);
                return std::nullopt;
            }
            if (BPF_OP(insn.code) != BPF_MOV && !set[dst]) {
                FAIL_CHECK("read of unset r" << int(dst) << " at " << pc);
                return std::nullopt;
            }
            if (dst == BPF_REG_1) {
                r1_is_context = false;
            }
            set[dst] = true;
            ++pc;
        } else if (cls == BPF_JMP) {
            const uint8_t op = BPF_OP(insn.code);
            if (op == BPF_EXIT) {
                if (!set[BPF_REG_0]) {
                    FAIL_CHECK("exit with r0 unset at " << pc);
                    return std::nullopt;
                }
                return reg[BPF_REG_0];
            }
            if (BPF_SRC(insn.code) != BPF_K || insn.off < 0) {
                FAIL_CHECK("unexpected jump at " << pc);
                return std::nullopt;
            }
            bool taken = false;
            if (op == BPF_JA) {
                taken = true;
            } else if (op == BPF_JEQ || op == BPF_JNE) {
                if (!set[dst]) {
                    FAIL_CHECK("test of unset r" << int(dst) << " at " << pc);
                    return std::nullopt;
                }
                const auto imm = static_cast<uint64_t>(static_cast<int64_t>(insn.imm));
                taken = (reg[dst] == imm) == (op == BPF_JEQ);
            } else {
                FAIL_CHECK("unexpected jump op at " << pc);
                return std::nullopt;
            }
            pc += 1 + (taken ? static_cast<size_t>(insn.off) : 0);
        } else {
            FAIL_CHECK("unexpected instruction class at " << pc);
            return std::nullopt;
        }
    }
    FAIL_CHECK("ran off the end of the program");
    return std::nullopt;
}

bool allowed(const Rules& rules, const Request& request) {
    const auto answer = run(device_program(rules), request);
    REQUIRE(answer.has_value());
    REQUIRE((*answer == 0 || *answer == 1));
    return *answer == 1;
}

// What the rules mean: for each access asked for, the last rule matching the device and
// that access decides; with none, it is denied. Allowed if every access is.
bool model(const Rules& rules, const Request& request) {
    for (char access : request.access) {
        bool decision = false;
        for (const auto& r : rules) {
            const bool type_matches = r.type == "a" || r.type[0] == request.type;
            const bool major_matches = !r.major || *r.major == request.major;
            const bool minor_matches = !r.minor || *r.minor == request.minor;
            if (type_matches && major_matches && minor_matches &&
                r.access.find(access) != std::string::npos) {
                decision = r.allow;
            }
        }
        if (!decision) {
            return false;
        }
    }
    return true;
}

// Every instruction reachable, every jump inside the program: the verifier refuses
// anything else.
void check_shape(const std::vector<bpf_insn>& program) {
    REQUIRE(!program.empty());
    std::vector<bool> reached(program.size(), false);
    reached[0] = true;
    for (size_t pc = 0; pc < program.size(); ++pc) {
        if (!reached[pc]) {
            FAIL("unreachable instruction " << pc);
        }
        const bpf_insn& insn = program[pc];
        const bool is_jump = BPF_CLASS(insn.code) == BPF_JMP;
        if (is_jump && BPF_OP(insn.code) == BPF_EXIT) {
            continue;
        }
        if (is_jump) {
            const size_t target = pc + 1 + static_cast<size_t>(insn.off);
            REQUIRE(insn.off >= 0);
            REQUIRE(target < program.size());
            reached[target] = true;
            if (BPF_OP(insn.code) == BPF_JA) {
                continue;
            }
        }
        REQUIRE(pc + 1 < program.size()); // no falling off the end
        reached[pc + 1] = true;
    }
}

// Checks the program against the model for every request of a grid built from the rules'
// own numbers and a few others.
void check_against_model(const Rules& rules) {
    INFO("rules: " << Catch::Detail::stringify(describe(rules)));
    const auto program = device_program(rules);
    check_shape(program);
    std::vector<uint32_t> majors{0, 1, 5, 8, 136};
    std::vector<uint32_t> minors{0, 1, 3, 5, 9};
    for (const auto& r : rules) {
        if (r.major) {
            majors.push_back(static_cast<uint32_t>(*r.major));
        }
        if (r.minor) {
            minors.push_back(static_cast<uint32_t>(*r.minor));
        }
    }
    const std::array<std::string, 7> accesses{"r", "w", "m", "rw", "rm", "wm", "rwm"};
    for (char type : {'c', 'b'}) {
        for (uint32_t major : majors) {
            for (uint32_t minor : minors) {
                for (const auto& access : accesses) {
                    const Request request{type, major, minor, access};
                    INFO("request " << type << " " << major << ":" << minor << " " << access);
                    const auto answer = run(program, request);
                    REQUIRE(answer.has_value());
                    CHECK((*answer == 1) == model(rules, request));
                }
            }
        }
    }
}

} // namespace

// ---- effective_device_rules ----

TEST_CASE("cgroup devices: resources.devices first, then runc's defaults", "[cgroup-devices]") {
    spec::Linux linux;
    linux.resources.emplace();
    // As podman writes it for `--device /dev/fuse`: deny all, then the device's allow.
    linux.resources->devices = {deny_all(), allow("c", 10, 229, "rwm")};
    spec::Device fuse;
    fuse.path = "/dev/fuse";
    fuse.major = 10;
    fuse.minor = 229;
    linux.devices = {fuse};

    const std::vector<std::string> expected{
        "deny a *:* rwm",    "allow c 10:229 rwm", "allow c *:* m",     "allow b *:* m",
        "allow c 1:3 rwm",   "allow c 1:8 rwm",    "allow c 1:7 rwm",   "allow c 5:0 rwm",
        "allow c 1:5 rwm",   "allow c 1:9 rwm",    "allow c 136:* rwm", "allow c 5:2 rwm",
        "allow c 10:200 rwm"};
    CHECK(describe(effective_device_rules(linux)) == expected);
}

TEST_CASE("cgroup devices: a linux.devices entry replaces the default of the same path",
          "[cgroup-devices]") {
    spec::Linux linux;
    spec::Device zero;
    zero.path = "/dev/zero";
    zero.major = 1;
    zero.minor = 5;
    linux.devices = {zero};
    // No resources at all: the defaults alone, without /dev/zero's, and no rule for the
    // linux.devices entry (runc leaves that to the engine's resources.devices).
    const std::vector<std::string> expected{
        "allow c *:* m",   "allow b *:* m",     "allow c 1:3 rwm", "allow c 1:8 rwm",
        "allow c 1:7 rwm", "allow c 5:0 rwm",   "allow c 1:9 rwm", "allow c 136:* rwm",
        "allow c 5:2 rwm", "allow c 10:200 rwm"};
    CHECK(describe(effective_device_rules(linux)) == expected);
}

TEST_CASE("cgroup devices: the defaults come last, so the config cannot deny them",
          "[cgroup-devices]") {
    spec::Linux linux;
    linux.resources.emplace();
    linux.resources->devices = {deny_all(), deny("c", 1, 3, "rwm")};
    const Rules rules = effective_device_rules(linux);
    CHECK(allowed(rules, {'c', 1, 3, "rw"}));
    CHECK(allowed(rules, {'c', 136, 4, "rw"}));
    CHECK(allowed(rules, {'b', 8, 0, "m"}));
    CHECK_FALSE(allowed(rules, {'b', 8, 0, "r"}));
    CHECK_FALSE(allowed(rules, {'c', 10, 229, "r"}));
}

// ---- v1_device_writes ----

TEST_CASE("cgroup devices: v1 writes for a podman-like list", "[cgroup-devices]") {
    const Rules rules{deny_all(), allow("c", 1, 3, "rwm"), allow("c", 136, any, "rw"),
                      allow("b", any, any, "m"), deny("c", 5, 1, "w")};
    const Writes expected{{"devices.deny", "a"},
                          {"devices.allow", "c 1:3 rwm"},
                          {"devices.allow", "c 136:* rw"},
                          {"devices.allow", "b *:* m"},
                          {"devices.deny", "c 5:1 w"}};
    CHECK(v1_device_writes(rules) == expected);
}

TEST_CASE("cgroup devices: v1 starts from deny-all even when the rules do not",
          "[cgroup-devices]") {
    CHECK(v1_device_writes({allow("c", 1, 3, "rw")}) ==
          Writes{{"devices.deny", "a"}, {"devices.allow", "c 1:3 rw"}});
    CHECK(v1_device_writes({}) == Writes{{"devices.deny", "a"}});
    // A deny-all in the middle resets there too.
    CHECK(v1_device_writes({allow("c", 1, 3, "rw"), deny_all(), allow("c", 1, 5, "r")}) ==
          Writes{{"devices.deny", "a"},
                 {"devices.allow", "c 1:3 rw"},
                 {"devices.deny", "a"},
                 {"devices.allow", "c 1:5 r"}});
}

TEST_CASE("cgroup devices: v1 allow-all, partial type-a rules, access spelling",
          "[cgroup-devices]") {
    // Allow-all resets the list to allow everything; a later deny is an exception.
    CHECK(v1_device_writes({allow("a", any, any, "rwm"), deny("b", 8, any, "w")}) ==
          Writes{{"devices.allow", "a *:* rwm"}, {"devices.deny", "b 8:* w"}});
    // The kernel reads any "a" line as the whole list, so "a" with numbers or fewer
    // accesses goes out as a c line and a b line.
    CHECK(v1_device_writes({deny_all(), allow("a", any, any, "m"), allow("a", 7, any, "r")}) ==
          Writes{{"devices.deny", "a"},
                 {"devices.allow", "c *:* m"},
                 {"devices.allow", "b *:* m"},
                 {"devices.allow", "c 7:* r"},
                 {"devices.allow", "b 7:* r"}});
    // Letters in the kernel's order, once each.
    CHECK(v1_device_writes({deny_all(), allow("c", 4, 1, "mwrr")}) ==
          Writes{{"devices.deny", "a"}, {"devices.allow", "c 4:1 rwm"}});
}

// ---- device_program ----

TEST_CASE("cgroup devices: program for deny-all plus /dev/null rw", "[cgroup-devices]") {
    const Rules rules{deny_all(), allow("c", 1, 3, "rw")};
    check_shape(device_program(rules));
    CHECK(allowed(rules, {'c', 1, 3, "r"}));
    CHECK(allowed(rules, {'c', 1, 3, "w"}));
    CHECK(allowed(rules, {'c', 1, 3, "rw"}));
    CHECK_FALSE(allowed(rules, {'c', 1, 3, "m"}));  // no 'm' in the rule
    CHECK_FALSE(allowed(rules, {'c', 1, 3, "rm"})); // one access not allowed
    CHECK_FALSE(allowed(rules, {'c', 1, 5, "r"}));  // other minor
    CHECK_FALSE(allowed(rules, {'c', 2, 3, "r"}));  // other major
    CHECK_FALSE(allowed(rules, {'b', 1, 3, "r"}));  // block, same numbers
    CHECK_FALSE(allowed(rules, {'b', 8, 0, "r"}));
}

TEST_CASE("cgroup devices: program without rules denies everything", "[cgroup-devices]") {
    check_shape(device_program({}));
    CHECK_FALSE(allowed({}, {'c', 1, 3, "r"}));
    CHECK_FALSE(allowed({}, {'b', 8, 0, "m"}));
}

TEST_CASE("cgroup devices: program wildcards", "[cgroup-devices]") {
    const Rules rules{deny_all(), allow("c", 136, any, "rw"), allow("b", any, any, "m"),
                      allow("c", any, 7, "r"), allow("a", 9, any, "w")};
    CHECK(allowed(rules, {'c', 136, 0, "rw"}));
    CHECK(allowed(rules, {'c', 136, 99, "r"}));
    CHECK_FALSE(allowed(rules, {'c', 136, 99, "m"}));
    CHECK(allowed(rules, {'b', 8, 0, "m"}));
    CHECK(allowed(rules, {'b', 259, 1, "m"}));
    CHECK_FALSE(allowed(rules, {'b', 8, 0, "r"}));
    CHECK(allowed(rules, {'c', 4, 7, "r"}));
    CHECK_FALSE(allowed(rules, {'c', 4, 8, "r"}));
    CHECK(allowed(rules, {'c', 9, 1, "w"}));
    CHECK(allowed(rules, {'b', 9, 1, "w"}));
    CHECK_FALSE(allowed(rules, {'b', 9, 1, "r"}));
}

TEST_CASE("cgroup devices: program allow-all and later rules over earlier ones",
          "[cgroup-devices]") {
    const Rules allow_all{allow("a", any, any, "rwm")};
    check_shape(device_program(allow_all));
    CHECK(allowed(allow_all, {'c', 1, 3, "rwm"}));
    CHECK(allowed(allow_all, {'b', 8, 0, "rwm"}));

    // A deny after an allow wins; an allow after a deny wins.
    const Rules rules{allow("a", any, any, "rwm"), deny("b", 8, any, "w"), deny("c", 1, any, "rwm"),
                      allow("c", 1, 3, "r")};
    CHECK(allowed(rules, {'b', 8, 0, "r"}));
    CHECK_FALSE(allowed(rules, {'b', 8, 0, "w"}));
    CHECK_FALSE(allowed(rules, {'b', 8, 0, "rw"}));
    CHECK(allowed(rules, {'b', 9, 0, "rw"}));
    CHECK(allowed(rules, {'c', 1, 3, "r"}));
    CHECK_FALSE(allowed(rules, {'c', 1, 3, "w"}));
    CHECK_FALSE(allowed(rules, {'c', 1, 5, "r"}));

    // A deny-all at the end wins over everything before it; the program stops there.
    const Rules closed{allow("c", 1, 3, "rwm"), deny_all()};
    const auto program = device_program(closed);
    check_shape(program);
    CHECK_FALSE(allowed(closed, {'c', 1, 3, "r"}));
    CHECK(program.size() == device_program({deny_all()}).size());
}

TEST_CASE("cgroup devices: per access, the last matching rule decides", "[cgroup-devices]") {
    // Two partial allows add up, as v1's merged exceptions do.
    const Rules split{deny_all(), allow("c", 1, 3, "r"), allow("c", 1, 3, "w")};
    CHECK(allowed(split, {'c', 1, 3, "rw"}));
    CHECK_FALSE(allowed(split, {'c', 1, 3, "rwm"}));
    // A partial deny takes its access away, and only that one.
    const Rules taken{deny_all(), allow("c", 1, 3, "rw"), deny("c", 1, 3, "w")};
    CHECK(allowed(taken, {'c', 1, 3, "r"}));
    CHECK_FALSE(allowed(taken, {'c', 1, 3, "w"}));
    CHECK_FALSE(allowed(taken, {'c', 1, 3, "rw"}));
    // An allow after the deny gives it back.
    const Rules back{deny_all(), deny("c", 1, 3, "w"), allow("c", 1, any, "w")};
    CHECK(allowed(back, {'c', 1, 3, "w"}));
}

TEST_CASE("cgroup devices: program agrees with the model", "[cgroup-devices]") {
    spec::Linux podman;
    podman.resources.emplace();
    podman.resources->devices = {deny_all(), allow("c", 10, 229, "rwm"), allow("b", 8, 0, "r")};
    const std::vector<Rules> cases{
        {},
        {deny_all()},
        {allow("a", any, any, "rwm")},
        {deny_all(), allow("c", 1, 3, "rw"), allow("c", 1, 9, "r")},
        {allow("a", any, any, "rwm"), deny("c", 1, any, "w"), allow("c", 1, 3, "rwm")},
        {deny_all(), allow("a", any, any, "m"), deny("b", any, any, "m"), allow("b", 8, 1, "m")},
        {allow("c", 1, 3, "r"), allow("c", 1, 3, "w"), deny("c", 1, 3, "m"), deny("a", 1, any, "r"),
         allow("a", any, 3, "rw")},
        {deny_all(), allow("c", 5, any, "rwm"), deny("c", any, 1, "rw"), allow("a", any, any, "w")},
        effective_device_rules(podman),
        effective_device_rules(spec::Linux{}),
    };
    for (const Rules& rules : cases) {
        check_against_model(rules);
    }
}

TEST_CASE("cgroup devices: rules that can match nothing are left out", "[cgroup-devices]") {
    // Empty access, a number no 32-bit device number has: no instructions for them.
    const Rules rules{deny_all(), allow("c", 1, 3, ""), allow("c", int64_t{1} << 40, any, "r")};
    CHECK(device_program(rules).size() == device_program({deny_all()}).size());
    CHECK_FALSE(allowed(rules, {'c', 1, 3, "r"}));
    // A negative number means "any" (Go configs write -1).
    spec::DeviceCgroupRule minus_one = allow("c", any, 3, "r");
    minus_one.major = -1;
    const Rules negative{deny_all(), minus_one};
    CHECK(allowed(negative, {'c', 7, 3, "r"}));
    CHECK(v1_device_writes(negative) ==
          Writes{{"devices.deny", "a"}, {"devices.allow", "c *:3 r"}});
}

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
