#!/usr/bin/env bash
# runc's own integration suite against mini-run: scripts/runc-suite.sh [OPTIONS] [FILE.bats...]
#
#   --runtime PATH     the runtime under test (default build/mini-run)
#   --compare RUNTIME  also run the suite with RUNTIME (a path, a name in PATH, or
#                      runc-1.3.6: runc built from the suite's own source, see 2.) and show both
#   --runc-version V   whose suite: 1.3.6 (default, Debian unstable's) or 1.1.5 (bookworm's)
#   --dir DIR          scratch directory (default /var/tmp/mini-run-runc-suite), outside the repo
#   --timeout SECONDS  per-test timeout (default 120)
#   --jobs N           tests of a file run N at a time (default 1), each still alone in its
#                      namespaces with a TMPDIR of its own; but not in its own cgroups: tests
#                      that name the same container (test_busybox) without a cgroupsPath
#                      share /sys/fs/cgroup/*/ID and disturb each other: not for CI
#   --per-test         one bats run per test (each alone in its namespaces) instead of one
#                      per file (the default, as runc's CI runs its files)
#   --no-check         report only; do not compare with the expected failures
#   --prepare          steps 1 to 3 only (source, helpers, images), for a later run to find
#                      them done; needs no runtime (scripts/test.sh starts it early)
#   --rootless         run the suite as an unprivileged user, as runc's CI does (see below)
#   --rootless-features F  ROOTLESS_FEATURES for --rootless (default "idmap"; "" = none)
#
# On a fresh Debian 12 machine, as root, it
#   1. gets runc's source and what builds its helpers, with apt in a private view under DIR
#      (its own sources and lists; the host's apt configuration is not changed, and nothing
#      of unstable's is installed on the host): nothing of runc's is in this repo.
#      1.3.6: `apt-get source runc=1.3.6+ds1-1` from Debian unstable; Go (the
#      golang-1.NN-go that unstable's golang-go depends on) and the Go libraries the source
#      builds with (golang-*-dev, source trees under /usr/share/gocode: its Build-Depends
#      and their Depends) `apt-get download`ed and unpacked (`dpkg-deb -x`) into
#      DIR/runc-1.3.6/, kept there for the next run (about 10 s of apt, then the builds).
#      1.1.5: `apt-get source runc` and `apt-get build-dep runc` from bookworm (a deb-src
#      twin of the host's own entries), Go 1.19 and the libraries installed on the host;
#   2. builds the suite's helper programs ("make test-binaries": tests/cmd/recvtty,
#      sd-helper, seccompagent, fs-idmap, pidfd-kill, remap-rootfs; 1.1.5: contrib/cmd/...),
#      offline, GO111MODULE=off against those libraries; with --compare runc-1.3.6, runc
#      itself, the same way, into DIR/runc-1.3.6/usr/sbin/runc (Debian unstable's binary
#      package wants glibc 2.38);
#   3. gives the suite its images without a download: a busybox image from busybox-static
#      with a docker-library busybox's passwd and group, and a small Debian image from this
#      host's own sh, bash, grep, ldconfig, findmnt, stat, ionice, chrt and their libraries;
#   4. runs bats once per file, under `script` so that the tests have a terminal (as runc's
#      CI does), TAP output, each file in a PID and mount namespace of its own, with a
#      timeout of 300 s plus 10 s a test; a file whose run ends
#      without a result for every test (a timeout, a crash) is run again one test at a time,
#      each in namespaces of its own with the per-test timeout (--per-test: always so;
#      starting bats and the suite's helpers once per test cost about 2 s a test);
#   5. prints a per-file table and the totals, and fails when a test fails that is not in
#      tests/runc-suite/expected-failures-X.Y (X.Y: 1.3 or 1.1; one line each, with the
#      reason).
# Logs: DIR/results/<runtime>/<file>.tap.
#
# --rootless: runc's tests/rootless.sh, for this machine. It creates an unprivileged user of
# its own (useradd -m, /etc/subuid and /etc/subgid ranges, /run/user/UID), gives it a copy
# of each runtime, runs every test as that user (setpriv, XDG_RUNTIME_DIR set) with
# ROOTLESS_FEATURES=idmap (newuidmap/newgidmap and the ranges; runc's "cgroup" feature needs
# cgroups the user may write, and this machine has cgroup v1 only, with no systemd to
# delegate a cgroup v2 subtree, so it is left out), compares with
# tests/runc-suite/expected-failures-rootless-X.Y, and removes the user and its files at the
# end. Logs: DIR/results/rootless-<runtime>/<file>.tap.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)

RUNTIME=build/mini-run
RUNC_VERSION=1.3.6
COMPARE=""
DIR=/var/tmp/mini-run-runc-suite
TEST_TIMEOUT=120
JOBS=1
PER_TEST=0
CHECK=1
PREPARE=0
ROOTLESS=0
RL_FEATURES=idmap
FILES=()
while (($#)); do
    case $1 in
    --runtime) RUNTIME=$2; shift 2 ;;
    --compare) COMPARE=$2; shift 2 ;;
    --runc-version) RUNC_VERSION=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --timeout) TEST_TIMEOUT=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --per-test) PER_TEST=1; shift ;;
    --no-check) CHECK=0; shift ;;
    --prepare) PREPARE=1; shift ;;
    --rootless) ROOTLESS=1; shift ;;
    --rootless-features) ROOTLESS=1; RL_FEATURES=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "runc-suite: unknown option $1" >&2; exit 2 ;;
    *) FILES+=("${1%.bats}.bats"); shift ;;
    esac
