#include "plan.hpp"
#include "plan_bundle.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sched.h>
#include <sys/mount.h>

using namespace minirun;
using namespace minirun::runtime;
using minirun::testing::TempDir;
using nlohmann::json;

namespace {

json base_config() {
    return json{
        {"ociVersion", "1.0.2"},
        {"root", {{"path", "rootfs"}}},
        {"process", {{"args", {"sh"}}, {"cwd", "/"}}},
        {"linux", {{"namespaces", json::array({{{"type", "mount"}}})}}},
    };
}

using Bundle = minirun::testing::PlanBundle;

void add_namespace(json& config, const std::string& type, const std::string& path = "") {
    json ns = {{"type", type}};
    if (!path.empty()) {
        ns["path"] = path;
    }
    config["linux"]["namespaces"].push_back(ns);
}

} // namespace

TEST_CASE("plan: each new namespace becomes a clone flag", "[plan]") {
    Bundle bundle;
    json config = base_config();
    for (const char* type : {"pid", "network", "ipc", "uts"}) {
        add_namespace(config, type);
    }
    config["hostname"] = "box";
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    CHECK(plan->clone_flags ==
          (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS));
    CHECK(plan->unshare_flags == 0);
    CHECK_FALSE(plan->wait_for_parent);
    CHECK(plan->joins.empty());
    CHECK(plan->rootfs == bundle.dir.path() + "/rootfs");
    CHECK(plan->bundle == bundle.dir.path());
}

TEST_CASE("plan: a cgroup namespace is unshared by the init once it is in its cgroups", "[plan]") {
    Bundle bundle;
    json config = base_config();
    add_namespace(config, "pid");
    add_namespace(config, "cgroup");
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    CHECK(plan->clone_flags == (CLONE_NEWNS | CLONE_NEWPID));
    CHECK(plan->unshare_flags == CLONE_NEWCGROUP);
    // The init joins its cgroups itself, before the unshare: no word from the parent needed.
    CHECK_FALSE(plan->wait_for_parent);
}

TEST_CASE("plan: a time namespace is left to the init, not to clone()", "[plan]") {
    Bundle bundle;
    json config = base_config();
    add_namespace(config, "time");
    config["linux"]["timeOffsets"] = {{"monotonic", {{"secs", 5}, {"nanosecs", 7}}}};
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    CHECK((plan->clone_flags & CLONE_NEWTIME) == 0);
    CHECK(plan->new_time_namespace);
    CHECK(plan->time_offsets == "monotonic 5 7\n");
}

TEST_CASE("plan: a user namespace makes the init wait for its id maps", "[plan]") {
    Bundle bundle;
    json config = base_config();
    add_namespace(config, "user");
    config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}},
                                      {{"containerID", 65536}, {"hostID", 5}, {"size", 1}}};
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    CHECK((plan->clone_flags & CLONE_NEWUSER) != 0);
    CHECK(plan->wait_for_parent);
    CHECK(plan->uid_map == "0 100000 65536\n");
    CHECK(plan->gid_map == "0 100000 65536\n65536 5 1\n");
}

TEST_CASE("plan: namespaces with a path are joined, the user namespace first", "[plan]") {
    Bundle bundle;
    json config = base_config();
    add_namespace(config, "network", "/proc/1/ns/net");
    add_namespace(config, "user", "/proc/1/ns/user");
    add_namespace(config, "uts");
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    REQUIRE(plan->joins.size() == 2);
    CHECK(plan->joins[0].type == spec::NamespaceType::user);
    CHECK(plan->joins[0].config_index == 2);
    CHECK(plan->joins[1].type == spec::NamespaceType::network);
    // Created after joining the user namespace, so that it owns them.
    CHECK(plan->clone_flags == 0);
    CHECK(plan->unshare_flags == (CLONE_NEWNS | CLONE_NEWUTS));
    CHECK(plan->joins_namespace(spec::NamespaceType::network));
    CHECK(plan->has_own(spec::NamespaceType::network));
    CHECK_FALSE(plan->creates(spec::NamespaceType::network));
}

