#!/usr/bin/env bash
# Podman, containerd and docker drive mini-run end to end: scripts/engines-test.sh [MINI_RUN]
#
# Installs the engines when they are missing (scripts/install-engines.sh), builds the
# example rootfs if needed, then runs tests/engines/run.sh (podman, containerd) against
# MINI_RUN (default build/mini-run, which scripts/test.sh builds) and, as a control, against
# crun: a scenario that fails with both is an engine or machine problem, not a mini-run one.
# Only mini-run's result decides that part's status. ENGINES_CONTROL=0 skips the control.
#
# Then scripts/engines-rootless-test.sh: rootless podman, as a user the script creates and
# removes, runs mini-run (and crun as the control). ENGINES_ROOTLESS=0 skips it.
#
# Then tests/engines/docker.sh: one dockerd of the test's own runs every scenario with
# mini-run and with runc and passes only when mini-run's results match runc's (runc is the
# control there, in the same run). ENGINES_DOCKER=0 skips it.
#
# crun 1.8 refuses this machine's cgroup layout (v1 controllers plus a cgroup2 "unified"
# mount: "cgroups in hybrid mode not supported"), so the control runs in a mount namespace
# of its own with a scratch tmpfs over /sys/fs/cgroup/unified (not an unmount: that would let
# crun and conmon write their cgroup v2 "directories" into the tmpfs under the mount point,
# hidden and kept). mini-run needs no such help.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ((EUID != 0)); then
    echo "engines-test: not root: skipped (podman and containerd run containers as root here)"
    exit 0
fi
MINI_RUN=${1:-build/mini-run}
[[ -x "$MINI_RUN" ]] || { echo "engines-test: $MINI_RUN not found; build it first" >&2; exit 1; }

scripts/install-engines.sh
[[ -x rootfs-examples/busybox/rootfs/bin/busybox ]] || scripts/make-rootfs.sh

echo "engines-test: mini-run"
status=0
tests/engines/run.sh --runtime "$MINI_RUN" </dev/null || status=$?

if [[ "${ENGINES_CONTROL:-1}" != 0 ]]; then
    echo
    echo "engines-test: control run with crun (informational)"
    unshare --mount --propagation private sh -c \
        'mount -t tmpfs -o size=1m engines-control /sys/fs/cgroup/unified 2>/dev/null
         exec tests/engines/run.sh --runtime "$1"' \
        control "$(command -v crun)" </dev/null ||
        echo "engines-test: the control had failures too: compare before blaming mini-run"
fi

# Rootless podman: a user of the test's own runs podman with mini-run (then crun as the
# control, in the same kind of mount namespace as above). ENGINES_ROOTLESS=0 skips it.
if [[ "${ENGINES_ROOTLESS:-1}" != 0 ]]; then
    echo
    echo "engines-test: rootless podman, mini-run"
    scripts/engines-rootless-test.sh "$MINI_RUN" </dev/null || status=1
    if [[ "${ENGINES_CONTROL:-1}" != 0 ]]; then
        echo
        echo "engines-test: rootless podman, control run with crun (informational)"
        unshare --mount --propagation private sh -c \
            'mount -t tmpfs -o size=1m engines-control /sys/fs/cgroup/unified 2>/dev/null
             exec scripts/engines-rootless-test.sh "$1"' \
            control "$(command -v crun)" </dev/null ||
            echo "engines-test: the rootless control had failures too: compare before blaming mini-run"
    fi
fi

if [[ "${ENGINES_DOCKER:-1}" != 0 ]]; then
    echo
    echo "engines-test: docker, mini-run against runc"
    tests/engines/docker.sh --runtime "$MINI_RUN" </dev/null || status=1
fi
exit "$status"
