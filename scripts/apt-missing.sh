# shellcheck shell=bash
# Sourced by the install scripts: apt_install_missing NAME PACKAGE... installs the packages
# dpkg does not list as installed, with one `apt-get update`, and does nothing (but ask dpkg)
# when all are there. Installing needs root; when not root it uses sudo if there is one.
# NAME prefixes every message.
apt_install_missing() {
    local name=$1
    shift
    local package status missing=()
    for package in "$@"; do
        status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
        if [[ "$status" != "installed" ]]; then
            missing+=("$package")
        fi
    done
    if ((${#missing[@]} == 0)); then
        echo "$name: all $# packages are installed"
        return 0
    fi
    echo "$name: installing ${missing[*]}"
    local as_root=()
    if ((EUID != 0)); then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "$name: error: installing packages needs root and sudo is not available;" \
                "run this script as root" >&2
            return 1
        fi
        as_root=(sudo --preserve-env=DEBIAN_FRONTEND)
    fi
    export DEBIAN_FRONTEND=noninteractive
    # One installer at a time: scripts/test.sh runs runc's suite's set-up in the background
    # while other steps may install, and apt gives up at once on a lock another apt holds.
    # (The lock file is /run's: gone with the machine, held only while apt runs.)
    "${as_root[@]}" flock /run/mini-run-apt.lock sh -c \
        'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" >/dev/null' \
        apt-install "${missing[@]}"
    echo "$name: done"
}
