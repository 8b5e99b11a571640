#!/usr/bin/env bash
# Benchmark of mini-run against crun, runc and the floor programs:
#
#   sudo scripts/bench.sh [--quick] [--only LIST] [--update-readme]
#
# It builds mini-run optimised for size (MinSizeRel, build-bench/; docs/performance.md says
# why that is also the fastest build here), installs crun, runc, gnuplot and GNU time with
# apt when missing, builds the floor program (bench/floor.c), the timer (bench/interleave.c)
# and, when it exists, the work floor (bench/workfloor.c), prepares busybox bundles
# (/bin/true with default namespaces, no network namespace, plus a user namespace; a sleeping
# one; one per memory limit), drops the measured binaries from the page cache, and measures,
# with every runtime's commands taking turns round by round in one run of bench/interleave.c
# per timed scenario: `run`, create+start+delete, run --detach+delete, throughput
# (sequential and 8-way parallel), peak RSS and CPU time, `exec` into a running container;
# then the memory of many containers (created, and running) and the smallest memory limit
# with which `run` works. It prints markdown tables, writes them to
# bench/results/latest.md and draws bench/results/latest.png. What each scenario means:
# bench/README.md.
#
# --quick          few runs (warm-up 1, 5 runs, throughput of 10 containers, 20 containers
#                  for density, one try per memory limit): checks that everything works and
#                  gives a rough picture in under a minute
# --only LIST      only these scenarios (comma-separated): run (= run-default, run-nonet,
#                  run-userns), run-idle, lifecycle, detach, sequential, parallel, rss,
#                  exec, density, min-limit. The tables are printed; bench/results is left
#                  as it was, since a partial run must not replace a whole one
# --update-readme  also copy the tables into README.md, between the bench markers
#
# The peers: Debian's crun and runc, but runc 1.3.6 where scripts/runc-suite.sh built it
# (`--compare runc-1.3.6`, under /var/tmp/mini-run-runc-suite); BENCH_RUNC=PATH and
# BENCH_CRUN=PATH name others (a newer crun built by hand, say).
#
# The measurements run in a private mount namespace in which /sys/fs/cgroup/unified is
# unmounted: crun 1.8.1 refuses a hybrid cgroup layout with a controller on cgroup2, so
# every runtime is measured in that same layout. Nothing changes for the rest of the
# machine. Benchmarks are not tests: nothing here asserts a timing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)