TEST_CASE("plan: a new pid namespace in a joined user namespace comes from the parent", "[plan]") {
    // containerd's user-namespaced pod: the user namespace joined by path, with its mappings,
    // and new pid, mount, ipc and uts namespaces.
    Bundle bundle;
    json config = base_config();
    add_namespace(config, "user", "/proc/1/ns/user");
    add_namespace(config, "pid");
    add_namespace(config, "ipc");
    config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 200000}, {"size", 65536}}};
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    CHECK(plan->new_pid_namespace_in_joined_user);
    CHECK(plan->creates(spec::NamespaceType::pid));
    CHECK(plan->clone_flags == 0);
    // Not unshared by the init, which would put only its children in it.
    CHECK(plan->unshare_flags == (CLONE_NEWNS | CLONE_NEWIPC));
    // The maps the joined namespace must have.
    CHECK(plan->uid_map == "0 100000 65536\n");
    CHECK(plan->gid_map == "0 200000 65536\n");

    SECTION("without a pid namespace of its own, none is made") {
        json shared = base_config();
        add_namespace(shared, "user", "/proc/1/ns/user");
        auto without = bundle.plan(shared);
        REQUIRE(without.ok());
        CHECK_FALSE(without->new_pid_namespace_in_joined_user);
        CHECK_FALSE(without->creates(spec::NamespaceType::pid));
        CHECK(without->uid_map.empty()); // no mappings given: nothing to check
        CHECK_FALSE(without->init_forks_into_pid_namespace());
    }
    SECTION("a pid namespace joined with it: the init joins it and forks (rootless shared pidns)") {
        json joined = base_config();
        add_namespace(joined, "pid", "/proc/1/ns/pid");
        add_namespace(joined, "user", "/proc/1/ns/user");
        auto both = bundle.plan(joined);
        REQUIRE(both.ok());
        CHECK(both->pid_joined_by_init);
        CHECK_FALSE(both->new_pid_namespace_in_joined_user);
        CHECK(both->init_forks_into_pid_namespace());
        CHECK_FALSE(both->creates(spec::NamespaceType::pid));
        CHECK(both->joins.front().type == spec::NamespaceType::user); // joined first
    }
}

TEST_CASE("plan: unsupported namespace combinations are refused up front", "[plan]") {
    Bundle bundle;
    SECTION("new user namespace with a joined network namespace") {
        json config = base_config();
        add_namespace(config, "network", "/proc/1/ns/net");
        add_namespace(config, "user");
        config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
        config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
        auto plan = bundle.plan(config);
        REQUIRE_FALSE(plan.ok());
        CHECK_THAT(plan.error().message(),
                   Catch::StartsWith("linux.namespaces[1]: joining a network namespace"));
    }
}

TEST_CASE("plan: the rootfs must exist and be a directory", "[plan]") {
    Bundle bundle;
    json config = base_config();
    config["root"]["path"] = "missing";
    auto missing = bundle.plan(config);
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.error().message(), Catch::StartsWith("root.path: rootfs \""));
    CHECK_THAT(missing.error().message(), Catch::Contains("No such file or directory"));

    { std::ofstream(bundle.dir.path() + "/file") << "x"; }
    config["root"]["path"] = bundle.dir.path() + "/file";
    auto file = bundle.plan(config);
    REQUIRE_FALSE(file.ok());
    CHECK_THAT(file.error().message(), Catch::EndsWith("is not a directory"));
}

TEST_CASE("plan: a config without a process cannot be run", "[plan]") {
    Bundle bundle;
    json config = base_config();
    config.erase("process");
    auto plan = bundle.plan(config);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().message() == "process: required to run a container");
}

