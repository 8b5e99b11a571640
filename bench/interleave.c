// Times commands the way a side-by-side benchmark needs: interleaved, round by round.
//
//   interleave [--warmup W] [--runs N] [--block B] [-N] [--prepare CMD]
//              --export-json FILE -n NAME CMD [-n NAME CMD ...]
//
// hyperfine times one command's runs and then the next's, so each runtime meets the machine
// in another state: the ext4 inodes, cgroups, namespaces and RCU callbacks the one before it
// left to clean up, a kernel worker's backlog, whatever else the VM's host does that second.
// On this project's 2-CPU VM that moved a ratio by 10-20% from run to run. Here every round
// runs each command once, in an order that rotates from round to round (round r starts with
// command r mod k), so all of them see the same conditions on average and a drift of the
// machine moves all of them alike.
//
// Turning from one runtime to another also changes what a run finds: one that writes a pid
// to a v1 cgroup.procs waits for an RCU grace period unless some task did so just before
// (docs/performance.md), which in a loop of its own its previous run did. So that a "run in
// a loop" scenario keeps that meaning, --block B gives each command B timed runs per turn,
// after one untimed run that brings the machine to its loop's state: every timed run then
// follows a run of the same command, as in hyperfine, and the turns still rotate.
//
// Each command runs with stdin, stdout and stderr on /dev/null (stderr is kept in a file and
// shown when the command fails, which stops everything: a failing command is no result).
// Without -N a command runs in `sh -c CMD`, and an empty `sh -c ''` runs in every round as
// well: its median (the shell's own start-up) is taken off every time, as hyperfine does.
// With -N the command is split on spaces and executed directly. --prepare CMD runs in a
// shell before each timed run, untimed (run-idle's pause).
//
// The JSON is hyperfine's shape, as far as scripts/bench.sh reads it: results[] with
// command, times (seconds), median, min, max, mean, user and system (means, seconds).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_COMMANDS 16
#define MAX_WORDS 64

struct command {
    const char *name;
    const char *text;
    double *times; // seconds, one per timed round
    double user, system;
};

static struct command commands[MAX_COMMANDS + 1]; // + the empty shell
static int ncommands, direct;
static const char *prepare, *stderr_path;

