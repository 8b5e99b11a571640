// The device allow-list: the rules a container gets, their v1 form (lines for
// devices.allow / devices.deny) and their v2 form (a BPF_PROG_TYPE_CGROUP_DEVICE program,
// loaded and attached with bpf(2) directly; no libbpf).
//
// Meaning of a rule list, on both versions: everything starts denied, and for each kind of
// access asked for (r, w, m) the last rule matching the device and that access decides.
#include "cgroup/cgroup_devices.hpp"
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"

#include "minirun/fd.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

namespace minirun::runtime::cgroup {

namespace {

// ---- effective_device_rules ----

struct DefaultDevice {
    const char* path; // "" for rules that are not one device node
    char type;
    std::optional<int64_t> major;
    std::optional<int64_t> minor;
    const char* access;
};

// runc's AllowedDevices (libcontainer/specconv/spec_linux.go), in its order. /dev/console is
// not there: it is a bind mount of the pty, which 136:* covers. /dev/net/tun was dropped in
// runc 1.2.0 and put back for compatibility, so it is here too.
constexpr std::array<DefaultDevice, 11> default_devices{{
    {"", 'c', std::nullopt, std::nullopt, "m"}, // mknod of any char device
    {"", 'b', std::nullopt, std::nullopt, "m"}, // mknod of any block device
    {"/dev/null", 'c', 1, 3, "rwm"},
    {"/dev/random", 'c', 1, 8, "rwm"},
    {"/dev/full", 'c', 1, 7, "rwm"},
    {"/dev/tty", 'c', 5, 0, "rwm"},
    {"/dev/zero", 'c', 1, 5, "rwm"},
    {"/dev/urandom", 'c', 1, 9, "rwm"},
    {"", 'c', 136, std::nullopt, "rwm"}, // /dev/pts/*
    {"", 'c', 5, 2, "rwm"},              // /dev/ptmx
    {"", 'c', 10, 200, "rwm"},           // /dev/net/tun
}};

bool listed_in(const std::vector<spec::Device>& devices, std::string_view path) {
    for (const spec::Device& device : devices) {
        if (device.path == path) {
            return true;
        }
    }
    return false;
}

// ---- rule normal form, shared by the v1 and v2 translations ----

// A major or minor that matches any number: absent, or negative (Go configs spell "any" -1).
bool is_wildcard(const std::optional<int64_t>& number) {
    return !number || *number < 0;
}

constexpr uint32_t access_mknod = BPF_DEVCG_ACC_MKNOD;
constexpr uint32_t access_read = BPF_DEVCG_ACC_READ;
constexpr uint32_t access_write = BPF_DEVCG_ACC_WRITE;
constexpr uint32_t access_all = access_mknod | access_read | access_write;

// "rwm", "mr", "rr" -> a mask of BPF_DEVCG_ACC_* bits (letters other than r, w, m ignored:
// the spec parser has refused them already).
uint32_t access_mask(std::string_view access) {
    uint32_t mask = 0;
    for (char letter : access) {
        switch (letter) {
        case 'r':
            mask |= access_read;
            break;
        case 'w':
            mask |= access_write;
            break;
        case 'm':
            mask |= access_mknod;
            break;
        default:
            break;
        }
    }
    return mask;
}

// The mask back in the kernel's order: "rwm", "rm", ...
std::string access_letters(uint32_t mask) {
    std::string letters;
    if ((mask & access_read) != 0) {
        letters += 'r';
    }
    if ((mask & access_write) != 0) {
        letters += 'w';
    }
    if ((mask & access_mknod) != 0) {
        letters += 'm';
    }
    return letters;
}

// A rule of type "a" for every device number and every access: it resets the whole list
// (v1 writes "a"), and no rule before it can matter.
bool is_catch_all(const spec::DeviceCgroupRule& rule) {
    return rule.type == "a" && is_wildcard(rule.major) && is_wildcard(rule.minor) &&
           access_mask(rule.access) == access_all;
}

std::string number_text(const std::optional<int64_t>& number) {
    return is_wildcard(number) ? std::string("*") : std::to_string(*number);
}

// ---- BPF instructions ----
//
// Registers while the rules run (all loaded by the prologue from the context, r1):
//   r2  device type     (BPF_DEVCG_DEV_BLOCK / BPF_DEVCG_DEV_CHAR)
//   r4  major
//   r5  minor
//   r6  the accesses still undecided (BPF_DEVCG_ACC_* bits); allow rules clear theirs
//   r1  scratch once the context is read
//   r0  the answer: 1 allow, 0 deny

constexpr uint8_t reg_answer = BPF_REG_0;
constexpr uint8_t reg_context = BPF_REG_1;
constexpr uint8_t reg_scratch = BPF_REG_1;
constexpr uint8_t reg_type = BPF_REG_2;
constexpr uint8_t reg_major = BPF_REG_4;
constexpr uint8_t reg_minor = BPF_REG_5;
constexpr uint8_t reg_pending = BPF_REG_6;

bpf_insn instruction(uint8_t code, uint8_t dst, uint8_t src, int16_t offset, int32_t imm) {
    bpf_insn insn{};
    insn.code = code;
    insn.dst_reg = dst & 0x0f;
    insn.src_reg = src & 0x0f;
    insn.off = offset;
    insn.imm = imm;
    return insn;
}

// dst = *(u32*)(r1 + offset)
bpf_insn load_context_word(uint8_t dst, size_t offset) {
    return instruction(BPF_LDX | BPF_MEM | BPF_W, dst, reg_context, static_cast<int16_t>(offset),
                       0);
}

// 32-bit dst op= imm (the upper half of dst is zeroed).
bpf_insn alu32_imm(uint8_t op, uint8_t dst, int32_t imm) {
    return instruction(BPF_ALU | op | BPF_K, dst, 0, 0, imm);
}

// 32-bit dst = src
bpf_insn move32_reg(uint8_t dst, uint8_t src) {
    return instruction(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0);
}

// if (dst op imm) skip `offset` instructions
bpf_insn jump_if(uint8_t op, uint8_t dst, int32_t imm, int16_t offset) {
    return instruction(BPF_JMP | op | BPF_K, dst, 0, offset, imm);
}

void emit_return(std::vector<bpf_insn>& program, int32_t answer) {
    program.push_back(alu32_imm(BPF_MOV, reg_answer, answer));
    program.push_back(instruction(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
}

// A jump to the end of the rule's block whose offset is filled in once the block is done.
constexpr int16_t next_rule = std::numeric_limits<int16_t>::min();

// The instructions for one rule: tests that jump to the next rule when the device does not
// match, then the decision. Empty when the rule can match nothing.
std::vector<bpf_insn> rule_block(const spec::DeviceCgroupRule& rule) {
    std::vector<bpf_insn> block;
    const uint32_t mask = access_mask(rule.access);
    if (mask == 0) {
        return block;
    }
    // A device number the 32-bit immediates cannot hold is no device's number.
    auto fits = [](const std::optional<int64_t>& number) {
        return is_wildcard(number) || *number <= std::numeric_limits<int32_t>::max();
    };
    if (!fits(rule.major) || !fits(rule.minor)) {
        return block;
    }
    if (rule.type == "c") {
        block.push_back(jump_if(BPF_JNE, reg_type, BPF_DEVCG_DEV_CHAR, next_rule));
    } else if (rule.type == "b") {
        block.push_back(jump_if(BPF_JNE, reg_type, BPF_DEVCG_DEV_BLOCK, next_rule));
    } else if (rule.type != "a") {
        return block; // refused by the spec parser already
    }
    if (!is_wildcard(rule.major)) {
        block.push_back(jump_if(BPF_JNE, reg_major, static_cast<int32_t>(*rule.major), next_rule));
    }
    if (!is_wildcard(rule.minor)) {
        block.push_back(jump_if(BPF_JNE, reg_minor, static_cast<int32_t>(*rule.minor), next_rule));
    }
    if (rule.allow) {
        if (mask != access_all) {
            // The accesses this rule allows are decided; the rest are left to earlier rules.
            block.push_back(alu32_imm(BPF_AND, reg_pending, static_cast<int32_t>(~mask & 7U)));
            block.push_back(jump_if(BPF_JNE, reg_pending, 0, next_rule));
        }
        emit_return(block, 1);
    } else {
        if (mask != access_all) {
            // Denied only if one of the undecided accesses is one this rule denies.
            block.push_back(move32_reg(reg_scratch, reg_pending));
            block.push_back(alu32_imm(BPF_AND, reg_scratch, static_cast<int32_t>(mask)));
            block.push_back(jump_if(BPF_JEQ, reg_scratch, 0, next_rule));
        }
        emit_return(block, 0);
    }
    const auto size = static_cast<int16_t>(block.size());
    for (int16_t index = 0; index < size; ++index) {
        auto& insn = block[static_cast<size_t>(index)];
        if (insn.off == next_rule) {
            insn.off = static_cast<int16_t>(size - index - 1);
        }
    }
    return block;
}

// ---- bpf(2) ----

long bpf_call(int command, bpf_attr& attr) {
    return ::syscall(SYS_bpf, command, &attr, sizeof(attr));
}

uint64_t pointer_value(const void* pointer) {
    return reinterpret_cast<uintptr_t>(pointer);
}

constexpr size_t log_size = size_t{64} * 1024;
constexpr size_t log_shown = 2000;

// The end of a verifier log (the reason is at the end), on one line.
std::string log_tail(const std::vector<char>& log) {
    std::string text(log.data(), ::strnlen(log.data(), log.size()));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.pop_back();
    }
    if (text.size() > log_shown) {
        text = "..." + text.substr(text.size() - log_shown);
    }
    for (char& c : text) {
        if (c == '\n') {
            c = ';';
        }
    }
    return text;
}

Result<UniqueFd> load_program(const std::vector<bpf_insn>& program) {
    // "Apache", as runc: the program calls no GPL-only helper.
    static constexpr char license[] = "Apache";
    auto load = [&](std::vector<char>* log) {
        bpf_attr attr{};
        attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
        attr.insns = pointer_value(program.data());
        attr.insn_cnt = static_cast<uint32_t>(program.size());
        attr.license = pointer_value(license);
        // A name for bpftool and /proc/<pid>/fdinfo (at most 15 characters).
        static constexpr char name[] = "minirun_devices";
        static_assert(sizeof(name) <= sizeof(attr.prog_name));
        std::memcpy(attr.prog_name, name, sizeof(name));
        if (log != nullptr) {
            attr.log_level = 1;
            attr.log_buf = pointer_value(log->data());
            attr.log_size = static_cast<uint32_t>(log->size());
        }
        return static_cast<int>(bpf_call(BPF_PROG_LOAD, attr));
    };
    int fd = load(nullptr);
    if (fd >= 0) {
        return UniqueFd(fd);
    }
    const int load_errno = errno;
    std::string context = "bpf(BPF_PROG_LOAD) of the device program";
    if (load_errno == EPERM) {
        context += " (needs CAP_SYS_ADMIN or CAP_BPF; kernels before 5.11 also count the "
                   "program against RLIMIT_MEMLOCK)";
    }
    // Load once more, with a log, for the verifier's reason.
    std::vector<char> log(log_size, '\0');
    fd = load(&log);
    if (fd >= 0) {
        return UniqueFd(fd); // the first failure was transient
    }
    if (std::string reason = log_tail(log); !reason.empty()) {
        context += cat(" [verifier: ", reason, "]");
    }
    return Error::from_errno(load_errno, context);
}

// The ids of the device programs attached to the cgroup itself (not inherited ones).
Result<std::vector<uint32_t>> attached_programs(int cgroup_dir_fd) {
    std::vector<uint32_t> ids(64); // the kernel's limit on programs per attach point
    for (int attempt = 0; attempt < 10; ++attempt) {
        bpf_attr attr{};
        attr.query.target_fd = static_cast<uint32_t>(cgroup_dir_fd);
        attr.query.attach_type = BPF_CGROUP_DEVICE;
        attr.query.prog_ids = pointer_value(ids.data());
        attr.query.prog_cnt = static_cast<uint32_t>(ids.size());
        if (bpf_call(BPF_PROG_QUERY, attr) == 0) {
            ids.resize(attr.query.prog_cnt);
            return ids;
        }
        if (errno != ENOSPC) {
            return Error::from_errno("bpf(BPF_PROG_QUERY) of the cgroup's device programs");
        }
        // prog_cnt now holds how many there are; someone attached more meanwhile.
        ids.resize(std::max<size_t>(attr.query.prog_cnt, ids.size() * 2));
    }
    return Error(EAGAIN, "bpf(BPF_PROG_QUERY): the cgroup's device programs keep changing");
}

Status attach(int cgroup_dir_fd, int program_fd) {
    bpf_attr attr{};
    attr.target_fd = static_cast<uint32_t>(cgroup_dir_fd);
    attr.attach_bpf_fd = static_cast<uint32_t>(program_fd);
    attr.attach_type = BPF_CGROUP_DEVICE;
    attr.attach_flags = BPF_F_ALLOW_MULTI;
    return check_syscall(static_cast<int>(bpf_call(BPF_PROG_ATTACH, attr)),
                         "bpf(BPF_PROG_ATTACH, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI)");
}

Status detach(int cgroup_dir_fd, uint32_t id) {
    bpf_attr by_id{};
    by_id.prog_id = id;
    // bpf(2) returns its fds close-on-exec.
    UniqueFd program(static_cast<int>(bpf_call(BPF_PROG_GET_FD_BY_ID, by_id)));
    if (!program) {
        // Gone already, or (like runc) one an LSM keeps us from touching: extra device
        // programs can only deny more, so leaving it is safe.
        if (errno == ENOENT || errno == EPERM || errno == EACCES) {
            return {};
        }
        return Error::from_errno(cat("bpf(BPF_PROG_GET_FD_BY_ID) of old device program ", id));
    }
    bpf_attr attr{};
    attr.target_fd = static_cast<uint32_t>(cgroup_dir_fd);
    attr.attach_bpf_fd = static_cast<uint32_t>(program.get());
    attr.attach_type = BPF_CGROUP_DEVICE;
    if (bpf_call(BPF_PROG_DETACH, attr) < 0 && errno != ENOENT) {
        return Error::from_errno(cat("bpf(BPF_PROG_DETACH) of old device program ", id));
    }
    return {};
}

} // namespace

std::vector<spec::DeviceCgroupRule> effective_device_rules(const spec::Linux& linux) {
    // runc's order (CreateCgroupConfig and createDevices in libcontainer/specconv/
    // spec_linux.go), which matters because later rules win:
    //   1. linux.resources.devices, as written;
    //   2. its default devices (default_devices above), appended, minus those whose path a
    //      linux.devices entry names ("the spec one takes priority").
    // linux.devices entries get no rule of their own: an engine that passes a device adds
    // its allow rule to linux.resources.devices (podman, docker and containerd do). Being
    // last, the defaults cannot be denied by the config.
    std::vector<spec::DeviceCgroupRule> rules;
    if (linux.resources) {
        rules = linux.resources->devices;
    }
    for (const DefaultDevice& device : default_devices) {
        if (*device.path != '\0' && listed_in(linux.devices, device.path)) {
            continue;
        }
        spec::DeviceCgroupRule rule;
        rule.allow = true;
        rule.type = std::string(1, device.type);
        rule.major = device.major;
        rule.minor = device.minor;
        rule.access = device.access;
        rules.push_back(std::move(rule));
    }
    return rules;
}

std::vector<std::pair<std::string, std::string>>
v1_device_writes(const std::vector<spec::DeviceCgroupRule>& rules) {
    // The kernel keeps a default (allow all / deny all) and a list of exceptions; writing a
    // rule to devices.allow or devices.deny changes them much as the rule reads:
    //   "a" to devices.deny       default deny, exceptions cleared
    //   "a" to devices.allow      default allow, exceptions cleared
    //   "c 1:3 rw" to the file that is not the default's: an exception added (merged with
    //   one for the same numbers); to the other file: that exception's access removed.
    // So the list is reset to deny-all first (rule lists start from "everything denied", as
    // the v2 program does; podman and containerd send that reset themselves, and it is not
    // written twice), then every rule is written in order.
    //
    // Differences from the v2 program, the kernel's own (runc's emulator has them too):
    //   - a deny removes only the exception with exactly the same type and numbers: after
    //     "allow c 1:3 rwm", "deny c 1:* w" leaves /dev/null writable;
    //   - "a" must be the whole list ("a *:* rwm"): a type-"a" rule with numbers or fewer
    //     accesses is written for c and b separately;
    //   - the reset fails (EINVAL) once the cgroup has children, which only an update of a
    //     container that made its own cgroups runs into.
    std::vector<std::pair<std::string, std::string>> writes;
    if (rules.empty() || !is_catch_all(rules.front())) {
        writes.emplace_back("devices.deny", "a");
    }
    for (const spec::DeviceCgroupRule& rule : rules) {
        const char* file = rule.allow ? "devices.allow" : "devices.deny";
        const uint32_t mask = access_mask(rule.access);
        if (mask == 0) {
            continue; // matches nothing; the kernel would refuse the line
        }
        if (is_catch_all(rule)) {
            writes.emplace_back(file, rule.allow ? "a *:* rwm" : "a");
            continue;
        }
        const std::string numbers = cat(number_text(rule.major), ':', number_text(rule.minor));
        const std::string access = access_letters(mask);
        if (rule.type == "a") {
            writes.emplace_back(file, cat("c ", numbers, ' ', access));
            writes.emplace_back(file, cat("b ", numbers, ' ', access));
        } else {
            writes.emplace_back(file, cat(rule.type, ' ', numbers, ' ', access));
        }
    }
    return writes;
}

std::vector<bpf_insn> device_program(const std::vector<spec::DeviceCgroupRule>& rules) {
    // Layout:
    //   prologue   r2 = type, r6 = requested accesses, r4 = major, r5 = minor
    //   rules      the last rule first; each block either decides (r0 = 0 or 1; exit) or
    //              falls through to the block of the rule before it
    //   tail       r0 = 0; exit: accesses no rule allowed are denied
    // A deny block answers when one of the still undecided accesses is one it denies; an
    // allow block marks its accesses decided and answers once none is left. So, per access,
    // the last matching rule decides, as the v1 list does (an "rw" open after "allow c 1:3 r"
    // then "allow c 1:3 w" is allowed, after "allow c 1:3 rw" then "deny c 1:3 w" denied).
    std::vector<bpf_insn> program;
    program.push_back(load_context_word(reg_type, offsetof(bpf_cgroup_dev_ctx, access_type)));
    program.push_back(move32_reg(reg_pending, reg_type));
    program.push_back(alu32_imm(BPF_AND, reg_type, 0xffff));
    program.push_back(alu32_imm(BPF_RSH, reg_pending, 16));
    program.push_back(alu32_imm(BPF_AND, reg_pending, static_cast<int32_t>(access_all)));
    program.push_back(load_context_word(reg_major, offsetof(bpf_cgroup_dev_ctx, major)));
    program.push_back(load_context_word(reg_minor, offsetof(bpf_cgroup_dev_ctx, minor)));
    for (size_t index = rules.size(); index-- > 0;) {
        const spec::DeviceCgroupRule& rule = rules[index];
        std::vector<bpf_insn> block = rule_block(rule);
        program.insert(program.end(), block.begin(), block.end());
        if (is_catch_all(rule)) {
            // It always answers: what would follow is unreachable, which the verifier refuses.
            return program;
        }
    }
    emit_return(program, 0);
    return program;
}

Status attach_device_program(int cgroup_dir_fd, const std::vector<spec::DeviceCgroupRule>& rules) {
    // Load first: a program the kernel refuses leaves the cgroup as it was.
    MR_ASSIGN(UniqueFd program, load_program(device_program(rules)));
    MR_ASSIGN(std::vector<uint32_t> old_ids, attached_programs(cgroup_dir_fd));
    // The new program goes in next to the old ones (all must allow an access), then the
    // old ones go: there is no moment without a program, and after an update only the new
    // rules apply.
    MR_TRY(attach(cgroup_dir_fd, program.get()));
    for (uint32_t id : old_ids) {
        MR_TRY(detach(cgroup_dir_fd, id));
    }
    return {};
}

// ---- the devices row of controllers.hpp ----

namespace controllers {

bool devices_wanted(const spec::Resources& resources) {
    return !resources.devices.empty();
}

Status devices_v1(const std::string& dir, const Request& request) {
    return files::write_each(dir, v1_device_writes(request.resources.devices));
}

Status devices_v2(const std::string& dir, const Request& request) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
        return Error::from_errno(cat("open ", dir));
    }
    MR_TRY_WRAP(attach_device_program(fd.get(), request.resources.devices),
                cat("device rules of cgroup ", dir));
    return {};
}

} // namespace controllers

} // namespace minirun::runtime::cgroup
