#!/usr/bin/env bash
# The test command: sudo scripts/test.sh
#
# On a fresh Debian 12 machine, as root, it
#   1. installs the dependencies (scripts/bootstrap.sh),
#   2. configures and builds everything into build/ (RelWithDebInfo, -Werror),
#   3. builds the example rootfs (scripts/make-rootfs.sh),
#   4. runs the unit and integration tests (ctest),
#   4b. has podman, containerd and docker drive build/mini-run (scripts/engines-test.sh;
#       installs them; docker compares mini-run with runc; rootless podman too),
#   4c. runs runc's own integration suite against build/mini-run (scripts/runc-suite.sh: runc
#       1.1.5's tests from Debian's source package; fails on a test not listed in
#       tests/runc-suite/expected-failures), then again rootless, as runc's CI also runs it
#       (--rootless: an unprivileged user of its own, ROOTLESS_FEATURES=idmap; against
#       tests/runc-suite/expected-failures-rootless),
#   5. builds and runs the unit tests with AddressSanitizer and UBSan in build-asan/,
#   5b. runs each libFuzzer harness (tests/fuzz/) for 30 s (scripts/fuzz.sh; FUZZ_SECONDS=N
#      for longer), built with clang-16 in build-fuzz/ in the background since step 2,
#   6. checks the formatting of every C++ file (clang-format),
#   7. runs clang-tidy over src/ runtime/ cli/ when the repo has a .clang-tidy (started
#      right after the build, in the background at nice 19; reported at the end).
# It stops at the first failing step and says which one; at the end it prints a summary.
# The integration tests need root; without it CTest reports them as skipped.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}

summary=()
current_step=""
started=$(date +%s)

