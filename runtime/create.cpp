// create: the runtime's side of a container's birth, as one recipe (kCreateRecipe). Each
// step names the file that owns it; what it shares with exec is in spawn.hpp.
#include "create.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_devices.hpp"
#include "cgroup/intel_rdt.hpp"
#include "create_resources.hpp"
#include "lifecycle.hpp"
#include "minirun/explain.hpp"
#include "minirun/log.hpp"
#include "minirun/runtime.hpp"
#include "mount/mount.hpp"
#include "ns/ipc.hpp"
#include "ns/namespaces.hpp"
#include "ns/net_devices.hpp"
#include "ns/pid.hpp"
#include "ns/user.hpp"
#include "plan.hpp"
#include "process/child.hpp"
#include "process/hooks.hpp"
#include "process/signals.hpp"
#include "process/terminal.hpp"
#include "recipe.hpp"
#include "security/exec_gate.hpp"
#include "spawn.hpp"
#include "state.hpp"
#include "sync.hpp"
#include "syscalls.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <optional>
#include <span>

namespace minirun {
namespace {

using runtime::ParentEnd;
using runtime::Plan;
using runtime::ToInit;
using runtime::ToParent;
using SyncEvent = runtime::SyncEvent<ToParent>;
using runtime::Created;
using runtime::CreateMode;

// With the exec gate the init execs it right after kCreated, closing its (close-on-exec)
// end of the socket: end of stream says pid 1 is the sealed gate. Only then may the lock go,
// and the container to `exec` (with CAP_SYS_PTRACE, one could open /proc/1/exe of mini-run).
Status wait_until_gate_entered(ParentEnd& sync) {
    MR_ASSIGN(SyncEvent event, sync.receive());
    if (event.eof) {
        return {};
    }
    return event.message == ToParent::kError
               ? event.error
               : Error(EPROTO, "unexpected message from the container's init");
}

// Runs the hooks the init asks for, then lets it go on.
Status run_runtime_hooks(const Created& created, ParentEnd& sync) {
    std::string state = state::oci_state_json(created.record, state::Status::creating);
    const spec::Hooks& hooks = created.spec.hooks;
    MR_TRY(runtime::hooks::run_hooks("prestart", hooks.prestart, state));
    MR_TRY(runtime::hooks::run_hooks("createRuntime", hooks.create_runtime, state));
    return sync.send(ToInit::kHooksDone);
}

// One `create` as it goes: what the steps below make, in the order they make it. On a
// failure the members are destroyed in reverse order, and each undoes what it made: the
// init is killed, host mounts detached, cgroups and the state directory removed.
struct CreateRun {
    CreateRun(const CreateOptions& options_, const CreateMode& mode_, Syscalls& sys_)
        : options(options_), mode(mode_), sys(sys_) {}

