#include "security/seccomp_bpf.hpp"

#include "minirun/fd.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h> // NOLINT(modernize-deprecated-headers): offsetof
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

namespace minirun::runtime::seccomp {
namespace {

// An x32 syscall arrives with the x86_64 architecture and this bit in its number.
constexpr uint32_t kX32SyscallBit = 0x40000000U;

// libseccomp's tokens are the kernel's AUDIT_ARCH_* values, but for x32, which the kernel
// reports as x86_64.
uint32_t audit_arch_of(uint32_t token) {
    return token == SCMP_ARCH_X32 ? AUDIT_ARCH_X86_64 : token;
}

sock_filter statement(uint16_t code, uint32_t k) {
    return sock_filter{code, 0, 0, k};
}

sock_filter jump(uint16_t code, uint32_t k, uint8_t if_true, uint8_t if_false) {
    return sock_filter{code, if_true, if_false, k};
}

// Unconditional jumps are patched once the targets are known: where they sit, and whereto.
enum class Target { filter, enosys, block };
struct Fixup {
    size_t at;
    Target target;
    size_t block = 0;
};

} // namespace

LastSyscalls last_syscalls(const spec::Seccomp& config, const std::vector<uint32_t>& arch_tokens) {
    LastSyscalls last;
    for (uint32_t token : arch_tokens) {
        for (const spec::SeccompSyscall& syscall : config.syscalls) {
            for (const std::string& name : syscall.names) {
                int number = seccomp_syscall_resolve_name_arch(token, name.c_str());
                // Negative: unknown here, or a pseudo-syscall (socketcall's multiplexed
                // calls on x86), which has no number of its own to compare.
                if (number < 0) {
                    continue;
                }
                auto [entry, added] = last.emplace(token, number);
                if (!added && number > entry->second) {
                    entry->second = number;
                }
            }
        }
    }
    return last;
}

std::vector<sock_filter> enosys_stub(const LastSyscalls& last) {
    // One block per architecture the kernel reports; x86_64 and x32 share one.
    struct Block {
        uint32_t audit_arch;
        std::optional<int> native; // the highest number of the architecture itself
        std::optional<int> x32;    // x86_64 only: the highest x32 one
    };
    std::vector<Block> blocks;
    for (const auto& [token, number] : last) {
        uint32_t arch = audit_arch_of(token);
        auto block = std::find_if(blocks.begin(), blocks.end(),
                                  [arch](const Block& b) { return b.audit_arch == arch; });
        if (block == blocks.end()) {
            blocks.push_back({arch, std::nullopt, std::nullopt});
            block = blocks.end() - 1;
        }
        (token == SCMP_ARCH_X32 ? block->x32 : block->native) = number;
    }
    if (blocks.empty()) {
        return {};
    }

    std::vector<sock_filter> stub;
    std::vector<Fixup> fixups;
    auto jump_to = [&](Target target, size_t block = 0) {
        fixups.push_back({stub.size(), target, block});
        stub.push_back(statement(BPF_JMP | BPF_JA, 0));
    };
    // "nr > highest: ENOSYS, else the filter": three instructions, or one when the ABI
    // names nothing (everything then goes to the filter).
    auto check = [&](const std::optional<int>& highest) {
        if (!highest) {
            jump_to(Target::filter);
            return;
        }
        stub.push_back(jump(BPF_JMP | BPF_JGT | BPF_K, static_cast<uint32_t>(*highest), 0, 1));
        jump_to(Target::enosys);
        jump_to(Target::filter);
    };

    stub.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
    for (size_t i = 0; i < blocks.size(); ++i) {
        stub.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, blocks[i].audit_arch, 0, 1));
        jump_to(Target::block, i);
    }
    jump_to(Target::filter);

    std::vector<size_t> block_start;
    for (const Block& block : blocks) {
        block_start.push_back(stub.size());
        stub.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
        if (block.audit_arch == AUDIT_ARCH_X86_64) {
            // The x32 part first, reached when the bit is set; its length is what the
            // jump skips when it is not.
            uint8_t x32_length = block.x32 ? 3 : 1;
            stub.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kX32SyscallBit, 0, x32_length));
            check(block.x32);
        }
        check(block.native);
    }
    size_t enosys = stub.size();
    stub.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
    size_t filter = stub.size();

    for (const Fixup& fixup : fixups) {
        size_t target = fixup.target == Target::filter   ? filter
                        : fixup.target == Target::enosys ? enosys
                                                         : block_start[fixup.block];
        stub[fixup.at].k = static_cast<uint32_t>(target - fixup.at - 1);
    }
    return stub;
}

Result<std::vector<sock_filter>> export_program(scmp_filter_ctx ctx) {
    UniqueFd memory(::memfd_create("mini-run-seccomp", MFD_CLOEXEC));
    if (!memory) {
        return Error::from_errno("linux.seccomp: memfd for the BPF program");
    }
    if (int rc = seccomp_export_bpf(ctx, memory.get()); rc < 0) {
        return Error::from_errno(-rc, "linux.seccomp: export the BPF program");
    }
    off_t size = ::lseek(memory.get(), 0, SEEK_END);
    if (size < 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
        return Error(EIO, "linux.seccomp: the exported BPF program has a partial instruction");
    }
    std::vector<sock_filter> program(static_cast<size_t>(size) / sizeof(sock_filter));
    auto bytes = static_cast<size_t>(size);
    if (::pread(memory.get(), program.data(), bytes, 0) != size) {
        return Error::from_errno("linux.seccomp: read the BPF program back");
    }
    return program;
}

} // namespace minirun::runtime::seccomp
