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
    containerd
    util-linux busybox-static
)

missing=()
for package in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    if [[ "$status" != "installed" ]]; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} == 0)); then
    echo "install-engines: all ${#PACKAGES[@]} packages are installed"
    exit 0
fi

echo "install-engines: installing ${missing[*]}"

as_root=()
if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
        as_root=(sudo --preserve-env=DEBIAN_FRONTEND)
    else
        echo "install-engines: error: installing packages needs root and sudo is not available" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-engines: done"
