#include "sync.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

using namespace minirun;
using namespace minirun::runtime;

TEST_CASE("sync socket: messages, errors and end of stream", "[sync]") {
    auto pair = SyncSocket::create_pair();
    REQUIRE(pair.ok());
    auto& [parent, init] = *pair;

    REQUIRE(parent.send(SyncMessage::kParentReady).ok());
    REQUIRE(init.expect(SyncMessage::kParentReady).ok());

    init.send_error(Error(ENOENT, "exec: \"x\": not found"));
    auto event = parent.receive();
    REQUIRE(event.ok());
    CHECK_FALSE(event->eof);
    CHECK(event->message == SyncMessage::kError);
    CHECK(event->error.errno_value() == ENOENT);
    CHECK(event->error.message() == "exec: \"x\": not found");

    // An error where another message was expected is returned as that error.
    init.send_error(Error(EPERM, "mount failed"));
    auto expected = parent.expect(SyncMessage::kCreated);
    REQUIRE_FALSE(expected.ok());
    CHECK(expected.error().message() == "mount failed");

    REQUIRE(init.send(SyncMessage::kRunHooks).ok());
    auto wrong = parent.expect(SyncMessage::kCreated);
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().errno_value() == EPROTO);

    // A payload, and an fd that arrives as a new descriptor of the same file.
    REQUIRE(parent.send(SyncMessage::kParentReady, "1234").ok());
    auto ready = init.expect(SyncMessage::kParentReady);
    REQUIRE(ready.ok());
    CHECK(ready->payload == "1234");
    CHECK_FALSE(ready->fd.valid());

    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);
    REQUIRE(init.send(SyncMessage::kConsole, "", write_end.get()).ok());
    auto console = parent.expect(SyncMessage::kConsole);
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

TEST_CASE("sync socket: long error messages are cut, not lost", "[sync]") {
    auto pair = SyncSocket::create_pair();
    REQUIRE(pair.ok());
    auto& [parent, init] = *pair;
    init.send_error(Error(EIO, std::string(10000, 'x')));
    auto event = parent.receive();
    REQUIRE(event.ok());
    CHECK(event->error.message().size() == 4096 - 8);
}
