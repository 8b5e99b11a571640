#!/usr/bin/env bash
# Installs every package mini-run needs to build, test and run its example, with apt-get.
#
# Idempotent and quick: when everything is installed already it only asks dpkg and exits.
# Otherwise it runs `apt-get update` once and installs what is missing. Installing needs
# root; when not root it uses sudo if there is one.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(
    # build
    build-essential g++ cmake pkg-config git
    # libraries
    libseccomp-dev libcap-dev nlohmann-json3-dev libcli11-dev
    # tests
    catch2
    # the example rootfs and what the tests run
    busybox-static iproute2
    # style checks
    clang-format clang-tidy
)

missing=()
for package in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    if [[ "$status" != "installed" ]]; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} == 0)); then
    echo "bootstrap: all ${#PACKAGES[@]} packages are installed"
    exit 0
fi

echo "bootstrap: installing ${missing[*]}"

as_root=()
if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
        as_root=(sudo --preserve-env=DEBIAN_FRONTEND)
    else
        echo "bootstrap: error: installing packages needs root and sudo is not available;" \
            "run this script as root" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "bootstrap: done"
