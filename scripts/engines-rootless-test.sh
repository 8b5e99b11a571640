#!/usr/bin/env bash
# Rootless podman drives an OCI runtime: scripts/engines-rootless-test.sh [RUNTIME]
#
# RUNTIME defaults to build/mini-run. Run as root (scripts/engines-test.sh calls it after
# scripts/install-engines.sh): it makes an unprivileged user of its own (useradd -m, with
# ranges in /etc/subuid and /etc/subgid and a 0700 /run/user/UID), and that user runs
# `podman --runtime RUNTIME` with podman's storage (native overlay) and configuration in its
# home. The image is imported from the busybox rootfs (scripts/make-rootfs.sh): no network.
#
# Rootless podman runs the runtime as root of a user namespace it made with newuidmap (the
# user's uid and its subuid range), in the pause process's mount namespace. On this kind of
# machine (cgroup v1 controllers plus a cgroup2 "unified" mount, no systemd) it uses no
# cgroups for rootless containers. Its default network is slirp4netns, which opens
# /dev/net/tun: where no udev made that 0666 (as udev's default rules do), it is made 0666
# for the run and put back afterwards.
#
# Each scenario prints "ok   NAME" or "FAIL NAME: why" (with its log); the script ends with
# "N passed, M failed" and exits non-zero when any failed. Afterwards nothing is left: the
# user's containers, images and storage (podman system reset), its processes (podman's pause
# process and conmons, killed by pid), the user and its home (userdel -r), its subuid and
# subgid lines and /run/user/UID.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)

die_setup() {
    echo "engines-rootless: error: $*" >&2
    exit 1
}
((EUID == 0)) || die_setup "must run as root (it creates the unprivileged user itself)"
RUNTIME=$(readlink -f "${1:-build/mini-run}")
[[ -x "$RUNTIME" ]] || die_setup "runtime $RUNTIME not found (build it first)"
NAME=$(basename "$RUNTIME")
ROOTFS=$REPO/rootfs-examples/busybox/rootfs
[[ -x "$ROOTFS/bin/busybox" ]] || die_setup "no busybox rootfs at $ROOTFS (scripts/make-rootfs.sh)"
for tool in podman conmon newuidmap newgidmap slirp4netns useradd userdel runuser; do
    command -v "$tool" >/dev/null || die_setup "$tool is not installed (scripts/install-engines.sh)"
done

# Everything of the test's own outside the user's home: the runtime (a copy the user can
# reach whatever the permissions on the way to RUNTIME), the image tarball and the logs.
BASE=$(mktemp -d /tmp/minirun-rlpodman.XXXXXX)
chmod 0755 "$BASE"
LOGS=$BASE/logs
mkdir -p "$LOGS" "$BASE/bin"
cp "$RUNTIME" "$BASE/bin/$NAME"
chmod 0755 "$BASE/bin/$NAME"
tar -C "$ROOTFS" -cf "$BASE/bb.tar" .
chmod 0644 "$BASE/bb.tar"
IMAGE=localhost/minirun-bb:latest

TEST_USER=minirun-rlpod$$
TEST_UID=""
AS_USER=() # the command prefix that runs as the user; podman is never run without it
made_files=() # /etc/subuid or /etc/subgid, when there was none
TUN=/dev/net/tun
tun_mode=""

