#!/usr/bin/env bash
# End-to-end benchmark under container engines: what mini-run saves where people use it.
#
#   sudo scripts/bench-engines.sh [--runs N] [--quick] [--runtime PATH] [--only podman|docker]
#
# Times the whole engine command, client to exit, with mini-run and with the engine's usual
# runtime, on the busybox example image (scripts/make-rootfs.sh), /bin/true as the command:
#
#   podman run --rm IMAGE true    --runtime mini-run  against  --runtime crun
#   docker run --rm IMAGE true    --runtime mini-run  against  --runtime runc
#
# Runs are interleaved run by run (each round runs both runtimes, the order alternating
# round by round), so that drift on the machine hits both alike; 2 warm-up rounds are not
# counted. The report gives median, min and max per runtime, the ratio of the medians
# (mini-run / crun, mini-run / runc), the difference of the medians in ms (what the runtime
# saves end to end) and the median of the per-round differences. It goes to stdout and to
# bench/results/engines.md.
#
# --runs N         counted runs per runtime (default 30)
# --quick          5 runs: checks that everything works, rough numbers
# --runtime PATH   the mini-run binary (default build-bench/mini-run if it exists, else
#                  build/mini-run; when neither exists yet, it waits for one to appear). It
#                  is copied into the temporary directory first, so a rebuild meanwhile
#                  cannot swap it mid-run.
# --only ENGINE    podman or docker only
#
# Setup, as the engine tests do it (nothing under /etc is changed; no registry; nothing but
# the engines' own bridge and loopback): scripts/install-engines.sh installs what is missing,
# then everything lives in one temporary directory /tmp/minirun-bench-engines.XXXXXX:
#  - podman: containers.conf, storage.conf and registries.conf of its own (as
#    tests/engines/run.sh: cgroupfs, file events, netns "none", ulimits this machine allows,
#    both runtimes registered by name), overlay storage under the directory, the image
#    imported from a tar of the rootfs. crun 1.8.1 refuses this host's hybrid cgroup layout,
#    so the podman part (both runtimes alike) runs in a private mount namespace in which
#    /sys/fs/cgroup/unified is unmounted and a scratch tmpfs put in its place (so that
#    nothing written there is left behind; scripts/engines-test.sh does the like for crun);
#  - docker: a dockerd of its own (as tests/engines/docker.sh: own data root, exec root,
#    socket, pid file, empty daemon.json, cgroupfs, overlay2, no iptables, no masquerading,
#    no ip_forward change, a bridge of its own, dkmbPID on a free 10.213.N.0/24) with
#    mini-run registered by --add-runtime; runc is dockerd's built-in "runc". It runs in the
#    host's mount namespace, cgroup layout unchanged.
# Before timing, each runtime is checked to be the one really used: a detached container
# per runtime, whose engine record names that runtime and which that runtime's own `state`
# knows (and the other runtime's does not); then `echo` through each. Every timed run must
# exit 0, or the benchmark stops with its error.
#
# On exit (any exit) a trap removes the containers and images, stops dockerd and its
# containerd by pid, unmounts what is left under the directory, deletes the bridge, the
# cgroups the engines made (/libpod_parent, /docker, unless they were there before) and the
# few files they leave outside (/etc/docker/key.json, /run/docker, /run/containerd,
# /var/lib/containers, unless there before), and the directory. Benchmarks are not tests:
# nothing here asserts a timing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
SELF=$REPO/scripts/bench-engines.sh

