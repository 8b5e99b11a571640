// config.json parsing: malformed JSON, unknown and null properties, lenient readings, the
// standalone process object and namespace types.
#include "spec_fixture.hpp"

#include <catch2/catch.hpp>

using Catch::Matchers::StartsWith;
using minirun::spec::NamespaceType;
using namespace spec_test;

TEST_CASE("malformed JSON gives a one-line parse error with line and column", "[spec]") {
    SECTION("a syntax error") {
        auto result = parse_spec("{\n  \"ociVersion\": \"1.0.0\",\n  oops\n}");
        REQUIRE_FALSE(result.ok());
        const std::string& message = result.error().message();
        REQUIRE_THAT(message, StartsWith("config.json: parse error at line 3, column 3: "));
        CHECK(message.find('\n') == std::string::npos);
        CHECK(message.find("[json.exception") == std::string::npos);
    }
    SECTION("empty input") {
        auto result = parse_spec("");
        REQUIRE_FALSE(result.ok());
        REQUIRE_THAT(result.error().message(),
                     StartsWith("config.json: parse error at line 1, column 1: "));
    }
    SECTION("truncated input names the given source") {
        auto result = parse_spec(R"({"ociVersion": "1.0.0", "root": {)", "/b/config.json");
        REQUIRE_FALSE(result.ok());
        REQUIRE_THAT(result.error().message(), StartsWith("/b/config.json: parse error at line 1"));
    }
    SECTION("a raw newline inside a string does not break the message") {
        auto result = parse_spec("{\"ociVersion\": \"1.0\n\"}");
        REQUIRE_FALSE(result.ok());
        REQUIRE_THAT(result.error().message(), StartsWith("config.json: parse error at line "));
        CHECK(result.error().message().find('\n') == std::string::npos);
    }
    SECTION("the top level must be an object") {
        for (const char* text : {"[]", "\"config\"", "42", "null"}) {
            auto result = parse_spec(text);
            REQUIRE_FALSE(result.ok());
            REQUIRE_THAT(result.error().message(),
                         StartsWith("config.json: expected a JSON object, got "));
        }
        CHECK(parse_spec("[1]").error().message() ==
              "config.json: expected a JSON object, got array");
    }
}

TEST_CASE("unknown properties are ignored at every level", "[spec]") {
    std::string text = edited(full_config, {
                                               {"/x-vendor", R"({"anything": [1, 2]})"},
                                               {"/process/futureSetting", R"({"class": 1})"},
                                               {"/process/user/username", R"("bob")"},
                                               {"/root/unknown", "1"},
                                               {"/mounts/0/future", "[]"},
                                               {"/hooks/unknownHook", "[1]"},
                                               {"/linux/intelRdt", R"({"closID": "x"})"},
                                               {"/linux/namespaces/0/extra", "true"},
                                               {"/linux/resources/memory/future", "1"},
                                               {"/linux/seccomp/syscalls/0/comment", "1"},
                                               {"/windows", "{}"},
                                           });
    Spec with_extras = parse_ok(text);
    Spec plain = parse_ok(full_config);
    CHECK(with_extras.process->user.uid == plain.process->user.uid);
    CHECK(with_extras.linux.namespaces.size() == plain.linux.namespaces.size());
    CHECK(with_extras.linux.resources->memory->limit == plain.linux.resources->memory->limit);
    CHECK(with_extras.mounts.size() == plain.mounts.size());
}

TEST_CASE("null reads as absent, like Go's omitted fields", "[spec]") {
    Spec spec = parse_ok(edited(full_config, {
                                                 {"/process/env", "null"},
                                                 {"/process/capabilities", "null"},
                                                 {"/hooks", "null"},
                                                 {"/linux/seccomp", "null"},
                                                 {"/linux/resources/memory", "null"},
                                                 {"/annotations", "null"},
                                             }));
    CHECK(spec.process->env.empty());
    CHECK_FALSE(spec.process->capabilities);
    CHECK(spec.hooks.prestart.empty());
    CHECK_FALSE(spec.linux.seccomp);
    CHECK_FALSE(spec.linux.resources->memory);
    CHECK(spec.annotations.empty());
}

TEST_CASE("mount destinations are made absolute and lexically clean", "[spec]") {
    struct Case {
        const char* destination;
        const char* expected;
    };
    for (const Case& c : std::vector<Case>{
             {"/proc", "/proc"},
             {"proc", "/proc"},
             {"tmp/x", "/tmp/x"},
             {"/a/../b", "/b"},
             {"/../../etc", "/etc"},
             {"../../../etc/passwd", "/etc/passwd"},
             {"a/./b//c/", "/a/b/c"},
             {"..", "/"},
             {"data/x", "/data/x"},
             {"data/../../x", "/x"},
             {"./data/x/..", "/data"},
             {"/", "/"},
             {"/dev/shm/", "/dev/shm"},
         }) {
        Json document = Json::parse(minimal_config);
        // On /proc only a proc mount is allowed (runc 1.3's checkProcMount).
        const char* type = std::string_view(c.expected) == "/proc" ? "proc" : "tmpfs";
        document["mounts"] = Json::array({{{"destination", c.destination}, {"type", type}}});
        Spec spec = parse_ok(document.dump());
        INFO("destination " << c.destination);
        REQUIRE(spec.mounts.size() == 1);
        CHECK(spec.mounts[0].destination == c.expected);
    }
}

