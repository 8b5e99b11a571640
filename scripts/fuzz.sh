#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/, clang-16, ASan + UBSan) and runs them.
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [--build DIR] [--build-only] [TARGET...]
#
# TARGET is a harness's name (config, state, seccomp, ...: the files of tests/fuzz/*.cpp);
# without one, every harness runs. Each runs N seconds (default 60), J at a time (default:
# the number of cpus), from its seeds in tests/fuzz/corpus/ and what earlier runs added to
# its working corpus under DIR/fuzz-corpus/ (new inputs go there, out of the repository),
# with its dictionary from tests/fuzz/dict/. DIR (default build-fuzz) is configured with
# clang-16 and -DMINIRUN_FUZZ=ON unless it is configured already; --build-only stops after
# the build (scripts/test.sh builds in the background, then runs).
#
# libFuzzer stops a target at its first crash, leak, timeout (-timeout: one input taking
# 10 s) or out-of-memory (-rss_limit_mb); the input is kept in DIR/fuzz-artifacts/. At the
# end a table gives each target's executions, exec/s, coverage (edges, libFuzzer's "cov")
# and features ("ft"); the script fails when a target found something, naming the input
# and how to run it again.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
SECONDS_PER_TARGET=60
JOBS=$(nproc 2>/dev/null || echo 2)
BUILD=build-fuzz
TARGETS=()
BUILD_ONLY=0

usage() {
    sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

while (($# > 0)); do
    case $1 in
    --seconds) SECONDS_PER_TARGET=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) SECONDS_PER_TARGET=${1#*=}; shift ;;
    --jobs) JOBS=${2:?--jobs needs a number}; shift 2 ;;
    --jobs=*) JOBS=${1#*=}; shift ;;
    --build) BUILD=${2:?--build needs a directory}; shift 2 ;;
    --build=*) BUILD=${1#*=}; shift ;;
    --build-only) BUILD_ONLY=1; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
    esac
done
for number in "$SECONDS_PER_TARGET" "$JOBS"; do
    if ! [[ "$number" =~ ^[1-9][0-9]*$ ]]; then
        echo "fuzz.sh: \"$number\" is not a positive number" >&2
        exit 2
    fi
done

ALL=()
for source in tests/fuzz/*.cpp; do
    ALL+=("$(basename "$source" .cpp)")
done
if ((${#TARGETS[@]} == 0)); then
    TARGETS=("${ALL[@]}")
fi
for target in "${TARGETS[@]}"; do
    if [[ ! -f "tests/fuzz/$target.cpp" ]]; then
        echo "fuzz.sh: no harness \"$target\" (there are: ${ALL[*]})" >&2
        exit 2
    fi
done

# The harnesses that read JSON share the config dictionary; config_json mutates the config
# seeds. The others have their own dictionary and corpus, or none.
dictionary_of() {
    case $1 in
    config | config_json | seccomp | process | resources | hooks_annotations | mount_options)
        echo tests/fuzz/dict/config.dict ;;
    *) [[ -f "tests/fuzz/dict/$1.dict" ]] && echo "tests/fuzz/dict/$1.dict" ;;
    esac
}
corpus_of() {
    case $1 in
    config_json) echo tests/fuzz/corpus/config ;;
    *) echo "tests/fuzz/corpus/$1" ;;
    esac
}
max_len_of() {
    case $(dictionary_of "$1") in
    */config.dict) echo 65536 ;;
    *) echo 4096 ;;
    esac
}

# The build's packages, clang-16 and libFuzzer among them.
scripts/bootstrap.sh

# -O1 with line tables, as libFuzzer and ASan advise: fast enough to fuzz, quicker to build,
# symbolized stacks.
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
    cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
        -DMINIRUN_FUZZ=ON -DMINIRUN_TESTS=OFF -DMINIRUN_WERROR=ON
fi
build_targets=()
for target in "${TARGETS[@]}"; do
    build_targets+=(--target "fuzz-$target")
done
cmake --build "$BUILD" -j "$JOBS" "${build_targets[@]}"
if ((BUILD_ONLY)); then
    exit 0