ARGS=("$@") # for the re-execution below
QUICK=0
UPDATE_README=0
ONLY=
SCENARIOS=(run-default run-nonet run-userns run-idle lifecycle detach sequential parallel rss exec density min-limit)
while (($# > 0)); do
    case $1 in
    --quick) QUICK=1 ;;
    --update-readme) UPDATE_README=1 ;;
    --only)
        (($# > 1)) || { echo "bench: --only needs a list of scenarios" >&2; exit 2; }
        ONLY=$2
        shift
        ;;
    --only=*) ONLY=${1#--only=} ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "bench: unknown argument $1 (try --help)" >&2
        exit 2
        ;;
    esac
    shift
done
# ONLY becomes ",name,name," with "run" spelled out, so that want() is one pattern match.
if [[ -n $ONLY ]]; then
    list=,
    for name in ${ONLY//,/ }; do
        if [[ $name == run ]]; then
            list+=run-default,run-nonet,run-userns,
        elif [[ " ${SCENARIOS[*]} " == *" $name "* ]]; then
            list+=$name,
        else
            echo "bench: unknown scenario $name (known: run ${SCENARIOS[*]})" >&2
            exit 2
        fi
    done
    ONLY=$list
    if ((UPDATE_README)); then
        echo "bench: --update-readme needs every scenario (no --only)" >&2
        exit 2
    fi
fi
want() { [[ -z $ONLY || $ONLY == *",$1,"* ]]; }

say() { echo "bench: $*" >&2; }
die() {
    echo "bench: error: $*" >&2
    exit 1
}

((EUID == 0)) || die "needs root (containers with namespaces, cgroups and mounts)"

BUILD=$REPO/build-bench
MINIRUN=${MINIRUN:-$BUILD/mini-run}
FLOOR=$BUILD/floor
WORKFLOOR=$BUILD/workfloor
RESULTS=$REPO/bench/results

# ---------------------------------------------------------------- preparation (host namespace)
if [[ -z "${MINIRUN_BENCH_INNER:-}" ]]; then
    # Dependencies: one apt-get update and install, only for what is missing.
    missing=()
    command -v crun >/dev/null || missing+=(crun)
    command -v runc >/dev/null || missing+=(runc)
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
    cc -O2 -Wall -Wextra -o "$BUILD/interleave" bench/interleave.c
    # The work floor is optional: without its source, or when that does not compile, its rows
    # are left out and the report says why. An old binary must not stand in for the source.
    rm -f "$WORKFLOOR"
    WORKFLOOR_NOTE=
    if [[ ! -f bench/workfloor.c ]]; then
        WORKFLOOR_NOTE="bench/workfloor.c does not exist"
    elif ! cc -O2 -Wall -Wextra -static -o "$WORKFLOOR" bench/workfloor.c 2>/dev/null &&
        ! cc -O2 -Wall -Wextra -o "$WORKFLOOR" bench/workfloor.c 2>"$BUILD/workfloor.log"; then
        rm -f "$WORKFLOOR"
        WORKFLOOR_NOTE="bench/workfloor.c does not compile (errors in build-bench/workfloor.log)"
    fi
    [[ -z $WORKFLOOR_NOTE ]] || say "no work floor: $WORKFLOOR_NOTE"
    [[ -x rootfs-examples/busybox/rootfs/bin/busybox ]] || scripts/make-rootfs.sh >/dev/null

    # The build's dirty pages are written back now rather than while a scenario is timed.
    sync
    # Everything else runs in a private mount namespace (see the header).
    export MINIRUN_BENCH_INNER=1 MINIRUN MINIRUN_BENCH_WORKFLOOR_NOTE=$WORKFLOOR_NOTE
    exec unshare -m --propagation private "$REPO/scripts/bench.sh" "${ARGS[@]}"
fi

# ---------------------------------------------------------------- inside the private mount namespace
# Then a scratch tmpfs on the empty mount point: crun 1.8.1 still makes a directory per
# container there, and on the bare point those would land in the host's /sys/fs/cgroup tmpfs,
# hidden under its cgroup2 mount, and stay (the first version of this script left 1977).
# The scratch tmpfs goes with this namespace.
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then
    umount /sys/fs/cgroup/unified 2>/dev/null || umount -l /sys/fs/cgroup/unified
fi
if [[ -d /sys/fs/cgroup/unified ]]; then
    mount -t tmpfs -o size=16m,mode=755 bench-scratch /sys/fs/cgroup/unified
fi

PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3)
# The peers: BENCH_CRUN=PATH and BENCH_RUNC=PATH choose others than Debian 12's crun 1.8.1
# and runc 1.1.5. Without BENCH_RUNC, runc 1.3.6 is taken where scripts/runc-suite.sh has
# built it (--compare runc-1.3.6): today's engines are tested against runc 1.3, and its
# behaviour (a cgroup of one's own, the exec path) is what mini-run's ratios should meet.
RUNC_13=/var/tmp/mini-run-runc-suite/runc-1.3.6/usr/sbin/runc
CRUN=${BENCH_CRUN:-$(command -v crun)}
if [[ -n ${BENCH_RUNC:-} ]]; then
    RUNC=$BENCH_RUNC
elif [[ -x $RUNC_13 ]]; then
    RUNC=$RUNC_13
else
    RUNC=$(command -v runc)
fi
RUNTIMES=(mini-run crun runc)
declare -A BIN=([mini-run]=$MINIRUN [crun]=$CRUN [runc]=$RUNC)
# MINIRUN_BASELINE=BINARY: an older mini-run, "mini-run-before", joins the timed scenarios
# (run, lifecycle, detach, throughput, exec), so that a change's before and after come from
# one run (docs/performance.md records them so). Memory and limits stay the three runtimes'.
TIMED=("${RUNTIMES[@]}")
if [[ -n ${MINIRUN_BASELINE:-} ]]; then
    BIN[mini-run-before]=$MINIRUN_BASELINE
    TIMED=(mini-run mini-run-before crun runc)
fi

# DENSITY_N containers per runtime and state; SETTLE seconds of idling before each reading of
# MemAvailable (freeing a network namespace, for one, is deferred to a kernel worker);
# LIMIT_TRIES runs per memory limit, all of which must succeed. BLOCK: timed runs per turn
# in the loop scenarios (bench/interleave.c, --block).
if ((QUICK)); then
    WARMUP=1 RUNS=5 BLOCK=5 IDLE_RUNS=4 TP_N=10 TP_RUNS=3 TP_WARMUP=0 RSS_RUNS=5
    DENSITY_N=20 SETTLE=0.5 LIMIT_TRIES=1
else
    WARMUP=3 RUNS=30 BLOCK=5 IDLE_RUNS=20 TP_N=50 TP_RUNS=10 TP_WARMUP=1 RSS_RUNS=10
    DENSITY_N=200 SETTLE=2 LIMIT_TRIES=3
fi
# The memory limits tried, in KiB, smallest first.
LIMITS_KIB=(256 512 768 1024 1536 2048 3072 4096 6144 8192 12288 16384)
WORKFLOOR_NOTE=${MINIRUN_BENCH_WORKFLOOR_NOTE:-}
HAVE_WORKFLOOR=0
[[ -z $WORKFLOOR_NOTE && -x $WORKFLOOR ]] && HAVE_WORKFLOOR=1

TMP=$(mktemp -d /tmp/minirun-bench.XXXXXX)
chmod 0755 "$TMP" # the user-namespace containers' root (uid 100000) must reach the rootfs
# crun 1.8.1 gives its stdio to the container's root in a user namespace, /dev/null
# included: the host's /dev/null then belongs to uid 100000 (runc skips /dev/null, runc issue
# 3674; later crun releases do too). Its owner is put back at the end.
DEV_NULL_OWNER=$(stat -c %u:%g /dev/null)

# rt_cmd RUNTIME: the runtime's command line prefix, with its own state directory.
rt_cmd() { echo "${BIN[$1]} --root $TMP/state/$1"; }

# remove_containers RUNTIME ID...: SIGKILL to all of them first, then delete --force, so that
# no delete has to wait for its container to die (runc's polls every 100 ms).
remove_containers() {
    local rt=$1 id
    shift
    for id in "$@"; do $(rt_cmd "$rt") kill "$id" KILL >/dev/null 2>&1 || true; done
    for id in "$@"; do $(rt_cmd "$rt") delete --force "$id" >/dev/null 2>&1 || true; done
}

cleanup() {
    local status=$?
    set +e
    for rt in "${TIMED[@]}"; do
        [[ -d $TMP/state/$rt ]] || continue
        # shellcheck disable=SC2046 # one word per id
        remove_containers "$rt" $($(rt_cmd "$rt") list -q 2>/dev/null)
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


# Bundles, all from the example config: default, nonet and userns run /bin/true with exactly
# the namespaces of each case; sleep is default running `sleep 1000000` (a container to exec
# into, or to keep running); mem-KIB is default with linux.resources.memory.limit = KIB KiB
# and nothing else (no memory.swap: cgroup v1 would need the memsw files for it).
"$PY" - "$REPO/rootfs-examples/busybox/config.json" "$TMP/bundles" "$ROOTFS" \
    default nonet userns sleep "${LIMITS_KIB[@]/#/mem-}" <<'PY'
import json, os, sys
src, bundles, rootfs, *names = sys.argv[1:]
for name in names:
    config = json.load(open(src))
    config["process"]["args"] = ["/bin/sleep", "1000000"] if name == "sleep" else ["/bin/true"]
    config["process"]["terminal"] = False
    config["root"]["path"] = rootfs
    namespaces = ["pid", "ipc", "uts", "mount"]
    if name != "nonet":
        namespaces.append("network")
    if name == "userns":
        namespaces.append("user")
        mapping = [{"containerID": 0, "hostID": 100000, "size": 65536}]
        config["linux"]["uidMappings"] = mapping
        config["linux"]["gidMappings"] = mapping
    config["linux"]["namespaces"] = [{"type": t} for t in namespaces]
    if name.startswith("mem-"):
        config["linux"]["resources"] = {"memory": {"limit": int(name[4:]) * 1024}}
    os.makedirs(os.path.join(bundles, name))
    json.dump(config, open(os.path.join(bundles, name, "config.json"), "w"), indent=2)
PY
B=$TMP/bundles
for rt in "${TIMED[@]}"; do mkdir -p "$TMP/state/$rt"; done
WF_ROOT=$TMP/state/workfloor # the work floor's state root
mkdir -p "$WF_ROOT"
JSON=$TMP/json
mkdir -p "$JSON"

# ---------------------------------------------------------------- the binaries' page cache
# Every measured binary starts from the same page cache state: none of it cached, so that the
# first run reads it back by readahead, as after a boot. A binary just written (mini-run by
# the linker, the floors by cc) is otherwise cached as the write left it, which changed a
# start of mini-run by 3-5% against the same file read back (A/B runs, 2026-12-06):
# unfair in either direction.
evict_page_cache() {
    "$PY" - "$@" <<'PY'
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)  # dirty pages stay cached
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
}
evict_list=()
for rt in "${TIMED[@]}"; do evict_list+=("$(readlink -f "${BIN[$rt]}")"); done
evict_list+=("$FLOOR")
((HAVE_WORKFLOOR)) && evict_list+=("$WORKFLOOR")
evict_page_cache "${evict_list[@]}"

# ---------------------------------------------------------------- sanity: each runtime runs each bundle
for rt in "${TIMED[@]}"; do
    for bundle in default nonet userns; do
        if ! out=$($(rt_cmd "$rt") run -b "$B/$bundle" "check-$rt-$bundle" 2>&1 </dev/null); then
            die "$rt cannot run the $bundle bundle:"$'\n'"$out"
        fi
    done
done
for bundle in default nonet userns; do
    out=$("$FLOOR" "$bundle" "$ROOTFS" 2>&1) || die "the floor fails for $bundle:"$'\n'"$out"
done
# The work floor is another program in the making: when it fails, it is left out (and the
# report says so) rather than stopping the benchmark.
if ((HAVE_WORKFLOOR)); then
    for bundle in default nonet userns; do
        if ! out=$("$WORKFLOOR" "$bundle" "$ROOTFS" "$WF_ROOT" 2>&1 </dev/null); then
            HAVE_WORKFLOOR=0
            WORKFLOOR_NOTE="it fails for the $bundle bundle: $(head -n1 <<<"$out")"
            say "no work floor: $WORKFLOOR_NOTE"
            break
        fi
    done
    left=$(find "$WF_ROOT" -mindepth 1 -maxdepth 1 -printf '%f ')
    [[ -z $left ]] || say "warning: the work floor left ${left}in its state root"
fi

VERSIONS="mini-run $("$MINIRUN" --version 2>&1 | head -n1 | awk '{print $NF}'), crun $("$CRUN" --version | awk 'NR==1{print $3}'), runc $("$RUNC" --version | awk 'NR==1{print $3}')"
say "$VERSIONS; $(nproc) cpus; $( ((QUICK)) && echo quick || echo full) mode${ONLY:+; only ${ONLY:1:-1}}"

# bench NAME [interleave options] -- NAME1 CMD1 NAME2 CMD2 ...: the commands timed round by
# round, each round running every one once (bench/interleave.c says why not hyperfine).
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
    if ! "$BUILD/interleave" "${opts[@]}" --export-json "$JSON/$name.json" "${cmds[@]}" \
        >"$TMP/interleave.log" 2>&1; then
        cat "$TMP/interleave.log" >&2
        die "timing failed in scenario $name"
    fi
}

# Fills args with one (name, command) pair per runtime: @RT@ in the template is replaced by
# that runtime's command line.
commands_for() {
    args=()
    local cmd
    for rt in "${TIMED[@]}"; do
        cmd=${1//@RT@/$(rt_cmd "$rt")}
        args+=("$rt" "${cmd//@NAME@/$rt}")
    done
}

# with_floors TEMPLATE BUNDLE: adds the work floor (when there is one) and the floor to args,
# @F@ in the template replaced by the floor's command line for that bundle.
with_floors() {
    if ((HAVE_WORKFLOOR)); then
        args+=("work floor" "${1//@F@/$WORKFLOOR $2 $ROOTFS $WF_ROOT}")
    fi
    args+=(floor "${1//@F@/$FLOOR $2 $ROOTFS}")
}

# 1. `run` of /bin/true, per bundle. No shell (-N): the command is exactly one exec.
for bundle in default nonet userns; do
    want "run-$bundle" || continue
    commands_for "@RT@ run -b $B/$bundle r-$bundle"
    with_floors "@F@" "$bundle"
    bench "run-$bundle" -N --warmup "$WARMUP" --runs "$RUNS" --block "$BLOCK" -- "${args[@]}"
done

# 1b. `run` of the default bundle after the machine was idle for a moment (--prepare sleeps
# 0.2 s, which is not timed): a start as it comes in use (a CI job, a `podman run` now and
# then), not in a tight loop. What an idle kernel makes a runtime wait for shows here
# (docs/performance.md: the first move into a v1 cgroup waits for an RCU grace period).
if want run-idle; then
    commands_for "@RT@ run -b $B/default i-default"
    with_floors "@F@" default
    bench run-idle -N --prepare "sleep 0.2" --warmup 1 --runs "$IDLE_RUNS" -- "${args[@]}"
fi

# 2. create + start + delete --force, and 3. run --detach + delete --force. These run in a
# shell (the shell's own start-up is subtracted); $$ makes each iteration's id unique.
if want lifecycle; then
    commands_for "@RT@ create -b $B/default c\$\$ && @RT@ start c\$\$ && @RT@ delete --force c\$\$"
    bench lifecycle --warmup "$WARMUP" --runs "$RUNS" --block "$BLOCK" -- "${args[@]}"
fi
if want detach; then
    commands_for "@RT@ run --detach -b $B/default d\$\$ && @RT@ delete --force d\$\$"
    bench detach --warmup "$WARMUP" --runs "$RUNS" --block "$BLOCK" -- "${args[@]}"
fi

# 4. Throughput: TP_N containers one after another, and 8 at a time.
if want sequential; then
    commands_for "for i in \$(seq $TP_N); do @RT@ run -b $B/default s\$\$-\$i || exit 1; done"
    with_floors "for i in \$(seq $TP_N); do @F@ || exit 1; done" default
    bench sequential --warmup "$TP_WARMUP" --runs "$TP_RUNS" -- "${args[@]}"
fi
if want parallel; then
    commands_for "seq $TP_N | xargs -P 8 -I@ @RT@ run -b $B/default p\$\$-@"
    with_floors "seq $TP_N | xargs -P 8 -I@ @F@" default
    bench parallel --warmup "$TP_WARMUP" --runs "$TP_RUNS" -- "${args[@]}"
fi

# 5. Peak RSS (GNU time's %M: the largest ru_maxrss of the process and the descendants it
# waited for) and CPU time (user+sys from wait4, in microseconds: GNU time rounds to 10 ms).
if want rss; then
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
fi

# 6. exec of /bin/true into a running container (one per runtime, running sleep), -N as `run`.
# The container's stdio goes to files, never to a pipe that a command substitution would wait on.
# Each runtime's target has an id of its own, and so a cgroup of its own (the default path is
# the id's): runc 1.2+ and mini-run refuse to start in a cgroup another container occupies.
if want exec; then
    for rt in "${TIMED[@]}"; do
        $(rt_cmd "$rt") run --detach -b "$B/sleep" "exec-target-$rt" </dev/null >/dev/null 2>"$TMP/err" ||
            die "$rt cannot run --detach the sleep bundle: $(cat "$TMP/err")"
    done
    commands_for "@RT@ exec exec-target-@NAME@ /bin/true"
    bench exec -N --warmup "$WARMUP" --runs "$RUNS" --block "$BLOCK" -- "${args[@]}"
    for rt in "${TIMED[@]}"; do remove_containers "$rt" "exec-target-$rt"; done
fi

# 7. Density: the memory that DENSITY_N containers hold, created (waiting for `start`: what
# stays is the runtime's own init) and running (sleep). Per runtime, one after the other: the
# PSS of every process left (each init's memory cgroup and process tree, and any process
# whose command line names the runtime's state root), which the helper below sums; and the
# system-wide cost, kernel objects included, from MemAvailable before the containers, with
# them, and after their deletion: the drop is taken against the line from before to after
# (interpolated at the time of the reading with them), which cancels what the machine's other
# work took or gave back meanwhile, as long as it did so steadily.
memavailable() { echo "$EPOCHREALTIME $(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)"; }
if want density; then
    for state in created running; do
        for rt in "${RUNTIMES[@]}"; do
            say "density: $DENSITY_N $state containers of $rt"
            ids=()
            sleep "$SETTLE"
            before=$(memavailable)
            for ((i = 1; i <= DENSITY_N; i++)); do
                ids+=("$state-$i")
                if [[ $state == created ]]; then
                    $(rt_cmd "$rt") create -b "$B/default" "$state-$i" </dev/null >/dev/null 2>"$TMP/err" ||
                        die "$rt: create of container $i of $DENSITY_N failed: $(cat "$TMP/err")"
                else
                    $(rt_cmd "$rt") run --detach -b "$B/sleep" "$state-$i" </dev/null >/dev/null 2>"$TMP/err" ||
                        die "$rt: run --detach of container $i of $DENSITY_N failed: $(cat "$TMP/err")"
                fi
            done
            sleep "$SETTLE"
            after=$(memavailable)
            "$PY" - "$TMP/density-$state-$rt.json" "$before" "$after" "$TMP/state/$rt" "${BIN[$rt]}" \
                "${ids[@]}" <<'PY' || die "$rt: the density measurement failed"
import collections, json, os, subprocess, sys
out, before, after, root, binary, *ids = sys.argv[1:]

def kib(path, field):
    for line in open(path):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0

inits = []
for cid in ids:
    state = subprocess.run([binary, "--root", root, "state", cid], capture_output=True, text=True, check=True)
    inits.append(json.loads(state.stdout)["pid"])

children = collections.defaultdict(list)
cmdlines = {}
for entry in os.listdir("/proc"):
    if not entry.isdigit() or int(entry) == os.getpid():
        continue
    try:
        stat = open(f"/proc/{entry}/stat").read()
        cmdlines[int(entry)] = open(f"/proc/{entry}/cmdline", "rb").read()
    except OSError:
        continue  # gone meanwhile
    children[int(stat.rsplit(")", 1)[1].split()[1])].append(int(entry))

found = set()
for pid in inits:
    for line in open(f"/proc/{pid}/cgroup"):
        _, controllers, path = line.rstrip("\n").split(":", 2)
        if "memory" in controllers.split(","):
            found.update(int(p) for p in open(f"/sys/fs/cgroup/memory{path}/cgroup.procs").read().split())
    tree = [pid]
    while tree:
        p = tree.pop()
        found.add(p)
        tree += children[p]
found.update(p for p, cmdline in cmdlines.items() if root.encode() in cmdline)

pss = sum(kib(f"/proc/{p}/smaps_rollup", "Pss") for p in found)
rss = sum(kib(f"/proc/{p}/smaps_rollup", "Rss") for p in found)
init_pss = sum(kib(f"/proc/{p}/smaps_rollup", "Pss") for p in inits)
init_rss = sum(kib(f"/proc/{p}/smaps_rollup", "Rss") for p in inits)
try:
    exe = os.readlink(f"/proc/{inits[0]}/exe")
except OSError:
    exe = "?"
json.dump({"n": len(ids), "procs": len(found), "pss": pss, "rss": rss, "init_pss": init_pss,
           "init_rss": init_rss, "init_exe": exe, "init_comm": open(f"/proc/{inits[0]}/comm").read().strip(),
           "before": before, "after": after}, open(out, "w"))
PY
            remove_containers "$rt" "${ids[@]}"
            left=$($(rt_cmd "$rt") list -q)
            [[ -z $left ]] || die "$rt: containers left after delete --force: $(head -n3 <<<"$left" | tr '\n' ' ')"
            sleep "$SETTLE"
            memavailable >"$TMP/density-$state-$rt.released"
        done
    done
fi

# 8. The smallest memory limit with which `run` of /bin/true exits 0: up the ladder, the
# first limit at which all LIMIT_TRIES runs succeed. A limit that cannot be written (the
# runtime's own process is charged already and over it) and an OOM kill both fail it; the
# timeout is for a process stuck in an OOM (cgroup v1 can freeze instead of killing).
if want min-limit; then
    for rt in "${RUNTIMES[@]}"; do
        say "smallest memory limit for $rt"
        smallest=none failed=
        for kib in "${LIMITS_KIB[@]}"; do
            ok=1
            for ((t = 1; t <= LIMIT_TRIES; t++)); do
                read -r -a cmd <<<"$(rt_cmd "$rt") run -b $B/mem-$kib limit-$kib-$t"
                if timeout -k 5 30 "${cmd[@]}" </dev/null >/dev/null 2>"$TMP/err"; then
                    status=0
                else
                    status=$?
                fi
                remove_containers "$rt" "limit-$kib-$t"
                if ((status != 0)); then
                    ok=0
                    failed="$kib $status $(tr -s '\n' ' ' <"$TMP/err" | head -c 2000)"
                    break
                fi
            done
            if ((ok)); then
                smallest=$kib
                break
            fi
        done
        printf '%s\n%s\n' "$smallest" "$failed" >"$TMP/min-limit-$rt"
    done
fi

# ---------------------------------------------------------------- report
COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$REPO" diff --quiet HEAD -- runtime src cli include CMakeLists.txt 2>/dev/null || COMMIT="$COMMIT+changes"
HEADER="$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) cpus, commit $COMMIT; $VERSIONS"
MODE="$( ((QUICK)) && echo quick || echo full): warm-up $WARMUP, $RUNS runs, throughput of $TP_N containers x $TP_RUNS runs, density of $DENSITY_N containers, $LIMIT_TRIES run(s) per memory limit${ONLY:+, only ${ONLY:1:-1}}"
# A partial run (--only) writes its tables under TMP: bench/results keeps the last whole run.
OUT=$RESULTS
[[ -z $ONLY ]] || OUT=$TMP
mkdir -p "$OUT"

"$PY" - "$JSON" "$TMP" "$OUT" "$HEADER" "$MODE" "$TP_N" "$WORKFLOOR_NOTE" <<'PY'
import json, os, re, statistics, sys
jdir, tmp, out, header, mode, tp_n, workfloor_note = sys.argv[1:]
tp_n = int(tp_n)
runtimes = ["mini-run", "mini-run-before", "crun", "runc", "work floor", "floor"]

def have(name):
    return os.path.exists(os.path.join(jdir, name + ".json"))

def load(name):
    with open(os.path.join(jdir, name + ".json")) as f:
        return {r["command"]: r["times"] for r in json.load(f)["results"]}

def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"

lines = [f"Measured {header}.", "",
         f"Mode: {mode}. Times in milliseconds; the runtimes take turns, round by round "
         "(bench/interleave.c).", ""]
scenarios = [
    ("run-default", "`run` /bin/true, default bundle (pid, ipc, uts, mount, network)"),
    ("run-nonet", "`run` /bin/true, no network namespace"),
    ("run-userns", "`run` /bin/true, plus a user namespace"),
    ("run-idle", "`run` /bin/true, default bundle, each start after 0.2 s idle"),
    ("lifecycle", "`create` + `start` + `delete --force`"),
    ("detach", "`run --detach` + `delete --force`"),
    ("exec", "`exec` /bin/true into a running container (sleep)"),
]
# The work floor splits mini-run's distance to the floor in two.
def work_floor_line():
    keys = [k for k in ("run-default", "run-nonet", "run-userns") if k in medians]
    if not keys:
        return
    if not any("work floor" in medians[k] for k in keys):
        lines.extend([f"**Work floor**: not measured ({workfloor_note or 'no result'}).", ""])
        return
    what = {"run-default": "of the default bundle", "run-nonet": "without a network namespace",
            "run-userns": "with a user namespace"}
    first, *others = keys
    m = medians[first]
    text = (f"**Work floor**, `run` {what[first]}: mini-run / work floor = "
            f"{ratio(m['mini-run'], m['work floor'])} (mini-run's own overhead); work floor / floor = "
            f"{ratio(m['work floor'], m['floor'])} (what the config costs).")
    if others:
        text += " The same " + "; ".join(
            f"{what[k]}: {ratio(medians[k]['mini-run'], medians[k]['work floor'])} and "
            f"{ratio(medians[k]['work floor'], medians[k]['floor'])}" for k in others) + "."
    lines.extend([text, ""])

medians = {}
for key, title in scenarios:
    if key == "lifecycle":
        work_floor_line()  # after the tables that have its rows
    if not have(key):
        continue
    times = load(key)
    med = {rt: statistics.median(t) * 1000 for rt, t in times.items()}
    medians[key] = med
    floors = [f for f in ("work floor", "floor") if f in times]
    lines += [f"### {title}", ""]
    head = "| runtime | median ms | min | max | vs crun |" + "".join(f" vs {f} |" for f in floors)
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for rt in runtimes:
        if rt not in times:
            continue
        t = times[rt]
        row = (f"| {rt} | {med[rt]:.2f} | {min(t) * 1000:.2f} | {max(t) * 1000:.2f} | "
               f"{ratio(med[rt], med['crun'])} |")
        row += "".join(f" {ratio(med[rt], med[f])} |" for f in floors)
        lines.append(row)
    lines.append("")

rate = lambda t: tp_n / statistics.median(t)
if have("sequential") or have("parallel"):
    seq = load("sequential") if have("sequential") else {}
    par = load("parallel") if have("parallel") else {}
    fmt = lambda d, rt: (f"{rate(d[rt]):.1f} | {rate(d[rt]) / rate(d['crun']):.2f}x" if rt in d else "- | -")
    lines += [f"### Throughput: {tp_n} containers (`run` /bin/true, default bundle)", "",
              "| runtime | sequential containers/s | vs crun | 8-way parallel containers/s | vs crun |",
              "|---|---|---|---|---|"]
    for rt in runtimes:
        if rt in seq or rt in par:
            lines.append(f"| {rt} | {fmt(seq, rt)} | {fmt(par, rt)} |")
    lines.append("")

if os.path.exists(os.path.join(tmp, "cpu-floor")):
    lines += ["### Peak RSS and CPU time (`run` /bin/true, default bundle)", "",
              "| runtime | peak RSS MiB | vs crun | CPU ms (user+sys, median) | vs crun |",
              "|---|---|---|---|---|"]
    usage = {}
    for rt in ("mini-run", "crun", "runc", "floor"):
        rss = max(int(x) for x in open(os.path.join(tmp, "rss-" + rt)).read().split()) / 1024
        cpu = statistics.median(float(x) for x in open(os.path.join(tmp, "cpu-" + rt)).read().split())
        usage[rt] = (rss, cpu)
    for rt, (rss, cpu) in usage.items():
        lines.append(f"| {rt} | {rss:.1f} | {ratio(rss, usage['crun'][0])} | {cpu:.2f} | "
                     f"{ratio(cpu, usage['crun'][1])} |")
    lines.append("")

titles = {"created": "created (`create`, waiting for `start`; default bundle)",
          "running": "running (`run --detach` of `sleep 1000000`)"}
for state in ("created", "running"):
    files = {rt: os.path.join(tmp, f"density-{state}-{rt}.json") for rt in ("mini-run", "crun", "runc")}
    if not all(os.path.exists(f) for f in files.values()):
        continue
    d = {rt: json.load(open(f)) for rt, f in files.items()}
    def drop(v):  # KiB per container (see the script's density comment)
        (t0, m0), (t1, m1), (t2, m2) = (map(float, v[k].split()) for k in ("before", "after", "released"))
        return (m0 + (m2 - m0) * (t1 - t0) / (t2 - t0) - m1) / v["n"]
    for rt, v in d.items():
        v["released"] = open(os.path.join(tmp, f"density-{state}-{rt}.released")).read()
    n = d["crun"]["n"]
    per = {rt: (v["pss"] / v["n"], drop(v)) for rt, v in d.items()}
    lines += [f"### Density: {n} containers {titles[state]}", "",
              "| runtime | processes per container | PSS KiB per container | vs crun | RSS KiB per container "
              "| MemAvailable drop KiB per container | vs crun |",
              "|---|---|---|---|---|---|---|"]
    for rt, v in d.items():
        pss, drop = per[rt]
        # A drop at or below zero is noise (other work on the machine): no ratio of it.
        drop_ratio = ratio(drop, per["crun"][1]) if drop > 0 and per["crun"][1] > 0 else "-"
        lines.append(f"| {rt} | {v['procs'] / v['n']:.2f} | {pss:.0f} | {ratio(pss, per['crun'][0])} | "
                     f"{v['rss'] / v['n']:.0f} | {drop:.0f} | {drop_ratio} |")
    lines.append("")
    if state == "created":
        m = d["mini-run"]
        lines += [f"mini-run's created init is `{m['init_exe']}`: PSS {m['init_pss'] / m['n']:.1f} KiB, "
                  f"RSS {m['init_rss'] / m['n']:.1f} KiB per container (crun's init: PSS "
                  f"{d['crun']['init_pss'] / n:.0f} KiB, runc's: {d['runc']['init_pss'] / n:.0f} KiB).", ""]

def size(kib):
    return f"{kib} KiB" if kib < 1024 else f"{kib / 1024:g} MiB"

limit_files = {rt: os.path.join(tmp, "min-limit-" + rt) for rt in ("mini-run", "crun", "runc")}
if all(os.path.exists(f) for f in limit_files.values()):
    lines += ["### Smallest `linux.resources.memory.limit` with which `run` /bin/true works", "",
              "| runtime | smallest limit that works | vs crun | the next smaller limit failed with |",
              "|---|---|---|---|"]
    results = {}
    for rt, f in limit_files.items():
        smallest, failed = (open(f).read().split("\n") + [""])[:2]
        results[rt] = (None if smallest == "none" else int(smallest), failed)
    for rt, (kib, failed) in results.items():
        shown = size(kib) if kib else "none up to 16 MiB"
        if kib == 256:
            shown += " (the smallest tried)"
        why = "-"
        if failed:
            at, status, message = (failed.split(" ", 2) + [""])[:3]
            # runc's log line: its msg="..."; a wrapped error is most specific at its end.
            quoted = re.search(r'msg="(.*)"', message)
            message = (quoted.group(1) if quoted else message).strip().replace("|", "/")
            if len(message) > 160:
                message = "..." + message[-160:]
            # 137: SIGKILL, which with no message is the OOM killer's; 124: the timeout.
            status += {"137": " (SIGKILL)", "124": " (timed out)"}.get(status, "")
            why = f"{size(int(at))}: exit {status}" + (f", {message}" if message else "")
        lines.append(f"| {rt} | {shown} | {ratio(kib, results['crun'][0])} | {why} |")
    lines.append("")

with open(os.path.join(out, "latest.md"), "w") as f:
    f.write("# Start-up benchmark: latest results\n\n" + "\n".join(lines) +
            "\n![median start-up time per scenario](latest.png)\n")

# Data for gnuplot: one row per timed scenario, one column per runtime that was measured
# ("-" where a scenario has none of it).
labels = {"run-default": "run", "run-nonet": "run, no netns", "run-userns": "run, userns",
          "run-idle": "run after idle", "lifecycle": "create+start+del",
          "detach": "run -d + del", "exec": "exec"}
cols = [rt for rt in runtimes if any(rt in m for m in medians.values())]
with open(os.path.join(tmp, "plot.dat"), "w") as f:
    f.write("scenario " + " ".join(f'"{rt}"' for rt in cols) + "\n")
    for key, _ in scenarios:
        if key in medians:
            vals = [f"{medians[key][rt]:.3f}" if rt in medians[key] else "-" for rt in cols]
            f.write(f'"{labels[key]}" ' + " ".join(vals) + "\n")
if have("sequential") and have("parallel"):
    with open(os.path.join(tmp, "throughput.dat"), "w") as f:
        tcols = [rt for rt in runtimes if rt in seq]
        f.write("mode " + " ".join(f'"{rt}"' for rt in tcols) + "\n")
        f.write('"sequential" ' + " ".join(f"{rate(seq[rt]):.2f}" for rt in tcols) + "\n")
        f.write('"8-way parallel" ' + " ".join(f"{rate(par[rt]):.2f}" for rt in tcols) + "\n")
print("\n".join(lines))
PY

if [[ -n $ONLY ]]; then
    say "--only: bench/results left as it was"
    exit 0
fi
# gnuplot's words are the columns' names with a dash for the space, to pick their colours.
series() { head -n1 "$1" | cut -d' ' -f2- | sed 's/"work floor"/work-floor/; s/"//g'; }
gnuplot -e "latency='$TMP/plot.dat'; throughput='$TMP/throughput.dat'; output='$RESULTS/latest.png'; subtitle='$(uname -r), commit $COMMIT'; lseries='$(series "$TMP/plot.dat")'; tseries='$(series "$TMP/throughput.dat")'; nrows=$(($(wc -l <"$TMP/plot.dat") - 1))" \
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
