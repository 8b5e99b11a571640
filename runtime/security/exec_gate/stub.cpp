// The exec gate's program: the last thing the container's init executes before the
// user's process (runtime/security/exec_gate.hpp says why it exists).
//
//   argv[0]  the init's sync socket, as a decimal fd number ("-1": nobody listens)
//   argv[1]  exec.fifo, opened for reading ("-1": start at once)
//   argv[2]  the executable, already resolved and checked by the init
//   argv[3]  onwards: the process's own argv; the environment is passed on as it came
//
// With a fifo it waits for `start` (one byte), as the init would have. Then it marks both
// fds close-on-exec and execs the executable, so the socket reaches its end of stream and
// the fifo loses its reader exactly when the user's process starts, as without the gate.
// If that fails it sends the init's kError frame instead (or, with nobody listening,
// writes the message to stderr).
//
// Freestanding: no libc, no start-up code, raw system calls. A static glibc spends about
// 0.6 ms reading the CPU's cache geometry with cpuid before main on a VM (every cpuid
// traps to the hypervisor); this program starts in microseconds. It is x86-64 only; on
// other machines mini-run is built without it and always takes the protected re-exec.
#include "../../sync_wire.hpp"

#include <cstddef>
#include <cstdint>

namespace {

constexpr long kSysRead = 0;
constexpr long kSysClose = 3;
constexpr long kSysSendto = 44;
constexpr long kSysExecve = 59;
constexpr long kSysExitGroup = 231;
constexpr long kSysFcntl = 72;
constexpr long kSysWrite = 1;
constexpr long kSysPpoll = 271;
constexpr long kSysRtSigaction = 13;
constexpr long kFdSetFlags = 2; // F_SETFD
constexpr long kCloseOnExec = 1;
constexpr long kNoSigpipe = 0x4000; // MSG_NOSIGNAL
constexpr int kStderr = 2;
constexpr long kEintr = 4;
constexpr long kEagain = 11;
constexpr long kEpipe = 32;
constexpr short kPollIn = 1;

struct PollFd {
    int fd;
    short events;
    short revents;
};

long system_call(long number, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0,
                 long f = 0) {
    long result = 0;
    register long r10 asm("r10") = d;
    register long r8 asm("r8") = e;
    register long r9 asm("r9") = f;
    asm volatile("syscall"
                 : "=a"(result)
                 : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                 : "rcx", "r11", "memory");
    return result;
}

[[noreturn]] void exit_group(int code) {
    for (;;) {
        system_call(kSysExitGroup, code);
    }
}

// The failure text for the errors an execve of an already checked executable can still
// meet, as runc (Go) spells them: process.cpp words a failed execve the same way.
const char* reason_for(long error) {
    switch (error) {
    case 1:
        return "operation not permitted";
    case 2:
        return "no such file or directory";
    case 7:
        return "argument list too long";
    case 8:
        return "exec format error";
    case 12:
        return "cannot allocate memory";
    case 13:
        return "permission denied";
    case 20:
        return "not a directory";
    case 21:
        return "is a directory";
    case 22:
        return "invalid argument";
    case 26:
        return "text file busy";
    case 32:
        return "broken pipe";
    case 36:
        return "file name too long";
    case 40:
        return "too many levels of symbolic links";
    default:
        return nullptr;
    }
}

// Appends to a fixed buffer, dropping what does not fit.
struct Text {
    char bytes[minirun::runtime::kMaxSyncFrame];
    size_t size = sizeof(minirun::runtime::SyncFrameHeader);

    void add(const char* text) {
        for (; *text != '\0' && size < sizeof(bytes); ++text) {
            bytes[size++] = *text;
        }
    }
    void add_number(long value) {
        char digits[24];
        int count = 0;
        do {
            digits[count++] = static_cast<char>('0' + value % 10);
            value /= 10;
        } while (value > 0 && count < 20);
        while (count > 0 && size < sizeof(bytes)) {
            bytes[size++] = digits[--count];
        }
    }
};

// The error frame on `sync`, or the message on stderr when nobody listens; then exit 1.
[[noreturn]] void fail(long sync, const char* what, const char* path, long error) {
    Text text;
    text.add(what);
    if (path != nullptr) {
        text.add(" ");
        text.add(path);
    }
    text.add(": ");
    if (const char* reason = reason_for(error)) {
        text.add(reason);
    } else {
        text.add("error ");
        text.add_number(error);
    }
    minirun::runtime::SyncFrameHeader header{
        static_cast<uint32_t>(minirun::runtime::ToParent::kError), static_cast<int32_t>(error)};
    __builtin_memcpy(text.bytes, &header, sizeof(header));
    long sent = -1;
    if (sync >= 0) {
        sent = system_call(kSysSendto, sync, reinterpret_cast<long>(text.bytes),
                           static_cast<long>(text.size), kNoSigpipe, 0, 0);
    }
    if (sent < 0) {
        text.add("\n");
        system_call(kSysWrite, kStderr, reinterpret_cast<long>(text.bytes + sizeof(header)),
                    static_cast<long>(text.size - sizeof(header)));
    }
    exit_group(1);
}

// Blocks until `start` writes its byte to exec.fifo (opened non-blocking by the runtime:
// poll sleeps, read takes the byte). A writer that closed without writing is no start.
void wait_for_start(long sync, long fifo) {
    for (;;) {
        PollFd entry{static_cast<int>(fifo), kPollIn, 0};
        long ready = system_call(kSysPpoll, reinterpret_cast<long>(&entry), 1, 0, 0, 8);
        if (ready < 0 && ready != -kEintr) {
            fail(sync, "wait for start", nullptr, -ready);
        }
        char byte = 0;
        long got = system_call(kSysRead, fifo, reinterpret_cast<long>(&byte), 1);
        if (got == 1) {
            return;
        }
        if (got == 0) {
            fail(sync, "wait for start: exec.fifo closed without a start", nullptr, kEpipe);
        }
        if (got != -kEagain && got != -kEintr) {
            fail(sync, "wait for start", nullptr, -got);
        }
    }
}

// The kernel's struct sigaction for rt_sigaction on x86-64.
struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    uint64_t mask;
};
constexpr unsigned long kSaRestorer = 0x04000000;