TEST_CASE("lenient readings of Go-isms and kernel defaults", "[spec]") {
    SECTION("swappiness -1 or 2^64-1 means unset") {
        for (const char* value : {"-1", "18446744073709551615"}) {
            Spec spec =
                parse_ok(edited(full_config, {{"/linux/resources/memory/swappiness", value}}));
            CHECK_FALSE(spec.linux.resources->memory->swappiness);
        }
    }
    SECTION("blkio weight 0 means unset") {
        Spec spec = parse_ok(edited(full_config, {{"/linux/resources/blockIO/weight", "0"}}));
        CHECK_FALSE(spec.linux.resources->block_io->weight);
    }
    SECTION("device rule type and access default to all") {
        Spec spec = parse_ok(edited(full_config, {{"/linux/resources/devices/1/type", R"("")"},
                                                  {"/linux/resources/devices/1/access", R"("")"}}));
        CHECK(spec.linux.resources->devices[1].type == "a");
        CHECK(spec.linux.resources->devices[1].access == "rwm");
    }
    SECTION("device access letters other than r, w and m are dropped, as runc does") {
        Spec spec =
            parse_ok(edited(full_config, {{"/linux/resources/devices/1/access", R"("rwa")"}}));
        CHECK(spec.linux.resources->devices[1].access == "rw");
        Spec mknod =
            parse_ok(edited(full_config, {{"/linux/resources/devices/1/access", R"("xm")"}}));
        CHECK(mknod.linux.resources->devices[1].access == "m");
    }
    SECTION("unknown capability names are kept for the runtime to warn about and skip") {
        Spec spec =
            parse_ok(edited(full_config, {{"/process/capabilities/bounding/0", R"("CAP_FOO")"}}));
        CHECK(spec.process->capabilities->bounding.front() == "CAP_FOO");
    }
    SECTION("an empty namespace path means a new namespace") {
        Spec spec = parse_ok(edited(full_config, {{"/linux/namespaces/1/path", R"("")"}}));
        CHECK(spec.linux.namespaces[1].path.empty());
    }
    SECTION("a joined user namespace needs no mappings") {
        Spec spec =
            parse_ok(edited(full_config, {{"/linux/namespaces/5/path", R"("/proc/1/ns/user")"},
                                          {"/linux/uidMappings"},
                                          {"/linux/gidMappings"}}));
        CHECK(spec.linux.uid_mappings.empty());
    }
    SECTION("a hostname with a joined UTS namespace is fine") {
        Spec spec =
            parse_ok(edited(full_config, {{"/linux/namespaces/4/path", R"("/proc/1/ns/uts")"}}));
        CHECK(spec.hostname == "box");
    }
    SECTION("net.* sysctls are fine in a joined network namespace") {
        Spec spec = parse_ok(full_config);
        CHECK(spec.linux.namespaces[1].path == "/var/run/netns/test");
        CHECK(spec.linux.sysctl.count("net.ipv4.ip_forward") == 1);
    }
    SECTION("sysctl names may use / as the separator") {
        Spec spec =
            parse_ok(edited(full_config, {{"/linux/sysctl/net~1core~1somaxconn", R"("1")"}}));
        CHECK(spec.linux.sysctl.at("net/core/somaxconn") == "1");
    }
    SECTION("SCMP_ACT_TRACE takes an errno") {
        Spec spec = parse_ok(
            edited(full_config, {{"/linux/seccomp/syscalls/0/action", R"("SCMP_ACT_TRACE")"},
                                 {"/linux/seccomp/syscalls/0/errnoRet", "3"}}));
        CHECK(spec.linux.seccomp->syscalls[0].errno_ret == std::optional<uint32_t>(3));
    }
    SECTION("every spec'd seccomp action, operator, flag and propagation is accepted") {
        for (const char* action : {"SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
                                   "SCMP_ACT_TRAP", "SCMP_ACT_ERRNO", "SCMP_ACT_TRACE",
                                   "SCMP_ACT_ALLOW", "SCMP_ACT_LOG", "SCMP_ACT_NOTIFY"}) {
            INFO(action);
            CHECK(parse_spec(edited(full_config, {{"/linux/seccomp/syscalls/0/action",
                                                   Json(action).dump().c_str()}}))
                      .ok());
        }
        for (const char* op : {"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ",
                               "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ"}) {
            INFO(op);
            CHECK(parse_spec(edited(full_config, {{"/linux/seccomp/syscalls/1/args/0/op",
                                                   Json(op).dump().c_str()}}))
                      .ok());
        }
        for (const char* flag :
             {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
              "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"}) {
            INFO(flag);
            CHECK(parse_spec(
                      edited(full_config, {{"/linux/seccomp/flags/0", Json(flag).dump().c_str()}}))
                      .ok());
        }
        for (const char* propagation : {"", "private", "rprivate", "slave", "rslave", "shared",
                                        "rshared", "unbindable", "runbindable"}) {
            INFO(propagation);
            CHECK(parse_spec(edited(full_config, {{"/linux/rootfsPropagation",
                                                   Json(propagation).dump().c_str()}}))
                      .ok());
        }
    }
}

