#!/usr/bin/env bash
# shellcheck disable=SC2016 # the container's shell commands are in single quotes on purpose
# Docker engine test: Debian's dockerd (docker.io 20.10, which starts a containerd of its own)
# runs the same scenarios with `--runtime mini-run` and with `--runtime runc`, in one daemon,
# and compares what each shows.
#
#   tests/engines/docker.sh [--runtime PATH] [--rootfs DIR] [--only REGEX] [--keep]
#
# --only runs the scenarios whose names match; --keep leaves the daemon, its containers and
# the directory as they are at the end, to look around (then clean up by hand).
#
# PATH (the runtime registered as "mini-run") defaults to build/mini-run, DIR to
# rootfs-examples/busybox/rootfs (scripts/make-rootfs.sh). Run it as root with docker.io
# installed (scripts/install-engines.sh); scripts/engines-test.sh does both. runc is
# dockerd's built-in "runc", Debian's /usr/sbin/runc.
#
# Nothing is configured outside one temporary directory: the daemon gets its own data root,
# exec root (containerd's state, the runtimes' roots and the network namespaces), socket,
# pid file and an empty daemon.json, the cgroupfs driver, overlay2, no iptables rules, no
# masquerading, no ip_forward change and a bridge of its own (dkmrPID, a free 10.213.N.0/24)
# instead of docker0. A trap stops every container, the daemon and its containerd (by pid),
# unmounts what is left under the directory and removes the bridge, the directory, the
# cgroups under /docker that the test made and the few files dockerd leaves outside
# (/etc/docker/key.json, /run/docker), unless they were there before.
#
# Each scenario runs once per runtime and records observations (key and value: exit codes,
# output, inspect fields, values read inside the container). The table at the end shows
# both; a scenario matches when every observation is the same. Some observations also have
# the value a working runtime gives: when runc does not give it, the scenario is reported as
# a runc failure (an engine or machine problem). The script exits non-zero when any scenario
# does not match or runc fails one.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
REPO=$(pwd)

RUNTIME=$REPO/build/mini-run
ROOTFS=$REPO/rootfs-examples/busybox/rootfs
ONLY=""
KEEP=0
while (($# > 0)); do
    case $1 in
    --runtime) RUNTIME=$2; shift 2 ;;
    --rootfs) ROOTFS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "docker-engine: unknown argument $1" >&2; exit 2 ;;
    esac
done
RUNTIME=$(readlink -f "$RUNTIME")
# /usr/local/bin/docker may be some other docker client: Debian's, explicitly.
DOCKER=/usr/bin/docker
DOCKERD=/usr/sbin/dockerd
RUNTIMES=(runc mini-run)

die_setup() {
    echo "docker-engine: error: $*" >&2
    exit 1
}
((EUID == 0)) || die_setup "must run as root"
[[ -x "$RUNTIME" ]] || die_setup "runtime $RUNTIME not found (build it first)"
[[ -x "$ROOTFS/bin/busybox" ]] || die_setup "no busybox rootfs at $ROOTFS (scripts/make-rootfs.sh)"
for tool in "$DOCKER" "$DOCKERD" containerd containerd-shim-runc-v2 runc docker-init script ip busybox; do
    command -v "$tool" >/dev/null || die_setup "$tool is not installed (scripts/install-engines.sh)"
done

BEGIN=$(date +%s)
BASE=$(mktemp -d /tmp/minirun-docker.XXXXXX)
chmod 0711 "$BASE"
LOGS=$BASE/logs
RESULTS=$BASE/results
mkdir -p "$LOGS" "$RESULTS" "$BASE/www" "$BASE/shared"
SOCK=$BASE/docker.sock
IMAGE=minirun-bb:latest
# Not "mrd...": the demos' veths are named so, and their tests look for leftovers by it.
BRIDGE=dkmr$$
BRIDGE_MADE=0
DOCKERD_PID=""
HTTPD_PID=""

