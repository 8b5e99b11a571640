#!/usr/bin/env bash
# The source layout's limits (CTest test `layout`). One line per problem, exit 1; else
# "layout: ok". Over the files git tracks:
#   - no *.cpp or *.hpp under include/ src/ runtime/ cli/ tests/ is over 600 lines;
#   - no folder of runtime/ holds over 25 files;
#   - no base name (file name without extension) is both in cli/ (recursively) and in the
#     core (src/, runtime/ recursively, include/), nor both in src/ and runtime/. A public
#     header include/minirun/X.hpp beside its implementation src/X.cpp or runtime/**/X.cpp
#     is fine.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly max_lines=600 max_files=25
problems=0
problem() {
    echo "$*"
    problems=$((problems + 1))
}

files=()
mapfile -t files < <(git ls-files -- include src runtime cli tests)

# Lines per C++ file (one wc for all of them).
cpp=()
for file in "${files[@]}"; do
    case $file in *.cpp | *.hpp) [[ -f $file ]] && cpp+=("$file") ;; esac
done
if ((${#cpp[@]} > 0)); then
    while read -r lines file; do
        [[ $file == total ]] && continue
        if ((lines > max_lines)); then
            problem "$file: $lines lines (at most $max_lines)"
        fi
    done < <(printf '%s\0' "${cpp[@]}" | xargs -0 wc -l)
fi

# Files per folder of runtime/ (directly in it, not below).
declare -A per_dir=()
for file in "${files[@]}"; do
    [[ $file == runtime/* && -f $file ]] || continue
    dir=${file%/*}
    per_dir[$dir]=$((${per_dir[$dir]:-0} + 1))
done
for dir in $(printf '%s\n' "${!per_dir[@]}" | LC_ALL=C sort); do
    if ((per_dir[$dir] > max_files)); then
        problem "$dir/: ${per_dir[$dir]} files (at most $max_files)"
    fi
done

# Base names (file names without extension): where each appears.
declare -A in_cli=() in_src=() in_runtime=() in_include=()
for file in "${files[@]}"; do
    [[ -f $file ]] || continue
    base=${file##*/}
    base=${base%.*}
    [[ -n $base ]] || continue # a dot file
    case $file in
    cli/*) in_cli[$base]+="${in_cli[$base]:+ }$file" ;;
    src/*) in_src[$base]+="${in_src[$base]:+ }$file" ;;
    runtime/*) in_runtime[$base]+="${in_runtime[$base]:+ }$file" ;;
    include/*) in_include[$base]+="${in_include[$base]:+ }$file" ;;
    esac
done
for base in $(printf '%s\n' "${!in_cli[@]}" | LC_ALL=C sort); do
    core="${in_src[$base]:-} ${in_runtime[$base]:-} ${in_include[$base]:-}"
    core=$(echo $core)
    if [[ -n $core ]]; then
        problem "base name \"$base\" both in cli/ (${in_cli[$base]}) and in the core ($core)"
    fi
done
for base in $(printf '%s\n' "${!in_src[@]}" | LC_ALL=C sort); do
    if [[ -n ${in_runtime[$base]:-} ]]; then
        problem "base name \"$base\" both in src/ (${in_src[$base]}) and runtime/ (${in_runtime[$base]})"
    fi
done

if ((problems > 0)); then
    exit 1
fi
echo "layout: ok"
