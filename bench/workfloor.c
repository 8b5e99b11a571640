// The work floor: the kernel work mini-run does for the benchmark's bundle, in bare C.
//
//   workfloor default|nonet|userns ROOTFS STATEROOT
//
// bench/floor.c is the least work that starts a container. This program does, with every value
// hard-coded and nothing parsed, what the bench bundle (rootfs-examples/busybox/config.json
// running /bin/true, root read-only) makes mini-run do in the kernel: "mini-run / work floor" is
// then mini-run's own overhead, and "work floor / floor" what the config costs. Modes as in
// floor.c; for "userns" the parent writes gid_map then uid_map (0 -> 100000, 65536 ids) and, as
// mini-run does as root, no setgroups "deny".
//
// Parent: mkdir STATEROOT/wf-<pid>; in each cgroup hierarchy at /sys/fs/cgroup/*, mkdir
// wf-<pid> below the root, as mini-run's default "/<id>" (cpuset: cpus and mems copied down;
// cgroup2: the root's controllers enabled in the root); the default device rules (the config has no linux.resources); open the v1
// tasks files; clone3 (CLONE_INTO_CGROUP for a cgroup2 directory); id maps; state.json by
// tmp + rename; wait; rmdir the cgroups and the state directory; exit with the child's status. Child: "0" into each tasks file (it moves
// itself, as mini-run's cgroup::SelfJoin); umask 0; RLIMIT_NOFILE; userns: wait for the maps,
// become 0:0; setsid; lo up; hostname; "/" rprivate; rootfs bind; mounts[] in order, the cgroup
// entry as a tmpfs holding a read-only bind of our cgroup per hierarchy; device nodes (mknod, or
// binds of the host's in a user namespace) and /dev links; pivot_root; root read-only; masked and
// read-only paths (missing ones skipped); capabilities, user 0:0, no_new_privs; exec /bin/true.
//
// Left out as mini-run's own work, not the config's: the sealed exec gate (a memfd stub the init
// execs first), exec.fifo, flock, the config.json and recovery.json copies and a second
// state.json save, the sync socket, reading /proc/self/{mountinfo,cgroup} (hierarchies are found
// by statfs here), openat2 RESOLVE_IN_ROOT lookups and the /dev/null 1:3 check (plain paths
// here), close_range, parent death signal, non-dumpable, reading the bounding set before each
// drop, and at teardown the freezer and cgroup.procs checks and cgroup2's cgroup.kill. The rest
// is mini-run's strace call for call: the same mount(2) calls (flags, data; bind remounts keep
// the flags statvfs reports locked), mknodat, pivot_root, cgroup mkdirs, rmdirs and writes.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define CG "/sys/fs/cgroup"
#define COUNT(a) (sizeof(a) / sizeof *(a))

static struct hierarchy {
    char name[NAME_MAX + 1]; // its mount point below /sys/fs/cgroup: "cpu", "unified", ...
    char dir[PATH_MAX];      // our cgroup in it: /sys/fs/cgroup/<name>/<id>
    int v2;                  // a cgroup2 hierarchy
    int tasks;               // v1: <dir>/tasks, opened by the parent, written by the child
} hier[16];
static int nhier, made;      // hierarchies found; how many have (possibly) our cgroups
static const char *rootfs;
static char id[PATH_MAX], state_dir[PATH_MAX];
static int userns, sync_pipe[2], v2_fd = -1, in_child;
static pid_t child_pid;

static void teardown(void);

static void die(const char *what) {
    perror(what);
    if (!in_child) { // a failed run leaves nothing behind either
        if (child_pid > 0 && kill(child_pid, SIGKILL) == 0) waitpid(child_pid, NULL, 0);
        teardown();
    }
    _exit(127);
}

// A path (or other text) built into buf, PATH_MAX bytes; too long is a failure, not a cut.
__attribute__((format(printf, 2, 3))) static char *fmt(char *buf, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(buf, PATH_MAX, format, args);
    va_end(args);
    if (n < 0 || n >= PATH_MAX) {
        errno = ENAMETOOLONG;
        die(format);
    }
    return buf;
}