TEST_CASE("parse_process reads a standalone process object", "[spec]") {
    using minirun::spec::parse_process;
    SECTION("valid") {
        auto result = parse_process(
            R"({"args": ["ps", "aux"], "env": ["A=1"], "cwd": "/tmp", "user": {"uid": 7},
                "capabilities": {"bounding": ["CAP_KILL"]}, "unknown": 1})",
            "process.json");
        REQUIRE(result.ok());
        CHECK(result->args == std::vector<std::string>{"ps", "aux"});
        CHECK(result->env == std::vector<std::string>{"A=1"});
        CHECK(result->cwd == "/tmp");
        CHECK(result->user.uid == 7);
        CHECK(result->capabilities->bounding == std::vector<std::string>{"CAP_KILL"});
    }
    SECTION("errors have paths starting at process") {
        CHECK(parse_process(R"({"args": []})", "p.json").error().message() ==
              "process.args: must not be empty");
        CHECK(parse_process(R"({"cwd": "/"})", "p.json").error().message() ==
              "process.args: is required");
        CHECK(parse_process(R"({"args": ["sh"], "cwd": "tmp"})", "p.json").error().message() ==
              R"(process.cwd: must be an absolute path, got "tmp")");
        CHECK(parse_process(R"({"args": ["sh"], "rlimits": [{"type": "RLIMIT_X", "soft": 1,
                                "hard": 1}]})",
                            "p.json")
                  .error()
                  .message() == R"(process.rlimits[0].type: unknown rlimit "RLIMIT_X")");
    }
    SECTION("malformed or non-object input names the source") {
        REQUIRE_THAT(parse_process("{", "p.json").error().message(),
                     StartsWith("p.json: parse error at line 1, column 2: "));
        CHECK(parse_process("[]", "p.json").error().message() ==
              "p.json: expected a JSON object, got array");
    }
}

TEST_CASE("namespace type names round-trip", "[spec]") {
    using minirun::spec::namespace_type_from_name;
    using minirun::spec::namespace_type_name;
    for (const char* name : {"pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time"}) {
        auto type = namespace_type_from_name(name);
        REQUIRE(type);
        CHECK(namespace_type_name(*type) == name);
    }
    CHECK_FALSE(namespace_type_from_name("net"));
    CHECK_FALSE(namespace_type_from_name(""));
    CHECK_FALSE(namespace_type_from_name("Mount"));
}

TEST_CASE("Linux::find_namespace finds the entry of a type", "[spec]") {
    Spec spec = parse_ok(full_config);
    const auto* network = spec.linux.find_namespace(NamespaceType::network);
    REQUIRE(network != nullptr);
    CHECK(network->path == "/var/run/netns/test");
    Spec minimal = parse_ok(minimal_config);
    CHECK(minimal.linux.find_namespace(NamespaceType::mount) != nullptr);
    CHECK(minimal.linux.find_namespace(NamespaceType::user) == nullptr);
}

TEST_CASE("a namespace not listed is inherited: no mount namespace is valid", "[spec]") {
    // config-linux.md; the mounts are then made in the caller's mount namespace.
    CHECK(parse_spec(edited(minimal_config, {{"/linux/namespaces", "[]"}})).ok());
    CHECK(parse_spec(edited(minimal_config, {{"/linux"}})).ok());
    // Without mount and user namespaces (and the user namespace's mappings).
    CHECK(parse_spec(edited(full_config, {{"/linux/namespaces/2"},
                                          {"/linux/namespaces/4"},
                                          {"/linux/uidMappings"},
                                          {"/linux/gidMappings"}}))
              .ok());
}

TEST_CASE("a number too large for a double is a parse error", "[spec]") {
    auto result = parse_spec(R"({"ociVersion": "1.0.0", "x": 1e999})");
    REQUIRE_FALSE(result.ok());
    REQUIRE_THAT(result.error().message(), StartsWith("config.json: parse error: "));
}