# What dockerd leaves outside $BASE: removed at the end unless it was there before.
key_json_existed=0
[[ -e /etc/docker/key.json ]] && key_json_existed=1
run_docker_existed=0
[[ -d /run/docker ]] && run_docker_existed=1
run_containerd_existed=0
[[ -d /run/containerd ]] && run_containerd_existed=1
# Container cgroups are /docker/ID in every v1 hierarchy (and in the cgroup2 "unified" one,
# where runc and mini-run both make one on this hybrid layout). A /docker that was not there is removed whole; in one that was, only
# the directories that were not there before.
cgroup_new_parents=()
for hierarchy in /sys/fs/cgroup/*/; do
    if [[ -d "${hierarchy}docker" ]]; then
        find "${hierarchy}docker" -mindepth 1 -maxdepth 1 -type d >>"$BASE/cgroups-before"
    else
        cgroup_new_parents+=("${hierarchy}docker")
    fi
done
touch "$BASE/cgroups-before"

# ---------------------------------------------------------------- cleanup
# shellcheck source=tests/engines/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # kill_wait
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
    if ((KEEP)); then
        echo "docker-engine: kept $BASE (dockerd pid ${DOCKERD_PID:-none}, httpd pid" \
            "${HTTPD_PID:-none}, bridge $BRIDGE, mounts under it)"
        return
    fi
    [[ -n "$HTTPD_PID" ]] && kill_wait "$HTTPD_PID" 2
    if [[ -n "$DOCKERD_PID" ]]; then
        local ids
        ids=$(timeout 30 "$DOCKER" -H "unix://$SOCK" ps -aq 2>/dev/null)
        # shellcheck disable=SC2086 # one word per id
        [[ -n "$ids" ]] && timeout 60 "$DOCKER" -H "unix://$SOCK" rm -f $ids >/dev/null 2>&1
        # dockerd stops its containerd when it exits; whatever is left, by pid.
        kill_wait "$DOCKERD_PID" 20
        local pid
        for pid in $(base_processes); do
            kill_wait "$pid" 5
        done
    fi
    # Mounts under $BASE (overlay layers, network namespaces, the shared volume and what
    # propagated into it), deepest first.
    local m
    awk -v base="$BASE" '$5 == base || index($5, base "/") == 1 { print $5 }' /proc/self/mountinfo |
        sort -r | while read -r m; do
        umount -l "$m" 2>/dev/null
    done
    ((BRIDGE_MADE)) && ip link delete "$BRIDGE" 2>/dev/null
    ((key_json_existed)) || rm -f /etc/docker/key.json
    ((run_docker_existed)) || rm -rf /run/docker
    ((run_containerd_existed)) || rmdir /run/containerd/s /run/containerd 2>/dev/null
    local dir left i
    for ((i = 0; i < 30; i++)); do
        left=0
        for dir in "${cgroup_new_parents[@]}"; do
            [[ -d "$dir" ]] && { find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || left=1; }
        done
        for dir in /sys/fs/cgroup/*/docker/*/; do
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

# ---------------------------------------------------------------- helpers
# The daemon's "IPv4 forwarding is disabled" warning (the test leaves ip_forward alone) is
# dropped from stderr.
D() {
    timeout 60 "$DOCKER" -H "unix://$SOCK" "$@" 2> >(grep -v 'IPv4 forwarding is disabled' >&2)
}
# DR ARGS...: docker run with the runtime of this pass.
DR() { D run --runtime "$RT" "$@"; }
# A command line for `script` (which gives docker a terminal for -it).
DOCKER_CMD="$DOCKER -H unix://$SOCK"
retry() {
    local n=$1 i
    shift
    for ((i = 0; i < n; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
inspect() { D inspect -f "$1" "$2"; }
state_is() { [[ "$(inspect '{{.State.Status}}' "$1")" == "$2" ]]; }
# wait_state NAME STATUS: up to 10 s.
wait_state() { retry 100 state_is "$1" "$2"; }
# host_cgroup NAME: the container's cgroup path in the host's memory hierarchy.
host_cgroup() {
    local pid
    pid=$(inspect '{{.State.Pid}}' "$1")
    grep -E '^[0-9]+:memory:' "/proc/$pid/cgroup" | cut -d: -f3
}
# obs KEY VALUE [REGEX]: records an observation of this pass, "KEY<tab>VALUE" with newlines
# shown as \n. With REGEX, VALUE must match it whole, as it does with a working runtime.
obs() {
    local key=$1 value=${2//$'\n'/\\n}
    printf '%s\t%s\n' "$key" "$value" >>"$OBS"
    printf 'obs %s: %s\n' "$key" "$value"
    if (($# > 2)) && ! [[ "$value" =~ ^($3)$ ]]; then
        printf '%s: expected /%s/, got "%s"\n' "$key" "$3" "$value" >>"$BAD"
    fi
}
yes_no() { if "$@"; then echo yes; else echo no; fi; }
# The tty name, whatever its number.
pts() { grep -o '/dev/pts/[0-9]*' | head -1 | sed 's/[0-9]*$/N/'; }

SCENARIOS=()
# scenario NAME: runs scn_NAME in a subshell once per runtime, RT being "runc" or "mini-run"
# and C a container name for this pass.
scenario() {
    local name=$1
    if [[ -n "$ONLY" && ! "$name" =~ $ONLY ]]; then
        return 0
    fi
    SCENARIOS+=("$name")
    local rc begin
    for RT in "${RUNTIMES[@]}"; do
        OBS=$RESULTS/$name.$RT.obs
        BAD=$RESULTS/$name.$RT.bad
        C=dk-$name-$RT
        : >"$OBS"
        : >"$BAD"
        begin=$(date +%s)
        rc=0
        ("scn_$name") >"$LOGS/$name.$RT.log" 2>&1 </dev/null || rc=$?
        # The scenario's last step is an observation too.
        printf 'status of the last step\t%s\n' "$rc" >>"$OBS"
        ((rc == 0)) || echo "status of the last step: $rc" >>"$BAD"
        printf '  %-22s %-8s %3ss\n' "$name" "$RT" "$(($(date +%s) - begin))"
        # Whatever the scenario left running.
        D ps -aq --filter "name=^dk-$name-$RT" | xargs -r "$DOCKER" -H "unix://$SOCK" rm -f >/dev/null 2>&1
    done
}

# ---------------------------------------------------------------- scenarios
scn_run_rm() {
    local out rc=0
    out=$(DR --rm --name "$C" "$IMAGE" echo hi) || rc=$?
    obs "output" "$out" hi
    obs "exit code" "$rc" 0
    obs "left behind" "$(D ps -aq --filter "name=^$C\$" | wc -l)" 0
    rc=0
    out=$(echo piped-in | DR --rm -i "$IMAGE" cat) || rc=$?
    obs "run -i stdin" "$out" piped-in
}

scn_exit_codes() {
    local rc=0
    DR --rm "$IMAGE" sh -c 'exit 3' || rc=$?
    obs "sh -c 'exit 3'" "$rc" 3
    rc=0
    DR --rm "$IMAGE" false || rc=$?
    obs "false" "$rc" 1
    # create, then start -a, then wait: the exit code comes back three ways.
    D create --runtime "$RT" --name "$C" "$IMAGE" sh -c 'echo created-started; exit 4' >/dev/null
    local out
    rc=0
    out=$(D start -a "$C") || rc=$?
    obs "start -a output" "$out" created-started
    obs "start -a exit code" "$rc" 4
    obs "wait" "$(D wait "$C")" 4
    obs "State.ExitCode" "$(inspect '{{.State.ExitCode}}' "$C")" 4
    D rm "$C" >/dev/null
}

scn_missing_executable() {
    local out rc=0
    out=$(DR --rm "$IMAGE" /nonexistent 2>&1) || rc=$?
    echo "$out"
    obs "exit code" "$rc" 127
    obs "error names it" "$(yes_no grep -q /nonexistent <<<"$out")" yes
    rc=0
    out=$(DR --rm "$IMAGE" no-such-command 2>&1) || rc=$?
    echo "$out"
    obs "exit code, not in \$PATH" "$rc" 127
    obs "error says \$PATH" "$(yes_no grep -q 'not found in \$PATH' <<<"$out")" yes
}

scn_not_executable() {
    local out rc=0
    out=$(DR --rm "$IMAGE" /etc/passwd 2>&1) || rc=$?
    echo "$out"
    obs "exit code" "$rc" 126
    obs "error says permission denied" "$(yes_no grep -qi 'permission denied' <<<"$out")" yes
}

scn_detach_logs_stop() {
    DR -d --name "$C" "$IMAGE" sh -c \
        'echo to-stdout; echo to-stderr >&2; trap "echo got-term; exit 0" TERM; while :; do sleep 0.1; done'
    obs "status after run -d" "$(inspect '{{.State.Status}}' "$C")" running
    retry 50 sh -c "$DOCKER_CMD logs $C 2>&1 | grep -q to-stderr"
    obs "logs stdout" "$(D logs "$C" 2>/dev/null)" to-stdout
    obs "logs stderr" "$(D logs "$C" 2>&1 >/dev/null)" to-stderr
    local begin
    begin=$(date +%s)
    D stop -t 10 "$C" >/dev/null
    obs "stop: the TERM trap ran" "$(D logs "$C" 2>/dev/null | tail -1)" got-term
    obs "stop took under 5 s" "$(yes_no test $(($(date +%s) - begin)) -lt 5)" yes
    obs "status after stop" "$(inspect '{{.State.Status}}' "$C")" exited
    obs "exit code after stop" "$(inspect '{{.State.ExitCode}}' "$C")" 0
    D rm "$C" >/dev/null
    # An init that ignores SIGTERM gets SIGKILL after -t.
    DR -d --name "$C-deaf" "$IMAGE" sh -c 'trap "" TERM; while :; do sleep 0.1; done'
    D stop -t 1 "$C-deaf" >/dev/null
    obs "stop -t 1, TERM ignored: exit code" "$(inspect '{{.State.ExitCode}}' "$C-deaf")" 137
    D rm "$C-deaf" >/dev/null
    # docker kill -s USR1 reaches the trap; plain kill is SIGKILL.
    DR -d --name "$C-kill" "$IMAGE" sh -c \
        'trap "echo got-usr1 >/tmp/usr1" USR1; touch /tmp/ready; while :; do sleep 0.1; done'
    retry 50 D exec "$C-kill" test -f /tmp/ready
    D kill -s USR1 "$C-kill" >/dev/null
    retry 50 D exec "$C-kill" test -f /tmp/usr1
    obs "kill -s USR1: trap" "$(D exec "$C-kill" cat /tmp/usr1)" got-usr1
    obs "status after kill -s USR1" "$(inspect '{{.State.Status}}' "$C-kill")" running
    D kill "$C-kill" >/dev/null
    wait_state "$C-kill" exited
    obs "kill: exit code" "$(inspect '{{.State.ExitCode}}' "$C-kill")" 137
    D rm "$C-kill" >/dev/null
    # rm -f of a running container.
    DR -d --name "$C-rmf" "$IMAGE" sleep 1000 >/dev/null
    local rc=0
    D rm -f "$C-rmf" >/dev/null || rc=$?
    obs "rm -f running: exit code" "$rc" 0
    obs "rm -f running: gone" "$(D ps -aq --filter "name=^$C-rmf\$" | wc -l)" 0
}

scn_exec() {
    DR -d --name "$C" "$IMAGE" sleep 1000 >/dev/null
    local out rc=0
    out=$(D exec "$C" sh -c 'echo in-exec; id -u') || rc=$?
    obs "output" "$out" 'in-exec\\n0'
    obs "exit code" "$rc" 0
    rc=0
    D exec "$C" sh -c 'exit 5' || rc=$?
    obs "exit code of exit 5" "$rc" 5
    obs "-u 1000" "$(D exec -u 1000:1000 "$C" id -u)" 1000
    obs "-u user: id, HOME" "$(D exec -u user "$C" sh -c 'id -u; echo $HOME')" '1000\\n/home/user'
    obs "env" "$(D exec "$C" env | sort | sed 's/^HOSTNAME=.*/HOSTNAME=ID/' | tr '\n' ' ')" \
        'HOME=/root HOSTNAME=ID PATH=/bin:/sbin:/usr/bin:/usr/sbin '
    obs "-e" "$(D exec -e FOO=bar "$C" sh -c 'echo $FOO')" bar
    obs "-w" "$(D exec -w /tmp "$C" pwd)" /tmp
    obs "sees the init" "$(yes_no sh -c "$DOCKER_CMD exec $C ps -o pid,args | grep -q '^ *1 sleep 1000'")" yes
    obs "stdin" "$(echo piped-in | D exec -i "$C" cat)" piped-in
    rc=0
    out=$(D exec "$C" /no/such/program 2>&1) || rc=$?
    echo "$out"
    obs "missing program: exit code" "$rc" 126
    obs "missing program: error names it" "$(yes_no grep -q /no/such/program <<<"$out")" yes
    # exec -d: runs on after exec returns.
    D exec -d "$C" sh -c 'sleep 0.3; touch /tmp/detached'
    retry 50 D exec "$C" test -f /tmp/detached
    obs "exec -d ran" "$(yes_no D exec "$C" test -f /tmp/detached)" yes
    D rm -f "$C" >/dev/null
}

