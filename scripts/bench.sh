#!/usr/bin/env bash
# Start-up benchmark of mini-run against crun, runc and a floor program:
#
#   sudo scripts/bench.sh [--quick] [--update-readme]
#
# It builds mini-run optimised for size (MinSizeRel, build-bench/; docs/performance.md says
# why that is also the fastest build here), installs crun, runc, hyperfine, gnuplot and
# GNU time with apt when missing, builds the floor program (bench/floor.c), prepares three
# busybox /bin/true bundles (default namespaces, no network namespace, plus a user
# namespace) and measures, with every runtime's commands interleaved in one hyperfine run
# per scenario: `run`, create+start+delete, run --detach+delete, throughput (sequential and
# 8-way parallel), peak RSS and CPU time. It prints markdown tables, writes them to
# bench/results/latest.md and draws bench/results/latest.png. What each scenario means:
# bench/README.md.
#
# --quick          few runs (warm-up 1, 5 runs, throughput of 10 containers): checks that
#                  everything works and gives a rough picture in well under a minute
# --update-readme  also copy the tables into README.md, between the bench markers
#
# The measurements run in a private mount namespace in which /sys/fs/cgroup/unified is
# unmounted: crun 1.8.1 refuses a hybrid cgroup layout with a controller on cgroup2, so
# every runtime is measured in that same layout. Nothing changes for the rest of the
# machine. Benchmarks are not tests: nothing here asserts a timing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)

QUICK=0
UPDATE_README=0
for arg in "$@"; do
    case $arg in
    --quick) QUICK=1 ;;
    --update-readme) UPDATE_README=1 ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "bench: unknown argument $arg (try --help)" >&2
        exit 2
        ;;
    esac
done

say() { echo "bench: $*" >&2; }
die() {
    echo "bench: error: $*" >&2
    exit 1
}

((EUID == 0)) || die "needs root (containers with namespaces, cgroups and mounts)"

BUILD=$REPO/build-bench
MINIRUN=${MINIRUN:-$BUILD/mini-run}
FLOOR=$BUILD/floor
RESULTS=$REPO/bench/results

