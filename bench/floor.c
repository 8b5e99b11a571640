// The floor: the least work that starts a container like the benchmark bundles do.
//
//   floor default|nonet|userns ROOTFS
//
// clone() with the bundle's namespaces (pid, ipc, uts, mount, and network unless "nonet";
// "userns" adds a user namespace mapping 0 -> 100000, 65536 ids); in the child: make / rprivate,
// bind the rootfs onto itself, mount proc in it, pivot_root into it, detach the old root and exec
// /bin/true. The parent writes the id maps (userns), waits and returns the child's status.
// No cgroups, no config parsing, no state: what a runtime costs above this is its own overhead.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *rootfs;
static int sync_pipe[2];

static void die(const char *what) {
    perror(what);
    _exit(127);
}

static int child(void *arg) {
    char c;
    if (arg != NULL) { // userns: wait until the parent has written our id maps
        close(sync_pipe[1]);
        if (read(sync_pipe[0], &c, 1) != 1) die("floor: sync");
        close(sync_pipe[0]);
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) die("floor: make / rprivate");
    if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0) die("floor: bind rootfs");
    if (chdir(rootfs) < 0) die("floor: chdir rootfs");
    // proc before pivot_root: in a user namespace the kernel allows a new proc mount only
    // while a fully visible proc is in the mount namespace, i.e. before the old root goes.
    if (mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) die("floor: mount proc");
    if (syscall(SYS_pivot_root, ".", ".") < 0) die("floor: pivot_root");
    if (umount2(".", MNT_DETACH) < 0) die("floor: umount old root");
    execl("/bin/true", "true", (char *)NULL);
    die("floor: exec /bin/true");
    return 127;
}

static void write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) die(path);
    close(fd);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s default|nonet|userns ROOTFS\n", argv[0]);
        return 2;
    }
    int flags = CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS | CLONE_NEWNET;
    int userns = 0;
    if (strcmp(argv[1], "nonet") == 0) {
        flags &= ~CLONE_NEWNET;
    } else if (strcmp(argv[1], "userns") == 0) {
        flags |= CLONE_NEWUSER;
        userns = 1;
    } else if (strcmp(argv[1], "default") != 0) {
        fprintf(stderr, "floor: unknown mode %s\n", argv[1]);
        return 2;
    }
    rootfs = argv[2];
    if (userns && pipe2(sync_pipe, O_CLOEXEC) < 0) die("floor: pipe");

    static char stack[64 * 1024] __attribute__((aligned(16)));
    pid_t pid = clone(child, stack + sizeof stack, flags | SIGCHLD, userns ? (void *)1 : NULL);
    if (pid < 0) die("floor: clone");

    if (userns) {
        char path[64];
        close(sync_pipe[0]);
        snprintf(path, sizeof path, "/proc/%d/setgroups", pid);
        write_file(path, "deny");
        snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
        write_file(path, "0 100000 65536");
        snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
        write_file(path, "0 100000 65536");
        if (write(sync_pipe[1], "x", 1) != 1) die("floor: sync");
        close(sync_pipe[1]);
    }

    int status;
    if (waitpid(pid, &status, 0) < 0) die("floor: wait");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
