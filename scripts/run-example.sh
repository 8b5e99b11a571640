#!/usr/bin/env bash
# Runs the example container: sudo scripts/run-example.sh
#
# Installs the dependencies, builds mini-run into build/, builds the busybox rootfs, then
# runs rootfs-examples/busybox with `mini-run run`, feeding its shell a few commands that
# show what a process sees inside its namespaces. Exits with the container's status.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ((EUID != 0)); then
    echo "run-example: mini-run needs root to create namespaces; run: sudo $0" >&2
    exit 1
fi

JOBS=$(nproc 2>/dev/null || echo 2)
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}

scripts/bootstrap.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE="$BUILD_TYPE" >/dev/null
cmake --build build -j "$JOBS" --target mini-run
scripts/make-rootfs.sh

BUNDLE=rootfs-examples/busybox
ID="example-$$-$(date +%s)"

echo
echo "=== Running the busybox container \"$ID\" from $BUNDLE (config.json + rootfs/)."
echo "=== Its shell reads the commands below from stdin. For comparison, this host is"
echo "=== \"$(hostname)\", this script is pid $$, and its namespaces are:"
for ns in ipc mnt net pid user uts; do
    printf '      %s\n' "$(readlink "/proc/self/ns/$ns")"
done
echo

status=0
build/mini-run run --bundle "$BUNDLE" "$ID" <<'COMMANDS' || status=$?
echo "--- hostname (its own UTS namespace):"; hostname
echo "--- id:"; id
echo "--- pid $$ (the shell is pid 1 of its own PID namespace)"
echo "--- ps (only the container's processes):"; ps
echo "--- ls / (the busybox rootfs, not the host's /):"; ls /
echo "--- the first mounts of its mount namespace:"; cat /proc/self/mountinfo | head -n 8
echo "--- network interfaces (a new network namespace has only lo):"; ip -o link show
echo "--- its namespaces (compare with the host's above):"
for ns in ipc mnt net pid user uts; do echo "      $(readlink /proc/self/ns/$ns)"; done
exit 0
COMMANDS

echo
echo "=== The container exited with status $status."
exit "$status"
