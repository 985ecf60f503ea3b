# Another user's job on core 1, for the benchmarks that load a core (sourced by
# bench/loaded_core.sh and bench/regret.sh): start_busy starts a busy loop pinned to core
# 1, stop_busy ends it (and runs on exit, so that no loop outlives the benchmark).
busy_pid=""
stop_busy() {
    if [ -n "$busy_pid" ]; then
        kill "$busy_pid" 2>/dev/null || true
        wait "$busy_pid" 2>/dev/null || true
    fi
    busy_pid=""
}
start_busy() {
    taskset -c 1 sh -c 'while :; do :; done' &
    busy_pid=$!
}
trap stop_busy EXIT
trap 'stop_busy; exit 130' INT TERM
