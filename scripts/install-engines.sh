#!/usr/bin/env bash
# Installs the container engines the engine tests drive mini-run with (scripts/engines-test.sh):
# podman with conmon, containerd with ctr and its runc shim, Debian's docker (docker.io:
# dockerd 20.10, the docker client, docker-init from tini for `docker run --init`), crun and
# runc as the control runtimes, and `script` (util-linux) to give `-it` a terminal.
#
# Idempotent and quiet: when everything is installed already it only asks dpkg and exits.
# Otherwise it runs `apt-get update` once and installs what is missing, without the
# recommended packages (no fuse-overlayfs or buildah: the tests use native overlay), but
# with uidmap (newuidmap and newgidmap) and slirp4netns, which rootless podman needs for its
# user namespace and its default network (scripts/engines-rootless-test.sh). Installing
# needs root; when not root it uses sudo.
#
# docker.io's postinst would start a system-wide dockerd (which sets up docker0 and iptables
# rules) where there is no policy-rc.d to say no: one that refuses every start is put in
# place for the install and removed after it. tests/engines/docker.sh starts a dockerd of its
# own.
set -euo pipefail

PACKAGES=(
    podman conmon crun runc golang-github-containers-common uidmap slirp4netns
    # podman asks the runtime about checkpoints (`checkpoint --help`) only once it has found
    # a CRIU it accepts; without one it never asks (tests/engines/run.sh checks the answer)
    criu
    containerd
    docker.io tini
    util-linux busybox-static
)

# shellcheck source=scripts/apt-missing.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-missing.sh"

POLICY=/usr/sbin/policy-rc.d
as_root=()
((EUID == 0)) || as_root=(sudo)
own_policy=0
can_root() { ((EUID == 0)) || command -v sudo >/dev/null 2>&1; }
docker_io_installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Status}' docker.io 2>/dev/null)" == installed ]]
}
if [[ ! -e "$POLICY" ]] && can_root && ! docker_io_installed; then
    printf '#!/bin/sh\n# scripts/install-engines.sh: no service starts while it installs\nexit 101\n' |
        "${as_root[@]}" tee "$POLICY" >/dev/null
    "${as_root[@]}" chmod 0755 "$POLICY"
    own_policy=1
    trap '"${as_root[@]}" rm -f "$POLICY"' EXIT
fi
apt_install_missing install-engines "${PACKAGES[@]}"
if ((own_policy)); then
    "${as_root[@]}" rm -f "$POLICY"
    trap - EXIT
fi
