// --explain=step: what each step of the recipes (create.cpp's and exec.cpp's on the
// runtime's side, recipe.cpp's process recipe) is for a learner: the system calls it makes,
// what it isolates or sets up, and a command to see it from another terminal, before and
// after the step.
//
// One entry per step name, in recipe order; test_recipe.cpp checks that every step of
// both recipes has one and that no entry names a step that no longer exists. The step's
// reason ("why") is the recipe's own and is not repeated here.
#include "runner.hpp"

#include <array>

namespace minirun::runtime {
namespace {

constexpr std::array<StepGuide, 86> kGuides = {{
    // The runtime: `create` (create.cpp). Nothing exists before "make the state directory".
    {"check the id", "none: the id is checked as text (letters, digits, _ + - .)", "nothing yet",
     "ls {root}"},
    {"load the config and plan", "openat and read of config.json; the rest is decisions",
     "nothing yet: the plan says which namespaces, mounts, devices and limits there will be",
     "mini-run check --bundle BUNDLE (the same checks, without running)"},
    {"check the id maps", "getuid; rootless: reads /etc/subuid and /etc/subgid",
     "nothing yet: a user namespace's maps are checked before anything is made", ""},
    {"check the terminal options", "none", "nothing", ""},
    {"protect the runtime binary",
     "memfd_create and fcntl(F_ADD_SEALS): a sealed copy the container can never write",
     "the runtime binary from the container's root (CVE-2019-5736)", ""},
    {"IPC warning", "none", "nothing: a warning when the host's IPC objects stay visible", ""},
    {"open namespaces to join",
     "openat of each linux.namespaces[].path, ioctl(NS_GET_NSTYPE) to check its type; with a "
     "joined user namespace and mappings, a child's setns into it, reads of its uid_map and "
     "gid_map",
     "nothing yet: namespaces to share instead of making new ones", "ls -l /proc/self/ns"},
    {"mark a joined PID namespace",
     "only for a joined PID namespace and CAP_SYS_PTRACE: stat of each container's "
     "/proc/<pid>/ns/pid, flock and an empty file in the matching one's state directory",
     "nothing: a note for `exec` into the other container", ""},
    {"prepare security",
     "none: the capability sets are resolved and the seccomp profile compiled to BPF here",
     "nothing yet: the filter is loaded as the very last step of the init", ""},
    {"open bind sources",
     "open_tree(OPEN_TREE_CLONE) for each bind mount's source, as the host's root",
     "nothing yet: the sources, held by fd, cannot be swapped for a symlink later", ""},
    {"idmap bind sources", "mount_setattr(MOUNT_ATTR_IDMAP) on the detached trees",
     "file ownership: the bind mount shows ids through the container's user namespace", ""},
    {"make the state directory", "mkdir, flock, write of config.json, mknod of exec.fifo",
     "nothing: the container's record on the host", "ls -l {state}"},
    {"prepare the notify socket",
     "with NOTIFY_SOCKET only: mkdir of {state}/notify; `run`: socket, connect to the caller's "
     "socket, bind of notify.sock and chmod",
     "nothing: the container's own sd_notify socket, bound at /run/notify inside",
     "ls -l {state}/notify"},
    {"record the cgroups", "write of state.json and recovery.json",
     "nothing: what `delete` removes if mini-run dies from here on", "cat {state}/state.json"},
    {"make the cgroups", "mkdir in each cgroup hierarchy (v1: one per controller, and cgroup2)",
     "resources: a cgroup counts and limits what its processes use",
     "find /sys/fs/cgroup -maxdepth 4 -type d -name '{id}'"},
    {"limit the cgroups",
     "write of each linux.resources limit: memory.limit_in_bytes or memory.max, pids.max, "
     "cpu.shares, ...",
     "resources: the limits hold before any process is inside",
     "find /sys/fs/cgroup -maxdepth 5 -path '*{id}/pids.max' -exec grep -H . {} +"},
    {"make the RDT group", "mkdir in /sys/fs/resctrl, write of schemata",
     "cache and memory bandwidth (Intel RDT), when linux.intelRdt asks for it", ""},
    {"record host mounts", "read of /proc/self/mountinfo",
     "nothing: only without a mount namespace, to undo the init's mounts on failure", ""},
    {"plan the init", "socketpair for the sync socket; the rest is decisions",
     "nothing yet: what the init will join, keep and drop is written down", ""},
    {"clone the init",
     "clone3(CLONE_NEWNS|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWPID|CLONE_NEWNET|... "
     "CLONE_INTO_CGROUP): the namespaces of linux.namespaces, all at once; a read of "
     "/proc/<pid>/stat (its start time); without cgroups of its own, a write of "
     "recovery.json (its pid)",
     "everything below: from here the init has namespaces of its own",
     "ls -l /proc/{pid}/ns; readlink /proc/self/ns/* (the pid is on the next cards)"},
    {"join the RDT group", "write of the init's pid to the group's tasks file", "as above", ""},
    {"write the id maps",
     "write of /proc/<pid>/setgroups (deny), /proc/<pid>/uid_map and gid_map (or newuidmap, "
     "newgidmap)",
     "user ids: uid 0 inside is another uid outside (user namespace)",
     "cat /proc/{pid}/uid_map /proc/{pid}/gid_map"},
    {"move the network devices",
     "netlink RTM_NEWLINK with IFLA_NET_NS_FD: each linux.netDevices into the init's netns",
     "network: a host device becomes the container's", "nsenter -t {pid} -n ip link"},
    {"send the init its pid", "sendmsg on the sync socket (a socketpair from before the clone)",
     "nothing", ""},
    {"serve the init until created",
     "recvmsg on the sync socket; runs prestart and createRuntime hooks when the init asks",
     "nothing itself: the init's own steps follow, each with its card",
     "cat /proc/{pid}/status | grep -E '^(NSpid|Uid|Cap)'"},
    {"wait for the gate", "recvmsg until pid 1 runs the sealed exec gate",
     "the runtime binary: pid 1 no longer is a copy of mini-run", "ls -l /proc/{pid}/exe"},
    {"record the init",
     "write of state.json.tmp (the record with the init's pid; its start time was read right "
     "after the clone), renamed over state.json",
     "nothing: `state`, `kill` and `delete` find the init from here",
     "mini-run --root {root} state {id}"},
    {"hand over the terminal", "sendmsg(SCM_RIGHTS) of the pty's master to --console-socket",
     "nothing", ""},
    {"hand over a pidfd", "pidfd_open, then sendmsg(SCM_RIGHTS) of it to --pidfd-socket", "nothing",
     ""},
    {"write the pid file", "write of --pid-file, then rename", "nothing", ""},
    {"commit", "none: from here nothing is undone", "nothing", "mini-run --root {root} list"},

    // The runtime: `exec` (exec.cpp). Steps it shares with create have their cards above.
    {"open the container",
     "openat and flock of the state directory; read of state.json and config.json",
     "nothing: the container is looked at, locked", "mini-run --root {root} state {id}"},
    {"check the process", "none", "nothing", ""},
    {"open the container's namespaces",
     "stat and openat of /proc/<init>/ns/*; rootless: prctl(PR_SET_DUMPABLE, 0), setns into "
     "the container's user namespace",
     "nothing yet: the namespaces the process will join", "ls -l /proc/{pid}/ns"},
    {"open the cgroup files", "openat of cgroup.procs (v2) and tasks (v1) in each hierarchy",
     "nothing yet: the process writes itself there first", "cat /proc/{pid}/cgroup"},
    {"release the container", "close of the state directory's lock (kept with the exec gate)",
     "nothing", ""},
    {"forward signals", "sigprocmask, signalfd: signals to mini-run wait for the process",
     "nothing", ""},
    {"plan the process", "socketpair for the sync socket; the rest is decisions",
     "nothing yet: what the process will join, keep and drop is written down", ""},
    {"clone the process",
     "setns into the container's PID namespace (for children only), clone3 into its cgroup2 "
     "directory, setns back",
     "processes: the new process is in the container's PID namespace from birth",
     "ps -o pid,comm --ppid $(pgrep -n mini-run)"},
    {"serve the process until exec", "recvmsg on the sync socket until its end (the exec)",
     "nothing: the process joins the container meanwhile", ""},

    // The init, and a process `exec` starts (recipe.cpp). It runs in the new namespaces.
    {"join cgroups", "write of its pid to cgroup.procs in each v1 hierarchy",
     "resources: everything it does from here counts against the container's limits",
     "cat /proc/{pid}/cgroup"},
    {"CPU affinity", "sched_setaffinity: every cpu, or execCPUAffinity.final",
     "CPUs: the container's cpuset, not the ones mini-run was started on",
     "grep Cpus_allowed_list /proc/{pid}/status"},
    {"close inherited fds", "close_range, or close of each fd above the kept ones",
     "the host's files: an fd left open is a way out of the container (CVE-2024-21626)",
     "ls -l /proc/{pid}/fd"},
    {"parent death signal", "prctl(PR_SET_PDEATHSIG, SIGKILL)", "nothing", ""},
    {"non-dumpable", "prctl(PR_SET_DUMPABLE, 0)",
     "the runtime's memory and /proc/<pid>/exe from the container's processes (ptrace)", ""},
    {"umask 0", "umask(0)", "nothing", ""},
    {"rlimits", "prlimit(RLIMIT_...) for each process.rlimits entry",
     "resources: per-process limits (open files, processes, core size, ...)",
     "cat /proc/{pid}/limits"},
    {"memory policy", "set_mempolicy", "memory placement on NUMA nodes", ""},
    {"oom_score_adj", "write of /proc/self/oom_score_adj",
     "how likely the OOM killer picks the container", "cat /proc/{pid}/oom_score_adj"},
    {"scheduler", "sched_setattr", "CPU scheduling policy and priority", "chrt -p {pid}"},
    {"I/O priority", "ioprio_set", "I/O scheduling class and priority", "ionice -p {pid}"},
    {"connect the seccomp listener", "socket(AF_UNIX) and connect to linux.seccomp.listenerPath",
     "nothing: a supervisor that will answer the filter's notifications", ""},
    {"join namespaces",
     "setns for each linux.namespaces[].path: those it may, the user namespace, the others; "
     "a new PID namespace in a joined user one: unshare(CLONE_NEWPID), clone(CLONE_PARENT)",
     "shared instead of new: the named namespaces are the container's", "ls -l /proc/{pid}/ns"},
    {"wait for the parent", "recvmsg on the sync socket until the id maps are written", "nothing",
     "cat /proc/{pid}/uid_map"},
    {"become root in the user namespace", "setresgid(0, 0, 0), setresuid(0, 0, 0)",
     "user ids: root inside the user namespace, an ordinary uid outside",
     "grep -E '^(Uid|Gid)' /proc/{pid}/status"},
    {"unshare namespaces", "unshare(CLONE_NEWCGROUP ...), what clone3 could not make at once",
     "cgroups: the container sees its own cgroup as the root (cgroup namespace)",
     "ls -l /proc/{pid}/ns/cgroup; cat /proc/{pid}/cgroup"},
    {"time namespace", "unshare(CLONE_NEWTIME), write of /proc/self/timens_offsets, setns into it",
     "clocks: CLOCK_MONOTONIC and CLOCK_BOOTTIME get offsets (uptime inside differs)",
     "cat /proc/{pid}/timens_offsets"},
    {"new session", "setsid", "the terminal's signals: Ctrl-C reaches mini-run, not the container",
     "ps -o pid,sid,pgid,tty -p {pid}"},
    {"loopback up", "netlink RTM_NEWLINK (IFF_UP) on lo",
     "network: a new network namespace has only lo, and it starts down",
     "nsenter -t {pid} -n ip addr"},
    {"hostname", "sethostname, setdomainname",
     "the hostname (UTS namespace): the host's stays as it was",
     "nsenter -t {pid} -u hostname; hostname"},
    {"sysctls", "write of each linux.sysctl under /proc/sys",
     "kernel settings of the container's namespaces (net.*, kernel.shm*, ...)",
     "nsenter -t {pid} -n sysctl net.ipv4.ip_forward"},
    {"prepare the rootfs",
     "mount(MS_REC|MS_SLAVE) of /, bind of the rootfs, mount of each mounts[] (proc, tmpfs "
     "/dev, devpts, mqueue, sysfs, cgroup, binds), mknod or bind of the devices",
     "the file system (mount namespace): mounts made now are the container's alone",
     "findmnt -N {pid}"},
    {"prestart and createRuntime hooks",
     "sendmsg to the runtime, which forks and execs each hook in its own namespaces", "nothing",
     ""},
    {"createContainer hooks", "fork and execve of each hook, in the container's namespaces",
     "nothing", ""},
    {"enter the root", R"(pivot_root(".", "."), umount2(".", MNT_DETACH), chdir("/"))",
     "the file system: the host's tree is detached, / is the rootfs",
     "ls /proc/{pid}/root/; findmnt -N {pid}"},
    {"chroot like the init", "chroot", "the file system, as the init's", ""},
    {"stdio on /dev/null",
     "fstat of fds 0-2; for each on a null device, openat of the container's /dev/null "
     "(O_NOFOLLOW, checked 1:3) and dup3",
     "nothing: the same null device, now the container's node", "ls -l /proc/{pid}/fd"},
    {"terminal",
     "open of /dev/ptmx in the container's devpts, TIOCGPTPEER, open_tree of the peer and "
     "move_mount onto /dev/console, sendmsg of the master",
     "the terminal: the container gets a pty of its own", "ls -l /proc/{pid}/fd"},
    {"root read-only", "mount(MS_REMOUNT|MS_BIND|MS_RDONLY) of /", "root.readonly",
     "findmnt -N {pid} /"},
    {"masked paths", "mount --bind of /dev/null over files, a read-only tmpfs over directories",
     "kernel information the container must not read (/proc/kcore, /proc/keys, "
     "/sys/firmware, ...)",
     "findmnt -N {pid} | grep -E 'kcore|keys|firmware'"},
    {"read-only paths", "bind of each path onto itself, remounted MS_RDONLY",
     "kernel settings the container must not write (/proc/sys, /proc/sysrq-trigger, ...)",
     "findmnt -N {pid} /proc/sys"},
    {"personality", "personality", "the execution domain (linux32, ...)", ""},
    {"cwd while privileged", "chdir(process.cwd)", "nothing", "ls -l /proc/{pid}/cwd"},
    {"HOME from /etc/passwd", "openat and read of the container's /etc/passwd", "nothing", ""},
    {"drop privileges",
     "prctl(PR_CAPBSET_DROP) for each capability not kept, setgroups, setresgid, setresuid, "
     "capset, prctl(PR_CAP_AMBIENT_RAISE), prctl(PR_SET_NO_NEW_PRIVS)",
     "privileges: only the config's capabilities and ids remain",
     "grep -E '^(Uid|Gid|Groups|Cap|NoNewPrivs)' /proc/{pid}/status"},
    {"umask", "umask(process.user.umask)", "nothing", ""},
    {"cwd as the user", "chdir(process.cwd), if root could not", "nothing", ""},
    {"find the executable", "stat along PATH, as the final user", "nothing", ""},
    {"clear the parent death signal", "prctl(PR_SET_PDEATHSIG, 0)", "nothing", ""},
    {"report created", "sendmsg on the sync socket", "nothing: `create` returns after this",
     "mini-run --root {root} state {id}"},
    {"wait for start", "open of exec.fifo, which blocks until `start` opens it to write", "nothing",
     "ls -l {state}/exec.fifo"},
    {"prepare the exec",
     "close_range(CLOSE_RANGE_CLOEXEC) on mini-run's fds (refused: fcntl(FD_CLOEXEC) on each of "
     "/proc/self/fd); argv and env built",
     "the runtime's fds: none reaches the container's process", "ls -l /proc/{pid}/fd"},
    {"signal mask", "rt_sigprocmask(SIG_SETMASK)", "nothing",
     "grep -E '^Sig(Blk|Ign)' /proc/{pid}/status"},
    {"seccomp filter",
     "seccomp(SECCOMP_SET_MODE_FILTER): the last card, since after it mini-run makes no system "
     "call of its own but the exec",
     "system calls: the kernel refuses (or fails) those the profile names",
     "grep Seccomp /proc/{pid}/status (2 once loaded)"},
    {"startContainer hooks", "fork and execve of each hook, under the filter", "nothing", ""},
    {"exec", "execve of process.args[0]", "nothing more: the container's process runs",
     "ps -o pid,args -p {pid}"},
}};

} // namespace

std::span<const StepGuide> step_guides() {
    return kGuides;
}

Status pause_before_step(Taker who, size_t number, size_t total, std::string_view name,
                         std::string_view why) {
    explain::StepCard card;
    card.who = who == Taker::create || who == Taker::exec ? "runtime" : taker_name(who);
    card.number = number;
    card.total = total;
    card.name = name;
    card.why = why;
    for (const StepGuide& guide : kGuides) {
        if (guide.name == name) {
            card.calls = guide.calls;
            card.isolates = guide.isolates;
            card.look = guide.look;
            break;
        }
    }
    return explain::pause(card);
}

} // namespace minirun::runtime