static void fail(const char *what) {
    perror(what);
    exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// Runs `text` (in sh -c, or split on spaces with -N); returns its wall time, adds its CPU.
static double run_once(const char *text, int shell, struct command *account) {
    char *argv[MAX_WORDS + 1];
    char copy[4096];
    int argc = 0;
    if (shell) {
        argv[argc++] = "sh";
        argv[argc++] = "-c";
        argv[argc++] = (char *)text;
    } else {
        if (strlen(text) >= sizeof copy) {
            fprintf(stderr, "interleave: command too long: %s\n", text);
            exit(1);
        }
        strcpy(copy, text);
        for (char *save, *word = strtok_r(copy, " ", &save); word && argc < MAX_WORDS;
             word = strtok_r(NULL, " ", &save))
            argv[argc++] = word;
    }
    argv[argc] = NULL;

    double start = now();
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        int err = open(stderr_path, O_WRONLY | O_TRUNC);
        if (null < 0 || err < 0) _exit(126);
        dup2(null, 0);
        dup2(null, 1);
        dup2(err, 2);
        execvp(shell ? "/bin/sh" : argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) fail("wait4");
    double elapsed = now() - start;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "interleave: command failed (%s %d): %s\n",
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), text);
        FILE *err = fopen(stderr_path, "r");
        char line[1024];
        while (err && fgets(line, sizeof line, err)) fputs(line, stderr);
        exit(1);
    }
    if (account) {
        account->user += (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6;
        account->system += (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
    }
    return elapsed;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *values, int n) {
    double *sorted = malloc(sizeof *sorted * (size_t)n);
    if (!sorted) fail("malloc");
    memcpy(sorted, values, sizeof *sorted * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, compare);
    double m = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    free(sorted);
    return m;
}

// A JSON string: the names and commands here are plain text, but quotes and backslashes
// (a shell command has them) must be escaped.
static void json_string(FILE *out, const char *text) {
    fputc('"', out);
    for (const char *c = text; *c; c++) {
        if (*c == '"' || *c == '\\') fputc('\\', out);
        if ((unsigned char)*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

int main(int argc, char **argv) {
    int warmup = 0, runs = 10, block = 1;
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
            warmup = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc) {
            block = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-N") == 0) {
            direct = 1;
        } else if (strcmp(argv[i], "--prepare") == 0 && i + 1 < argc) {
            prepare = argv[++i];
        } else if (strcmp(argv[i], "--export-json") == 0 && i + 1 < argc) {
            json_path = argv[++i];
        } else if (strcmp(argv[i], "-n") == 0 && i + 2 < argc && ncommands < MAX_COMMANDS) {
            commands[ncommands].name = argv[i + 1];
            commands[ncommands].text = argv[i + 2];
            ncommands++;
            i += 2;
        } else {
            fprintf(stderr, "interleave: unexpected argument %s (see bench/interleave.c)\n",
                    argv[i]);
            return 2;
        }
    }
    if (ncommands == 0 || runs < 1 || block < 1 || !json_path) {
        fprintf(stderr, "interleave: needs --export-json FILE, --runs N >= 1, --block B >= 1 "
                        "and -n NAME CMD\n");
        return 2;
    }
    char err_template[] = "/tmp/interleave-stderr.XXXXXX";
    int err_fd = mkstemp(err_template);
    if (err_fd < 0) fail("mkstemp");
    close(err_fd);
    stderr_path = err_template;

    int timed = ncommands;
    if (!direct) { // the shell's own start-up, measured alongside
        commands[ncommands].name = "(shell)";
        commands[ncommands].text = "";
        timed++;
    }
    for (int c = 0; c < timed; c++) {
        commands[c].times = calloc((size_t)runs, sizeof(double));
        if (!commands[c].times) fail("calloc");
    }
    // Warm-up rounds first (a run each), then rounds of `block` timed runs per command.
    int warm_rounds = warmup, timed_rounds = (runs + block - 1) / block;
    int done[MAX_COMMANDS + 1] = {0};
    for (int round = 0; round < warm_rounds + timed_rounds; round++) {
        for (int k = 0; k < timed; k++) {
            int c = (round + k) % timed;
            struct command *command = &commands[c];
            int shell = command == &commands[ncommands] || !direct;
            if (round < warm_rounds) {
                if (prepare) run_once(prepare, 1, NULL);
                run_once(command->text, shell, NULL);
                continue;
            }
            if (block > 1) { // the turn's untimed first run
                if (prepare) run_once(prepare, 1, NULL);
                run_once(command->text, shell, NULL);
            }
            for (int b = 0; b < block && done[c] < runs; b++) {
                if (prepare) run_once(prepare, 1, NULL);
                command->times[done[c]++] = run_once(command->text, shell, command);
            }
        }
    }
    unlink(stderr_path);

    double offset = direct ? 0 : median(commands[ncommands].times, runs);
    FILE *out = fopen(json_path, "w");
    if (!out) fail(json_path);
    fprintf(out, "{\"results\": [");
    for (int c = 0; c < ncommands; c++) {
        struct command *command = &commands[c];
        double sum = 0, min = 1e9, max = 0;
        for (int r = 0; r < runs; r++) {
            double t = command->times[r] - offset;
            command->times[r] = t > 0 ? t : 0;
            sum += command->times[r];
            min = command->times[r] < min ? command->times[r] : min;
            max = command->times[r] > max ? command->times[r] : max;
        }
        fprintf(out, "%s\n  {\"command\": ", c ? "," : "");
        json_string(out, command->name);
        fprintf(out, ", \"text\": ");
        json_string(out, command->text);
        fprintf(out,
                ", \"mean\": %.9f, \"median\": %.9f, \"min\": %.9f, \"max\": %.9f, "
                "\"user\": %.9f, \"system\": %.9f, \"times\": [",
                sum / runs, median(command->times, runs), min, max, command->user / runs,
                command->system / runs);
        for (int r = 0; r < runs; r++) fprintf(out, "%s%.9f", r ? ", " : "", command->times[r]);
        fprintf(out, "]}");
    }
    fprintf(out, "\n], \"shell_offset\": %.9f}\n", offset);
    if (fclose(out) != 0) fail(json_path);
    return 0;
}