TEST_CASE("plan: mounts", "[plan]") {
    Bundle bundle;
    json config = base_config();
    config["mounts"] = json::array({
        {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
        {{"destination", "/data"}, {"type", "bind"}, {"source", "data"}, {"options", {"ro"}}},
        {{"destination", "/sys/fs/cgroup"}, {"type", "cgroup"}, {"options", {"ro"}}},
    });
    config["linux"]["rootfsPropagation"] = "rslave";
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    REQUIRE(plan->mounts.size() == 3);
    CHECK(plan->mounts[0].fs_type == "proc");
    CHECK_FALSE(plan->mounts[0].options.bind);
    // A "bind" type binds even without the option; its relative source is in the bundle.
    CHECK(plan->mounts[1].options.bind);
    CHECK(plan->mounts[1].fs_type.empty());
    CHECK(plan->mounts[1].source == bundle.dir.path() + "/data");
    CHECK(plan->mounts[1].options.flags == MS_RDONLY);
    CHECK(plan->mounts[2].is_cgroup);
    CHECK(plan->mounts[2].source == "cgroup");
    CHECK(plan->root_propagation == (MS_SLAVE | MS_REC));
    CHECK(plan->setup_dev);
}

TEST_CASE("plan: rprivate by default; a bound /dev gets no default devices", "[plan]") {
    Bundle bundle;
    json config = base_config();
    config["mounts"] =
        json::array({{{"destination", "/dev"}, {"source", "/dev"}, {"options", {"rbind"}}}});
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    CHECK(plan->root_propagation == (MS_PRIVATE | MS_REC));
    CHECK_FALSE(plan->setup_dev);
}

TEST_CASE("plan: NOTIFY_SOCKET binds the notify directory last and replaces the env's",
          "[plan][notify]") {
    Bundle bundle;
    json config = base_config();
    config["mounts"] = json::array({{{"destination", "/run"}, {"type", "tmpfs"}}});
    config["process"]["env"] = {"A=1", "NOTIFY_SOCKET=/config/own.sock", "B=2"};
    auto spec = spec::parse_spec(config.dump());
    REQUIRE(spec.ok());
    PlanInput input{"test", bundle.dir.path(), 0};
    auto without = make_plan(*spec, input);
    REQUIRE(without.ok());
    CHECK(without->mounts.size() == 1);
    CHECK(without->process.env == config["process"]["env"].get<std::vector<std::string>>());

    input.notify_dir = "/run/mini-run/test/notify";
    auto plan = make_plan(*spec, input);
    REQUIRE(plan.ok());
    REQUIRE(plan->mounts.size() == 2);
    // After the config's /run tmpfs, which would otherwise cover it (runc's order).
    const MountStep& notify = plan->mounts[1];
    CHECK(notify.destination == "/run/notify");
    CHECK(notify.source == "/run/mini-run/test/notify");
    CHECK(notify.options.bind);
    CHECK_FALSE(notify.options.recursive);
    CHECK(notify.options.flags == (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC));
    CHECK(plan->process.env ==
          std::vector<std::string>{"A=1", "B=2", "NOTIFY_SOCKET=/run/notify/notify.sock"});
}

TEST_CASE("plan_mount: a non-bind mount needs a type", "[plan]") {
    spec::Mount mount;
    mount.destination = "/x";
    auto step = plan_mount(mount, "/bundle");
    REQUIRE_FALSE(step.ok());
    CHECK(step.error().message() == "type: required unless the mount is a bind mount");

    mount.options = {"bind"};
    auto bind = plan_mount(mount, "/bundle");
    REQUIRE_FALSE(bind.ok());
    CHECK(bind.error().message() == "source: a bind mount needs a source");
}

TEST_CASE("plan: idmapped binds and the user namespace they map through", "[plan][idmap]") {
    Bundle bundle;
    json config = base_config();
    add_namespace(config, "user");
    config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}};
    config["linux"]["gidMappings"] = {{{"containerID", 0}, {"hostID", 200000}, {"size", 65536}}};
    json own_mappings = {{{"containerID", 1000}, {"hostID", 5000}, {"size", 10}},
                         {{"containerID", 0}, {"hostID", 100000}, {"size", 1}}};
    config["mounts"] = json::array({
        {{"destination", "/own"},
         {"source", "/srv/a"},
         {"options", {"bind", "idmap"}},
         {"uidMappings", own_mappings},
         {"gidMappings", own_mappings}},
        {{"destination", "/borrowed"}, {"source", "/srv/b"}, {"options", {"rbind", "ridmap"}}},
        // Mappings without the option: idmapped anyway, as runc reads them.
        {{"destination", "/implied"},
         {"type", "bind"},
         {"source", "/srv/c"},
         {"uidMappings", own_mappings},
         {"gidMappings", own_mappings}},
        {{"destination", "/plain"}, {"source", "/srv/d"}, {"options", {"rbind"}}},
    });
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    REQUIRE(plan->mounts.size() == 4);
    const auto& own = plan->mounts[0].idmap;
    REQUIRE(own);
    CHECK_FALSE(own->recursive);
    CHECK(own->uid_map == "1000 5000 10\n0 100000 1\n");
    CHECK(own->gid_map == "1000 5000 10\n0 100000 1\n");
    CHECK(own->userns_path.empty());
    const auto& borrowed = plan->mounts[1].idmap;
    REQUIRE(borrowed);
    CHECK(borrowed->recursive);
    CHECK(borrowed->uid_map == "0 100000 65536\n");
    CHECK(borrowed->gid_map == "0 200000 65536\n");
    const auto& implied = plan->mounts[2].idmap;
    REQUIRE(implied);
    CHECK_FALSE(implied->recursive);
    CHECK(implied->uid_map == own->uid_map);
    CHECK_FALSE(plan->mounts[3].idmap);
}