extern "C" void gate_sigreturn(); // below: rt_sigreturn, which x86-64 wants as restorer

[[noreturn]] void die_of(int signal) {
    exit_group(128 + signal);
}

// A created container's init is the first process of its PID namespace, and the kernel
// drops every signal such a process has no handler for (SIGKILL aside, from an ancestor
// namespace): `kill TERM` of a created container would do nothing. runc's init (Go) has
// handlers and exits on SIGHUP, SIGINT, SIGQUIT and SIGTERM while it waits for start, so
// engines stop a created container with SIGTERM (runc's pidfd-socket.bats does). The gate
// does the same. execve resets handled signals to their default, so the user's process
// gets none of this; a refusal (a seccomp profile without rt_sigaction) leaves it as it
// was.
void die_on(long signal) {
    KernelSigaction action{die_of, kSaRestorer, gate_sigreturn, 0};
    system_call(kSysRtSigaction, signal, reinterpret_cast<long>(&action), 0, sizeof(uint64_t));
}

void die_on_termination_signals() {
    die_on(1);  // SIGHUP
    die_on(2);  // SIGINT
    die_on(3);  // SIGQUIT
    die_on(15); // SIGTERM
}

// Close-on-exec, or closed: never inherited by the user's process.
long close_on_exec(long fd) {
    if (fd >= 0 && system_call(kSysFcntl, fd, kFdSetFlags, kCloseOnExec) < 0) {
        system_call(kSysClose, fd);
        return -1;
    }
    return fd;
}

long parse_fd(const char* text) {
    if (text == nullptr || *text == '\0') {
        return -1;
    }
    long value = 0;
    for (; *text != '\0'; ++text) {
        if (*text < '0' || *text > '9' || value > 1000000) {
            return -1;
        }
        value = value * 10 + (*text - '0');
    }
    return value;
}

} // namespace

// The compiler may call these for copies and zeroing even in a freestanding program.
extern "C" void* memset(void* destination, int value, size_t count) {
    auto* bytes = static_cast<unsigned char*>(destination);
    for (size_t i = 0; i < count; ++i) {
        bytes[i] = static_cast<unsigned char>(value);
    }
    return destination;
}

extern "C" void* memcpy(void* destination, const void* source, size_t count) {
    auto* to = static_cast<unsigned char*>(destination);
    const auto* from = static_cast<const unsigned char*>(source);
    for (size_t i = 0; i < count; ++i) {
        to[i] = from[i];
    }
    return destination;
}

extern "C" [[noreturn]] void gate_main(long* stack) {
    long argc = stack[0];
    char** argv = reinterpret_cast<char**>(stack + 1);
    char** envp = argv + argc + 1;
    if (argc < 3) {
        exit_group(127);
    }
    long sync = parse_fd(argv[0]);
    long fifo = parse_fd(argv[1]);
    if (fifo >= 0) {
        die_on_termination_signals();
        wait_for_start(sync, fifo);
    }
    close_on_exec(fifo);
    sync = close_on_exec(sync);
    long error = -system_call(kSysExecve, reinterpret_cast<long>(argv[2]),
                              reinterpret_cast<long>(argv + 3), reinterpret_cast<long>(envp));
    // Still here: the frame process.cpp would have sent, `exec <path>: <reason>`.
    fail(sync, "exec", argv[2], error);
}

asm(R"(
    .text
    .globl gate_sigreturn
    .type gate_sigreturn, @function
gate_sigreturn:
    mov $15, %eax
    syscall
    hlt
)");

// The entry point: the kernel leaves argc, argv and envp on the stack; gate_main gets a
// pointer to them on a 16-byte aligned stack, as the ABI wants for a call.
asm(R"(
    .text
    .globl _start
    .type _start, @function
_start:
    xor %ebp, %ebp
    mov %rsp, %rdi
    and $-16, %rsp
    call gate_main
    hlt
)");
