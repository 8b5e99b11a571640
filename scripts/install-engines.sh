#!/usr/bin/env bash
# Installs the container engines the engine tests drive mini-run with (scripts/engines-test.sh):
# podman with conmon, containerd with ctr and its runc shim, crun and runc as the control
# runtimes, and `script` (util-linux) to give `podman run -it` a terminal.
#
# Idempotent and quiet: when everything is installed already it only asks dpkg and exits.
# Otherwise it runs `apt-get update` once and installs what is missing, without the
# recommended packages (no fuse-overlayfs, slirp4netns or buildah: the tests use native
# overlay and --network none). Installing needs root; when not root it uses sudo.
set -euo pipefail

PACKAGES=(
    podman conmon crun runc golang-github-containers-common uidmap
    # podman asks the runtime about checkpoints (`checkpoint --help`) only once it has found
    # a CRIU it accepts; without one it never asks (tests/engines/run.sh checks the answer)
    criu
    containerd
    util-linux busybox-static
)

# shellcheck source=scripts/apt-missing.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-missing.sh"
apt_install_missing install-engines "${PACKAGES[@]}"
