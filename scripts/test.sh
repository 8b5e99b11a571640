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
#       1.3.6's tests from Debian unstable's source package, their helpers built with Go and
#       Go libraries from unstable unpacked under /var/tmp, nothing installed from unstable;
#       fails on a test not listed in tests/runc-suite/expected-failures-1.3), and beside
#       it rootless, as runc's CI also runs it (--rootless: an unprivileged user of its own,
#       ROOTLESS_FEATURES=idmap; against tests/runc-suite/expected-failures-rootless-1.3);
#       the suite's set-up (--prepare) runs in the background from step 2 on,
#   5. builds and runs the unit tests with AddressSanitizer and UBSan in build-asan/,
#   5b. runs each libFuzzer harness (tests/fuzz/) for 30 s (scripts/fuzz.sh; FUZZ_SECONDS=N
#      for longer), built with clang-16 in build-fuzz/ in the background since step 2, and
#      run in the background beside runc's suite (4c),
#   6. checks the formatting of every C++ file (clang-format),
#   7. runs clang-tidy over src/ runtime/ cli/ when the repo has a .clang-tidy (started
#      right after the build, in the background at nice 19; reported at the end), from the
#      compile database of build-tidy/ (configured only, without precompiled headers, which
#      clang-tidy cannot read when GCC made them).
# It stops at the first failing step and says which one; at the end it prints a summary.
# The integration tests need root; without it CTest reports them as skipped. A test binary
# whose only problem is test cases that cannot run here (exit 77) passes, and its skipped
# test cases are listed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}

summary=()
current_step=""
declare -A bg_pid=() bg_log=()
started=$(date +%s)

on_exit() {
    local status=$?
    # A background job still running (a step failed before its own) ends too.
    local name
    for name in "${!bg_pid[@]}"; do
        kill -- "-${bg_pid[$name]}" 2>/dev/null || true
        rm -f "${bg_log[$name]}"
    done
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
    # GCC's precompiled headers (build/) are not clang's: tidy reads a database without them.
    # Nor is cli/ one unit there (MINIRUN_UNITY_CLI): tidy looks each file's command up.
    cmake -S . -B build-tidy -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMINIRUN_PCH=OFF \
        -DMINIRUN_UNITY_CLI=OFF -DMINIRUN_TESTS=OFF >/dev/null
    echo "clang-tidy over ${#files[@]} files, $JOBS at a time"
    # Every finding fails the step. Each file's output is printed whole, not interleaved.
    printf '%s\0' "${files[@]}" |
        xargs -0 -n 1 -P "$JOBS" sh -c \
            'out=$(clang-tidy -p build-tidy --quiet --warnings-as-errors="*" --extra-arg=-Wno-unknown-warning-option "$1" 2>&1); rc=$?
             if [ $rc -ne 0 ]; then printf "%s\n" "$out"; echo "clang-tidy: $1 failed"; fi
             exit $(( rc != 0 ))' clang-tidy-one
}

# A test binary exits 77 when test cases were skipped (they cannot run on this machine) and
# none failed; it lists them at its end. CTest counts such a test as skipped, not failed,
# but does not show its output: print the counts and the skipped test cases from its log.
run_ctest() {
    ctest --test-dir build --output-on-failure --timeout 1200
    local log=build/Testing/Temporary/LastTest.log
    if [[ -f $log ]]; then
        grep -E '^[a-z]+ test cases: |^skipped [0-9]+: ' "$log" || true
    fi
}

# allow_skips COMMAND...: runs a test binary; its exit status 77 (skipped test cases, listed
# in its output, and no failure) passes, with a line that says so.
allow_skips() {
    local status=0
    "$@" || status=$?
    if ((status == 77)); then
        echo "test.sh: $1: test cases skipped (listed above), none failed"
        return 0
    fi
    return "$status"
}

if ((EUID != 0)); then
    echo "test.sh: not root: the integration tests will be skipped (run: sudo scripts/test.sh)"
fi

step "install dependencies" scripts/bootstrap.sh
# RelWithDebInfo's -O2, the code users build, with line tables only (-g1, enough for a
# backtrace): the same code, a third less compile time than -g.
step "configure build/ ($BUILD_TYPE)" \
    cmake -S . -B build -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DMINIRUN_TESTS=ON -DMINIRUN_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
step "build" cmake --build build -j "$JOBS"
step "example rootfs" scripts/make-rootfs.sh