scn_tty() {
    local out rc=0
    out=$(printf 'tty\nexit 7\n' |
        timeout 60 script -qec "$DOCKER_CMD run --rm -it --runtime $RT $IMAGE sh" /dev/null) || rc=$?
    out=${out//$'\r'/}
    echo "$out"
    obs "run -it: tty" "$(pts <<<"$out")" /dev/pts/N
    obs "run -it: exit code" "$rc" 7
    out=$(timeout 60 script -qec "$DOCKER_CMD run --rm -t --runtime $RT $IMAGE tty" /dev/null </dev/null)
    obs "run -t: tty" "$(pts <<<"$out")" /dev/pts/N
    DR -d --name "$C" "$IMAGE" sleep 1000 >/dev/null
    out=$(timeout 60 script -qec "$DOCKER_CMD exec -it $C tty" /dev/null </dev/null)
    obs "exec -it: tty" "$(pts <<<"$out")" /dev/pts/N
    rc=0
    timeout 60 script -qec "$DOCKER_CMD exec -it $C sh -c 'exit 4'" /dev/null </dev/null || rc=$?
    obs "exec -it: exit code" "$rc" 4
    # The client passes its terminal's size on to the container's, soon after the start.
    local size='for i in $(seq 30); do s=$(stty size 2>/dev/null); [ -n "$s" ] && break; sleep 0.1; done; echo $s'
    out=$(timeout 60 script -qec "stty rows 31 cols 97; $DOCKER_CMD exec -it $C sh -c '$size'" /dev/null </dev/null | tr -d '\0\r')
    obs "exec -it: size of the client's terminal" "$(grep -Eo '[0-9]+ [0-9]+' <<<"$out")" '31 97'
    out=$(timeout 60 script -qec "stty rows 33 cols 91; $DOCKER_CMD run --rm -it --runtime $RT $IMAGE sh -c '$size'" /dev/null </dev/null | tr -d '\0\r')
    obs "run -it: size of the client's terminal" "$(grep -Eo '[0-9]+ [0-9]+' <<<"$out")" '33 91'
    D rm -f "$C" >/dev/null
}

scn_memory() {
    DR -d --name "$C" --memory 64m --memory-reservation 32m "$IMAGE" sleep 1000 >/dev/null
    obs "memory.limit_in_bytes" "$(D exec "$C" cat /sys/fs/cgroup/memory/memory.limit_in_bytes)" 67108864
    if [[ -e /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ]]; then
        obs "memory.memsw.limit_in_bytes" \
            "$(D exec "$C" cat /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes)" 134217728
    fi
    obs "memory.soft_limit_in_bytes" \
        "$(D exec "$C" cat /sys/fs/cgroup/memory/memory.soft_limit_in_bytes)" 33554432
    local id
    id=$(inspect '{{.Id}}' "$C")
    obs "host cgroup is /docker/ID" "$(yes_no test "$(host_cgroup "$C")" = "/docker/$id")" yes
    obs "HostConfig.Memory" "$(inspect '{{.HostConfig.Memory}}' "$C")" 67108864
    D rm -f "$C" >/dev/null
    obs "--oom-kill-disable" "$(DR --rm --memory 64m --oom-kill-disable "$IMAGE" head -1 /sys/fs/cgroup/memory/memory.oom_control)" \
        'oom_kill_disable 1'
    obs "--cgroupns private: own memory cgroup is /" \
        "$(DR --rm --cgroupns private "$IMAGE" grep -E '^[0-9]+:memory:' /proc/self/cgroup | cut -d: -f3)" /
}

scn_oom_kill() {
    local since rc=0
    since=$(date +%s.%N)
    DR --name "$C" --memory 32m --memory-swap 32m "$IMAGE" tail /dev/zero || rc=$?
    obs "exit code" "$rc" 137
    obs "State.OOMKilled" "$(inspect '{{.State.OOMKilled}}' "$C")" true
    obs "State.ExitCode" "$(inspect '{{.State.ExitCode}}' "$C")" 137
    obs "oom event" "$(D events --since "$since" --until "$(date +%s.%N)" --filter "container=$C" \
        --filter event=oom --format '{{.Action}}' | sort -u)" oom
    D rm "$C" >/dev/null
}

scn_cpu() {
    local out
    out=$(DR --rm --cpus 0.5 --cpu-shares 512 --cpuset-cpus 0 "$IMAGE" sh -c \
        'cd /sys/fs/cgroup; cat cpu/cpu.cfs_quota_us cpu/cpu.cfs_period_us cpu/cpu.shares cpuset/cpuset.cpus')
    obs "cfs_quota period shares cpuset" "$(tr '\n' ' ' <<<"$out")" '50000 100000 512 0 '
}

scn_pids_limit() {
    DR -d --name "$C" --pids-limit 20 "$IMAGE" sleep 1000 >/dev/null
    obs "pids.max" "$(D exec "$C" cat /sys/fs/cgroup/pids/pids.max)" 20
    local out
    out=$(D exec "$C" sh -c 'for i in $(seq 25); do sleep 5 & done 2>&1; kill $(jobs -p) 2>/dev/null; true' 2>&1)
    echo "$out"
    obs "fork past the limit fails" "$(yes_no grep -Eq "can't fork|Resource temporarily unavailable" <<<"$out")" yes
    obs "HostConfig.PidsLimit" "$(inspect '{{.HostConfig.PidsLimit}}' "$C")" 20
    D rm -f "$C" >/dev/null
}

caps() { grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' | tr -s '\t ' ' '; }
scn_capabilities() {
    obs "default" "$(DR --rm "$IMAGE" cat /proc/self/status | caps)" \
        'CapInh: 0+\\nCapPrm: 0+a80425fb\\nCapEff: 0+a80425fb\\nCapBnd: 0+a80425fb\\nCapAmb: 0+\\nNoNewPrivs: 0\\nSeccomp: 2'
    obs "--cap-drop ALL" "$(DR --rm --cap-drop ALL "$IMAGE" cat /proc/self/status | caps)" \
        'CapInh: 0+\\nCapPrm: 0+\\nCapEff: 0+\\nCapBnd: 0+\\nCapAmb: 0+\\nNoNewPrivs: 0\\nSeccomp: 2'
    obs "--cap-drop ALL --cap-add NET_BIND_SERVICE, as user 1000" \
        "$(DR --rm --cap-drop ALL --cap-add NET_BIND_SERVICE --user 1000 "$IMAGE" cat /proc/self/status | caps)" \
        'CapInh: 0+\\nCapPrm: 0+\\nCapEff: 0+\\nCapBnd: 0+400\\nCapAmb: 0+\\nNoNewPrivs: 0\\nSeccomp: 2'
    obs "no-new-privileges, seccomp unconfined" \
        "$(DR --rm --security-opt no-new-privileges --security-opt seccomp=unconfined "$IMAGE" \
            cat /proc/self/status | caps | grep -E 'NoNew|Seccomp')" 'NoNewPrivs: 1\\nSeccomp: 0'
    obs "--privileged" "$(DR --rm --privileged "$IMAGE" cat /proc/self/status | caps)"
    local rc=0
    DR --rm --cap-drop ALL "$IMAGE" chown 1000 /tmp || rc=$?
    obs "--cap-drop ALL: chown fails" "$rc" 1
}

scn_read_only() {
    local out
    out=$(DR --rm --read-only --tmpfs /tmp "$IMAGE" sh -c \
        'touch /x 2>&1; echo rc=$?; touch /tmp/y && echo tmp-ok; grep " / " /proc/mounts | cut -d" " -f4 | cut -d, -f1')
    obs "touch / fails, /tmp tmpfs writable, / is" "$out" \
        'touch: /x: Read-only file system\\nrc=1\\ntmp-ok\\nro'
    out=$(DR --rm "$IMAGE" sh -c 'touch /x && echo rw-ok')
    obs "without --read-only" "$out" rw-ok
}

scn_user() {
    obs "root: HOME" "$(DR --rm "$IMAGE" sh -c 'echo $HOME')" /root
    obs "--user 1000:1000: HOME" "$(DR --rm --user 1000:1000 "$IMAGE" sh -c 'echo $HOME')" /home/user
    obs "--user 1000:1000" "$(DR --rm --user 1000:1000 "$IMAGE" id)" 'uid=1000\(user\) gid=1000\(user\)( groups=1000\(user\))?'
    obs "--user nobody" "$(DR --rm --user nobody "$IMAGE" sh -c 'id -u; id -g; echo $HOME')" '65534\\n65534\\n/nonexistent'
    obs "--user 1000 --group-add 2000" "$(DR --rm --user 1000 --group-add 2000 "$IMAGE" id -G)" '1000 (100 )?2000'
    obs "--user user (name)" "$(DR --rm --user user "$IMAGE" sh -c 'id -u; id -G; echo $HOME')" '1000\\n1000 100\\n/home/user'
    local rc=0
    DR --rm --user 1000 "$IMAGE" touch /root/x || rc=$?
    obs "user 1000 cannot write /root" "$rc" 1
}

scn_config() {
    local out
    out=$(DR --rm --hostname dk-host -w /no/such/dir -e FOO=bar --ulimit nofile=1024:2048 \
        --shm-size 32m --oom-score-adj 100 --sysctl kernel.shm_rmid_forced=1 \
        --device /dev/null:/dev/mynull "$IMAGE" sh -c \
        'hostname; pwd; echo $FOO $PATH; echo $(ulimit -n) $(ulimit -Hn); df -k /dev/shm | awk "NR == 2 { print \$2 }"
         cat /proc/self/oom_score_adj /proc/sys/kernel/shm_rmid_forced
         echo x >/dev/mynull && stat -c %t:%T /dev/mynull')
    echo "$out"
    obs "hostname" "$(sed -n 1p <<<"$out")" dk-host
    obs "workdir (made)" "$(sed -n 2p <<<"$out")" /no/such/dir
    obs "env" "$(sed -n 3p <<<"$out")" 'bar /bin:/sbin:/usr/bin:/usr/sbin'
    obs "ulimit nofile" "$(sed -n 4p <<<"$out")" '1024 2048'
    obs "shm-size (KiB)" "$(sed -n 5p <<<"$out")" 32768
    obs "oom-score-adj" "$(sed -n 6p <<<"$out")" 100
    obs "sysctl" "$(sed -n 7p <<<"$out")" 1
    obs "--device" "$(sed -n 8p <<<"$out")" 1:3
    # What the container gets without options (the hostname is the container's id).
    out=$(DR --rm "$IMAGE" sh -c 'env | sort | sed "s/^HOSTNAME=.*/HOSTNAME=ID/" | tr "\n" " "; echo
        umask; cat /proc/self/oom_score_adj; ulimit -a | tr -s " " | tr "\n" ";"; echo
        stat -c "%n %a %U:%G" / /tmp /dev /dev/shm /dev/pts /dev/null /dev/pts/ptmx | tr "\n" ";"')
    echo "$out"
    obs "default env" "$(sed -n 1p <<<"$out")" 'HOME=/root HOSTNAME=ID PATH=/bin:/sbin:/usr/bin:/usr/sbin PWD=/ SHLVL=1 '
    obs "default umask" "$(sed -n 2p <<<"$out")" 0022
    obs "default oom_score_adj" "$(sed -n 3p <<<"$out")"
    obs "default ulimits" "$(sed -n 4p <<<"$out")"
    obs "modes of /, /tmp, /dev, ..." "$(sed -n 5p <<<"$out")"
    out=$(DR --rm --pid host --ipc host --uts host --network host "$IMAGE" sh -c \
        'cat /proc/1/comm; readlink /proc/self/ns/ipc; hostname; ls /sys/class/net | grep -c "^eth0$"')
    echo "$out"
    obs "--pid host: pid 1" "$(sed -n 1p <<<"$out")" "$(cat /proc/1/comm)"
    obs "--ipc host: the host's ipc ns" "$(yes_no test "$(sed -n 2p <<<"$out")" = "$(readlink /proc/self/ns/ipc)")" yes
    obs "--uts host: hostname" "$(sed -n 3p <<<"$out")" "$(hostname)"
    obs "--network host: eth0" "$(sed -n 4p <<<"$out")" 1
}

scn_mounts() {
    # The container's view: mounts (point, type, ro/rw), devices, the devices cgroup, masked
    # and read-only paths, the files docker bind-mounts.
    local out
    out=$(DR --rm --hostname dk-mounts "$IMAGE" sh -c \
        'awk "{ print \$2, \$3, substr(\$4, 1, 2) }" /proc/self/mounts; echo --
         ls /dev | tr "\n" " "; echo; echo --
         sort /sys/fs/cgroup/devices/devices.list | tr "\n" " "; echo; echo --
         wc -c </proc/timer_list; echo 1 2>/dev/null >/proc/sys/kernel/shm_rmid_forced || echo sys-ro; echo --
         cat /etc/hostname; grep -c dk-mounts /etc/hosts; test -s /etc/resolv.conf && echo resolv')
    echo "$out"
    # Sorted: the order differs between runtimes without changing what is where. The cgroup
    # tree is compared on its own: Docker asks for it "ro"; mini-run makes the tmpfs at
    # /sys/fs/cgroup read-only as asked and mounts the unified hierarchy this hybrid host has,
    # where runc 1.1 leaves the tmpfs writable and omits unified. What both must give: every
    # controller hierarchy read-only.
    obs "mounts" "$(awk '/^--$/ { exit } $1 != "/sys/fs/cgroup" && $1 != "/sys/fs/cgroup/unified" { print }' <<<"$out" | sort)"
    obs "cgroup hierarchies, all read-only" \
        "$(awk '/^--$/ { exit } $1 ~ "^/sys/fs/cgroup/" && $2 == "cgroup" { print $3 }' <<<"$out" | sort -u)" ro
    obs "/dev" "$(awk '/^--$/ { n++; next } n == 1' <<<"$out")"
    obs "devices.list" "$(awk '/^--$/ { n++; next } n == 2' <<<"$out")"
    obs "masked /proc/timer_list, read-only /proc/sys" "$(awk '/^--$/ { n++; next } n == 3' <<<"$out")" '0\\nsys-ro'
    obs "/etc/hostname, hosts, resolv.conf" "$(awk '/^--$/ { n++; next } n == 4' <<<"$out")" \
        'dk-mounts\\n1\\nresolv'
}

scn_network_none() {
    obs "interfaces" "$(DR --rm --network none "$IMAGE" ls /sys/class/net)" lo
    obs "addresses" "$(DR --rm --network none "$IMAGE" sh -c 'ip -o addr | awk "{ print \$2, \$3, \$4 }"')" \
        'lo inet 127.0.0.1/8( lo inet6 ::1/128)?'
}

scn_network_bridge() {
    local out
    # (busybox's wget -T crashes: timeout instead.)
    out=$(DR --rm "$IMAGE" sh -c "ip -o -4 addr show eth0 | awk '{ print \$4 }'; ip route | grep '^default'; \
        ping -c 1 -W 2 $BRIDGE_IP >/dev/null && echo ping-ok; timeout 5 wget -q -O - http://$BRIDGE_IP:$HTTP_PORT/hello.txt")
    echo "$out"
    local addr
    addr=$(head -1 <<<"$out")
    obs "eth0 address in $SUBNET.0/24" "$(yes_no grep -Eq "^${SUBNET//./\\.}\.[0-9]+/24$" <<<"$addr")" yes
    obs "default route" "$(sed -n 2p <<<"$out" | awk '{ print $1, $2, $3, $4, $5 }')" "default via $BRIDGE_IP dev eth0"
    obs "ping the bridge" "$(sed -n 3p <<<"$out")" ping-ok
    obs "http from the host's server" "$(sed -n 4p <<<"$out")" hello-from-host
    # Two containers on the bridge reach each other.
    DR -d --name "$C" "$IMAGE" sleep 1000 >/dev/null
    local ip
    ip=$(inspect '{{.NetworkSettings.IPAddress}}' "$C")
    obs "ping another container" "$(DR --rm "$IMAGE" sh -c "ping -c 1 -W 2 $ip >/dev/null && echo ok")" ok
    obs "host sees the veth on $BRIDGE" "$(yes_no test -n "$(ip -o link show master "$BRIDGE")")" yes
    D rm -f "$C" >/dev/null
}

scn_pause_unpause() {
    DR -d --name "$C" "$IMAGE" sh -c 'i=0; while :; do i=$((i + 1)); echo $i >/tmp/tick; sleep 0.1; done' >/dev/null
    local pid id rc=0 a b
    pid=$(inspect '{{.State.Pid}}' "$C")
    id=$(inspect '{{.Id}}' "$C")
    retry 50 test -s "/proc/$pid/root/tmp/tick"
    D pause "$C" >/dev/null || rc=$?
    obs "pause: exit code" "$rc" 0
    obs "status after pause" "$(inspect '{{.State.Status}} {{.State.Paused}}' "$C")" 'paused true'
    obs "freezer.state" "$(cat "/sys/fs/cgroup/freezer/docker/$id/freezer.state" 2>&1)" FROZEN
    a=$(cat "/proc/$pid/root/tmp/tick")
    sleep 0.5
    b=$(cat "/proc/$pid/root/tmp/tick")
    obs "frozen (counter stands still)" "$(yes_no test "$a" = "$b")" yes
    rc=0
    D unpause "$C" >/dev/null || rc=$?
    obs "unpause: exit code" "$rc" 0
    obs "status after unpause" "$(inspect '{{.State.Status}} {{.State.Paused}}' "$C")" 'running false'
    sleep 0.5
    b=$(cat "/proc/$pid/root/tmp/tick")
    obs "runs again (counter moves)" "$(yes_no test "$a" != "$b")" yes
    D rm -f "$C" >/dev/null
}

scn_update() {
    DR -d --name "$C" --memory 64m "$IMAGE" sleep 1000 >/dev/null
    local rc=0
    D update --memory 128m --memory-swap 256m --cpus 1.5 --cpu-shares 256 --pids-limit 50 "$C" >/dev/null || rc=$?
    obs "update: exit code" "$rc" 0
    obs "memory, memsw, quota, shares, pids.max" "$(D exec "$C" sh -c 'cd /sys/fs/cgroup; cat memory/memory.limit_in_bytes memory/memory.memsw.limit_in_bytes cpu/cpu.cfs_quota_us cpu/cpu.shares pids/pids.max' | tr '\n' ' ')" \
        '134217728 268435456 150000 256 50 '
    obs "HostConfig" "$(inspect '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}} {{.HostConfig.NanoCpus}} {{.HostConfig.CpuShares}} {{.HostConfig.PidsLimit}}' "$C")" \
        '134217728 268435456 1500000000 256 50'
    D rm -f "$C" >/dev/null
}

scn_restart() {
    DR -d --name "$C" "$IMAGE" sleep 1000 >/dev/null
    local before after rc=0
    before=$(inspect '{{.State.Pid}}' "$C")
    D restart -t 1 "$C" >/dev/null || rc=$?
    obs "restart: exit code" "$rc" 0
    obs "status after restart" "$(inspect '{{.State.Status}}' "$C")" running
    after=$(inspect '{{.State.Pid}}' "$C")
    obs "new init pid" "$(yes_no test "$before" != "$after")" yes
    obs "exec after restart" "$(D exec "$C" echo alive)" alive
    D stop -t 1 "$C" >/dev/null
    rc=0
    D start "$C" >/dev/null || rc=$?
    obs "start after stop" "$rc $(inspect '{{.State.Status}}' "$C")" '0 running'
    D rm -f "$C" >/dev/null
    # --restart on-failure:2: two restarts, then it stays exited.
    DR -d --name "$C-policy" --restart on-failure:2 "$IMAGE" sh -c 'sleep 0.2; exit 1' >/dev/null
    retry 150 sh -c "test \"\$($DOCKER_CMD inspect -f '{{.RestartCount}} {{.State.Status}}' $C-policy)\" = '2 exited'"
    sleep 0.5
    obs "on-failure:2: RestartCount, status, exit code" \
        "$(inspect '{{.RestartCount}} {{.State.Status}} {{.State.ExitCode}}' "$C-policy")" '2 exited 1'
    D rm -f "$C-policy" >/dev/null
}

scn_stats() {
    DR -d --name "$C" --memory 64m "$IMAGE" sleep 1000 >/dev/null
    local out
    out=$(D stats --no-stream --format '{{.Name}}|{{.CPUPerc}}|{{.MemUsage}}|{{.PIDs}}' "$C")
    echo "$out"
    IFS='|' read -r name cpu mem pids <<<"$out"
    obs "name" "$(yes_no test "$name" = "$C")" yes
    obs "cpu % given" "$(yes_no grep -Eq '^[0-9.]+%$' <<<"$cpu")" yes
    obs "memory usage given" "$(yes_no grep -Eq '^[0-9.]+[KMG]i?B / ' <<<"$mem")" yes
    obs "memory limit" "${mem#* / }" 64MiB
    obs "pids" "$pids" 1
    D rm -f "$C" >/dev/null
}

scn_top() {
    DR -d --name "$C" "$IMAGE" sh -c 'sleep 1001 & sleep 1002 & wait' >/dev/null
    retry 50 sh -c "$DOCKER_CMD top $C | grep -q 'sleep 1002'"
    local out
    out=$(D top "$C")
    echo "$out"
    obs "lists sleep 1001 and 1002" "$(yes_no grep -q 'sleep 1001' <<<"$out")$(yes_no grep -q 'sleep 1002' <<<"$out")" yesyes
    obs "processes" "$(($(wc -l <<<"$out") - 1))" 3
    obs "top -o pid,comm" "$(D top "$C" -o pid,comm | awk 'NR > 1 { print $2 }' | sort | tr '\n' ' ')" 'sh sleep sleep '
    D rm -f "$C" >/dev/null
}

scn_events() {
    local since until
    since=$(date +%s.%N)
    # By id: the filter takes names as substrings.
    DR --rm --cidfile "$BASE/$C.cid" "$IMAGE" true
    local id
    id=$(DR -d "$IMAGE" sleep 1000)
    D exec "$id" true
    D pause "$id" >/dev/null
    D unpause "$id" >/dev/null
    D stop -t 1 "$id" >/dev/null
    D rm "$id" >/dev/null
    until=$(date +%s.%N)
    obs "run --rm" "$(D events --since "$since" --until "$until" --filter type=container \
        --filter "container=$(cat "$BASE/$C.cid")" --format '{{.Action}}')" \
        'create\\nattach\\nstart\\ndie\\ndestroy'
    obs "run -d, exec, pause, unpause, stop, rm" "$(D events --since "$since" --until "$until" \
        --filter type=container --filter "container=$id" --format '{{.Action}}' | sed 's/:.*//')" \
        'create\\nstart\\nexec_create\\nexec_start\\nexec_die\\npause\\nunpause\\nkill\\nkill\\ndie\\nstop\\ndestroy'
}

scn_init() {
    obs "pid 1" "$(DR --rm --init "$IMAGE" cat /proc/1/comm)" docker-init
    # The child's pid depends on the runtime (runc's Go init used a few for its threads).
    obs "ps" "$(DR --rm --init "$IMAGE" ps -o pid,args | tail -n +2 | tr -s ' ' | sed 's/^ [0-9][0-9]* ps/ N ps/')" \
        ' 1 /sbin/docker-init -- ps -o pid,args\\n N ps -o pid,args'
    # docker-init passes SIGTERM on to sleep, which dies of it.
    DR -d --init --name "$C" "$IMAGE" sleep 1000 >/dev/null
    local begin
    begin=$(date +%s)
    D stop -t 10 "$C" >/dev/null
    obs "stop: exit code" "$(inspect '{{.State.ExitCode}}' "$C")" 143
    obs "stop took under 5 s" "$(yes_no test $(($(date +%s) - begin)) -lt 5)" yes
    D rm "$C" >/dev/null
}

scn_volumes() {
    local vol=$BASE/shared/vol-$RT
    mkdir -p "$vol"
    echo from-host >"$vol/host-file"
    obs "-v: host file inside, file from inside" \
        "$(DR --rm -v "$vol:/data" "$IMAGE" sh -c 'cat /data/host-file; echo from-container >/data/file'; cat "$vol/file")" \
        'from-host\\nfrom-container'
    obs "-v :ro" "$(DR --rm -v "$vol:/data:ro" "$IMAGE" sh -c 'touch /data/x 2>&1 || true')" \
        'touch: /data/x: Read-only file system'
    # rshared: a mount made inside under the volume comes back to the host.
    mkdir -p "$vol/sub"
    DR -d --name "$C" --cap-add SYS_ADMIN -v "$vol:/data:rshared" "$IMAGE" sh -c \
        'mount -t tmpfs dk-inside /data/sub && echo made-inside >/data/sub/marker && touch /tmp/ready; sleep 1000' >/dev/null
    retry 50 D exec "$C" test -f /tmp/ready
    obs "rshared: mount inside made" "$(yes_no D exec "$C" test -f /tmp/ready)" yes
    D exec "$C" grep ' /data' /proc/self/mountinfo
    obs "rshared: mountinfo shows shared:" \
        "$(yes_no sh -c "$DOCKER_CMD exec $C grep ' /data ' /proc/self/mountinfo | grep -q ' shared:'")" yes
    obs "rshared: the mount inside shows on the host" "$(cat "$vol/sub/marker" 2>/dev/null || echo missing)" made-inside
    D rm -f "$C" >/dev/null
    umount "$vol/sub" 2>/dev/null || true
    # Without propagation (rprivate) it does not.
    DR --rm --cap-add SYS_ADMIN -v "$vol:/data" "$IMAGE" sh -c \
        'mount -t tmpfs dk-inside /data/sub && echo made-inside >/data/sub/marker'
    obs "rprivate: the mount inside does not show on the host" "$(yes_no test ! -e "$vol/sub/marker")" yes
    umount "$vol/sub" 2>/dev/null || true
}

# ---------------------------------------------------------------- setup
echo "docker-engine: mini-run = $RUNTIME, runc = $(command -v runc), state under $BASE"

# A bridge of the test's own on a free 10.213.N.0/24, the host at .1.
n=$(($$ % 250 + 1))
for ((i = 0; i < 250; i++)); do
    SUBNET=10.213.$n
    ip -4 route show | grep -q "^${SUBNET//./\\.}\." || break
    n=$((n % 250 + 1))
done
BRIDGE_IP=$SUBNET.1
ip link add "$BRIDGE" type bridge || die_setup "cannot create bridge $BRIDGE"
BRIDGE_MADE=1
ip addr add "$BRIDGE_IP/24" dev "$BRIDGE"
ip link set "$BRIDGE" up

# A web server on the bridge address only, for the bridge scenario.
echo hello-from-host >"$BASE/www/hello.txt"
for HTTP_PORT in $((18000 + $$ % 1000)) $((19000 + $$ % 1000)) 18999; do
    busybox httpd -f -p "$BRIDGE_IP:$HTTP_PORT" -h "$BASE/www" >"$LOGS/httpd.log" 2>&1 &
    HTTPD_PID=$!
    sleep 0.2
    kill -0 "$HTTPD_PID" 2>/dev/null && break
    HTTPD_PID=""
done
[[ -n "$HTTPD_PID" ]] || die_setup "busybox httpd did not start on $BRIDGE_IP (see $LOGS/httpd.log)"

# The volume scenario's source must be on a shared mount for rshared.
mount --bind "$BASE/shared" "$BASE/shared"
mount --make-rshared "$BASE/shared"

echo '{}' >"$BASE/daemon.json"
"$DOCKERD" --config-file "$BASE/daemon.json" \
    --data-root "$BASE/data" --exec-root "$BASE/exec" \
    -H "unix://$SOCK" --pidfile "$BASE/dockerd.pid" --group root \
    --exec-opt native.cgroupdriver=cgroupfs --storage-driver overlay2 \
    --add-runtime "mini-run=$RUNTIME" \
    --bridge "$BRIDGE" --iptables=false --ip6tables=false --ip-masq=false --ip-forward=false \
    --userland-proxy=false \
    >"$LOGS/dockerd.log" 2>&1 &
DOCKERD_PID=$!
retry 300 test -S "$SOCK" || die_setup "dockerd did not start (see $LOGS/dockerd.log)"
retry 100 D version >/dev/null 2>&1 || die_setup "dockerd does not answer on $SOCK"
D info --format '{{json .Runtimes}}' | grep -q '"mini-run"' || die_setup "dockerd does not know mini-run"

tar -C "$ROOTFS" -cf "$BASE/rootfs.tar" .
D import --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin:/sbin:/usr/bin:/usr/sbin' \
    "$BASE/rootfs.tar" "$IMAGE" >/dev/null
echo "docker-engine: dockerd $(D version --format '{{.Server.Version}}') pid $DOCKERD_PID, bridge $BRIDGE $BRIDGE_IP/24 (setup $(($(date +%s) - BEGIN))s)"

# ---------------------------------------------------------------- scenarios
scenario run_rm
scenario exit_codes
scenario missing_executable
scenario not_executable
scenario detach_logs_stop
scenario exec
scenario tty
scenario memory
scenario oom_kill
scenario cpu
scenario pids_limit
scenario capabilities
scenario read_only
scenario user
scenario config
scenario mounts
scenario network_none
scenario network_bridge
scenario pause_unpause
scenario update
scenario restart
scenario stats
scenario top
scenario events
scenario init
scenario volumes

# ---------------------------------------------------------------- report
# The result column: the values, or with a mismatch the first observation that differs.
summary() {
    cut -f2 "$1" | paste -sd';' | cut -c1-40
}
first_difference() {
    diff "$1" "$2" | grep -m1 "^$3 " | cut -c3- | sed 's/\t/: /' | cut -c1-40 || true
}
# One line per line of each value, for the diff of a mismatch.
lines() {
    awk -F '\t' '{ n = split($2, part, /\\n/); if (n == 0) print $1 ":"
                  for (i = 1; i <= n; i++) print $1 ": " part[i] }' "$1"
}
mismatched=0
runc_failed=0
echo
printf '%-20s  %-40s  %-40s  %s\n' scenario runc mini-run match
printf '%-20s  %-40s  %-40s  %s\n' -------- ---- -------- -----
for name in "${SCENARIOS[@]}"; do
    r=$RESULTS/$name.runc
    m=$RESULTS/$name.mini-run
    if [[ -s "$r.bad" ]]; then
        match="RUNC FAILS"
        runc_failed=$((runc_failed + 1))
    elif cmp -s "$r.obs" "$m.obs"; then
        match=yes
    else
        match=NO
        mismatched=$((mismatched + 1))
    fi
    if cmp -s "$r.obs" "$m.obs"; then
        printf '%-20s  %-40s  %-40s  %s\n' "$name" "$(summary "$r.obs")" "$(summary "$m.obs")" "$match"
    else
        printf '%-20s  %-40s  %-40s  %s\n' "$name" "$(first_difference "$r.obs" "$m.obs" '<')" \
            "$(first_difference "$r.obs" "$m.obs" '>')" "$match"
    fi
done
for name in "${SCENARIOS[@]}"; do
    r=$RESULTS/$name.runc
    m=$RESULTS/$name.mini-run
    if [[ -s "$r.bad" ]]; then
        echo
        echo "== $name: runc does not do what a working runtime does:"
        sed 's/^/    /' "$r.bad"
        echo "   runc's log:"
        tail -n 20 "$LOGS/$name.runc.log" | sed 's/^/    | /'
    fi
    if ! cmp -s "$r.obs" "$m.obs"; then
        echo
        echo "== $name: mini-run differs from runc (< runc, > mini-run):"
        diff <(lines "$r.obs") <(lines "$m.obs") | grep '^[<>]' | sed 's/^/    /' || true
        echo "   mini-run's log:"
        tail -n 20 "$LOGS/$name.mini-run.log" | sed 's/^/    | /'
    fi
done
echo
echo "docker-engine: ${#SCENARIOS[@]} scenarios, $((${#SCENARIOS[@]} - mismatched - runc_failed)) match," \
    "$mismatched differ, runc fails $runc_failed ($(($(date +%s) - BEGIN))s)"
echo "docker: $((${#SCENARIOS[@]} - mismatched - runc_failed)) passed, $((mismatched + runc_failed)) failed"
((mismatched == 0 && runc_failed == 0))
