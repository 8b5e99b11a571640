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
    # the man page's check renders it with groff (scripts/check-manpage.sh)
    groff-base
    # the fault sweep of create (tests/integration/fault_test.cpp) injects failures with it
    strace
    # rootless containers map /etc/subuid ranges with newuidmap and newgidmap
    # (tests/integration/rootless_test.cpp)
    uidmap
    # style checks
    clang-format clang-tidy
    # the sanitizer build and the fuzzers (scripts/fuzz.sh): clang with libFuzzer;
    # clang's own runtimes for -fsanitize=fuzzer,address,undefined (libclang_rt.*.a)
    # are in libclang-rt-16-dev, which neither clang-16 nor libfuzzer-16-dev pulls in
    clang-16 libfuzzer-16-dev libclang-rt-16-dev
)

# shellcheck source=scripts/apt-missing.sh
source scripts/apt-missing.sh
apt_install_missing bootstrap "${PACKAGES[@]}"