# Three jobs need only the sources, not the cpus the tests use: clang-tidy (the longest,
# about a quarter hour on 2 cores), the sanitizer build of the unit tests and the fuzzers'
# clang build. They start now, in the background at the lowest CPU priority (nice 19): the
# test steps below mostly wait (on containers, the engines' daemons, bats), and these take
# only the CPU those leave idle. Each one's step at the end waits for it and reports. Each
# runs in a process group of its own, so that a failing step ends all of it.
#
# background NAME COMMAND...: starts COMMAND so; wait_background NAME [full] waits for it
# and prints its output (all of it with "full" or when it failed, else its last lines).
background() {
    local name=$1
    shift
    bg_log[$name]=$(mktemp "/tmp/minirun-$name.XXXXXX")
    setsid --wait nice -n 19 "$@" >"${bg_log[$name]}" 2>&1 &
    bg_pid[$name]=$!
}
wait_background() {
    local name=$1 how=${2:-} status=0
    wait "${bg_pid[$name]}" || status=$?
    unset "bg_pid[$name]"
    if [[ $how == full ]] || ((status != 0)); then
        cat "${bg_log[$name]}"
    else
        tail -n 3 "${bg_log[$name]}"
    fi
    rm -f "${bg_log[$name]}"
    unset "bg_log[$name]"
    return "$status"
}
if [[ -f .clang-tidy ]]; then
    background tidy bash -c "$(declare -f run_clang_tidy); JOBS=$JOBS run_clang_tidy"
fi
# The sanitizer build is GCC's, at -O0 with line tables. Not folded into the fuzzers' clang
# build: clang 16 skips the destructor of the by-value argument in `x = {...}` inside a
# template in C++17 and later (llvm/llvm-project#51037, fixed in clang 17), so nlohmann's
# `json = {"/bin/sh"}` in tests/unit/test_recipe.cpp's spec_with leaks the old value there;
# a standalone template doing only that assignment leaks under clang 16, not under GCC.
build_asan() {
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
        -DMINIRUN_SANITIZE=ON -DMINIRUN_TESTS=ON -DMINIRUN_WERROR=ON &&
        cmake --build build-asan -j "$JOBS" --target minirun-unit
}
background asan bash -c "$(declare -f build_asan); JOBS=$JOBS build_asan"
background fuzz-build scripts/fuzz.sh --build-only --build build-fuzz
# runc's suite's own set-up (its source, Go, the Go libraries, its helpers and images: about
# ten minutes on a fresh machine, most of it building Go) needs no runtime: it starts now too.
background runc-prep scripts/runc-suite.sh --prepare

# runc's suite as root and rootless, side by side: each test is one bats run that mostly
# waits, and the two runs share nothing but the prepared suite (the rootless one makes no
# cgroups here and leaves them alone). The rootless run's output follows the root one's.
run_runc_suites() {
    wait_background runc-prep || return
    local rootless_log status=0 rootless_status=0 rootless_pid
    rootless_log=$(mktemp /tmp/minirun-runc-suite-rootless.XXXXXX)
    scripts/runc-suite.sh --rootless --runtime build/mini-run >"$rootless_log" 2>&1 &
    rootless_pid=$!
    scripts/runc-suite.sh --runtime build/mini-run || status=$?
    wait "$rootless_pid" || rootless_status=$?
    echo
    echo "---- rootless (exit status $rootless_status)"
    cat "$rootless_log"
    rm -f "$rootless_log"
    ((status == 0)) || return "$status"
    return "$rootless_status"
}
step "unit and integration tests (ctest)" run_ctest
step "engines (podman, containerd, docker)" scripts/engines-test.sh build/mini-run
# The fuzzers run for a fixed time each (14 harnesses at 30 s, 2 at a time) and runc's suite
# mostly waits on its containers: the fuzzers run beside it, in the background, and are
# reported after it.
step "fuzzers' build (started after the build, in the background)" wait_background fuzz-build
background fuzz scripts/fuzz.sh --build build-fuzz --seconds "${FUZZ_SECONDS:-30}"
step "runc's integration suite, as root and rootless side by side" run_runc_suites
step "unit tests' sanitizer build (started after the build, in the background)" \
    wait_background asan
step "unit tests with sanitizers (ASan, UBSan)" allow_skips build-asan/minirun-unit
step "fuzzers, ${FUZZ_SECONDS:-30}s each (scripts/fuzz.sh; beside runc's suite)" \
    wait_background fuzz full
step "formatting (clang-format)" check_format
if [[ -n "${bg_pid[tidy]:-}" ]]; then
    step "clang-tidy (started after the build, in the background)" wait_background tidy full
else
    summary+=("--  clang-tidy (skipped: no .clang-tidy in $ROOT)")
fi

echo
echo "==== summary ($(($(date +%s) - started))s)"
printf '  %s\n' "${summary[@]}"
echo "test.sh: all steps passed"