// One write(2) per value: cgroupfs parses each write as a whole.
static void write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) die(path);
    close(fd);
}

static void read_file(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);
    if (n < 0) die(path);
    close(fd);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) n--;
    buf[n] = '\0';
}

// ---- cgroups and state (parent)

static void find_hierarchies(void) {
    DIR *d = opendir(CG);
    struct dirent *e;
    if (d == NULL) die(CG);
    while ((e = readdir(d)) != NULL && nhier < (int)COUNT(hier)) {
        char path[PATH_MAX];
        struct statfs fs;
        if (e->d_name[0] == '.' || statfs(fmt(path, CG "/%s", e->d_name), &fs) < 0) continue;
        if (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC) continue;
        struct hierarchy *h = &hier[nhier++];
        strcpy(h->name, e->d_name);
        fmt(h->dir, CG "/%s/%s", h->name, id);
        h->v2 = fs.f_type == CGROUP2_SUPER_MAGIC;
        h->tasks = -1;
    }
    closedir(d);
}

// A new v1 cpuset cgroup has no cpus and no mems, and nothing can join it until both are set:
// they are copied from the root, its parent.
static void copy_cpuset(const char *dir) {
    static const char *names[] = {"cpuset.cpus", "cpuset.mems"};
    char path[PATH_MAX], value[256];
    for (int i = 0; i < 2; i++) {
        read_file(fmt(path, CG "/cpuset/%s", names[i]), value, sizeof value);
        write_file(fmt(path, "%s/%s", dir, names[i]), value);
    }
}

static void make_cgroups(void) {
    char path[PATH_MAX], plus[PATH_MAX], offered[256], enabled[256];
    for (int i = 0; i < nhier; i++) {
        struct hierarchy *h = &hier[i];
        made = i + 1; // teardown's rmdir of what is not made yet is a harmless ENOENT
        if (mkdir(h->dir, 0755) < 0) die(h->dir);
        if (strcmp(h->name, "cpuset") == 0) copy_cpuset(h->dir);
        if (h->v2) { // a cgroup2 child gets the controllers the root enables: those missing
            read_file(fmt(path, CG "/%s/cgroup.controllers", h->name), offered, sizeof offered);
            read_file(fmt(path, CG "/%s/cgroup.subtree_control", h->name), enabled,
                      sizeof enabled);
            for (char *save, *c = strtok_r(offered, " ", &save); c; c = strtok_r(NULL, " ", &save))
                if (!strstr(enabled, c)) write_file(path, fmt(plus, "+%s", c));
        }
    }
}

// mini-run's (runc's) default device rules, after a reset to deny-all.
static void write_device_rules(void) {
    static const char *allow[] = {"c *:* m",   "b *:* m",   "c 1:3 rwm",   "c 1:8 rwm",
                                  "c 1:7 rwm", "c 5:0 rwm", "c 1:5 rwm",   "c 1:9 rwm",
                                  "c 136:* rwm", "c 5:2 rwm", "c 10:200 rwm"};
    char path[PATH_MAX];
    for (int i = 0; i < nhier; i++) {
        if (strcmp(hier[i].name, "devices") != 0) continue;
        write_file(fmt(path, "%s/devices.deny", hier[i].dir), "a");
        fmt(path, "%s/devices.allow", hier[i].dir);
        for (size_t r = 0; r < COUNT(allow); r++) write_file(path, allow[r]);
    }
}

