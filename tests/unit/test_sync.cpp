#include "sync.hpp"

#include <catch2/catch.hpp>

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

    REQUIRE(init.send(SyncMessage::kStart).ok());
    auto wrong = parent.expect(SyncMessage::kCreated);
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().errno_value() == EPROTO);

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
