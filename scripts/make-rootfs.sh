#!/usr/bin/env bash
# Builds the example busybox root filesystem: scripts/make-rootfs.sh [DEST]
#
# DEST defaults to rootfs-examples/busybox/rootfs. It gets a copy of the static busybox
# (package busybox-static), a relative symlink for every applet, so that every link
# resolves inside the rootfs, a minimal /etc (passwd, group, hosts) and the empty
# directories the OCI config mounts over.
#
# Idempotent: it builds into a temporary directory next to DEST and keeps the existing
# DEST when that is identical, so a rootfs in use by a running container stays put.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DEST=${1:-rootfs-examples/busybox/rootfs}
DEST=${DEST%/}
BUSYBOX=${BUSYBOX:-/bin/busybox}

if [[ ! -x "$BUSYBOX" ]]; then
    echo "make-rootfs: error: $BUSYBOX not found; install busybox-static (scripts/bootstrap.sh)" >&2
    exit 1
fi
ldd_output=$(LC_ALL=C ldd "$BUSYBOX" 2>&1 || true)
if [[ "$ldd_output" != *"not a dynamic executable"* ]]; then
    # A dynamically linked busybox would need its libraries inside the rootfs too.
    echo "make-rootfs: error: $BUSYBOX is not statically linked; install busybox-static" >&2
    exit 1
fi

mkdir -p "$(dirname "$DEST")"
DEST=$(cd "$(dirname "$DEST")" && pwd)/$(basename "$DEST")
BUILD=$(mktemp -d "$(dirname "$DEST")/.rootfs-build.XXXXXX")
trap 'rm -rf "$BUILD"' EXIT

# Directories. Mount points (proc, sys, dev) stay empty; tmp is world-writable and sticky.
mkdir -p "$BUILD"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,home/user,run,var/tmp}
chmod 0755 "$BUILD"
chmod 1777 "$BUILD/tmp" "$BUILD/var/tmp"
chmod 0700 "$BUILD/root"

cp "$BUSYBOX" "$BUILD/bin/busybox"
chmod 0755 "$BUILD/bin/busybox"

# One relative symlink per applet: usr/bin/env -> ../../bin/busybox, bin/sh -> busybox.
applets=0
while IFS= read -r applet; do
    [[ -z "$applet" || "$applet" == "bin/busybox" ]] && continue
    dir=$(dirname "$applet")
    if [[ "$dir" == "bin" ]]; then
        target=busybox
    elif [[ "$dir" == "." ]]; then
        target=bin/busybox
    else
        up=${dir//[^\/]/}       # one '/' per level below the first
        prefix=../${up//\//../} # one '../' per level
        target=${prefix}bin/busybox
    fi
    mkdir -p "$BUILD/$dir"
    ln -sfn "$target" "$BUILD/$applet"
    applets=$((applets + 1))
done < <("$BUSYBOX" --list-full)

cat >"$BUILD/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
cat >"$BUILD/etc/group" <<'GROUP'
root:x:0:
tty:x:5:
users:x:100:user
user:x:1000:
nogroup:x:65534:
GROUP
cat >"$BUILD/etc/hosts" <<'HOSTS'
127.0.0.1	localhost
::1	localhost
HOSTS
chmod 0644 "$BUILD"/etc/{passwd,group,hosts}
if ((EUID == 0)); then
    chown 1000:1000 "$BUILD/home/user"
fi

# Every link must resolve to the rootfs's own busybox, never to the host's.
if bad=$(find "$BUILD" -type l -exec realpath -m {} + | grep -vxF "$BUILD/bin/busybox"); then
    echo "make-rootfs: error: links resolving outside the rootfs's busybox: $bad" >&2
    exit 1
fi

manifest() {
    (cd "$1" && find . -printf '%y %m %p %l\n' | LC_ALL=C sort)
}

if [[ -d "$DEST" ]] && [[ "$(manifest "$DEST")" == "$(manifest "$BUILD")" ]] &&
    diff -r --no-dereference -q "$DEST" "$BUILD" >/dev/null 2>&1; then
    echo "make-rootfs: $DEST is up to date ($applets applets)"
    exit 0
fi

if [[ -e "$DEST" ]]; then
    OLD=$(mktemp -d "$(dirname "$DEST")/.rootfs-old.XXXXXX")
    mv "$DEST" "$OLD/"
    mv "$BUILD" "$DEST"
    rm -rf "$OLD"
else
    mv "$BUILD" "$DEST"
fi
echo "make-rootfs: built $DEST (busybox $("$DEST/bin/busybox" | head -n1 | awk '{print $2}'), $applets applets)"