# ---------------------------------------------------------------- preparation (host namespace)
if [[ -z "${MINIRUN_BENCH_INNER:-}" ]]; then
    # Dependencies: one apt-get update and install, only for what is missing.
    missing=()
    command -v crun >/dev/null || missing+=(crun)
    command -v runc >/dev/null || missing+=(runc)
    command -v hyperfine >/dev/null || missing+=(hyperfine)
    command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
    [[ -x /usr/bin/time ]] || missing+=(time)
    command -v python3 >/dev/null || missing+=(python3)
    command -v cc >/dev/null || missing+=(gcc libc6-dev)
    [[ -x /bin/busybox ]] || missing+=(busybox-static)
    if ((${#missing[@]} > 0)); then
        say "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi

    if [[ -z "${MINIRUN:-}" || "$MINIRUN" == "$BUILD/mini-run" ]]; then
        say "building mini-run (MinSizeRel) in build-bench/"
        cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=MinSizeRel -DMINIRUN_TESTS=OFF >/dev/null
        cmake --build "$BUILD" --target mini-run -j "$(nproc)" >/dev/null
    fi
    mkdir -p "$BUILD"
    cc -O2 -Wall -Wextra -static -o "$FLOOR" bench/floor.c 2>/dev/null ||
        cc -O2 -Wall -Wextra -o "$FLOOR" bench/floor.c
    [[ -x rootfs-examples/busybox/rootfs/bin/busybox ]] || scripts/make-rootfs.sh >/dev/null

    # Everything else runs in a private mount namespace (see the header).
    export MINIRUN_BENCH_INNER=1 MINIRUN
    exec unshare -m --propagation private "$REPO/scripts/bench.sh" "$@"
fi

# ---------------------------------------------------------------- inside the private mount namespace
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then
    umount /sys/fs/cgroup/unified 2>/dev/null || umount -l /sys/fs/cgroup/unified
fi

PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3)
CRUN=$(command -v crun)
RUNC=$(command -v runc)
RUNTIMES=(mini-run crun runc)
declare -A BIN=([mini-run]=$MINIRUN [crun]=$CRUN [runc]=$RUNC)

if ((QUICK)); then
    WARMUP=1 RUNS=5 IDLE_RUNS=4 TP_N=10 TP_RUNS=3 TP_WARMUP=0 RSS_RUNS=5
else
    WARMUP=3 RUNS=30 IDLE_RUNS=20 TP_N=50 TP_RUNS=10 TP_WARMUP=1 RSS_RUNS=10
fi

TMP=$(mktemp -d /tmp/minirun-bench.XXXXXX)
chmod 0755 "$TMP" # the user-namespace containers' root (uid 100000) must reach the rootfs
# crun 1.8.1 gives its stdio to the container's root in a user namespace, /dev/null
# included: the host's /dev/null then belongs to uid 100000 (runc skips /dev/null, runc issue
# 3674; later crun releases do too). Its owner is put back at the end.
DEV_NULL_OWNER=$(stat -c %u:%g /dev/null)

cleanup() {
    local status=$?
    set +e
    for rt in "${RUNTIMES[@]}"; do
        local root=$TMP/state/$rt
        [[ -d $root ]] || continue
        for id in $("${BIN[$rt]}" --root "$root" list -q 2>/dev/null); do
            "${BIN[$rt]}" --root "$root" delete --force "$id" >/dev/null 2>&1
        done
    done
    # No mount may be left under TMP before rm -rf (there should be none: the containers'
    # mounts live in their own namespaces). Deepest first.
    findmnt -rn -o TARGET | grep -F "$TMP" | sort -r | while read -r m; do umount -l "$m"; done
    rm -rf "$TMP"
    if [[ $(stat -c %u:%g /dev/null) != "$DEV_NULL_OWNER" ]]; then
        chown "$DEV_NULL_OWNER" /dev/null
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Root filesystem: a private copy, shared read-only by every bundle and the floor.
cp -a rootfs-examples/busybox/rootfs "$TMP/rootfs"
ROOTFS=$TMP/rootfs

# Bundles: the example config running /bin/true, with exactly the namespaces of each case.
for bundle in default nonet userns; do
    mkdir -p "$TMP/bundles/$bundle"
    "$PY" - "$REPO/rootfs-examples/busybox/config.json" "$TMP/bundles/$bundle/config.json" \
        "$bundle" "$ROOTFS" <<'PY'
import json, sys
src, dst, kind, rootfs = sys.argv[1:]
config = json.load(open(src))
config["process"]["args"] = ["/bin/true"]
config["process"]["terminal"] = False
config["root"]["path"] = rootfs
namespaces = ["pid", "ipc", "uts", "mount"]
if kind != "nonet":
    namespaces.append("network")
if kind == "userns":
    namespaces.append("user")
    mapping = [{"containerID": 0, "hostID": 100000, "size": 65536}]
    config["linux"]["uidMappings"] = mapping
    config["linux"]["gidMappings"] = mapping
config["linux"]["namespaces"] = [{"type": t} for t in namespaces]
json.dump(config, open(dst, "w"), indent=2)
PY
done
B=$TMP/bundles
for rt in "${RUNTIMES[@]}"; do mkdir -p "$TMP/state/$rt"; done
JSON=$TMP/json
mkdir -p "$JSON"

# rt_cmd RUNTIME: the runtime's command line prefix, with its own state directory.
rt_cmd() { echo "${BIN[$1]} --root $TMP/state/$1"; }

# ---------------------------------------------------------------- sanity: each runtime runs each bundle
for rt in "${RUNTIMES[@]}"; do
    for bundle in default nonet userns; do
        if ! out=$($(rt_cmd "$rt") run -b "$B/$bundle" "check-$rt-$bundle" 2>&1 </dev/null); then
            die "$rt cannot run the $bundle bundle:"$'\n'"$out"
        fi
    done
done
for bundle in default nonet userns; do
    out=$("$FLOOR" "$bundle" "$ROOTFS" 2>&1) || die "the floor fails for $bundle:"$'\n'"$out"
done

VERSIONS="mini-run $("$MINIRUN" --version 2>&1 | head -n1 | awk '{print $NF}'), crun $("$CRUN" --version | awk 'NR==1{print $3}'), runc $("$RUNC" --version | awk 'NR==1{print $3}'), hyperfine $(hyperfine --version | awk '{print $2}')"
say "$VERSIONS; $(nproc) cpus; $( ((QUICK)) && echo quick || echo full) mode"

# bench NAME [hyperfine options] -- NAME1 CMD1 NAME2 CMD2 ...: one interleaved hyperfine run.
bench() {
    local name=$1
    shift
    local opts=()
    while [[ $1 != -- ]]; do
        opts+=("$1")
        shift
    done
    shift
    local cmds=()
    while (($# > 0)); do
        cmds+=(-n "$1" "$2")
        shift 2
    done
    say "measuring $name"
    if ! hyperfine --style none "${opts[@]}" --export-json "$JSON/$name.json" "${cmds[@]}" \
        >"$TMP/hyperfine.log" 2>&1; then
        cat "$TMP/hyperfine.log" >&2
        die "hyperfine failed in scenario $name"
    fi
}

# Fills args with one (name, command) pair per runtime: @RT@ in the template is replaced by
# that runtime's command line.
commands_for() {
    args=()
    for rt in "${RUNTIMES[@]}"; do args+=("$rt" "${1//@RT@/$(rt_cmd "$rt")}"); done
}

# 1. `run` of /bin/true, per bundle. No shell (-N): the command is exactly one exec.
for bundle in default nonet userns; do
    commands_for "@RT@ run -b $B/$bundle r-$bundle"
    args+=(floor "$FLOOR $bundle $ROOTFS")
    bench "run-$bundle" -N --warmup "$WARMUP" --runs "$RUNS" -- "${args[@]}"
done

# 1b. `run` of the default bundle after the machine was idle for a moment (--prepare sleeps
# 0.2 s, which is not timed): a start as it comes in use (a CI job, a `podman run` now and
# then), not in a tight loop. What an idle kernel makes a runtime wait for shows here
# (docs/performance.md: the first move into a v1 cgroup waits for an RCU grace period).
commands_for "@RT@ run -b $B/default i-default"
args+=(floor "$FLOOR default $ROOTFS")
bench run-idle -N --prepare "sleep 0.2" --warmup 1 --runs "$IDLE_RUNS" -- "${args[@]}"

# 2. create + start + delete --force, and 3. run --detach + delete --force. These run in a
# shell (hyperfine subtracts the shell's own start-up); $$ makes each iteration's id unique.
commands_for "@RT@ create -b $B/default c\$\$ && @RT@ start c\$\$ && @RT@ delete --force c\$\$"
bench lifecycle --warmup "$WARMUP" --runs "$RUNS" -- "${args[@]}"
commands_for "@RT@ run --detach -b $B/default d\$\$ && @RT@ delete --force d\$\$"
bench detach --warmup "$WARMUP" --runs "$RUNS" -- "${args[@]}"

# 4. Throughput: TP_N containers one after another, and 8 at a time.
commands_for "for i in \$(seq $TP_N); do @RT@ run -b $B/default s\$\$-\$i || exit 1; done"
args+=(floor "for i in \$(seq $TP_N); do $FLOOR default $ROOTFS || exit 1; done")
bench sequential --warmup "$TP_WARMUP" --runs "$TP_RUNS" -- "${args[@]}"

commands_for "seq $TP_N | xargs -P 8 -I@ @RT@ run -b $B/default p\$\$-@"
args+=(floor "seq $TP_N | xargs -P 8 -I@ $FLOOR default $ROOTFS")
bench parallel --warmup "$TP_WARMUP" --runs "$TP_RUNS" -- "${args[@]}"

# 5. Peak RSS (GNU time's %M: the largest ru_maxrss of the process and the descendants it
# waited for) and CPU time (user+sys from wait4, in microseconds: GNU time rounds to 10 ms).
say "measuring peak RSS and CPU time"
for rt in "${RUNTIMES[@]}" floor; do
    if [[ $rt == floor ]]; then
        cmd=("$FLOOR" default "$ROOTFS")
    else
        read -r -a cmd <<<"$(rt_cmd "$rt") run -b $B/default m"
    fi
    for ((i = 0; i < RSS_RUNS; i++)); do
        /usr/bin/time -f '%M' -a -o "$TMP/rss-$rt" "${cmd[@]}" </dev/null >/dev/null 2>"$TMP/err" ||
            die "$rt failed under /usr/bin/time: $(cat "$TMP/err")"
    done
    "$PY" - "$RSS_RUNS" "${cmd[@]}" >"$TMP/cpu-$rt" <<'PY'
import os, sys
runs, cmd = int(sys.argv[1]), sys.argv[2:]
null = os.open(os.devnull, os.O_RDWR)
for _ in range(runs):
    pid = os.fork()
    if pid == 0:
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"{cmd[0]} exited with status {status}")
    print(f"{(usage.ru_utime + usage.ru_stime) * 1000:.3f}")
PY
done

# ---------------------------------------------------------------- report
mkdir -p "$RESULTS"
COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$REPO" diff --quiet HEAD -- runtime src cli include CMakeLists.txt 2>/dev/null || COMMIT="$COMMIT+changes"
HEADER="$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) cpus, commit $COMMIT; $VERSIONS"
MODE=$( ((QUICK)) && echo "quick: warm-up $WARMUP, $RUNS runs, throughput of $TP_N containers x $TP_RUNS runs" ||
    echo "full: warm-up $WARMUP, $RUNS runs, throughput of $TP_N containers x $TP_RUNS runs")

"$PY" - "$JSON" "$TMP" "$RESULTS" "$HEADER" "$MODE" "$TP_N" <<'PY'
import json, os, statistics, sys
jdir, tmp, out, header, mode, tp_n = sys.argv[1:]
tp_n = int(tp_n)
runtimes = ["mini-run", "crun", "runc", "floor"]

def load(name):
    with open(os.path.join(jdir, name + ".json")) as f:
        return {r["command"]: r["times"] for r in json.load(f)["results"]}

def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"

lines = [f"Measured {header}.", "", f"Mode: {mode}. Times in milliseconds (hyperfine).", ""]
scenarios = [
    ("run-default", "`run` /bin/true, default bundle (pid, ipc, uts, mount, network)"),
    ("run-nonet", "`run` /bin/true, no network namespace"),
    ("run-userns", "`run` /bin/true, plus a user namespace"),
    ("run-idle", "`run` /bin/true, default bundle, each start after 0.2 s idle"),
    ("lifecycle", "`create` + `start` + `delete --force`"),
    ("detach", "`run --detach` + `delete --force`"),
]
medians = {}
for key, title in scenarios:
    times = load(key)
    med = {rt: statistics.median(t) * 1000 for rt, t in times.items()}
    medians[key] = med
    has_floor = "floor" in times
    lines += [f"### {title}", ""]
    head = "| runtime | median ms | min | max | vs crun |" + (" vs floor |" if has_floor else "")
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for rt in runtimes:
        if rt not in times:
            continue
        t = times[rt]
        row = (f"| {rt} | {med[rt]:.2f} | {min(t) * 1000:.2f} | {max(t) * 1000:.2f} | "
               f"{ratio(med[rt], med['crun'])} |")
        if has_floor:
            row += f" {ratio(med[rt], med['floor'])} |"
        lines.append(row)
    lines.append("")

seq, par = load("sequential"), load("parallel")
rate = lambda t: tp_n / statistics.median(t)
lines += [f"### Throughput: {tp_n} containers (`run` /bin/true, default bundle)", "",
          "| runtime | sequential containers/s | vs crun | 8-way parallel containers/s | vs crun |",
          "|---|---|---|---|---|"]
for rt in runtimes:
    s, p = rate(seq[rt]), rate(par[rt])
    lines.append(f"| {rt} | {s:.1f} | {s / rate(seq['crun']):.2f}x | {p:.1f} | {p / rate(par['crun']):.2f}x |")
lines.append("")

lines += ["### Peak RSS and CPU time (`run` /bin/true, default bundle)", "",
          "| runtime | peak RSS MiB | vs crun | CPU ms (user+sys, median) | vs crun |",
          "|---|---|---|---|---|"]
usage = {}
for rt in runtimes:
    rss = max(int(x) for x in open(os.path.join(tmp, "rss-" + rt)).read().split()) / 1024
    cpu = statistics.median(float(x) for x in open(os.path.join(tmp, "cpu-" + rt)).read().split())
    usage[rt] = (rss, cpu)
for rt in runtimes:
    rss, cpu = usage[rt]
    lines.append(f"| {rt} | {rss:.1f} | {ratio(rss, usage['crun'][0])} | {cpu:.2f} | "
                 f"{ratio(cpu, usage['crun'][1])} |")
lines.append("")

with open(os.path.join(out, "latest.md"), "w") as f:
    f.write("# Start-up benchmark: latest results\n\n" + "\n".join(lines) +
            "\n![median start-up time per scenario](latest.png)\n")

# Data for gnuplot: one row per scenario, one column per runtime ("-" where there is none).
labels = {"run-default": "run", "run-nonet": "run, no netns", "run-userns": "run, userns",
          "run-idle": "run after idle", "lifecycle": "create+start+del",
          "detach": "run -d + del"}
with open(os.path.join(tmp, "plot.dat"), "w") as f:
    f.write("scenario " + " ".join(runtimes) + "\n")
    for key, _ in scenarios:
        vals = [f"{medians[key][rt]:.3f}" if rt in medians[key] else "-" for rt in runtimes]
        f.write(f'"{labels[key]}" ' + " ".join(vals) + "\n")
with open(os.path.join(tmp, "throughput.dat"), "w") as f:
    f.write("mode " + " ".join(runtimes) + "\n")
    f.write('"sequential" ' + " ".join(f"{rate(seq[rt]):.2f}" for rt in runtimes) + "\n")
    f.write('"8-way parallel" ' + " ".join(f"{rate(par[rt]):.2f}" for rt in runtimes) + "\n")
print("\n".join(lines))
PY

gnuplot -e "latency='$TMP/plot.dat'; throughput='$TMP/throughput.dat'; output='$RESULTS/latest.png'; subtitle='$(uname -r), commit $COMMIT'" \
    bench/plot.gp || die "gnuplot failed"
say "wrote bench/results/latest.md and bench/results/latest.png"

if ((UPDATE_README)); then
    "$PY" - "$REPO/README.md" "$RESULTS/latest.md" <<'PY'
import re, sys
readme, latest = sys.argv[1:]
text = open(readme).read()
body = open(latest).read().split("\n", 2)[2]  # without the title line
body = body.replace("![median start-up time per scenario](latest.png)",
                    "![median start-up time per scenario](bench/results/latest.png)")
begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
if begin not in text:
    sys.exit("README.md has no " + begin + " marker")
text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: begin + "\n" + body.strip() + "\n" + end,
              text, flags=re.S)
open(readme, "w").write(text)
PY
    say "updated README.md"
fi
