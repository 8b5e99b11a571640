#include "sync.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>

using namespace minirun;
using namespace minirun::runtime;

TEST_CASE("sync socket: messages, errors and end of stream", "[sync]") {
    auto pair = create_sync_pair();
    REQUIRE(pair.ok());
    auto& [parent, init] = *pair;

    REQUIRE(parent.send(ToInit::kParentReady).ok());
    REQUIRE(init.expect(ToInit::kParentReady).ok());

    init.send_error(Error(ENOENT, "exec: \"x\": not found"));
    auto event = parent.receive();
    REQUIRE(event.ok());
    CHECK_FALSE(event->eof);
    CHECK(event->message == ToParent::kError);
    CHECK(event->error.errno_value() == ENOENT);
    CHECK(event->error.message() == "exec: \"x\": not found");

    // An error where another message was expected is returned as that error.
    init.send_error(Error(EPERM, "mount failed"));
    auto expected = parent.expect(ToParent::kCreated);
    REQUIRE_FALSE(expected.ok());
    CHECK(expected.error().message() == "mount failed");

    REQUIRE(init.send(ToParent::kRunHooks).ok());
    auto wrong = parent.expect(ToParent::kCreated);
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().errno_value() == EPROTO);

    // A payload, and an fd that arrives as a new descriptor of the same file.
    REQUIRE(parent.send(ToInit::kParentReady, "1234").ok());
    auto ready = init.expect(ToInit::kParentReady);
    REQUIRE(ready.ok());
    CHECK(ready->payload == "1234");
    CHECK_FALSE(ready->fd.valid());

    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);
    REQUIRE(init.send(ToParent::kConsole, "", write_end.get()).ok());
    auto console = parent.expect(ToParent::kConsole);
    REQUIRE(console.ok());
    REQUIRE(console->fd.valid());
    CHECK(console->fd.get() != write_end.get());
    CHECK((::fcntl(console->fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
    REQUIRE(::write(console->fd.get(), "x", 1) == 1);
    char byte = 0;
    REQUIRE(::read(read_end.get(), &byte, 1) == 1);
    CHECK(byte == 'x');

    init.close();
    auto end = parent.receive();
    REQUIRE(end.ok());
    CHECK(end->eof);
}

TEST_CASE("sync socket: the init's error is read even when it left a frame of ours unread",
          "[sync]") {
    // The init fails and exits before it reads kParentReady: the kernel then reports
    // ECONNRESET to the parent once, before the init's kError that is still queued. The
    // parent used to take the reset for the end of stream and say "the container's init
    // exited during setup" (seen in CI, rootless, with no seccomp agent).
    auto pair = create_sync_pair();
    REQUIRE(pair.ok());
    auto& [parent, init] = *pair;
    init.send_error(Error(ECONNREFUSED, "linux.seccomp.listenerPath: failed to connect"));
    REQUIRE(parent.send(ToInit::kParentReady, "42").ok());
    init.close();
    auto event = parent.receive();
    REQUIRE(event.ok());
    CHECK_FALSE(event->eof);
    CHECK(event->message == ToParent::kError);
    CHECK(event->error.errno_value() == ECONNREFUSED);
    CHECK(event->error.message() == "linux.seccomp.listenerPath: failed to connect");
    auto end = parent.receive();
    REQUIRE(end.ok());
    CHECK(end->eof);

    // Nothing queued: the reset is the end of stream, as before.
    auto quiet = create_sync_pair();
    REQUIRE(quiet.ok());
    REQUIRE(quiet->first.send(ToInit::kParentReady).ok());
    quiet->second.close();
    auto gone = quiet->first.receive();
    REQUIRE(gone.ok());
    CHECK(gone->eof);
}

TEST_CASE("sync socket: long error messages are cut, not lost", "[sync]") {
    auto pair = create_sync_pair();
    REQUIRE(pair.ok());
    auto& [parent, init] = *pair;
    init.send_error(Error(EIO, std::string(10000, 'x')));
    auto event = parent.receive();
    REQUIRE(event.ok());
    CHECK(event->error.message().size() == 4096 - 8);
}

TEST_CASE("sync socket: a frame of the other direction is refused, not misread", "[sync]") {
    auto pair = create_sync_pair();
    REQUIRE(pair.ok());
    auto& [parent, init] = *pair;
    // A raw frame numbered like an init-to-parent message, arriving at the init's end: what a
    // confused or hostile peer could send. The typed ends cannot even express it.
    SyncChannel raw(UniqueFd(::dup(parent.fd())));
    REQUIRE(raw.send(static_cast<uint32_t>(ToParent::kCreated), "", -1).ok());
    auto got = init.receive();
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().errno_value() == EPROTO);
    // And the parent's end refuses the parent's own messages the same way.
    SyncChannel from_init(UniqueFd(::dup(init.fd())));
    REQUIRE(from_init.send(static_cast<uint32_t>(ToInit::kHooksDone), "", -1).ok());
    auto back = parent.receive();
    REQUIRE_FALSE(back.ok());
    CHECK(back.error().errno_value() == EPROTO);
}

TEST_CASE("sync socket: a kLog frame is one line, cut to a frame; receive() writes it out",
          "[sync][log]") {
    auto pair = create_sync_pair();
    REQUIRE(pair.ok());
    auto& [parent, init] = *pair;
    // On the wire: the header (message 7, no errno), then the line without a newline.
    std::array<char, kMaxSyncFrame + 64> frame{};
    send_log_line(init.fd(), "mini-run: hello");
    ssize_t got = ::recv(parent.fd(), frame.data(), frame.size(), 0);
    REQUIRE(got == static_cast<ssize_t>(sizeof(SyncFrameHeader) + 15));
    SyncFrameHeader header{};
    std::memcpy(&header, frame.data(), sizeof(header));
    CHECK(header.message == 7);
    CHECK(header.message == static_cast<uint32_t>(ToParent::kLog));
    CHECK(header.error_number == 0);
    CHECK(std::string_view(frame.data() + sizeof(header), 15) == "mini-run: hello");
    send_log_line(init.fd(), std::string(10000, 'x'));
    CHECK(::recv(parent.fd(), frame.data(), frame.size(), 0) ==
          static_cast<ssize_t>(kMaxSyncFrame));

    // The parent's receive() writes each line to its stderr and returns the next message.
    std::array<int, 2> pipe_fds{};
    REQUIRE(::pipe2(pipe_fds.data(), O_CLOEXEC) == 0);
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd saved_stderr(::dup(STDERR_FILENO));
    REQUIRE(::dup2(pipe_fds[1], STDERR_FILENO) == STDERR_FILENO);
    ::close(pipe_fds[1]);
    send_log_line(init.fd(), "first line");
    send_log_line(init.fd(), "second line");
    REQUIRE(init.send(ToParent::kCreated).ok());
    auto created = parent.expect(ToParent::kCreated);
    ::dup2(saved_stderr.get(), STDERR_FILENO);
    REQUIRE(created.ok());
    std::array<char, 256> text{};
    ssize_t length = ::read(read_end.get(), text.data(), text.size());
    REQUIRE(length > 0);
    CHECK(std::string_view(text.data(), static_cast<size_t>(length)) ==
          "first line\nsecond line\n");
}