# ---------------------------------------------------------------- cleanup
# The user's processes, by pid: podman's pause process, conmons, containers (their host uids
# are the user's or its subuids'; those of the subuids are all inside the pause process's
# user namespace and die with it, but are looked for too).
user_pids() {
    local spec
    spec=$(awk -F: -v u="$TEST_USER" '$1 == u { printf "%s%d-%d", sep, $2, $2 + $3 - 1; sep = "," }' \
        /etc/subuid)
    ps -e -o pid=,uid= | awk -v uid="$TEST_UID" -v ranges="$spec" '
        BEGIN { n = split(ranges, r, ","); }
        { mine = ($2 == uid);
          for (i = 1; i <= n; i++) { split(r[i], b, "-"); if ($2 >= b[1] && $2 <= b[2]) mine = 1 }
          if (mine) print $1 }'
}
cleanup() {
    local status=$?
    set +e
    if [[ -n "$TEST_UID" ]]; then
        if ((${#AS_USER[@]} > 0)); then
            timeout 60 "${AS_USER[@]}" podman rm --all --force --time 0 >/dev/null 2>&1
            timeout 60 "${AS_USER[@]}" podman system reset --force >/dev/null 2>&1
        fi
        local pid i left
        for ((i = 0; i < 30; i++)); do
            left=$(user_pids)
            [[ -z "$left" ]] && break
            for pid in $left; do
                kill -9 "$pid" 2>/dev/null
            done
            sleep 0.1
        done
        [[ -n "$left" ]] && echo "engines-rootless: processes of $TEST_USER left: $left" >&2
        rm -rf "/run/user/$TEST_UID"
    fi
    if id "$TEST_USER" >/dev/null 2>&1; then
        userdel -r "$TEST_USER" >/dev/null 2>&1 || echo "engines-rootless: userdel $TEST_USER failed" >&2
    fi
    local file
    for file in /etc/subuid /etc/subgid; do
        [[ -e "$file" ]] && sed -i "/^$TEST_USER:/d" "$file"
    done
    for file in "${made_files[@]}"; do
        [[ -s "$file" ]] || rm -f "$file"
    done
    [[ -n "$tun_mode" ]] && chmod "$tun_mode" "$TUN"
    rm -rf "$BASE"
    return "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- the user
useradd -m -s /bin/sh "$TEST_USER"
TEST_UID=$(id -u "$TEST_USER")
TEST_GID=$(id -g "$TEST_USER")
HOME_DIR=$(getent passwd "$TEST_USER" | cut -d: -f6)
# useradd gives new users ranges when login.defs has SUB_UID_COUNT (Debian's does); when it
# did not, one past every range in the file.
for file in /etc/subuid /etc/subgid; do
    if [[ ! -e "$file" ]]; then
        : >"$file"
        made_files+=("$file")
    fi
    if ! grep -q "^$TEST_USER:" "$file"; then
        start=$(awk -F: '{ end = $2 + $3; if (end > max) max = end } END { print (max < 100000 ? 100000 : max) }' \
            "$file")
        echo "$TEST_USER:$start:65536" >>"$file"
    fi
done
install -d -m 0700 -o "$TEST_UID" -g "$TEST_GID" "/run/user/$TEST_UID"
AS_USER=(runuser -u "$TEST_USER" -- env -i -C "$HOME_DIR" HOME="$HOME_DIR" USER="$TEST_USER"
    LOGNAME="$TEST_USER" PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
    XDG_RUNTIME_DIR="/run/user/$TEST_UID")

if ! "${AS_USER[@]}" sh -c "exec 3<>$TUN" 2>/dev/null; then
    tun_mode=$(stat -c %a "$TUN")
    chmod 0666 "$TUN"
fi

"${AS_USER[@]}" sh -c 'mkdir -p ~/.config/containers'
"${AS_USER[@]}" tee "$HOME_DIR/.config/containers/containers.conf" >/dev/null <<EOF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "$NAME"
runtime_supports_json = ["crun", "runc", "$NAME"]
runtime_supports_nocgroup = ["crun", "$NAME"] # podman 4.3 reads this spelling

[engine.runtimes]
$NAME = ["$BASE/bin/$NAME"]
EOF
"${AS_USER[@]}" tee "$HOME_DIR/.config/containers/storage.conf" >/dev/null <<EOF
[storage]
driver = "overlay"
EOF
"${AS_USER[@]}" tee "$HOME_DIR/.config/containers/registries.conf" </dev/null >/dev/null

pm() { timeout 60 "${AS_USER[@]}" podman "$@"; }
if ! pm import --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin' "$BASE/bb.tar" "$IMAGE" \
    >"$LOGS/import.log" 2>&1; then
    cat "$LOGS/import.log" >&2
    die_setup "podman import failed"
fi

# ---------------------------------------------------------------- helpers
fail() {
    echo "FAILED: $*"
    exit 1
}
expect_eq() {
    [[ "$1" == "$2" ]] || fail "$3: expected \"$2\", got \"$1\""
}
expect_match() {
    [[ "$1" =~ $2 ]] || fail "$3: \"$1\" does not match /$2/"
}
podman_status() { pm inspect --format '{{.State.Status}}' "$1"; }
podman_pid() { pm inspect --format '{{.State.Pid}}' "$1"; }
# The runtime's state directory of the user's containers: empty between the scenarios.
state_left() { ls -A "/run/user/$TEST_UID/$NAME" 2>/dev/null || true; }

passed=0
failed=0
check() {
    local name=$1 log=$LOGS/$1.log begin rc
    begin=$(date +%s)
    set +e
    (
        set -e
        "$name"
    ) >"$log" 2>&1
    rc=$?
    set -e
    if ((rc == 0)); then
        passed=$((passed + 1))
        printf 'ok   rootless_%s (%ss)\n' "$name" "$(($(date +%s) - begin))"
    else
        failed=$((failed + 1))
        local why
        why=$(grep -m1 '^FAILED: ' "$log" | cut -c9- || true)
        printf 'FAIL rootless_%s: %s\n' "$name" "${why:-exit status $rc}"
        sed 's/^/    | /' "$log" | tail -n 25
    fi
}

# ---------------------------------------------------------------- scenarios
podman_run_rm() {
    out=$(pm run --rm "$IMAGE" sh -c 'id -u; hostname; echo $$; cat /proc/net/dev')
    expect_eq "$(sed -n 1p <<<"$out")" 0 "id -u in the container"
    expect_match "$(sed -n 2p <<<"$out")" '^[0-9a-f]{12}$' "hostname (the container id's start)"
    expect_eq "$(sed -n 3p <<<"$out")" 1 "the shell's pid"
    # podman's default network for rootless containers: slirp4netns's tap0.
    expect_match "$out" 'tap0:' "the slirp4netns interface"
    expect_eq "$(state_left)" "" "runtime state left after run --rm"
}

podman_detach_exec_stop_rm() {
    pm run -d --name rl-exec "$IMAGE" sleep 1000
    expect_eq "$(podman_status rl-exec)" running "status after run -d"
    pid=$(podman_pid rl-exec)
    # Nothing but the container's own output in its log (the runtime's stderr during create
    # is the container's: a warning of the runtime's would be there).
    expect_eq "$(pm logs rl-exec 2>&1)" "" "podman logs of a container that prints nothing"
    # The container's root is the user outside.
    expect_eq "$(stat -c %u "/proc/$pid")" "$TEST_UID" "host uid of the container's init"
    expect_eq "$(readlink "/proc/$pid/ns/user")" "$(readlink "/proc/$(podman_pid_of_pause)/ns/user")" \
        "the container's user namespace (podman's own)"
    out=$(pm exec rl-exec sh -c 'echo in-exec; id -u; echo $$')
    expect_eq "$(sed -n 1,2p <<<"$out")" $'in-exec\n0' "podman exec output"
    rc=0
    pm exec rl-exec sh -c 'exit 5' || rc=$?
    expect_eq "$rc" 5 "podman exec exit code"
    pm exec rl-exec ps -o pid,args | grep -q 'sleep 1000' || fail "ps in exec does not see sleep"
    pm stop -t 2 rl-exec
    expect_eq "$(podman_status rl-exec)" exited "status after stop"
    pm rm rl-exec
    ! pm container exists rl-exec || fail "container still exists after rm"
    [[ ! -e "/proc/$pid" ]] || fail "the container's init $pid is still there"
    expect_eq "$(state_left)" "" "runtime state left after rm"
}
# podman's pause process keeps the user namespace every podman call of the user joins.
podman_pid_of_pause() {
    cat "/run/user/$TEST_UID/libpod/tmp/pause.pid"
}

podman_network_none() {
    out=$(pm run --rm --network none "$IMAGE" sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1')
    expect_eq "$(tr -d ' ' <<<"$out")" lo "network interfaces with --network none"
}

podman_userns_keep_id() {
    out=$(pm run --rm --userns=keep-id "$IMAGE" sh -c 'id -u; id -g; cat /proc/self/uid_map')
    expect_eq "$(sed -n 1p <<<"$out")" "$TEST_UID" "id -u with --userns=keep-id"
    expect_eq "$(sed -n 2p <<<"$out")" "$TEST_GID" "id -g with --userns=keep-id"
    # The container's own user namespace maps its uid TEST_UID onto podman's 0 (the user).
    sed -n '3,$p' <<<"$out" | grep -Eq "^ *$TEST_UID +0 +1\$" ||
        fail "uid_map with keep-id maps no $TEST_UID onto 0: $(sed -n '3,$p' <<<"$out" | tr -s ' \n' ' ')"
}

echo "engines-rootless: podman as $TEST_USER (uid $TEST_UID) with $NAME"
check podman_run_rm
check podman_detach_exec_stop_rm
check podman_network_none
check podman_userns_keep_id
echo "engines-rootless: $passed passed, $failed failed"
((failed == 0))