// Opened while we are the host's root in its namespaces: in a user namespace the child could
// not open them (v1 checks the opener), but it may write to them.
static void open_join_files(void) {
    char path[PATH_MAX];
    for (int i = 0; i < nhier; i++) {
        if (hier[i].v2) { // the init is born there instead (clone3 CLONE_INTO_CGROUP)
            v2_fd = open(hier[i].dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (v2_fd < 0) die(hier[i].dir);
        } else {
            hier[i].tasks = open(fmt(path, "%s/tasks", hier[i].dir), O_WRONLY | O_CLOEXEC);
            if (hier[i].tasks < 0) die(path);
        }
    }
}

static void save_state(pid_t pid) {
    char text[4096], tmp[PATH_MAX], path[PATH_MAX], line[PATH_MAX];
    fmt(text, "{\n  \"annotations\": {},\n  \"bundle\": \"%s\",\n  \"cgroupPaths\": {", rootfs);
    for (int i = 0; i < nhier; i++) {
        fmt(line, "%s\n    \"%s\": \"%s\"", i ? "," : "", hier[i].name, hier[i].dir);
        strncat(text, line, sizeof text - strlen(text) - 1);
    }
    fmt(line, "\n  },\n  \"id\": \"%s\",\n  \"ociVersion\": \"1.0.2\",\n  \"owner\": \"root\",\n"
              "  \"pid\": %d,\n  \"rootfs\": \"%s\",\n  \"status\": \"running\"\n}\n",
        id, (int)pid, rootfs);
    strncat(text, line, sizeof text - strlen(text) - 1);
    int fd = open(fmt(tmp, "%s/state.json.tmp", state_dir),
                  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) die(tmp);
    close(fd);
    if (rename(tmp, fmt(path, "%s/state.json", state_dir)) < 0) die(path);
}

static void teardown(void) {
    char path[PATH_MAX];
    for (; made > 0; made--) {
        struct hierarchy *h = &hier[made - 1];
        if (rmdir(h->dir) < 0 && errno != ENOENT) perror(h->dir);
    }
    if (state_dir[0] != '\0') {
        unlink(fmt(path, "%s/state.json.tmp", state_dir));
        unlink(fmt(path, "%s/state.json", state_dir));
        if (rmdir(state_dir) < 0) perror(state_dir);
        state_dir[0] = '\0';
    }
}

// ---- the container's init (child)

static void mount_in(const char *source, const char *dest, const char *type, unsigned long flags,
                     const char *data, int make_dir) {
    char path[PATH_MAX];
    fmt(path, "%s%s", rootfs, dest);
    if (make_dir && mkdir(path, 0755) < 0 && errno != EEXIST) die(path);
    if (mount(source, path, type, flags, data) < 0) die(dest);
}

// A bind becomes read-only only by a remount, which must repeat the flags the kernel locked.
static void remount_bind_ro(const char *path, unsigned long flags) {
    static const unsigned long locked[][2] = {
        {ST_NOSUID, MS_NOSUID},   {ST_NODEV, MS_NODEV},           {ST_NOEXEC, MS_NOEXEC},
        {ST_NOATIME, MS_NOATIME}, {ST_NODIRATIME, MS_NODIRATIME}, {ST_RELATIME, MS_RELATIME}};
    struct statvfs st;
    if (statvfs(path, &st) < 0) die(path);
    for (size_t i = 0; i < COUNT(locked); i++)
        if (st.f_flag & locked[i][0]) flags |= locked[i][1];
    if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | flags, NULL) < 0) die(path);
}

// The "cgroup" entry on a v1 or hybrid host: a tmpfs with our cgroup of each hierarchy in it.
static void mount_cgroups(void) {
    const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME;
    char dest[PATH_MAX], path[PATH_MAX];
    mount_in("tmpfs", "/sys/fs/cgroup", "tmpfs", flags, "mode=755", 0);
    for (int i = 0; i < nhier; i++) {
        mount_in(hier[i].dir, fmt(dest, "/sys/fs/cgroup/%s", hier[i].name), NULL, MS_BIND | MS_REC,
                 NULL, 1);
        remount_bind_ro(fmt(path, "%s%s", rootfs, dest), flags);
    }
    if (mount(NULL, fmt(path, "%s/sys/fs/cgroup", rootfs), NULL, MS_REMOUNT | MS_RDONLY | flags,
              "mode=755") < 0)
        die("workfloor: /sys/fs/cgroup read-only");
}

