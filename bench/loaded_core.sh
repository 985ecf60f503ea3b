#!/bin/sh
# Dyn-MPI's loaded-node experiment on this machine: a 2-rank Jacobi, ranks bound to one
# core each; once iteration 10 is done a busy loop pinned to rank 1's core starts (another
# user's job). Run twice in a row: without adaptation (MAL_POLICY=off) and with the policy
# in loaded mode (RCP rebalance by measured power, or release if that were better).
# Prints the mean iteration time before and after the load starts and the totals, and
# writes per-iteration times to OUT/off.csv and OUT/loaded.csv.
#
# Usage: sh bench/loaded_core.sh [OUT] (default validation/loaded); BUILD selects the
# build tree (default build), N and ITERS the problem (default 4000 and 300).
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-validation/loaded}
BUILD=${BUILD:-build}
N=${N:-4000}
ITERS=${ITERS:-300}
LOAD_AT=10
mkdir -p "$OUT"
if [ "$(nproc)" -lt 2 ]; then
    echo "loaded_core: needs 2 cores (one per rank), this machine has $(nproc)" >&2
    exit 2
fi

# One rank per core, so that the load lands on rank 1 only.
OMPI_MCA_hwloc_base_binding_policy=core
export OMPI_MCA_hwloc_base_binding_policy

. bench/busy_core.sh

# run NAME POLICY: Jacobi with the load starting at iteration LOAD_AT.
run() {
    mark="$OUT/$1.mark"
    rm -f "$mark"
    MAL_POLICY="$2" MAL_REPORT="$OUT/$1.jsonl" tools/malrun -n 2 "$BUILD/examples/jacobi" \
        --n "$N" --iters "$ITERS" --times "$OUT/$1.csv" --mark "$mark" --mark-at "$LOAD_AT" \
        > "$OUT/$1.log" 2>&1 &
    job=$!
    while [ ! -e "$mark" ] && kill -0 "$job" 2>/dev/null; do sleep 0.005; done
    start_busy
    wait "$job"
    stop_busy
    grep -E "^libmal: policy|^libmal: it|^jacobi: procs" "$OUT/$1.log" || true
}

rm -f "$OUT"/off.jsonl "$OUT"/loaded.jsonl
echo "loaded_core: jacobi n=$N, $ITERS iterations, 2 ranks bound to cores 0 and 1; busy loop on core 1 after iteration $LOAD_AT"
echo "--- without adaptation (MAL_POLICY=off)"
run off off
echo "--- with the policy (MAL_POLICY=mode=loaded)"
run loaded mode=loaded

summary() {
    awk -F, -v at="$LOAD_AT" -v name="$2" '
        { t[$1] = $2; total += $2; n = $1 }
        $1 <= at { before += $2; nb++ }
        $1 > at && $1 <= at + 20 { early += $2; ne++ }
        $1 > n - 100 { }
        END {
            for (i = n - 99; i <= n; i++) { late += t[i]; nl++ }
            printf "%-28s before %.4f s/it | its %d-%d %.4f s/it | last 100 %.4f s/it | total %.2f s\n",
                   name, before / nb, at + 1, at + 20, early / ne, late / nl, total
        }' "$1"
}
echo "--- per-iteration means (rank 0, sweep + mal_step)"
summary "$OUT/off.csv" "without adaptation"
summary "$OUT/loaded.csv" "with the policy (loaded)"
paste -d, "$OUT/off.csv" "$OUT/loaded.csv" | awk -F, 'BEGIN { print "iteration,off_s,policy_s,policy_procs" }
    { print $1 "," $2 "," $5 "," $6 }' > "$OUT/loaded_core.csv"
echo "loaded_core: per-iteration times in $OUT/loaded_core.csv"