fi

# The bundle the config harnesses plan in: an empty rootfs, removed at the end.
bundle=$(mktemp -d /tmp/minirun-fuzz-bundle.XXXXXX)
mkdir "$bundle/rootfs"
trap 'rm -rf "$bundle"' EXIT
export MINIRUN_FUZZ_BUNDLE=$bundle
export MINIRUN_FUZZ_DICT=$ROOT/tests/fuzz/dict/config.dict
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

logs=$BUILD/fuzz-logs
artifacts=$BUILD/fuzz-artifacts
mkdir -p "$logs" "$artifacts"

run_one() {
    local target=$1 work=$BUILD/fuzz-corpus/$1 dictionary
    mkdir -p "$work"
    dictionary=$(dictionary_of "$target" || true)
    local args=(-max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048
        -malloc_limit_mb=2048 -max_len="$(max_len_of "$target")" -print_final_stats=1
        -artifact_prefix="$artifacts/$target-")
    if [[ -n "$dictionary" ]]; then
        args+=(-dict="$dictionary")
    fi
    # New inputs go to the working corpus (first directory); the seeds are only read.
    local begin=$SECONDS status=0
    "$BUILD/fuzz-$target" "${args[@]}" "$work" "$(corpus_of "$target")" \
        >"$logs/$target.log" 2>&1 || status=$?
    echo $((SECONDS - begin)) >"$logs/$target.seconds"
    return "$status"
}

echo "fuzz.sh: ${#TARGETS[@]} targets, ${SECONDS_PER_TARGET}s each, $JOBS at a time"
declare -A status_of=()
declare -A pid_target=()
running=0
for target in "${TARGETS[@]}"; do
    if ((running >= JOBS)); then
        finished=""
        wait -n -p finished && rc=0 || rc=$?
        status_of[${pid_target[$finished]}]=$rc
        running=$((running - 1))
    fi
    run_one "$target" &
    pid_target[$!]=$target
    running=$((running + 1))
done
while ((running > 0)); do
    finished=""
    wait -n -p finished && rc=0 || rc=$?
    status_of[${pid_target[$finished]}]=$rc
    running=$((running - 1))
done

# The figures of a finished run, from libFuzzer's last status line and final stats.
field() { # field LOG REGEX: the first group of the last line matching
    sed -nE "s#$2#\\1#p" "$1" | tail -n 1
}
failed=0
summary=$BUILD/fuzz-summary.txt
{
    printf '%-18s %8s %12s %8s %7s %7s %7s  %s\n' target seconds executions exec/s edges \
        features corpus result
    for target in "${TARGETS[@]}"; do
        log=$logs/$target.log
        rc=${status_of[$target]}
        result=clean
        if ((rc != 0)); then
            result="FOUND ($(grep -m1 -oE 'ERROR: [A-Za-z]+: [a-z-]+|ERROR: libFuzzer: [a-z-]+|fuzz invariant broken: .*|runtime error: .*' "$log" || echo "exit $rc"))"
            failed=1
        fi
        printf '%-18s %8s %12s %8s %7s %7s %7s  %s\n' "$target" "$(cat "$logs/$target.seconds")" \
            "$(field "$log" '^stat::number_of_executed_units: ([0-9]+)')" \
            "$(field "$log" '^stat::average_exec_per_sec: +([0-9]+)')" \
            "$(field "$log" '.* cov: ([0-9]+) .*')" \
            "$(field "$log" '.* ft: ([0-9]+) .*')" \
            "$(field "$log" '.* corp: ([0-9]+)/.*')" "$result"
    done
} | tee "$summary"
echo "fuzz.sh: logs in $logs, table in $summary"
if ((failed)); then
    for target in "${TARGETS[@]}"; do
        if ((${status_of[$target]} != 0)); then
            echo "fuzz.sh: $target found a problem; see $logs/$target.log" >&2
            grep -h -m1 -E 'Test unit written to|artifact_prefix' "$logs/$target.log" >&2 || true
            echo "  run it again: $BUILD/fuzz-$target INPUT" >&2
        fi
    done
    exit 1
fi