done
# The expected failures of runc X.Y's suite: tests/runc-suite/expected-failures[-rootless]-X.Y
EXPECTED=$REPO/tests/runc-suite/expected-failures
((ROOTLESS == 0)) || EXPECTED=$REPO/tests/runc-suite/expected-failures-rootless
EXPECTED=$EXPECTED-${RUNC_VERSION%.*}

if ((EUID != 0)); then
    echo "runc-suite: not root: skipped (runc's suite runs containers as root)"
    exit 0
fi

label_of() {
    if ((ROOTLESS == 0)); then
        basename "$1"
    elif [[ "$RL_FEATURES" == idmap ]]; then
        echo "rootless-$(basename "$1")"
    else
        echo "rootless-${RL_FEATURES:-none}-$(basename "$1")"
    fi
}
resolve_runtime() {
    local r=$1
    if [[ "$r" == */* ]]; then
        [[ -x "$r" ]] || { echo "runc-suite: $r is not an executable" >&2; return 1; }
        readlink -f "$r"
    else
        command -v "$r" || { echo "runc-suite: $r not found in PATH" >&2; return 1; }
    fi
}
((PREPARE)) || RUNTIME=$(resolve_runtime "$RUNTIME")

# --- 1. runc's source and the packages the suite uses ------------------------------------
# shellcheck source=scripts/apt-missing.sh
source scripts/apt-missing.sh

mkdir -p "$DIR"
DIR=$(readlink -f "$DIR")
case "$DIR/" in "$REPO"/*) echo "runc-suite: --dir must be outside the repository" >&2; exit 2 ;; esac
SUITE_DIR=$DIR/runc-$RUNC_VERSION

export DEBIAN_FRONTEND=noninteractive
apt_install_missing runc-suite bats jq gawk bsdutils coreutils util-linux gcc busybox-static iproute2 \
    dpkg-dev pkg-config libseccomp-dev

# apt with a private view of the sources and package lists of its own under APT_DIR, so that
# the host's apt configuration and lists stay as they are. Only `apt-get source` and
# `apt-get download` use it (and, for 1.1.5, build-dep from the host's own suites): nothing
# of unstable's is ever installed on the host.
APT_DIR=""
private_apt() {
    apt-get -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$APT_DIR/sources.list.d" \
        -o Dir::State::Lists="$APT_DIR/lists" -o APT::Sandbox::User=root "$@"
}
private_apt_cache() {
    apt-cache -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$APT_DIR/sources.list.d" \
        -o Dir::State::Lists="$APT_DIR/lists" "$@"
}
new_private_apt() {
    APT_DIR=$1
    rm -rf "$APT_DIR"
    mkdir -p "$APT_DIR/sources.list.d" "$APT_DIR/lists/partial"
}
# For 1.1.5: the host's own Debian entries plus a deb-src twin of each.
prepare_host_twin_apt() {
    new_private_apt "$1"
    local parts=/etc/apt/sources.list.d found=0 file
    for file in "$parts"/*.sources; do
        [[ -f "$file" ]] && grep -q '^Types: deb$' "$file" && grep -q 'debian' "$file" || continue
        cp "$file" "$APT_DIR/sources.list.d/"
        sed 's/^Types: deb$/Types: deb-src/' "$file" >"$APT_DIR/sources.list.d/src-$(basename "$file")"
        found=1
    done
    for file in /etc/apt/sources.list "$parts"/*.list; do
        [[ -f "$file" ]] && grep -q '^deb .*debian' "$file" || continue
        grep '^deb .*debian' "$file" >"$APT_DIR/sources.list.d/$(basename "$file" .list).list"
        sed -n 's/^deb \(.*debian.*\)$/deb-src \1/p' "$file" \
            >"$APT_DIR/sources.list.d/src-$(basename "$file" .list).list"
        found=1
    done
    if ((found == 0)); then
        echo "runc-suite: no Debian apt sources found to fetch runc's source from" >&2
        return 1
    fi
    echo "runc-suite: apt-get update (a private list with deb-src entries, in $APT_DIR)"
    private_apt update -qq
}
# For 1.3.6: Debian unstable only (deb and deb-src), where runc 1.3.6's source, the Go
# libraries it builds with, and the Go that builds them are.
prepare_unstable_apt() {
    new_private_apt "$1"
    cat >"$APT_DIR/sources.list.d/mini-run-runc-suite.sources" <<'EOF_SOURCES'
Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: unstable
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF_SOURCES
    echo "runc-suite: apt-get update (a private list of Debian unstable, in $APT_DIR)"
    private_apt update -qq
}

# setup_1_1: runc 1.1.5's suite, bookworm's own: its source with `apt-get source`, the Go
# libraries and Go (1.19) installed on the host with `apt-get build-dep`; the helpers built
# with GO111MODULE=off against /usr/share/gocode.
setup_1_1() {
    apt_install_missing runc-suite golang-go golang-github-opencontainers-runc-dev runc
    SRC=$(find "$SUITE_DIR/src" -maxdepth 1 -type d -name 'runc-*' 2>/dev/null | head -n1 || true)
    if [[ -z "$SRC" || ! -f "$SRC/tests/integration/helpers.bash" ]]; then
        prepare_host_twin_apt "$SUITE_DIR/apt"
        rm -rf "$SUITE_DIR/src"
        mkdir -p "$SUITE_DIR/src"
        echo "runc-suite: apt-get build-dep runc; apt-get source runc (bookworm)"
        private_apt build-dep -y -qq runc >/dev/null
        (cd "$SUITE_DIR/src" && private_apt source -qq runc >/dev/null 2>&1) ||
            { echo "runc-suite: apt-get source runc failed" >&2; exit 1; }
        SRC=$(find "$SUITE_DIR/src" -maxdepth 1 -type d -name 'runc-*' | head -n1)
    fi
    GO_BIN=$(dirname "$(readlink -f "$(command -v go)")")
    TESTBINS=()
    local cmd
    for cmd in recvtty sd-helper seccompagent; do
        TESTBINS+=("$SRC/contrib/cmd/$cmd/$cmd")
        [[ -x "$SRC/contrib/cmd/$cmd/$cmd" ]] && continue
        echo "runc-suite: go build contrib/cmd/$cmd"
        (cd "$SRC/contrib/cmd/$cmd" &&
            GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE=$SUITE_DIR/gocache \
                GOPROXY=off go build -tags seccomp -o "$cmd" .)
    done
}

# setup_1_3: runc 1.3.6's suite, from Debian unstable, with nothing installed on the host:
#   - the source, `apt-get source runc=1.3.6+ds1-1` (Debian's patches applied); it has no
#     vendor tree ("+ds1"): Debian builds it against its Go library packages;
#   - those packages (golang-*-dev, Architecture: all: source trees under
#     /usr/share/gocode), the Build-Depends of that source and, recursively, their
#     golang-*-dev Depends, `apt-get download`ed and unpacked with `dpkg-deb -x` into
#     SUITE_DIR/gocode;
#   - Go: the golang-1.NN-go and golang-1.NN-src that unstable's golang-go depends on,
#     unpacked into SUITE_DIR/go (its binaries are static; no libc of unstable's). Not
#     bookworm-backports' Go 1.23, which go.mod names: unstable's cilium/ebpf (0.22) uses
#     runtime.AddCleanup, Go 1.24's;
#   - the helpers (tests/cmd/*: recvtty, sd-helper, seccompagent, fs-idmap, pidfd-kill,
#     remap-rootfs; "make test-binaries") built offline (GO111MODULE=off, GOPROXY=off,
#     GOPATH = the runc source linked in at src/github.com/opencontainers/runc, then
#     SUITE_DIR/gocode) into tests/cmd/_bin, where helpers.bash looks;
#   - runc itself (for --compare runc-1.3.6) only when asked for: Debian's binary package
#     wants glibc 2.38, so it is built the same way, into SUITE_DIR/usr/sbin/runc.
# Kept in SUITE_DIR: a second run goes straight to the tests (SUITE_DIR/.ready).
go_env() {
    env GOROOT="$GOROOT_DIR" PATH="$GOROOT_DIR/bin:$PATH" GO111MODULE=off GOFLAGS= GOPROXY=off \
        GOTOOLCHAIN=local GOPATH="$SUITE_DIR/gopath:$SUITE_DIR/gocode/usr/share/gocode" \
        GOCACHE="$SUITE_DIR/gocache" CGO_ENABLED=1 "$@"
}
setup_1_3() {
    SRC=$SUITE_DIR/src/runc-$RUNC_VERSION
    local ready=$SUITE_DIR/.ready
    if [[ ! -f "$ready" || ! -f "$SRC/tests/integration/helpers.bash" ]]; then
        rm -rf "$SUITE_DIR"
        mkdir -p "$SUITE_DIR/src" "$SUITE_DIR/debs" "$SUITE_DIR/go" "$SUITE_DIR/gocode"
        prepare_unstable_apt "$SUITE_DIR/apt"
        echo "runc-suite: apt-get source runc=$DEBIAN_VERSION (unstable)"
        (cd "$SUITE_DIR/src" && private_apt source -qq "runc=$DEBIAN_VERSION" >/dev/null 2>&1) ||
            { echo "runc-suite: apt-get source runc=$DEBIAN_VERSION failed (no longer in unstable?)" >&2; exit 1; }
        mv "$(find "$SUITE_DIR/src" -maxdepth 1 -type d -name 'runc-*' | head -n1)" "$SRC"
        # The Build-Depends of that version, and their golang-*-dev Depends, recursively.
        local todo=() seen=" " pkg golang
        mapfile -t todo < <(private_apt_cache showsrc runc | awk -v v="$DEBIAN_VERSION" '
            /^Package:/ { keep = 0 } /^Version:/ { keep = ($2 == v) }
            keep && /^Build-Depends:/ { sub(/^Build-Depends: */, ""); n = split($0, d, /, */)
                for (i = 1; i <= n; i++) { split(d[i], w, " "); if (w[1] ~ /^golang-.*-dev$/) print w[1] } }' |
            sort -u)
        ((${#todo[@]} > 0)) || { echo "runc-suite: no Build-Depends found for runc $DEBIAN_VERSION" >&2; exit 1; }
        # One apt-cache call per level of the tree: each call reads the whole cache.
        while ((${#todo[@]} > 0)); do
            for pkg in "${todo[@]}"; do seen+="$pkg "; done
            mapfile -t todo < <(private_apt_cache depends --no-recommends --no-suggests \
                --no-conflicts --no-breaks --no-replaces --no-enhances "${todo[@]}" 2>/dev/null |
                sed -n 's/^ *|\{0,1\}Depends: //p' | grep -E '^golang-.*-dev$' | sort -u |
                while IFS= read -r dep; do [[ "$seen" == *" $dep "* ]] || echo "$dep"; done)
        done
        golang=$(private_apt_cache depends golang-go 2>/dev/null | sed -n 's/^ *Depends: \(golang-1\.[0-9]*-go\)$/\1/p' | head -n1)
        [[ -n "$golang" ]] || { echo "runc-suite: unstable's golang-go depends on no golang-1.NN-go" >&2; exit 1; }
        # shellcheck disable=SC2086 # $seen: the package names, one word each
        echo "runc-suite: apt-get download $golang ${golang%-go}-src and $(wc -w <<<"$seen") Go library packages (unstable)"
        # shellcheck disable=SC2086
        (cd "$SUITE_DIR/debs" && private_apt download -qq "$golang" "${golang%-go}-src" $seen >/dev/null)
        for pkg in "$SUITE_DIR/debs/${golang}"_*.deb "$SUITE_DIR/debs/${golang%-go}-src"_*.deb; do
            dpkg-deb -x "$pkg" "$SUITE_DIR/go"
        done
        for pkg in "$SUITE_DIR"/debs/golang-*-dev_*.deb; do
            dpkg-deb -x "$pkg" "$SUITE_DIR/gocode"
        done
        mkdir -p "$SUITE_DIR/gopath/src/github.com/opencontainers"
        ln -s "$SRC" "$SUITE_DIR/gopath/src/github.com/opencontainers/runc"
        (cd "$SUITE_DIR/debs" && ls) >"$SUITE_DIR/packages"
        rm -rf "$SUITE_DIR/debs" "$SUITE_DIR/apt"
        touch "$ready"
    fi
    GOROOT_DIR=$(find "$SUITE_DIR/go/usr/lib" -maxdepth 1 -type d -name 'go-1.*' | head -n1)
    GO_BIN=$GOROOT_DIR/bin
    local runc_src=$SUITE_DIR/gopath/src/github.com/opencontainers/runc cmd
    TESTBINS=()
    for cmd in recvtty sd-helper seccompagent fs-idmap pidfd-kill remap-rootfs; do
        TESTBINS+=("$SRC/tests/cmd/_bin/$cmd")
        [[ -x "$SRC/tests/cmd/_bin/$cmd" ]] && continue
        echo "runc-suite: go build tests/cmd/$cmd ($("$GO_BIN/go" version | cut -d' ' -f3))"
        (cd "$runc_src" && go_env go build -tags seccomp -o "tests/cmd/_bin/$cmd" "./tests/cmd/$cmd")
    done
    if [[ "$COMPARE" == "runc-$RUNC_VERSION" && ! -x "$SUITE_DIR/usr/sbin/runc" ]]; then
        echo "runc-suite: go build runc $RUNC_VERSION (for --compare)"
        mkdir -p "$SUITE_DIR/usr/sbin"
        (cd "$runc_src" && go_env go build -trimpath -buildmode=pie -tags "seccomp urfave_cli_no_docs" \
            -ldflags "-X main.gitCommit=debian-$DEBIAN_VERSION -X main.version=$RUNC_VERSION" \
            -o "$SUITE_DIR/usr/sbin/runc.tmp" . && mv "$SUITE_DIR/usr/sbin/runc.tmp" "$SUITE_DIR/usr/sbin/runc")
    fi
}

case $RUNC_VERSION in
1.1.5) setup_1_1 ;;
1.3.6) DEBIAN_VERSION=1.3.6+ds1-1; setup_1_3 ;;
*) echo "runc-suite: --runc-version: 1.3.6 (the default) or 1.1.5" >&2; exit 2 ;;
esac
VERSION=$(cat "$SRC/VERSION")
# get-images.sh, which helpers.bash runs each time a test file is loaded (three times a test),
# asks `go env GOARCH`; a stand-in answers it without starting Go (and passes anything else on).
TEST_GO_BIN=$SUITE_DIR/test-bin
mkdir -p "$TEST_GO_BIN"
cat >"$TEST_GO_BIN/go.new.$$" <<EOF_GO
#!/bin/sh
# runc-suite.sh: get-images.sh's \`go env GOARCH\`, answered at once
[ "\$*" = "env GOARCH" ] && { echo $("$GO_BIN/go" env GOARCH); exit 0; }
exec "$GO_BIN/go" "\$@"
EOF_GO
chmod 0755 "$TEST_GO_BIN/go.new.$$"
mv "$TEST_GO_BIN/go.new.$$" "$TEST_GO_BIN/go"
echo "runc-suite: runc $VERSION's suite from $SRC"
[[ "$COMPARE" != "runc-$RUNC_VERSION" ]] || COMPARE=$SUITE_DIR/usr/sbin/runc
[[ -z "$COMPARE" ]] || COMPARE=$(resolve_runtime "$COMPARE")

# One fix to the suite's own harness, the same for every runtime: setup_seccompagent starts
# the seccomp agent in the background and returns at once, and "SCMP_ACT_NOTIFY no
# seccompagent" calls teardown_seccompagent right after setup. When the agent has not yet
# written its pid file (it does so just before it listens), the teardown kills nothing, the
# agent then listens, the runtime connects, and the test fails for runc as for mini-run.
# The setup now waits (up to 5 s) for the agent's socket (the agent writes its pid file
# before it listens). (A failure of that test in CI was first put down to this race; the
# one that remained was mini-run's: see clone_the_init in runtime/create.cpp.)
# Idempotent: the source tree is kept between runs.
HELPERS=$SRC/tests/integration/helpers.bash
if ! grep -q 'mini-run runc-suite.sh: wait for the agent' "$HELPERS"; then
    awk '{ print }
        /-pid-file "\$BATS_TMPDIR\/seccompagent.pid" &\) &$/ {
            print "\t# mini-run runc-suite.sh: wait for the agent (see scripts/runc-suite.sh)"
            print "\tlocal i; for ((i = 0; i < 100; i++)); do [ -S \"$SECCCOMP_AGENT_SOCKET\" ] && break; sleep 0.05; done"
            found = 1
        }
        END { exit found ? 0 : 1 }' "$HELPERS" >"$HELPERS.new" ||
        { echo "runc-suite: setup_seccompagent not found in $HELPERS" >&2; rm -f "$HELPERS.new"; exit 1; }
    mv "$HELPERS.new" "$HELPERS"
fi

# --- 3. the images ----------------------------------------------------------------------
TESTDATA=$SRC/tests/integration/testdata
make_busybox_image() {
    # A docker-library busybox: every applet in /bin, buildroot's passwd and group, and no
    # /proc or /sys (the runtime makes those mount points; mask.bats puts symlinks there).
    local out=$1 tmp
    tmp=$(mktemp -d "$DIR/busybox.XXXXXX")
    chmod 0755 "$tmp"
    mkdir -p "$tmp"/{bin,dev,etc,home,root,tmp,usr/sbin,var/spool/mail,var/www}
    chmod 1777 "$tmp/tmp"
    chmod 0700 "$tmp/root"
    cp /bin/busybox "$tmp/bin/busybox"
    local a
    for a in $(/bin/busybox --list); do
        [[ "$a" == busybox ]] || ln "$tmp/bin/busybox" "$tmp/bin/$a"
    done
    cat >"$tmp/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
EOF
    cat >"$tmp/etc/group" <<'EOF'
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
lp:x:7:
mail:x:8:
kmem:x:9:
wheel:x:10:root
cdrom:x:11:
dialout:x:18:
floppy:x:19:
video:x:28:
audio:x:29:
tape:x:32:
www-data:x:33:
operator:x:37:
utmp:x:43:
plugdev:x:46:
staff:x:50:
lock:x:54:
netdev:x:82:
users:x:100:
nogroup:x:65534:
EOF
    echo "root:*:10933:0:99999:7:::" >"$tmp/etc/shadow"
    chmod 0640 "$tmp/etc/shadow"
    tar -C "$tmp" --numeric-owner -cJf "$out.$$" .
    mv "$out.$$" "$out"
    rm -rf "$tmp"
}
make_debian_image() {
    # What the tests use of Debian's image (hooks.bats, hooks_so.bats, idmap.bats, ioprio.bats,
    # mounts_propagation.bats, mounts_recursive.bats, scheduler.bats): sh, bash, grep,
    # ldconfig, stat, touch, findmnt, ionice, chrt... and their libraries.
    local out=$1 tmp f lib
    tmp=$(mktemp -d "$DIR/debian.XXXXXX")
    chmod 0755 "$tmp"
    mkdir -p "$tmp"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,etc/ld.so.conf.d,dev,proc,sys,tmp,root,var/cache/ldconfig}
    ln -s usr/bin "$tmp/bin"
    ln -s usr/sbin "$tmp/sbin"
    ln -s usr/lib "$tmp/lib"
    ln -s usr/lib64 "$tmp/lib64"
    chmod 1777 "$tmp/tmp"
    for f in /usr/bin/dash /usr/bin/bash /usr/bin/grep /usr/sbin/ldconfig /usr/bin/cat /usr/bin/ls \
        /usr/bin/stat /usr/bin/touch /usr/bin/findmnt /usr/bin/ionice /usr/bin/chrt /usr/bin/sleep \
        /usr/bin/mkdir /usr/bin/id /usr/bin/echo /usr/bin/true /usr/bin/false /usr/bin/env; do
        cp "$f" "$tmp$f"
        for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
            # Under the name the loader asks for (the soname ldd shows), not the file's own.
            local dest
            dest=$tmp/usr/lib/x86_64-linux-gnu/$(basename "$lib")
            case $lib in */ld-linux-x86-64.so.2) dest=$tmp/usr/lib64/ld-linux-x86-64.so.2 ;; esac
            [[ -e "$dest" ]] || cp "$(readlink -f "$lib")" "$dest"
        done
    done
    ln -s dash "$tmp/usr/bin/sh"
    cp /etc/ld.so.conf "$tmp/etc/"
    cp /etc/ld.so.conf.d/*.conf "$tmp/etc/ld.so.conf.d/" 2>/dev/null || true
    echo "root:x:0:0:root:/root:/bin/sh" >"$tmp/etc/passwd"
    echo "root:x:0:" >"$tmp/etc/group"
    tar -C "$tmp" --numeric-owner -cJf "$out.$$" .
    mv "$out.$$" "$out"
    rm -rf "$tmp"
}
ARCH=$("$GO_BIN/go" env GOARCH)
# Made again when their recipe above changes (or busybox does), each in a file of its own that
# then replaces the old one: a run of the suite going on meanwhile never misses an image.
IMAGES_STAMP="$( (declare -f make_busybox_image make_debian_image; cat /bin/busybox) | sha256sum | cut -c1-16)"
if [[ "$(cat "$TESTDATA/.mini-run-images" 2>/dev/null)" != "$IMAGES_STAMP" ||
    ! -f "$TESTDATA/busybox-$ARCH.tar.xz" || ! -f "$TESTDATA/debian-$ARCH.tar.xz" ]]; then
    make_busybox_image "$TESTDATA/busybox-$ARCH.tar.xz"
    make_debian_image "$TESTDATA/debian-$ARCH.tar.xz"
fi
echo "$IMAGES_STAMP" >"$TESTDATA/.mini-run-images"
if ((PREPARE)); then
    echo "runc-suite: prepared: runc $VERSION's suite, its helpers and images in $DIR"
    exit 0
fi

# --- 4. run -----------------------------------------------------------------------------
# criu 3.17 (Debian's) fails `criu check` on this kernel, so a checkpoint could only fail,
# with runc as with mini-run. Where that is so, the tests do not see it: in each test's own
# mount namespace, its directory is overlaid with a layer holding a whiteout for it, and
# checkpoint.bats skips ("requires criu") as on a machine without criu. (podman's engine
# tests want it installed: scripts/install-engines.sh.)
CRIU_TO_HIDE=""
HIDE_LAYER=$DIR/hide-criu
if criu_path=$(command -v criu) && ! criu check >/dev/null 2>&1; then
    CRIU_TO_HIDE=$(readlink -f "$criu_path")
    mkdir -p "$HIDE_LAYER"
    # overlayfs's whiteout; a run beside this one (root and rootless) may make it first
    [[ -c "$HIDE_LAYER/criu" ]] || mknod "$HIDE_LAYER/criu" c 0 0 2>/dev/null || [[ -c "$HIDE_LAYER/criu" ]]
    echo "runc-suite: $criu_path fails \`criu check\` on this kernel: hidden from the tests"
fi
ENTER=$DIR/enter-test-namespace.sh
# Written aside and renamed: a run going on beside this one uses it meanwhile.
cat >"$ENTER.$$" <<'EOF_ENTER'
#!/bin/sh
# Runs in the test's own mount namespace (runc-suite.sh): whatever it mounts stays there.
# Its stdin: a FIFO it holds open for writing too, so that it never ends. `script` gives
# the test a terminal; were its stdin /dev/null, at the end of it script would send an
# end-of-file down that terminal, and `runc run`, whose stdin that terminal is, would
# pass on a NUL ("^@") that starts the output the tests compare (as runc's CI, whose
# stdin stays open, never sees).
if [ -n "$STDIN_FIFO" ]; then
    exec 0<>"$STDIN_FIFO"
fi
if [ -n "$CRIU_TO_HIDE" ]; then
    dir=$(dirname "$CRIU_TO_HIDE")
    mount -t overlay -o "lowerdir=$HIDE_LAYER:$dir" runc-suite-hide-criu "$dir" || exit 1
fi
exec "$@"
EOF_ENTER
chmod 0755 "$ENTER.$$"
mv "$ENTER.$$" "$ENTER"

# --rootless: the unprivileged user, as in runc's tests/rootless.sh (enable_idmap). Its
# name is this script's own; a user of that name left by an interrupted run is removed first.
RL_USER=minirun-rlsuite
RL_DIR=$DIR/rootless
RL_UID=""
AS_USER=()
remove_rootless_user() {
    if id -u "$RL_USER" >/dev/null 2>&1; then
        local uid
        uid=$(id -u "$RL_USER")
        userdel -r "$RL_USER" >/dev/null 2>&1 || userdel -f -r "$RL_USER" >/dev/null 2>&1 || true
        rm -rf "/run/user/$uid"
    fi
    local f
    for f in /etc/subuid /etc/subgid; do
        [[ -f "$f" ]] && grep -q "^$RL_USER:" "$f" && sed -i "/^$RL_USER:/d" "$f"
    done
    rm -rf "$RL_DIR"
}
# A range above every range in /etc/subuid and /etc/subgid: no other user's ids.
free_subid_start() {
    cat /etc/subuid /etc/subgid 2>/dev/null |
        awk -F: 'NF >= 3 && $3 > 0 { e = $2 + $3; if (e > m) m = e } END { m = (m < 100000 ? 100000 : m); print int((m + 65535) / 65536) * 65536 }'
}
# rootless_runtime PATH: a copy of the runtime the user may execute; prints its path.
rootless_runtime() {
    local dest
    dest=$RL_DIR/bin/$(label_of "$1")-$(printf '%s' "$1" | sha256sum | cut -c1-8)
    mkdir -p "$dest"
    chmod 0755 "$RL_DIR" "$RL_DIR/bin" "$dest"
    install -m 0755 "$1" "$dest/$(basename "$1")"
    echo "$dest/$(basename "$1")"
}
setup_rootless_user() {
    remove_rootless_user
    trap remove_rootless_user EXIT
    useradd -m -s /bin/bash "$RL_USER"
    RL_UID=$(id -u "$RL_USER")
    local gid start
    gid=$(id -g "$RL_USER")
    start=$(free_subid_start)
    RL_UIDMAP_START=$start RL_GIDMAP_START=$((start + 65536))
    echo "$RL_USER:$RL_UIDMAP_START:65536" >>/etc/subuid
    echo "$RL_USER:$RL_GIDMAP_START:65536" >>/etc/subgid
    install -d -m 0700 -o "$RL_UID" -g "$gid" "/run/user/$RL_UID"
    mkdir -p "$RL_DIR"
    chmod 0755 "$RL_DIR"
    # bats' temporary directories (TMPDIR): files the containers' mapped users leave there
    # go with it at the end. 0755: the tests' other users cross it (userns.bats).
    install -d -m 0755 -o "$RL_UID" -g "$gid" "$RL_DIR/tmp"
    # cwd.bats: a directory the user cannot enter, owned by the container's uid AUX_UID
    # (1000 is runc_rootless_idmap's containerID for the uid range).
    RL_AUX_UID=1024
    RL_AUX_DIR=$RL_DIR/aux
    install -d -m 0700 -o "$((RL_UIDMAP_START - 1000 + RL_AUX_UID))" "$RL_AUX_DIR"
    AS_USER=(setpriv --reuid="$RL_UID" --regid="$gid" --init-groups
        env -i PATH="$TEST_GO_BIN":/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
        HOME="$(getent passwd "$RL_USER" | cut -d: -f6)" USER="$RL_USER" LOGNAME="$RL_USER"
        TERM="${TERM:-xterm}" TMPDIR="$RL_DIR/tmp" XDG_RUNTIME_DIR="/run/user/$RL_UID"
        ROOTLESS_FEATURES="$RL_FEATURES"
        ROOTLESS_UIDMAP_START="$RL_UIDMAP_START" ROOTLESS_UIDMAP_LENGTH=65536
        ROOTLESS_GIDMAP_START="$RL_GIDMAP_START" ROOTLESS_GIDMAP_LENGTH=65536
        AUX_UID="$RL_AUX_UID" AUX_DIR="$RL_AUX_DIR")
    echo "runc-suite: rootless: user $RL_USER (uid $RL_UID), subuid $RL_UIDMAP_START, subgid $RL_GIDMAP_START, ROOTLESS_FEATURES=\"$RL_FEATURES\""
}
if ((ROOTLESS)); then
    setup_rootless_user
    RUNTIME=$(rootless_runtime "$RUNTIME")
    [[ -z "$COMPARE" ]] || COMPARE=$(rootless_runtime "$COMPARE")
fi

cd "$SRC/tests/integration"
if ((${#FILES[@]} == 0)); then
    mapfile -t FILES < <(ls -- *.bats)
fi

# The suite's test names, in file order.
test_names() { sed -nE 's/^@test "(.*)" \{$/\1/p' "$1"; }

# run_one RUNTIME FILE NAME: runs one test; prints its TAP result line (without the number)
# and its diagnostics. Each test runs alone, in a PID and mount namespace of its own: when
# it ends, or its timeout strikes, everything it started dies with the namespace's first
# process and every mount it made goes with the namespace. bats' own BATS_TEST_TIMEOUT
# cannot interrupt a test that waits on a hung runtime, so the timeout is ours. Its TMPDIR
# (bats' BATS_TMPDIR) is its own too, removed afterwards.
run_one() {
    local runtime=$1 file=$2 name=$3 re out status
    re="^$(sed 's/[][\.*^$(){}+?|/]/\\&/g' <<<"$name")\$"
    status=0
    out=$(in_test_namespaces "$runtime" "$TEST_TIMEOUT" --filter "$re" "$file") || status=$?
    local result
    result=$(grep -E '^(not )?ok 1 ' <<<"$out" | head -n1 | sed -E 's/^((not )?ok) 1 /\1 /' || true)
    if [[ -z "$result" ]]; then
        if ((status == 124 || status == 137)); then
            result="not ok $name # timeout after ${TEST_TIMEOUT}s"
        else
            result="not ok $name # bats exited $status without a result"
        fi
    fi
    echo "$result"
    grep -vE '^(not )?ok 1 |^1\.\.1$' <<<"$out" | sed 's/^/# /; s/^# # /# /' || true
}

# run_file RUNTIME FILE COUNT: the whole file in one bats run (its TAP on stdout), in
# namespaces of its own, within 300 s plus 10 s a test (the slowest file, idmap.bats, takes
# about 140 s here); fails unless every one of the COUNT tests has a result line.
run_file() {
    local runtime=$1 file=$2 count=$3 out status=0
    out=$(in_test_namespaces "$runtime" "$((300 + 10 * count))" "$file") || status=$?
    echo "$out"
    (($(grep -cE '^(not )?ok [0-9]+ ' <<<"$out") == count))
}

# in_test_namespaces RUNTIME TIMEOUT BATS-ARGS...: bats, under `script`, in a PID and mount
# namespace of its own (as the unprivileged user with --rootless) with a TMPDIR of its own;
# prints its output without the terminal's carriage returns and exits with its status.
in_test_namespaces() {
    local runtime=$1 timeout=$2 tmp status=0
    shift 2
    local as_user=()
    if ((ROOTLESS == 0)); then
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/runc-suite-test.XXXXXX")
    else
        tmp=$(mktemp -d "$RL_DIR/tmp/test.XXXXXX")
        chown "$RL_UID" "$tmp"
        as_user=("${AS_USER[@]}" RUNC="$runtime" TMPDIR="$tmp")
    fi
    chmod 0755 "$tmp"
    mkfifo -m 0600 "$tmp/.stdin"
    PATH="$TEST_GO_BIN:$PATH" TMPDIR=$tmp RUNC=$runtime CRIU_TO_HIDE=$CRIU_TO_HIDE HIDE_LAYER=$HIDE_LAYER \
        STDIN_FIFO=$tmp/.stdin \
        timeout -k 5 "$timeout" \
        unshare --pid --fork --kill-child --mount --mount-proc "$ENTER" "${as_user[@]}" \
        script -qefc "bats --tap $(printf '%q ' "$@")" /dev/null 2>&1 |
        tr -d '\r' || status=$?
    rm -rf "$tmp"
    return "$status"
}

# run_suite RUNTIME LABEL: every test of every file; TAP into DIR/results/LABEL/FILE.tap.
# JOBS tests of a file at a time (--jobs), each still alone in its namespaces, with a
# TMPDIR of its own (the suite puts its seccomp agent's socket there); the cgroup
# directories the file's tests left are removed when the file is done.
run_suite() {
    local runtime=$1 label=$2 f name n began before
    local results=$DIR/results/$label
    rm -rf "$results"
    mkdir -p "$results"
    for f in "${FILES[@]}"; do
        local out=$results/${f%.bats}.tap parts
        began=$(date +%s)
        # Rootless tests make no cgroups here (cgroup v1, nothing delegated): a rootless run
        # leaves the cgroups alone, so that it may run beside a root one (scripts/test.sh).
        before=""
        ((ROOTLESS)) || before=$(find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort)
        mapfile -t names < <(test_names "$f")
        local whole=0
        if ((PER_TEST == 0 && JOBS == 1)); then
            if run_file "$runtime" "$f" "${#names[@]}" >"$out"; then
                whole=1
            else
                echo "runc-suite: $f: not every test has a result in one run; again, one at a time"
            fi
        fi
        if ((whole == 0)); then
            parts=$(mktemp -d "$DIR/parts.XXXXXX")
            n=0
            for name in "${names[@]}"; do
                n=$((n + 1))
                while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
                run_one "$runtime" "$f" "$name" | sed -E "1s/^((not )?ok) /\1 $n /" >"$parts/$n" &
            done
            wait
            echo "1..${#names[@]}" >"$out"
            for ((n = 1; n <= ${#names[@]}; n++)); do cat "$parts/$n" >>"$out"; done
            rm -rf "$parts"
        fi
        if ((ROOTLESS == 0)); then
            comm -13 <(echo "$before") <(find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort) |
                sort -r | while IFS= read -r dir; do rmdir "$dir" 2>/dev/null || true; done
        fi
        printf '%-28s %s (%ss)\n' "$f" "$(summarize "$out")" "$(($(date +%s) - began))"
    done
}

# summarize TAP: "pass P fail F skip S"
summarize() {
    local p f s
    p=$(grep -cE '^ok [0-9]+ ' "$1" | head -n1 || true)
    s=$(grep -cE '^ok [0-9]+ .*# skip' "$1" || true)
    f=$(grep -cE '^not ok [0-9]+ ' "$1" || true)
    echo "pass $((p - s)) fail $f skip $s"
}

# failures LABEL: "file.bats: test name" for every failed test.
failures() {
    local t
    for t in "$DIR/results/$1"/*.tap; do
        sed -nE 's/^not ok [0-9]+ (.*)$/\1/p' "$t" | sed -E 's/ # (timeout after|bats exited) .*$//' |
            while IFS= read -r name; do echo "$(basename "${t%.tap}").bats: $name"; done
    done
}

totals() {
    local p=0 f=0 s=0 t line
    for t in "$DIR/results/$1"/*.tap; do
        read -r _ a _ b _ c <<<"$(summarize "$t")"
        p=$((p + a)) f=$((f + b)) s=$((s + c))
    done
    echo "pass $p fail $f skip $s"
}


echo "runc-suite: $RUNTIME (per-test timeout ${TEST_TIMEOUT}s)"
run_suite "$RUNTIME" "$(label_of "$RUNTIME")"
if [[ -n "$COMPARE" ]]; then
    echo
    echo "runc-suite: $COMPARE, for comparison"
    run_suite "$COMPARE" "$(label_of "$COMPARE")"
fi

# --- 5. report --------------------------------------------------------------------------
echo
main=$(label_of "$RUNTIME")
if [[ -n "$COMPARE" ]]; then
    other=$(label_of "$COMPARE")
    printf '%-28s %-26s %s\n' file "$main" "$other"
    for f in "${FILES[@]}"; do
        printf '%-28s %-26s %s\n' "$f" "$(summarize "$DIR/results/$main/${f%.bats}.tap")" \
            "$(summarize "$DIR/results/$other/${f%.bats}.tap")"
    done
    printf '%-28s %-26s %s\n' TOTAL "$(totals "$main")" "$(totals "$other")"
    comm -13 <(failures "$main" | sort) <(failures "$other" | sort) | sed "s/^/fails only with $other: /"
fi
echo "runc-suite: $main: $(totals "$main")"

((CHECK)) || exit 0
status=0
expected=$(sed -E 's/[[:space:]]+#.*$//; /^[[:space:]]*$/d' "$EXPECTED" 2>/dev/null | sort -u)
while IFS= read -r fail; do
    [[ -z "$fail" ]] && continue
    if ! grep -qxF -- "$fail" <<<"$expected"; then
        echo "runc-suite: UNEXPECTED FAILURE: $fail (log: $DIR/results/$main/)"
        # The test's own diagnostics, so that CI's log says why (its results dir is gone
        # with the machine): the "# " lines after its "not ok", at most 60.
        awk -v name="${fail#*.bats: }" '
            /^(not )?ok [0-9]+ / { show = 0 }
            show && shown < 60 { print "    " $0; shown++ }
            /^not ok [0-9]+ / { line = $0; sub(/^not ok [0-9]+ /, "", line)
                                sub(/ # (timeout after|bats exited) .*$/, "", line)
                                if (line == name) show = 1 }' \
            "$DIR/results/$main/${fail%%.bats: *}.tap"
        status=1
    fi
done < <(failures "$main")
# A listed test that now passes (not one that is skipped: checkpoint.bats without criu) is
# worth a look: its line may be stale.
passes() {
    local t
    for t in "$DIR/results/$1"/*.tap; do
        grep -E '^ok [0-9]+ ' "$t" | grep -v '# skip' | sed -E 's/^ok [0-9]+ //' |
            while IFS= read -r name; do echo "$(basename "${t%.tap}").bats: $name"; done
    done
}
# once (each call reads every file's results); its status is grep's for the last file
passed=$(passes "$main" || true)
while IFS= read -r exp; do
    [[ -z "$exp" ]] && continue
    grep -qxF -- "$exp" <<<"$passed" &&
        echo "runc-suite: note: listed as expected to fail, but passed (stale line?): $exp"
done <<<"$expected"
((status == 0)) && echo "runc-suite: no unexpected failures"
exit "$status"
