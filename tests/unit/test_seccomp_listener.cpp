// seccomp::Filter: configuration errors, moves, and the SCMP_ACT_NOTIFY listener socket.
//
// The shared helpers and how the tests run a filter: seccomp_fixture.hpp.
#include "seccomp_fixture.hpp"

#include <catch2/catch.hpp>

using Catch::Matchers::Contains;
using minirun::runtime::seccomp::connect_listener;
using minirun::runtime::seccomp::send_to_listener;
using namespace seccomp_test;

TEST_CASE("seccomp: configuration errors name the JSON path", "[seccomp]") {
    CHECK(build_error(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_ERRNO", 70000)})) ==
          "linux.seccomp.syscalls[0].errnoRet: must be at most 65535, got 70000");
    CHECK(build_error(config("SCMP_ACT_ERRNO", {}, 65536)) ==
          "linux.seccomp.defaultErrnoRet: must be at most 65535, got 65536");
    CHECK(build_error(config("SCMP_ACT_ALLOW", {rule({"getpid"}, "SCMP_ACT_ALLOW"),
                                                rule({"getppid"}, "SCMP_ACT_DANCE")})) ==
          R"(linux.seccomp.syscalls[1].action: unknown seccomp action "SCMP_ACT_DANCE")");
    CHECK(build_error(config("SCMP_ACT_DANCE", {})) ==
          R"(linux.seccomp.defaultAction: unknown seccomp action "SCMP_ACT_DANCE")");
    CHECK(build_error(config("SCMP_ACT_ALLOW",
                             {rule({"close"}, "SCMP_ACT_ERRNO", std::nullopt,
                                   {arg(0, "SCMP_CMP_EQ", 1), arg(1, "SCMP_CMP_LIKE", 2)})})) ==
          R"(linux.seccomp.syscalls[0].args[1].op: unknown seccomp operator "SCMP_CMP_LIKE")");
    CHECK_THAT(build_error(config("SCMP_ACT_NOTIFY", {})),
               Contains("linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default"));
    CHECK_THAT(
        build_error(config("SCMP_ACT_ALLOW", {rule({"getpid", "sendmsg"}, "SCMP_ACT_NOTIFY")})),
        Contains(R"(linux.seccomp.syscalls[0].names[1] "sendmsg": SCMP_ACT_NOTIFY cannot)"));
    // runc's suite: a notified write would deadlock the runtime, which reports errors with it.
    CHECK_THAT(build_error(config("SCMP_ACT_ALLOW", {rule({"write"}, "SCMP_ACT_NOTIFY")})),
               Contains("SCMP_ACT_NOTIFY cannot be used for the write syscall"));

    // libseccomp's own refusal, with its errno: an argument index the parser would have
    // refused (a syscall has six).
    auto refused = Filter::build(
        config("SCMP_ACT_ALLOW",
               {rule({"close"}, "SCMP_ACT_ERRNO", std::nullopt, {arg(6, "SCMP_CMP_EQ", 1)})}));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message() ==
          R"(linux.seccomp.syscalls[0].names[0] "close": add rule: Invalid argument)");
    CHECK(refused.error().errno_value() == EINVAL);
}

TEST_CASE("seccomp: moving a filter moves the context", "[seccomp]") {
    Filter first = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_NOTIFY")}));
    CHECK(first.uses_notify());
    Filter second(std::move(first));
    CHECK(first.empty()); // NOLINT(bugprone-use-after-move): the moved-from state is the point
    CHECK_FALSE(first.uses_notify());
    CHECK(first.rule_count() == 0);
    CHECK_FALSE(second.empty());
    CHECK(second.uses_notify());
    CHECK(second.rule_count() == 1);

    Filter third = build(config("SCMP_ACT_ALLOW", {}));
    third = std::move(second);
    CHECK(third.rule_count() == 1);
    CHECK(second.empty()); // NOLINT(bugprone-use-after-move)

    // An empty filter loads as nothing (no fork needed: nothing is installed).
    Filter empty;
    auto loaded = empty.load(minirun::linux_syscalls());
    REQUIRE(loaded.ok());
    CHECK_FALSE(loaded->valid());
}