say() { echo "bench-engines: $*" >&2; }
die() {
    echo "bench-engines: error: $*" >&2
    exit 1
}
# retry N CMD...: runs CMD every 0.1 s until it succeeds, at most N times.
retry() {
    local n=$1 i
    shift
    for ((i = 0; i < n; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
# shellcheck source=tests/engines/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tests/engines/lib.sh" # kill_wait
# umount_under DIR: lazily unmounts every mount at or under DIR, deepest first.
umount_under() {
    local m
    awk -v base="$1" '$5 == base || index($5, base "/") == 1 { print $5 }' /proc/self/mountinfo |
        sort -r | while read -r m; do
        umount -l "$m" 2>/dev/null
    done
    return 0
}

PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3)
IMAGE_PODMAN=localhost/minirun-bench:latest
IMAGE_DOCKER=minirun-bench:latest
WARMUP=2

# ================================================================ the podman part
# Run by the outer script as `unshare --mount --propagation private SELF --podman-phase`,
# with BASE, RUNS, ROOTFS_TAR and MINIRUN in the environment; writes $BASE/podman.tsv and
# $BASE/podman.info.
pm() { timeout 120 podman "$@"; }
podman_cleanup() {
    local status=$?
    set +e
    [[ -n "$TIMED_PID" ]] && kill_wait "$TIMED_PID" 10
    timeout 60 podman rm --all --force --time 0 >/dev/null 2>&1
    timeout 60 podman rmi --all --force >/dev/null 2>&1
    umount_under "$BASE"
    return "$status"
}
podman_phase() {
    # crun 1.8.1: "cgroups in hybrid mode not supported". The cgroup2 mount is unmounted in
    # this mount namespace, and a scratch tmpfs mounted on the directory left: without it,
    # crun and conmon would write their cgroup v2 "directories" into the host's
    # /sys/fs/cgroup tmpfs, under the host's cgroup2 mount, hidden and kept. The tmpfs goes
    # with this mount namespace. (Only covering the cgroup2 mount with the tmpfs, as
    # scripts/engines-test.sh does for crun, makes mini-run fail: it reads cgroup.controllers
    # through the hidden cgroup2 mount's path.)
    if [[ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" == cgroup2fs ]]; then
        umount /sys/fs/cgroup/unified || die "cannot unmount /sys/fs/cgroup/unified"
        mount -t tmpfs -o size=1m bench-engines /sys/fs/cgroup/unified ||
            die "cannot mount a tmpfs on /sys/fs/cgroup/unified"
    fi
    local P=$BASE/podman
    mkdir -p "$P/tmp" "$P/volumes"
    local nofile nproc
    nofile=$(ulimit -Hn)
    nproc=$(ulimit -Hu)
    [[ "$nproc" == unlimited || "$nproc" -gt 32768 ]] && nproc=32768
    [[ "$nofile" == unlimited ]] && nofile=1048576
    export CONTAINERS_CONF=$P/containers.conf
    export CONTAINERS_STORAGE_CONF=$P/storage.conf
    export CONTAINERS_REGISTRIES_CONF=$P/registries.conf
    cat >"$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
netns = "none"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$P/events.log"
tmp_dir = "$P/tmp"
volume_path = "$P/volumes"
runtime = "crun"
runtime_supports_json = ["crun", "runc", "mini-run"]
runtime_supports_nocgroup = ["crun", "mini-run"]

[engine.runtimes]
mini-run = ["$MINIRUN"]
crun = ["$CRUN"]

[network]
network_config_dir = "$P/networks"
EOF
    cat >"$CONTAINERS_STORAGE_CONF" <<EOF
[storage]
driver = "overlay"
graphroot = "$P/storage"
runroot = "$P/run"
EOF
    : >"$CONTAINERS_REGISTRIES_CONF"

    trap podman_cleanup EXIT
    trap 'exit 130' INT TERM

    pm import --quiet --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin:/sbin:/usr/bin:/usr/sbin' \
        "$ROOTFS_TAR" "$IMAGE_PODMAN" >/dev/null

    # The runtime really used: podman's record of the container, and the runtime's own state
    # (default roots /run/mini-run and /run/crun: podman passes no --root).
    local rt other id out
    declare -A path=([mini-run]=$MINIRUN [crun]=$CRUN)
    for rt in mini-run crun; do
        other=$([[ $rt == mini-run ]] && echo crun || echo mini-run)
        id=$(pm --runtime "$rt" run -d "$IMAGE_PODMAN" sleep 60) || die "podman --runtime $rt run -d failed"
        out=$(pm inspect --format '{{.OCIRuntime}}' "$id")
        [[ "$out" == "$rt" ]] || die "podman says container of --runtime $rt ran with '$out'"
        out=$("${path[$rt]}" state "$id" 2>&1) || die "$rt state $id failed: $out"
        [[ "$out" == *'"status": "running"'* || "$out" == *'"status":"running"'* ]] ||
            die "$rt state $id: not running: $out"
        if "${path[$other]}" state "$id" >/dev/null 2>&1; then
            die "$other knows the container podman ran with $rt"
        fi
        pm rm --force --time 0 "$id" >/dev/null
        out=$(pm --runtime "$rt" run --rm "$IMAGE_PODMAN" echo "hello from $rt") ||
            die "podman --runtime $rt run --rm echo failed"
        [[ "$out" == "hello from $rt" ]] || die "podman --runtime $rt: echo gave '$out'"
        say "podman: --runtime $rt verified (inspect .OCIRuntime, $rt state, the other runtime's state, echo)"
    done
    {
        printf 'PODMAN_VERSION=%q\n' "$(podman version --format '{{.Client.Version}}')"
        printf 'PODMAN_CGROUPS=%q\n' "$(podman info --format '{{.Host.CgroupManager}}, cgroups {{.Host.CgroupsVersion}}')"
        printf 'CONMON_VERSION=%q\n' "$(conmon --version | awk 'NR==1 { print $3 }')"
    } >"$BASE/podman.info"

    timed "$BASE/podman.tsv" \
        mini-run podman --runtime mini-run run --rm "$IMAGE_PODMAN" true :: \
        crun podman --runtime crun run --rm "$IMAGE_PODMAN" true
}

# timed OUT LABEL_A ARGV_A... :: LABEL_B ARGV_B...: WARMUP + RUNS interleaved rounds, the
# order alternating; one line per counted run in OUT: round, label, ms. Run in the background
# and waited for, so that a signal's trap runs at once (and stops it, by its pid, in cleanup).
TIMED_PID=""
timed() {
    "$PY" - "$WARMUP" "$RUNS" "$@" <<'PY' &
import subprocess, sys, time
warmup, runs, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rest = sys.argv[4:]
split = rest.index("::")
cmds = [(rest[0], rest[1:split]), (rest[split + 1], rest[split + 2:])]
rows = []
for r in range(warmup + runs):
    order = cmds if r % 2 == 0 else cmds[::-1]
    for label, argv in order:
        t0 = time.perf_counter_ns()
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        ms = (time.perf_counter_ns() - t0) / 1e6
        if p.returncode != 0:
            sys.stderr.write(p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace"))
            sys.exit(f"bench-engines: error: {label}: {' '.join(argv)} exited with {p.returncode}")
        if r >= warmup:
            rows.append(f"{r - warmup}\t{label}\t{ms:.3f}\n")
    sys.stderr.write(f"\r  round {r + 1}/{warmup + runs}" + (" (warm-up)" if r < warmup else "          "))
sys.stderr.write("\n")
with open(out, "w") as f:
    f.writelines(rows)
PY
    TIMED_PID=$!
    local rc=0
    wait "$TIMED_PID" || rc=$?
    TIMED_PID=""
    return "$rc"
}

CRUN=$(command -v crun || echo /usr/bin/crun)
RUNC=$(command -v runc || echo /usr/sbin/runc)
if [[ "${1:-}" == --podman-phase ]]; then
    podman_phase
    exit 0
fi

# ================================================================ arguments
BEGIN=$(date +%s)
RUNS=30
QUICK=0
MINIRUN=""
ONLY=""
while (($# > 0)); do
    case $1 in
    --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
    --quick) QUICK=1; RUNS=5; shift ;;
    --runtime) MINIRUN=${2:?--runtime needs a path}; shift 2 ;;
    --only) ONLY=${2:?--only needs podman or docker}; shift 2 ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument $1 (try --help)" ;;
    esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs wants a positive number, not '$RUNS'"
[[ -z "$ONLY" || "$ONLY" == podman || "$ONLY" == docker ]] || die "--only takes podman or docker"
ENGINES=(podman docker)
[[ -n "$ONLY" ]] && ENGINES=("$ONLY")
((EUID == 0)) || die "needs root (the engines run rootful containers)"

# The mini-run binary: the given one, or the bench build, or the default build (waited for,
# up to 30 minutes, when neither exists yet: a build may be under way).
if [[ -z "$MINIRUN" ]]; then
    waited=0
    while :; do
        for candidate in build-bench/mini-run build/mini-run; do
            [[ -x "$candidate" ]] && { MINIRUN=$REPO/$candidate; break 2; }
        done
        ((waited == 0)) && say "no build-bench/mini-run or build/mini-run yet: waiting for a build to make one"
        ((waited < 1800)) || die "no mini-run binary after 30 minutes"
        sleep 5
        waited=$((waited + 5))
    done
fi
[[ -x "$MINIRUN" ]] || die "mini-run binary $MINIRUN not found"
MINIRUN=$(readlink -f "$MINIRUN")
# A binary the linker is still writing: wait until its size and time stand still for 2 s
# and it answers --version.
for ((i = 0; i < 300; i++)); do
    a=$(stat -c '%s %Y' "$MINIRUN")
    sleep 2
    b=$(stat -c '%s %Y' "$MINIRUN")
    [[ "$a" == "$b" ]] && "$MINIRUN" --version >/dev/null 2>&1 && break
done
"$MINIRUN" --version >/dev/null 2>&1 || die "$MINIRUN --version fails"

# ================================================================ setup
scripts/install-engines.sh >&2
[[ -x rootfs-examples/busybox/rootfs/bin/busybox ]] || scripts/make-rootfs.sh >&2
DOCKER=/usr/bin/docker # not /usr/local/bin/docker, which may be another client
DOCKERD=/usr/sbin/dockerd
for tool in podman conmon "$CRUN" "$RUNC" "$DOCKER" "$DOCKERD" containerd containerd-shim-runc-v2 unshare ip "$PY"; do
    command -v "$tool" >/dev/null || die "$tool is not installed (scripts/install-engines.sh)"
done

BASE=$(mktemp -d /tmp/minirun-bench-engines.XXXXXX)
chmod 0711 "$BASE"
mkdir -p "$BASE/logs"
cp "$MINIRUN" "$BASE/mini-run"
MINIRUN_SRC=$MINIRUN
MINIRUN=$BASE/mini-run
ROOTFS_TAR=$BASE/rootfs.tar
tar -C rootfs-examples/busybox/rootfs -cf "$ROOTFS_TAR" .
SOCK=$BASE/docker.sock
BRIDGE=dkmb$$
BRIDGE_MADE=0
DOCKERD_PID=""
PODMAN_PID=""

# What the engines leave outside $BASE: removed at the end unless it was there before.
existed() { [[ -e "$1" ]] && echo 1 || echo 0; }
key_json_existed=$(existed /etc/docker/key.json)
etc_docker_existed=$(existed /etc/docker)
run_docker_existed=$(existed /run/docker)
run_containerd_existed=$(existed /run/containerd)
var_lib_containers_existed=$(existed /var/lib/containers)
# The default state roots podman's runtimes use (podman passes no --root).
run_mini_run_existed=$(existed /run/mini-run)
run_crun_existed=$(existed /run/crun)
run_mount_existed=$(existed /run/mount) # util-linux's utab directory (the umount below)
# Container cgroups: podman's /libpod_parent/libpod-ID (and conmon's libpod_parent/conmon),
# docker's /docker/ID, in every v1 hierarchy (and the cgroup2 one for docker). A parent
# that was not there is removed whole; in one that was, only the new directories.
cgroup_new_parents=()
: >"$BASE/cgroups-before"
for hierarchy in /sys/fs/cgroup/*/; do
    for parent in libpod_parent docker; do
        if [[ -d "$hierarchy$parent" ]]; then
            find "$hierarchy$parent" -mindepth 1 -maxdepth 1 -type d >>"$BASE/cgroups-before"
        else
            cgroup_new_parents+=("$hierarchy$parent")
        fi
    done
done

D() { timeout 120 "$DOCKER" -H "unix://$SOCK" "$@"; }
# Processes whose command line names $BASE: dockerd's containerd and the shims.
base_processes() {
    local dir
    for dir in /proc/[0-9]*; do
        [[ "$(tr '\0' ' ' 2>/dev/null <"$dir/cmdline")" == *"$BASE/"* ]] && echo "${dir#/proc/}"
    done
    return 0
}
cleanup() {
    local status=$?
    set +e
    [[ -n "$TIMED_PID" ]] && kill_wait "$TIMED_PID" 10
    [[ -n "$PODMAN_PID" ]] && kill_wait "$PODMAN_PID" 60
    if [[ -n "$DOCKERD_PID" ]]; then
        local ids pid
        ids=$(D ps -aq 2>/dev/null)
        # shellcheck disable=SC2086 # one word per id
        [[ -n "$ids" ]] && D rm -f $ids >/dev/null 2>&1
        D rmi -f "$IMAGE_DOCKER" >/dev/null 2>&1
        # dockerd stops its containerd when it exits; whatever is left, by pid.
        kill_wait "$DOCKERD_PID" 20
        for pid in $(base_processes); do
            kill_wait "$pid" 5
        done
    fi
    umount_under "$BASE"
    ((BRIDGE_MADE)) && ip link delete "$BRIDGE" 2>/dev/null
    ((key_json_existed)) || rm -f /etc/docker/key.json
    ((etc_docker_existed)) || rmdir /etc/docker 2>/dev/null
    ((run_docker_existed)) || rm -rf /run/docker
    ((run_containerd_existed)) || rmdir /run/containerd/s /run/containerd/fifo /run/containerd 2>/dev/null
    ((run_mini_run_existed)) || rmdir /run/mini-run 2>/dev/null
    ((run_crun_existed)) || rmdir /run/crun 2>/dev/null
    ((run_mount_existed)) || rmdir /run/mount 2>/dev/null
    ((var_lib_containers_existed)) || rm -rf /var/lib/containers
    # The last conmon or shim may still be leaving its cgroup: a few tries.
    local dir left i
    for ((i = 0; i < 30; i++)); do
        left=0
        for dir in "${cgroup_new_parents[@]}"; do
            [[ -d "$dir" ]] && { find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || left=1; }
        done
        for dir in /sys/fs/cgroup/*/libpod_parent/*/ /sys/fs/cgroup/*/docker/*/; do
            dir=${dir%/}
            [[ -d "$dir" ]] || continue
            grep -qxF "$dir" "$BASE/cgroups-before" && continue
            find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || left=1
        done
        ((left)) || break
        sleep 0.1
    done
    rm -rf "$BASE"
    return "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "mini-run $MINIRUN_SRC ($("$MINIRUN" --version 2>&1 | head -n1)), $RUNS runs + $WARMUP warm-up per runtime, state under $BASE"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# ================================================================ podman
if [[ " ${ENGINES[*]} " == *" podman "* ]]; then
    say "podman: mini-run against crun (private mount namespace, /sys/fs/cgroup/unified unmounted)"
    export BASE RUNS ROOTFS_TAR MINIRUN
    unshare --mount --propagation private "$SELF" --podman-phase </dev/null &
    PODMAN_PID=$!
    wait "$PODMAN_PID" || { PODMAN_PID=""; die "the podman part failed"; }
    PODMAN_PID=""
fi

# ================================================================ docker
if [[ " ${ENGINES[*]} " == *" docker "* ]]; then
    say "docker: mini-run against runc (dockerd of its own)"
    # A bridge of its own on a free 10.213.N.0/24, the host at .1.
    n=$(($$ % 250 + 1))
    for ((i = 0; i < 250; i++)); do
        SUBNET=10.213.$n
        ip -4 route show | grep -q "^${SUBNET//./\\.}\." || break
        n=$((n % 250 + 1))
    done
    ip link add "$BRIDGE" type bridge || die "cannot create bridge $BRIDGE"
    BRIDGE_MADE=1
    ip addr add "$SUBNET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    echo '{}' >"$BASE/daemon.json"
    "$DOCKERD" --config-file "$BASE/daemon.json" \
        --data-root "$BASE/data" --exec-root "$BASE/exec" \
        -H "unix://$SOCK" --pidfile "$BASE/dockerd.pid" --group root \
        --exec-opt native.cgroupdriver=cgroupfs --storage-driver overlay2 \
        --add-runtime "mini-run=$MINIRUN" \
        --bridge "$BRIDGE" --iptables=false --ip6tables=false --ip-masq=false --ip-forward=false \
        --userland-proxy=false \
        >"$BASE/logs/dockerd.log" 2>&1 </dev/null &
    DOCKERD_PID=$!
    retry 300 test -S "$SOCK" || { cat "$BASE/logs/dockerd.log" >&2; die "dockerd did not start"; }
    retry 100 D version >/dev/null 2>&1 || die "dockerd does not answer on $SOCK"
    D info --format '{{json .Runtimes}}' | grep -q "\"mini-run\":{\"path\":\"$MINIRUN\"" ||
        die "dockerd does not know mini-run as $MINIRUN: $(D info --format '{{json .Runtimes}}')"
    D import --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin:/sbin:/usr/bin:/usr/sbin' \
        "$ROOTFS_TAR" "$IMAGE_DOCKER" >/dev/null

    # The runtime really used: docker's record of the container, and the runtime's own state
    # in the root the shim gives it (found by the container's id under the exec root).
    declare -A RT_PATH=([mini-run]=$MINIRUN [runc]=$RUNC)
    for rt in mini-run runc; do
        other=$([[ $rt == mini-run ]] && echo runc || echo mini-run)
        id=$(D run -d --runtime "$rt" "$IMAGE_DOCKER" sleep 60 2>/dev/null) || die "docker run -d --runtime $rt failed"
        out=$(D inspect -f '{{.HostConfig.Runtime}}' "$id")
        [[ "$out" == "$rt" ]] || die "docker says container of --runtime $rt ran with '$out'"
        root=""
        for dir in "$BASE"/exec/runtime-*/moby "$BASE"/exec/containerd/runc/moby /run/containerd/runc/moby; do
            [[ -e "$dir/$id" ]] && { root=$dir; break; }
        done
        [[ -n "$root" ]] || die "no runtime state for $id under $BASE/exec: $(find "$BASE/exec" -maxdepth 4 -name "$id*" | head -3)"
        out=$("${RT_PATH[$rt]}" --root "$root" state "$id" 2>&1) || die "$rt --root $root state $id failed: $out"
        [[ "$out" == *'"status": "running"'* || "$out" == *'"status":"running"'* ]] ||
            die "$rt state $id: not running: $out"
        if "${RT_PATH[$other]}" --root "$root" state "$id" >/dev/null 2>&1; then
            die "$other knows the container docker ran with $rt"
        fi
        D rm -f "$id" >/dev/null
        out=$(D run --rm --runtime "$rt" "$IMAGE_DOCKER" echo "hello from $rt" 2>/dev/null) ||
            die "docker run --rm --runtime $rt echo failed"
        [[ "$out" == "hello from $rt" ]] || die "docker --runtime $rt: echo gave '$out'"
        say "docker: --runtime $rt verified (inspect .HostConfig.Runtime, $rt state in $root, the other runtime's state, echo)"
    done
    DOCKER_VERSION=$(D version --format '{{.Server.Version}}')
    DOCKER_CGROUPS=$(D info --format '{{.CgroupDriver}}, cgroups v{{.CgroupVersion}}')

    timed "$BASE/docker.tsv" \
        mini-run "$DOCKER" -H "unix://$SOCK" run --rm --runtime mini-run "$IMAGE_DOCKER" true :: \
        runc "$DOCKER" -H "unix://$SOCK" run --rm --runtime runc "$IMAGE_DOCKER" true
fi

# ================================================================ report
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$REPO" diff --quiet HEAD -- runtime src cli include CMakeLists.txt 2>/dev/null || COMMIT="$COMMIT+changes"
PODMAN_VERSION="" PODMAN_CGROUPS="" CONMON_VERSION=""
# shellcheck disable=SC1091 # written by the podman part
[[ -f "$BASE/podman.info" ]] && source "$BASE/podman.info"
VERSIONS="mini-run $("$MINIRUN" --version 2>&1 | head -n1 | awk '{ print $NF }') (${MINIRUN_SRC#"$REPO"/}), crun $("$CRUN" --version | awk 'NR==1 { print $3 }'), runc $("$RUNC" --version | awk 'NR==1 { print $3 }')"
[[ -n "$PODMAN_VERSION" ]] && VERSIONS="$VERSIONS, podman $PODMAN_VERSION (conmon $CONMON_VERSION; $PODMAN_CGROUPS)"
[[ -n "${DOCKER_VERSION:-}" ]] && VERSIONS="$VERSIONS, dockerd $DOCKER_VERSION ($DOCKER_CGROUPS)"
HEADER="$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) cpus, commit $COMMIT; $VERSIONS"
MODE="$( ((QUICK)) && echo quick || echo full): $RUNS runs per runtime after $WARMUP warm-up runs, interleaved (each round runs both, the order alternating by round); load average $LOAD_BEFORE before, $LOAD_AFTER after"
RESULTS=$REPO/bench/results
mkdir -p "$RESULTS"
"$PY" - "$BASE" "$RESULTS/engines.md.tmp" "$HEADER" "$MODE" "$(($(date +%s) - BEGIN))" <<'PY'
import os, statistics, sys
base, out, header, mode, took = sys.argv[1:]
engines = [("podman", "crun", "podman run --rm IMAGE true",
            "private mount namespace with /sys/fs/cgroup/unified unmounted (crun 1.8.1 refuses "
            "the hybrid layout; a scratch tmpfs on the empty directory), so cgroup v1 only; "
            "netns none, as in the engine tests"),
           ("docker", "runc", "docker run --rm IMAGE true",
            "host namespace; default bridge network (a bridge of its own)")]
lines = ["# End-to-end start-up under container engines", "",
         f"Measured {header}.", "",
         f"Mode: {mode}. Times in milliseconds: wall time of the engine's client command, "
         "from its start to its exit (the container's `/bin/true` created, run, waited for "
         "and removed). The image is the busybox example rootfs (`scripts/make-rootfs.sh`).", "",
         "| engine | command | runtime | median ms | min | max |", "|---|---|---|---|---|---|"]
summary = ["| engine | mini-run ms | baseline | baseline ms | ratio (mini-run / baseline) "
           "| saved ms (difference of medians) | saved ms (median of per-round differences) |",
           "|---|---|---|---|---|---|---|"]
notes = []
for engine, baseline, command, setup in engines:
    path = os.path.join(base, engine + ".tsv")
    if not os.path.exists(path):
        continue
    times = {}
    for line in open(path):
        rnd, label, ms = line.split("\t")
        times.setdefault(label, {})[int(rnd)] = float(ms)
    med = {}
    for label in ("mini-run", baseline):
        t = list(times[label].values())
        med[label] = statistics.median(t)
        lines.append(f"| {engine} | `{command}` | {label} | {med[label]:.1f} | {min(t):.1f} | {max(t):.1f} |")
    paired = statistics.median(times[baseline][r] - times["mini-run"][r] for r in times["mini-run"])
    summary.append(f"| {engine} | {med['mini-run']:.1f} | {baseline} | {med[baseline]:.1f} | "
                   f"{med['mini-run'] / med[baseline]:.2f}x | {med[baseline] - med['mini-run']:.1f} | {paired:.1f} |")
    notes.append(f"- {engine}: {setup}.")
lines += ["", *summary, "", *notes, "",
          "A ratio below 1 and a positive saving mean mini-run is faster. Both runtimes of one "
          "engine are measured in the same minutes and the same setup; compare the runtimes "
          "within an engine, not numbers across runs or engines.", "",
          f"Generated by `scripts/bench-engines.sh` in {took} s."]
text = "\n".join(lines) + "\n"
open(out, "w").write(text)
sys.stdout.write(text)
PY
mv "$RESULTS/engines.md.tmp" "$RESULTS/engines.md"
say "wrote bench/results/engines.md ($(($(date +%s) - BEGIN)) s)"