    const CreateOptions& options;
    const CreateMode& mode;
    Syscalls& sys;
    Created created;
    std::string config_text;
    UniqueFd exec_gate;
    procfs::Handle procfs; // every write under /proc goes through it (procfs.hpp)
    std::vector<runtime::OpenNamespace> namespaces;
    runtime::security::ProcessSecurity security;
    runtime::mount::BindSources bind_sources;
    std::vector<runtime::CgroupBind> cgroup_binds;
    std::optional<runtime::PendingState> pending_state;
    UniqueFd fifo;
    runtime::cgroup::Cgroup cgroup;
    runtime::cgroup::Host cgroup_host; // where `cgroup` was found
    std::optional<runtime::PendingCgroup> pending_cgroup;
    runtime::cgroup::SelfJoin cgroup_join;
    std::optional<runtime::intel_rdt::PendingGroup> rdt_group;
    std::optional<runtime::mount::HostMounts> host_mounts;
    runtime::InitPlan init_plan; // decided before the clone (plan_the_init)
    runtime::InitEnd init_end;
    runtime::ScopedChild init;
    // After the init: destroyed first, the devices go back while their namespace lives.
    std::optional<runtime::net::MovedNetDevices> net_devices;
};
using Run = CreateRun;

// ---- the steps, in the order of the table below

Status check_id(Run& r) {
    return validate_container_id(r.options.id);
}

Status load_config(Run& r) {
    MR_ASSIGN(r.created.spec, spec::load_spec(r.options.bundle, &r.config_text, // spec_parse.cpp
                                              r.options.config));
    std::string notify_dir; // process/systemd.cpp, as listen_fds()
    if (!r.options.notify_socket.empty()) {
        notify_dir = runtime::systemd::notify_dir(r.options.root, r.options.id);
    }
    MR_ASSIGN(r.created.plan,
              runtime::make_plan(r.created.spec, // plan.cpp
                                 {r.options.id, r.options.bundle, r.options.preserve_fds,
                                  runtime::systemd::listen_fds(), std::move(notify_dir)}));
    return {};
}

Status check_terminal(Run& r) {
    return runtime::check_terminal_options(r.created.plan.process.terminal, // spawn.cpp
                                           r.options.console_socket, r.mode.relay_terminal,
                                           "process.terminal");
}

Status protect_binary(Run& r) {
    MR_ASSIGN(r.exec_gate,
              runtime::protect_runtime_binary(
                  runtime::exec_gate::unusable_because(r.created.spec),
                  "exec gate: the init will exec the process through a sealed 2 KB program, "
                  "which also waits for start: mini-run never runs in the container",
                  r.options.reexec_argv, &r.mode.exec_mask));
    return {};
}

Status ipc_warning(Run& r) {
    runtime::ipc::warn_if_host_queues_exposed(r.created.plan); // ipc.cpp
    return {};
}

Status open_namespaces(Run& r) {
    MR_ASSIGN(r.namespaces, runtime::open_namespaces_to_join(r.created.plan, r.sys));
    return {};
}

Status mark_joined_pid_namespace(Run& r) {
    return runtime::exec_gate::mark_joined_pid_namespace(r.created.spec, r.options.root);
}

Status prepare_security(Run& r) {
    MR_ASSIGN(r.security, runtime::security::prepare(r.created.plan.process, r.created.spec.linux));
    MR_ASSIGN(r.procfs, runtime::open_procfs_handle(runtime::needs_procfs_handle(r.created.plan)));
    return {};
}

Status check_id_maps(Run& r) {
    return runtime::user::check_id_maps(r.created.plan, r.created.spec.linux);
}

Status open_bind_sources(Run& r) {
    MR_ASSIGN(r.bind_sources, runtime::mount::open_bind_sources(r.created.plan, r.sys));
    return {};
}

Status idmap_bind_sources(Run& r) { // mount_idmap.cpp
    return runtime::mount::idmap_bind_sources(r.created.plan, r.bind_sources.fds, r.sys);
}

Status make_state_dir(Run& r) {
    Created& created = r.created;
    MR_ASSIGN(created.dir, state::StateDir::create(r.options.root, r.options.id));
    r.pending_state.emplace(created.dir);
    MR_TRY(created.dir.lock());
    MR_TRY(created.dir.save_config(r.config_text));
    if (r.mode.start_through_socket) {
        // `run` starts the container itself: a socket pair, whose end in the init is
        // close-on-exec like the fifo's (create.hpp, CreateMode).
        std::array<int, 2> ends{};
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends.data()) != 0) {
            return Error::from_errno("socketpair for the start");
        }
        r.fifo.reset(ends[0]);
        created.start_socket.reset(ends[1]);
    } else {
        MR_TRY(created.dir.make_fifo());
        // Opened here because the init cannot reach the state directory after pivot_root;
        // non-blocking, since a reader's open would otherwise wait for a writer.
        r.fifo.reset(::open(created.dir.fifo_path().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        if (!r.fifo) {
            return Error::from_errno("open exec.fifo");
        }
    }
    state::Record& record = created.record;
    const Plan& plan = created.plan;
    record.oci_version = created.spec.oci_version;
    record.id = r.options.id;
    record.bundle = plan.bundle;
    record.rootfs = plan.rootfs;
    record.created = log::rfc3339_now();
    record.owner = state::owner_name(::geteuid());
    record.annotations = created.spec.annotations;
    return {};
}

Status prepare_notify_socket(Run& r) { // process/systemd.cpp
    MR_ASSIGN(r.created.notify,
              runtime::systemd::prepare_notify(r.options.notify_socket, r.options.root,
                                               r.options.id, r.mode.start_through_socket));
    return {};
}

Status record_cgroups(Run& r) {
    MR_ASSIGN(r.cgroup, runtime::make_cgroup(r.created.spec.linux, r.options, &r.cgroup_host));
    r.created.record.cgroup_paths = r.cgroup.paths();
    if (r.cgroup.empty()) {
        return r.created.dir.save(r.created.record);
    }
    return r.created.dir.save_with_recovery(r.created.record);
}

Status make_cgroups(Run& r) {
    // create() refuses a cgroup already in use (processes in it, or frozen), without
    // touching it: only once it succeeded are the directories ours to remove again.
    MR_TRY_WRAP(r.cgroup.create(), "linux.cgroupsPath");
    r.pending_cgroup.emplace(r.cgroup);
    // The init binds these for the "cgroup" mount entry without looking them up again.
    r.cgroup_binds = runtime::mount::planned_cgroup_binds(r.created.plan, r.cgroup_host, r.cgroup);
    return {};
}

Status set_cgroup_limits(Run& r) {
    MR_TRY(runtime::limit_cgroup(r.created.spec.linux, r.cgroup));
    MR_ASSIGN(r.cgroup_join, r.cgroup.open_self_join());
    return {};
}

Status make_rdt_group(Run& r) {
    return runtime::make_rdt_group(r.created.spec.linux, r.options.id, r.rdt_group);
}

Status join_rdt_group(Run& r) {
    return r.rdt_group ? runtime::intel_rdt::add_process(r.rdt_group->group(), r.init.get())
                       : Status{};
}

Status record_host_mounts(Run& r) {
    MR_ASSIGN(auto recorded,
              runtime::mount::HostMounts::record(r.created.plan, r.created.dir.path()));
    r.host_mounts.emplace(std::move(recorded));
    return {};
}

// Without cgroups of its own, only its pid leads to the init: it is saved to recovery.json
// right after the clone, and until then the init must not become independent of us (clear
// its parent death signal, report created). So it waits for kParentReady, sent after the
// save: a create killed before that takes the init along (the sync socket's end of
// stream), one killed later leaves it to delete --force.
bool only_pid_finds_init(const Run& r) {
    return r.cgroup.empty() || r.created.record.cgroup_shared;
}

// Everything the init gets, in one place, before the clone: the plan is final from here.
Status plan_the_init(Run& r) {
    MR_ASSIGN(auto sockets, runtime::create_sync_pair()); // sync.cpp
    r.created.sync = std::move(sockets.first);
    r.init_end = std::move(sockets.second);
    runtime::InitPlan& init = r.init_plan;
    init.container = &r.created.plan;
    init.exec_fifo = r.fifo.get();
    init.record = r.created.record;
    init.wait_for_parent = r.created.plan.wait_for_parent || only_pid_finds_init(r);
    init.parent_waits_for_exec = r.mode.parent_waits_for_exec;
    init.bind_sources = &r.bind_sources;
    init.cgroup_binds = std::move(r.cgroup_binds);
    runtime::ProcessPlan& process = init.process;
    process.process = r.created.plan.process;
    process.preserve_fds = r.created.plan.preserve_fds;
    process.security = std::move(r.security);
    process.joins = runtime::entries_of(r.namespaces, r.created.plan.pid_joined_by_init);
    process.cgroup_join = &r.cgroup_join;
    process.signal_mask = r.mode.exec_mask;
    process.memory_policy = r.created.plan.memory_policy;
    process.personality = r.created.plan.personality;
    process.exec_gate = r.exec_gate.get();
    process.relayed_terminal = r.mode.relay_terminal;
    process.oci_version = r.created.plan.oci_version;
    process.procfs = &r.procfs;
    process.keep_fds = {r.init_end.fd(),   r.fifo.get(),           log::file_descriptor(),
                        r.exec_gate.get(), explain::stepping_fd(), r.procfs.fd()};
    for (const runtime::NamespaceEntry& join : process.joins) {
        process.keep_fds.push_back(join.fd);
    }
    for (const UniqueFd& source : r.bind_sources.fds) {
        process.keep_fds.push_back(source.get());
    }
    return {};
}

Status clone_the_init(Run& r) {
    {
        auto v2_dir = r.cgroup.open_v2_dir();
        MR_ASSIGN(auto in_pid_namespace, runtime::pid::JoinedForChildren::enter(
                                             r.created.plan, r.namespaces, r.sys)); // pid.cpp
        log::debug("nsexec container setup: clone3 into the container's new namespaces");
        bool born_in_v2 = false;
        MR_ASSIGN(pid_t pid, runtime::clone_process( // spawn.hpp; the child runs recipe.cpp
                                 r.created.plan.clone_flags, v2_dir ? v2_dir->get() : -1,
                                 r.created.sync, &born_in_v2, [&r](bool born) {
                                     runtime::run_init(r.init_plan, r.init_end, r.sys, born);
                                 }));
        r.init.reset(pid);
        MR_TRY_WRAP(in_pid_namespace.leave(), "create");
    }
    r.init_end.close();
    MR_TRY(runtime::pid::take_second_stage(r.created.plan, r.created.sync, r.init)); // pid.hpp
    explain::set_init_pid(r.init.get()); // --explain=step's cards name it from here
    // Only the init may hold the fifo (or its end of the start socket) open for reading:
    // `start` learns from a failed open (a refused send) that the init is gone.
    r.fifo.reset();
    // state.json keeps pid 0 ("creating") until record_the_init; the record in memory has
    // the init's identity from here.
    state::Record& record = r.created.record;
    record.pid = r.init.get();
    auto started = state::process_start_time(record.pid);
    if (!started) {
        // The init does not wait for us before its first steps (connecting the seccomp
        // listener is one): it may have failed one and exited already, and its report,
        // waiting on the socket, says why; "has exited" would not.
        return runtime::child_error_or(r.created.sync, started.error());
    }
    record.pid_start_time = *started;
    if (only_pid_finds_init(r)) {
        MR_TRY(r.created.dir.save_recovery(record));
    }
    return {};
}

Status write_id_maps(Run& r) {
    if (!r.created.plan.creates(spec::NamespaceType::user)) {
        return {};
    }
    if (auto mapped = runtime::user::write_id_maps(r.init.get(), r.created.plan,
                                                   r.created.spec.linux, r.procfs);
        !mapped) {
        return runtime::child_error_or(r.created.sync, mapped.error());
    }
    return {};
}

Status move_net_devices(Run& r) {
    const spec::Linux& linux = r.created.spec.linux;
    if (linux.net_devices.empty()) {
        return {};
    }
    auto moved = runtime::net::MovedNetDevices::move(linux, r.init.get(), r.sys); // net_devices.cpp
    if (!moved) {
        return runtime::child_error_or(r.created.sync, moved.error()); // as for the id maps
    }
    r.net_devices.emplace(std::move(*moved));
    return {};
}

Status send_parent_ready(Run& r) {
    if (!r.init_plan.wait_for_parent) {
        return {};
    }
    if (auto sent = r.created.sync.send(ToInit::kParentReady, std::to_string(r.created.record.pid));
        !sent) {
        return runtime::child_error_or(r.created.sync, sent.error());
    }
    return {};
}

Status serve_the_init(Run& r) {
    for (;;) {
        MR_ASSIGN(SyncEvent event, r.created.sync.receive());
        if (event.eof) {
            return Error(ECHILD, "the container's init exited during setup");
        }
        switch (event.message) {
        case ToParent::kRunHooks:
            MR_TRY(run_runtime_hooks(r.created, r.created.sync)); // hooks.cpp
            break;
        case ToParent::kConsole:
            r.created.console_master = std::move(event.fd);
            break;
        case ToParent::kMountSource: // mount/mount_sources.cpp
            MR_TRY(runtime::mount::send_late_source(r.created.plan, r.bind_sources, r.init.get(),
                                                    event.payload, r.created.sync, r.sys));
            break;
        case ToParent::kCreated:
            return {};
        case ToParent::kError:
            return event.error;
        case ToParent::kLog:    // written to our log by receive(): never returned
        case ToParent::kForked: // only right after the clone (take_second_stage)
            break;
        }
    }
}

Status wait_for_the_gate(Run& r) {
    // The foreground `run` keeps the lock and the socket until the user's process runs.
    if (!r.exec_gate || r.mode.parent_waits_for_exec) {
        return {};
    }
    return wait_until_gate_entered(r.created.sync);
}

Status record_the_init(Run& r) {
    // recovery.json needs nothing more: it has the cgroups, or else (clone_the_init) the
    // init's pid and start time already.
    //
    // Why only now, and not while the init sets up: until the init's exec, it shares every
    // page of our memory copy-on-write, so each page either process writes meanwhile costs
    // a fault and a copy (a record is built with allocations all over the heap); and the
    // init gains nothing from it, as it does not run beside us (a VM like this project's
    // starts a new task on its parent's CPU: docs/performance.md). Written after kCreated
    // instead of aside while the init set up (the former "stage the record" step): from 0
    // to 4% less time per `run` and per create + start + delete in A/B runs.
    return r.created.dir.save(r.created.record);
}

Status hand_over_terminal(Run& r) {
    return runtime::hand_over_terminal(r.options.console_socket, r.created.console_master);
}

Status hand_over_pidfd(Run& r) {
    return runtime::hand_over_pidfd(r.options.pidfd_socket, r.created.record.pid); // spawn.cpp
}

Status write_pid_file(Run& r) {
    if (r.options.pid_file.empty()) {
        return {};
    }
    return runtime::write_pid_file(r.options.pid_file, r.created.record.pid);
}

Status commit(Run& r) {
    r.pending_state->commit();
    if (r.pending_cgroup) {
        r.pending_cgroup->commit();
    }
    r.host_mounts->commit();
    if (r.net_devices) {
        r.net_devices->commit(); // the namespace's now: the kernel takes them at its end
    }
    if (r.rdt_group) {
        r.rdt_group->commit();
    }
    r.created.pid = r.init.release();
    return {};
}

constexpr auto kParent = runtime::Taker::create;

// The parent's recipe: first everything that can be checked is checked, before anything
// is created; then each resource, recorded before it is made where a crash could orphan it.
constexpr std::array<runtime::Step<Run>, 31> kCreateRecipe = {{
    {"check the id", "a bad id is refused before anything exists", kParent, check_id},
    {"load the config and plan",
     "config.json -> spec model -> plan: every decision, no effect; final from here (socket "
     "activation's LISTEN_FDS sockets included)",
     kParent, load_config},
    {"check the id maps",
     "without the host's root: a user namespace, and maps of the caller's own id or of its "
     "/etc/subuid and /etc/subgid ranges (newuidmap, newgidmap)",
     kParent, check_id_maps},
    {"check the terminal options", "--console-socket and process.terminal must agree", kParent,
     check_terminal},
    {"protect the runtime binary",
     "CVE-2019-5736: the exec gate, or a sealed re-exec of mini-run (which starts over)", kParent,
     protect_binary},
    {"IPC warning", "the host's queues are visible without an IPC namespace", kParent, ipc_warning},
    {"open namespaces to join",
     "each path checked to be a namespace of the named type before anything is created; a "
     "joined user namespace's maps checked against the config's",
     kParent, open_namespaces},
    {"mark a joined PID namespace",
     "a process here that may hold CAP_SYS_PTRACE could reach what `exec` starts in the "
     "containers whose PID namespace this joins: their execs take the protected re-exec then",
     kParent, mark_joined_pid_namespace},
    {"prepare security",
     "capabilities resolved, the seccomp filter compiled, LSM settings checked: errors now, "
     "not in the init; the procfs handle the writes under /proc go through, if any, before "
     "any namespace or mount of the container's (CVE-2025-52881)",
     kParent, prepare_security},
    {"open bind sources",
     "opened as the host's root, on the host's side (one inside the rootfs at its mount, after "
     "the entries before it); rootless, by the init (open_tree needs CAP_SYS_ADMIN over it); "
     "all checked now, 16 kept open, the others reopened at their turn (the fd budget)",
     kParent, open_bind_sources},
    {"idmap bind sources",
     "mount_setattr(MOUNT_ATTR_IDMAP) needs CAP_SYS_ADMIN where the source's filesystem was "
     "mounted: the host's root, before the init is in its user namespace",
     kParent, idmap_bind_sources},
    {"make the state directory",
     "one mkdir makes the id ours; locked; config and exec.fifo (`run`: a start socket instead)",
     kParent, make_state_dir},
    {"prepare the notify socket",
     "NOTIFY_SOCKET: its directory, which the init binds at /run/notify, exists before the "
     "init mounts; `run`, which starts the container itself, listens from now on (runc)",
     kParent, prepare_notify_socket},
    {"record the cgroups",
     "before they are made, in state.json and recovery.json, so that a delete after a crash "
     "from here on still finds and removes them",
     kParent, record_cgroups},
    {"make the cgroups", "refuses one in use; from here they are ours to remove on failure",
     kParent, make_cgroups},
    {"limit the cgroups", "linux.resources written before any process is inside", kParent,
     set_cgroup_limits},
    {"make the RDT group",
     "linux.intelRdt: the resctrl group made or joined and its schemata written before any "
     "process is inside, like the cgroups",
     kParent, make_rdt_group},
    {"record host mounts",
     "without a mount namespace the init mounts into ours: recorded, and detached again "
     "unless the create succeeds",
     kParent, record_host_mounts},
    {"plan the init",
     "everything the init gets, decided once the resources it uses exist: its process, "
     "namespaces to join, cgroup files, prepared security, the fds it keeps, the gate",
     kParent, plan_the_init},
    {"clone the init",
     "clone3 into the new namespaces, through the PID namespace to join, straight into the "
     "cgroup2 directory (a new PID namespace in a joined user namespace: its pid 1 takes over)",
     kParent, clone_the_init},
    {"join the RDT group",
     "the init's pid in the group's tasks before it runs anything of the container's: its "
     "children are born in the group",
     kParent, join_rdt_group},
    {"write the id maps", "the init's ids mean nothing in its user namespace until then", kParent,
     write_id_maps},
    {"move the network devices",
     "linux.netDevices into the init's network namespace, which exists since the clone, while "
     "the init waits: its sysctls and hooks see them; moved back if the create fails",
     kParent, move_net_devices},
    {"send the init its pid", "for the hooks' state; also releases the init's wait", kParent,
     send_parent_ready},
    {"serve the init until created",
     "run prestart and createRuntime, take the pty, open the bind sources it asks for", kParent,
     serve_the_init},
    {"wait for the gate", "only once pid 1 is the sealed gate may the lock go", kParent,
     wait_for_the_gate},
    {"record the init",
     "its pid and start time in state.json, once the init no longer shares our memory "
     "copy-on-write",
     kParent, record_the_init},
    {"hand over the terminal", "to --console-socket", kParent, hand_over_terminal},
    {"hand over a pidfd", "to --pidfd-socket, while the init is still our unreaped child", kParent,
     hand_over_pidfd},
    {"write the pid file", "last: a pid file means the container exists", kParent, write_pid_file},
    {"commit", "nothing is undone from here", kParent, commit},
}};

} // namespace

Result<runtime::Created> runtime::create_internal(const CreateOptions& options,
                                                  const CreateMode& mode, Syscalls& sys) {
    CreateRun run(options, mode, sys);
    if (explain::stepping()) {
        explain::describe_container(options.id, options.root); // the cards' {id}, {root}
    }
    MR_TRY(runtime::run_recipe(std::span<const runtime::Step<Run>>(kCreateRecipe),
                               runtime::Taker::create, run));
    return std::move(run.created);
}

namespace {

sigset_t current_signal_mask() {
    sigset_t mask{};
    ::sigprocmask(SIG_SETMASK, nullptr, &mask);
    return mask;
}

} // namespace

namespace runtime {

std::vector<StepOutline> create_recipe_outline() {
    return outline_of(std::span<const Step<CreateRun>>(kCreateRecipe));
}

} // namespace runtime

Status create_container(const CreateOptions& options) {
    CreateMode mode;
    mode.exec_mask = current_signal_mask();
    MR_TRY(runtime::create_internal(options, mode, linux_syscalls()));
    return {};
}

} // namespace minirun