TEST_CASE("seccomp: SCMP_ACT_NOTIFY yields a listener an agent can answer from", "[seccomp]") {
    Filter filter = build(config("SCMP_ACT_ALLOW", {rule({"getppid"}, "SCMP_ACT_NOTIFY")}));
    REQUIRE(filter.uses_notify());
    auto [agent, container] = stream_pair();
    constexpr long kAnswer = 4242;

    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        agent.reset();
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
            ::_exit(kNoNewPrivsFailed);
        }
        auto listener = filter.load(minirun::linux_syscalls());
        if (!listener.ok() || !listener->valid()) {
            ::_exit(kLoadFailed);
        }
        int flags = ::fcntl(listener->get(), F_GETFD);
        if (flags < 0 || (flags & FD_CLOEXEC) == 0) {
            ::_exit(1);
        }
        if (!send_to_listener(container.get(), listener->get(), "1.2.0", ::getpid(), "meta",
                              R"({"ociVersion":"1.2.0","id":"c1","status":"creating"})")
                 .ok()) {
            ::_exit(2);
        }
        listener->reset();
        // Handed to the agent, which answers for the kernel.
        ::_exit(::syscall(SYS_getppid) == kAnswer ? 0 : 3);
    }
    container.reset();

    Received received = receive_message(agent.get());
    REQUIRE(received.fds.size() == 1);
    auto message = nlohmann::json::parse(received.payload);
    CHECK(message["pid"] == pid);
    CHECK(message["metadata"] == "meta");

    int listener = received.fds[0].get();
    pollfd ready{listener, POLLIN, 0};
    REQUIRE(::poll(&ready, 1, 10000) == 1);
    seccomp_notif* request = nullptr;
    seccomp_notif_resp* response = nullptr;
    REQUIRE(seccomp_notify_alloc(&request, &response) == 0);
    REQUIRE(seccomp_notify_receive(listener, request) == 0);
    CHECK(request->pid == static_cast<uint32_t>(pid));
    CHECK(request->data.nr == SYS_getppid);
    response->id = request->id;
    response->val = kAnswer;
    response->error = 0;
    response->flags = 0;
    CHECK(seccomp_notify_respond(listener, response) == 0);
    seccomp_notify_free(request, response);

    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("seccomp: send_to_listener sends the container process state", "[seccomp]") {
    auto [receiver, sender] = stream_pair();
    std::array<int, 2> pipe_fds{};
    REQUIRE(::pipe2(pipe_fds.data(), O_CLOEXEC) == 0);
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);

    std::string state = R"({"ociVersion":"1.2.0","id":"c1","status":"creating","pid":42,)"
                        R"("bundle":"/b","annotations":{"k":"v"}})";
    REQUIRE(
        send_to_listener(sender.get(), read_end.get(), "1.2.0", 42, "MKNOD=/dev/null", state).ok());
    sender.reset(); // so that one read sees everything that was sent

    Received received = receive_message(receiver.get());
    CHECK_FALSE(received.truncated);
    REQUIRE(received.fds.size() == 1);
    struct stat sent_stat {};
    struct stat got_stat {};
    REQUIRE(::fstat(read_end.get(), &sent_stat) == 0);
    REQUIRE(::fstat(received.fds[0].get(), &got_stat) == 0);
    CHECK(sent_stat.st_ino == got_stat.st_ino);
    CHECK(::fcntl(received.fds[0].get(), F_GETFD) == FD_CLOEXEC);

    auto message = nlohmann::json::parse(received.payload);
    CHECK(message["ociVersion"] == "1.2.0");
    CHECK(message["fds"] == nlohmann::json::array({"seccompFd"}));
    CHECK(message["pid"] == 42);
    CHECK(message["metadata"] == "MKNOD=/dev/null");
    CHECK(message["state"] == nlohmann::json::parse(state));
    CHECK(::recv(receiver.get(), received.payload.data(), 1, 0) == 0); // nothing more

    SECTION("no metadata: the field is left out") {
        auto [r2, s2] = stream_pair();
        REQUIRE(send_to_listener(s2.get(), read_end.get(), "1.2.0", 7, "", "{}").ok());
        Received second = receive_message(r2.get());
        auto parsed = nlohmann::json::parse(second.payload);
        CHECK_FALSE(parsed.contains("metadata"));
        CHECK(parsed["state"] == nlohmann::json::object());
        CHECK(second.fds.size() == 1);
    }
    SECTION("a state that is not a JSON object") {
        auto result = send_to_listener(sender.get(), read_end.get(), "1.2.0", 7, "", "{oops");
        REQUIRE_FALSE(result.ok());
        CHECK_THAT(result.error().message(), Contains("not a JSON object"));
    }
    SECTION("a closed peer") {
        auto [r3, s3] = stream_pair();
        r3.reset();
        auto result = send_to_listener(s3.get(), read_end.get(), "1.2.0", 7, "", "{}");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().errno_value() == EPIPE);
    }
}

TEST_CASE("seccomp: connect_listener", "[seccomp]") {
    minirun::testing::TempDir dir;
    std::string path = dir.path() + "/agent.sock";

    SECTION("a listening socket") {
        UniqueFd server(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        REQUIRE(server);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(static_cast<char*>(address.sun_path), path.c_str(),
                     sizeof(address.sun_path) - 1);
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
        REQUIRE(::bind(server.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
        REQUIRE(::listen(server.get(), 1) == 0);

        auto client = connect_listener(path);
        INFO((client.ok() ? std::string() : client.error().message()));
        REQUIRE(client.ok());
        CHECK(::fcntl(client->get(), F_GETFD) == FD_CLOEXEC);
        UniqueFd accepted(::accept4(server.get(), nullptr, nullptr, SOCK_CLOEXEC));
        CHECK(accepted);
    }
    SECTION("nothing there") {
        auto client = connect_listener(path);
        REQUIRE_FALSE(client.ok());
        CHECK(client.error().errno_value() == ENOENT);
        CHECK(client.error().message() ==
              "linux.seccomp.listenerPath " + minirun::quoted(path) +
                  ": failed to connect with seccomp agent: No such file or "
                  "directory");
    }
    SECTION("a path too long for a socket address") {
        std::string long_path = "/" + std::string(200, 'x');
        auto client = connect_listener(long_path);
        REQUIRE_FALSE(client.ok());
        CHECK(client.error().errno_value() == ENAMETOOLONG);
        CHECK_THAT(client.error().message(), Contains("linux.seccomp.listenerPath"));
    }
}