TEST_CASE("plan: idmap without mappings in a joined user namespace maps through it",
          "[plan][idmap]") {
    Bundle bundle;
    json config = base_config();
    add_namespace(config, "user", "/proc/1/ns/user");
    config["mounts"] = json::array(
        {{{"destination", "/data"}, {"source", "/srv"}, {"options", {"bind", "idmap"}}}});
    auto plan = bundle.plan(config);
    REQUIRE(plan.ok());
    REQUIRE(plan->mounts[0].idmap);
    CHECK(plan->mounts[0].idmap->userns_path == "/proc/1/ns/user");
    CHECK(plan->mounts[0].idmap->uid_map.empty());
}

TEST_CASE("plan: idmap refused on a new filesystem, and without mappings to take",
          "[plan][idmap]") {
    Bundle bundle;
    SECTION("not a bind") {
        json config = base_config();
        add_namespace(config, "user");
        config["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 10}}};
        config["linux"]["gidMappings"] = config["linux"]["uidMappings"];
        config["mounts"] =
            json::array({{{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
                         {{"destination", "/tmp"}, {"type", "tmpfs"}, {"options", {"ridmap"}}}});
        auto plan = bundle.plan(config);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().message() == "mounts[1]: options: idmapped mounts are only supported "
                                        "for bind mounts, not type \"tmpfs\"");
    }
    SECTION("no mappings and no user namespace") {
        json config = base_config();
        config["mounts"] = json::array(
            {{{"destination", "/data"}, {"source", "/srv"}, {"options", {"bind", "idmap"}}}});
        auto plan = bundle.plan(config);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.error().message() ==
              "mounts[0]: options: idmap without uidMappings and gidMappings needs a user "
              "namespace in linux.namespaces, whose mappings it takes");
    }
    SECTION("its own mappings need no user namespace of the container's") {
        json config = base_config();
        json mappings = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
        config["mounts"] = json::array({{{"destination", "/data"},
                                         {"source", "/srv"},
                                         {"options", {"bind", "idmap"}},
                                         {"uidMappings", mappings},
                                         {"gidMappings", mappings}}});
        auto plan = bundle.plan(config);
        REQUIRE(plan.ok());
        REQUIRE(plan->mounts[0].idmap);
        CHECK(plan->mounts[0].idmap->uid_map == "0 1000 1\n");
    }
}