on_exit() {
    local status=$?
    # A clang-tidy still running in the background (a step failed before its own) ends too.
    if [[ -n "${tidy_pid:-}" ]] && kill -0 "$tidy_pid" 2>/dev/null; then
        kill -- "-$tidy_pid" 2>/dev/null || true
        rm -f "$tidy_log"
    fi
    if [[ -n "${fuzz_build_pid:-}" ]] && kill -0 "$fuzz_build_pid" 2>/dev/null; then
        kill -- "-$fuzz_build_pid" 2>/dev/null || true
        rm -f "$fuzz_build_log"
    fi
    if ((status != 0)) && [[ -n "$current_step" ]]; then
        echo
        echo "test.sh: FAILED at step \"$current_step\" (exit status $status)" >&2
        if ((${#summary[@]} > 0)); then
            echo "test.sh: steps that passed before it:" >&2
            printf '  %s\n' "${summary[@]}" >&2
        fi
    fi
}
trap on_exit EXIT

# step NAME COMMAND...: runs one step, timed; any failure ends the script.
step() {
    local name=$1
    shift
    current_step=$name
    echo
    echo "==== $name"
    local begin
    begin=$(date +%s)
    "$@"
    summary+=("ok  $name ($(($(date +%s) - begin))s)")
    current_step=""
}

cpp_files() {
    find "$@" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) \
        2>/dev/null | LC_ALL=C sort
}

check_format() {
    local files
    mapfile -t files < <(cpp_files include src runtime cli tests)
    if ((${#files[@]} == 0)); then
        echo "no C++ files"
        return 0
    fi
    echo "checking ${#files[@]} files"
    if ! clang-format --dry-run --Werror "${files[@]}"; then
        echo "test.sh: formatting differs from .clang-format; fix with:" >&2
        echo "  clang-format -i \$(find include src runtime cli tests -name '*.cpp' -o -name '*.hpp')" >&2
        return 1
    fi
}

run_clang_tidy() {
    local files
    mapfile -t files < <(find src runtime cli -type f -name '*.cpp' 2>/dev/null | LC_ALL=C sort)
    if ((${#files[@]} == 0)); then
        echo "no sources"
        return 0
    fi
    echo "clang-tidy over ${#files[@]} files, $JOBS at a time"
    # Every finding fails the step. Each file's output is printed whole, not interleaved.
    printf '%s\0' "${files[@]}" |
        xargs -0 -n 1 -P "$JOBS" sh -c \
            'out=$(clang-tidy -p build --quiet --warnings-as-errors="*" --extra-arg=-Wno-unknown-warning-option "$1" 2>&1); rc=$?
             if [ $rc -ne 0 ]; then printf "%s\n" "$out"; echo "clang-tidy: $1 failed"; fi
             exit $(( rc != 0 ))' clang-tidy-one
}

if ((EUID != 0)); then
    echo "test.sh: not root: the integration tests will be skipped (run: sudo scripts/test.sh)"
fi

step "install dependencies" scripts/bootstrap.sh
step "configure build/ ($BUILD_TYPE)" \
    cmake -S . -B build -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DMINIRUN_TESTS=ON -DMINIRUN_WERROR=ON
step "build" cmake --build build -j "$JOBS"
step "example rootfs" scripts/make-rootfs.sh

# clang-tidy is the longest step (about a quarter hour on 2 cores) and needs only the build's
# compile database, so it starts now, in the background at the lowest CPU priority (nice
# 19): the test steps below mostly wait (on containers, the engines' daemons, bats), and
# tidy takes only the CPU they leave idle. Its own step at the end waits for it and
# reports. It runs in a process group of its own, so a failing step ends all of it.
tidy_pid=""
tidy_log=""
if [[ -f .clang-tidy ]]; then
    tidy_log=$(mktemp /tmp/minirun-tidy.XXXXXX)
    setsid --wait nice -n 19 bash -c "$(declare -f run_clang_tidy); JOBS=$JOBS run_clang_tidy" \
        >"$tidy_log" 2>&1 &
    tidy_pid=$!
fi
# The fuzzers' clang build (scripts/fuzz.sh --build-only) goes the same way, in the
# background at nice 19; the fuzzers run at the end, once the tests no longer need the cpus.
fuzz_build_log=$(mktemp /tmp/minirun-fuzz-build.XXXXXX)
setsid --wait nice -n 19 scripts/fuzz.sh --build-only --build build-fuzz >"$fuzz_build_log" 2>&1 &
fuzz_build_pid=$!
wait_for_fuzz_build() {
    local status=0
    wait "$fuzz_build_pid" || status=$?
    fuzz_build_pid=""
    tail -n 3 "$fuzz_build_log"
    if ((status != 0)); then
        cat "$fuzz_build_log"
    fi
    rm -f "$fuzz_build_log"
    return "$status"
}
wait_for_tidy() {
    local status=0
    wait "$tidy_pid" || status=$?
    tidy_pid=""
    cat "$tidy_log"
    rm -f "$tidy_log"
    return "$status"
}
step "unit and integration tests (ctest)" \
    ctest --test-dir build --output-on-failure --timeout 1200
step "engines (podman, containerd, docker)" scripts/engines-test.sh build/mini-run
step "runc's integration suite" scripts/runc-suite.sh --runtime build/mini-run
step "runc's integration suite, rootless" scripts/runc-suite.sh --rootless --runtime build/mini-run
step "configure build-asan/ (ASan, UBSan)" \
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMINIRUN_SANITIZE=ON -DMINIRUN_TESTS=ON \
    -DMINIRUN_WERROR=ON
step "build unit tests with sanitizers" cmake --build build-asan -j "$JOBS" --target minirun-unit
step "unit tests with sanitizers" build-asan/minirun-unit
step "fuzzers' build (started after the build, in the background)" wait_for_fuzz_build
step "fuzzers, ${FUZZ_SECONDS:-30}s each (scripts/fuzz.sh)" \
    scripts/fuzz.sh --build build-fuzz --seconds "${FUZZ_SECONDS:-30}"
step "formatting (clang-format)" check_format
if [[ -n "$tidy_pid" ]]; then
    step "clang-tidy (started after the build, in the background)" wait_for_tidy
else
    summary+=("--  clang-tidy (skipped: no .clang-tidy in $ROOT)")
fi

echo
echo "==== summary ($(($(date +%s) - started))s)"
printf '  %s\n' "${summary[@]}"
echo "test.sh: all steps passed"
