# Shell functions shared by the engine scripts (tests/engines/docker.sh,
# scripts/bench-engines.sh); sourced, not run.

# kill_wait PID [SECONDS]: SIGTERM, then SIGKILL when it has not gone after SECONDS.
kill_wait() {
    local pid=$1 tries=$((${2:-10} * 10)) i state
    kill "$pid" 2>/dev/null || return 0
    for ((i = 0; i < tries; i++)); do
        state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
        [[ -z "$state" || "$state" == Z ]] && break
        sleep 0.1
    done
    [[ -n "$state" && "$state" != Z ]] && kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}