static void make_devices(void) {
    static const struct { const char *name; unsigned major, minor; } nodes[] = {
        {"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9},
        {"tty", 5, 0}};
    static const char *links[][2] = {{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
                                     {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
                                     {"ptmx", "pts/ptmx"}};
    char path[PATH_MAX];
    int dev = open(fmt(path, "%s/dev", rootfs), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dev < 0) die(path);
    for (size_t i = 0; i < COUNT(nodes); i++) {
        const char *name = nodes[i].name;
        if (userns) { // mknod is refused in a user namespace: the host's node, bound
            int fd = openat(dev, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (fd < 0) die(name);
            close(fd);
            fmt(path, "/dev/%s", name);
            mount_in(path, path, NULL, MS_BIND, NULL, 0);
        } else {
            dev_t number = makedev(nodes[i].major, nodes[i].minor);
            if (mknodat(dev, name, S_IFCHR | 0666, number) < 0) die(name);
            if (fchownat(dev, name, 0, 0, AT_SYMLINK_NOFOLLOW) < 0) die(name);
        }
    }
    for (size_t i = 0; i < COUNT(links); i++)
        if (symlinkat(links[i][1], dev, links[i][0]) < 0) die(links[i][0]);
    close(dev);
}

// After pivot_root: the paths name the container's own /proc and /sys.
static void mask_and_protect(void) {
    static const char *masked[] = {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                                   "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                                   "/proc/sched_debug", "/sys/firmware", "/proc/scsi"};
    static const char *readonly[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                     "/proc/sysrq-trigger"};
    struct stat st;
    for (size_t i = 0; i < COUNT(masked); i++) {
        if (lstat(masked[i], &st) < 0) continue; // nothing there to hide
        if ((S_ISDIR(st.st_mode) ? mount("tmpfs", masked[i], "tmpfs", MS_RDONLY, NULL)
                                 : mount("/dev/null", masked[i], NULL, MS_BIND, NULL)) < 0)
            die(masked[i]);
    }
    for (size_t i = 0; i < COUNT(readonly); i++) {
        if (lstat(readonly[i], &st) < 0) continue;
        if (mount(readonly[i], readonly[i], NULL, MS_BIND | MS_REC, NULL) < 0) die(readonly[i]);
        remount_bind_ro(readonly[i], 0);
    }
}

static void drop_privileges(void) {
    const uint64_t keep = 1ULL << CAP_AUDIT_WRITE | 1ULL << CAP_KILL | 1ULL << CAP_NET_BIND_SERVICE;
    for (unsigned long cap = 0; cap < 64; cap++) { // EINVAL: beyond the kernel's last one
        if (keep & 1ULL << cap) continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0UL, 0UL, 0UL) < 0) {
            if (errno == EINVAL) break;
            die("workfloor: drop from the bounding set");
        }
    }
    // process.user is 0:0 without additional gids; keep-caps around the switch, as for any uid.
    if (prctl(PR_SET_KEEPCAPS, 1UL, 0UL, 0UL, 0UL) < 0) die("workfloor: keep caps");
    if (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
        die("workfloor: user 0:0");
    if (prctl(PR_SET_KEEPCAPS, 0UL, 0UL, 0UL, 0UL) < 0) die("workfloor: keep caps off");
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {{(uint32_t)keep, (uint32_t)keep, 0},
                                             {(uint32_t)(keep >> 32), (uint32_t)(keep >> 32), 0}};
    if (syscall(SYS_capset, &header, data) < 0) die("workfloor: capset");
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) < 0)
        die("workfloor: clear ambient capabilities");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0) die("workfloor: no_new_privs");
}

static void child(int netns) {
    in_child = 1;
    for (int i = 0; i < nhier; i++) { // join our cgroups: "0" is the writer itself
        if (hier[i].tasks >= 0 && write(hier[i].tasks, "0", 1) != 1) die("workfloor: join cgroup");
        if (hier[i].tasks >= 0) close(hier[i].tasks);
    }
    umask(0); // the device nodes get exactly 0666
    if (setrlimit(RLIMIT_NOFILE, &(struct rlimit){1024, 1024}) < 0) die("workfloor: rlimit");
    if (userns) { // our ids mean nothing until the parent has written the maps
        char c;
        close(sync_pipe[1]);
        if (read(sync_pipe[0], &c, 1) != 1) die("workfloor: sync");
        close(sync_pipe[0]);
        if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) die("workfloor: become root");
    }
    if (setsid() < 0) die("workfloor: setsid");
    if (netns) { // a new network namespace starts with lo down
        struct ifreq req = {0};
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        strcpy(req.ifr_name, "lo");
        if (s < 0 || ioctl(s, SIOCGIFFLAGS, &req) < 0) die("workfloor: lo flags");
        req.ifr_flags |= IFF_UP;
        if (ioctl(s, SIOCSIFFLAGS, &req) < 0) die("workfloor: lo up");
        close(s);
    }
    if (sethostname("mini-run", 8) < 0) die("workfloor: sethostname");

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) die("workfloor: make / rprivate");
    if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0) die("workfloor: bind rootfs");
    // proc before pivot_root: a user namespace may mount one only while a full one is visible.
    mount_in("proc", "/proc", "proc", 0, NULL, 0);
    mount_in("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_STRICTATIME, "mode=755,size=65536k", 0);
    mount_in("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
             "newinstance,ptmxmode=0666,mode=0620,gid=5", 1);
    mount_in("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k",
             1);
    mount_in("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, 1);
    mount_in("sysfs", "/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, 0);
    mount_cgroups();
    make_devices();

    // pivot_root(".", ".") stacks the old root on the new one; a working directory on it
    // (taken before) reaches it, to make it a slave (nothing propagates back) and detach it.
    int old_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (old_root < 0 || chdir(rootfs) < 0) die("workfloor: enter the rootfs");
    if (syscall(SYS_pivot_root, ".", ".") < 0) die("workfloor: pivot_root");
    if (fchdir(old_root) < 0) die("workfloor: back to the old root");
    if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0) die("workfloor: old root rslave");
    if (umount2(".", MNT_DETACH) < 0) die("workfloor: umount the old root");
    close(old_root);
    if (chdir("/") < 0) die("workfloor: chdir /");
    remount_bind_ro("/", 0); // root.readonly
    mask_and_protect();
    drop_privileges();

    char *argv[] = {"/bin/true", NULL};
    char *envp[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "TERM=xterm", "HOME=/root", NULL};
    execve(argv[0], argv, envp);
    die("workfloor: exec /bin/true");
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s default|nonet|userns ROOTFS STATEROOT\n", argv[0]);
        return 2;
    }
    uint64_t flags = CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS | CLONE_NEWNET;
    if (strcmp(argv[1], "nonet") == 0) {
        flags &= ~(uint64_t)CLONE_NEWNET;
    } else if (strcmp(argv[1], "userns") == 0) {
        flags |= CLONE_NEWUSER;
        userns = 1;
    } else if (strcmp(argv[1], "default") != 0) {
        fprintf(stderr, "workfloor: unknown mode %s\n", argv[1]);
        return 2;
    }
    rootfs = argv[2];
    fmt(id, "wf-%d", (int)getpid());

    if (mkdir(argv[3], 0711) < 0 && errno != EEXIST) die(argv[3]);
    if (mkdir(fmt(state_dir, "%s/%s", argv[3], id), 0711) < 0) {
        state_dir[0] = '\0'; // not ours to remove
        die("workfloor: mkdir the state directory");
    }
    find_hierarchies();
    make_cgroups();
    write_device_rules();
    open_join_files();
    if (userns && pipe2(sync_pipe, O_CLOEXEC) < 0) die("workfloor: pipe");

    struct clone_args args = {.flags = flags, .exit_signal = SIGCHLD};
    if (v2_fd >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)v2_fd;
    }
    pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0) die("workfloor: clone3");
    if (pid == 0) child((flags & CLONE_NEWNET) != 0);
    child_pid = pid;
    for (int i = 0; i < nhier; i++)
        if (hier[i].tasks >= 0) close(hier[i].tasks);
    if (v2_fd >= 0) close(v2_fd);

    if (userns) {
        char path[PATH_MAX];
        close(sync_pipe[0]);
        write_file(fmt(path, "/proc/%d/gid_map", (int)pid), "0 100000 65536\n");
        write_file(fmt(path, "/proc/%d/uid_map", (int)pid), "0 100000 65536\n");
        if (write(sync_pipe[1], "x", 1) != 1) die("workfloor: sync");
        close(sync_pipe[1]);
    }
    save_state(pid);

    int status;
    if (waitpid(pid, &status, 0) < 0) die("workfloor: wait");
    child_pid = 0;
    teardown();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
