#!/bin/sh
# The main job: build, run the malleable Jacobi, CG and heat stencil demos at 2 ranks through
# a plan that grows, shrinks, rebalances and releases an initial rank (each checked bit for
# bit: Jacobi and CG against a serial run, the stencil against its static program), then the redistribution benchmark at 2 ranks: the cold table (every
# measurement in fresh processes: what one reconfiguration really costs, beside a plain
# MPI_Alltoallv baseline) and the warm table (repeated rebalances), all with the
# project's MPI settings (tools/mal-env.sh). Between the demos and the benchmark, Jacobi
# expands 2 -> 4 once synchronously and once asynchronously (--async); the summary at the
# end gives the stall of each, the time the application could not iterate. MAL_COLD_REPS sets the fresh runs per cell
# of the cold table (default 1; docs/benchmarks.md's figures use 3). Extra arguments go to the bandwidth benchmark,
# e.g. tools/main.sh --size 1073741824 --csv redist.csv, or --sparse poisson:1000 for a
# CSR matrix; MAL_PLAN overrides the plan of both demos. With OpenSHMEM built
# (MAL_WITH_SHMEM), Jacobi also rebalances on the SHMEM transport, and the benchmark runs
# under oshrun so its table has the shmem rows.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/build-dir.sh" # MAL_STACK=debian13: inside the Debian 13 root
sh "$top/tools/build.sh"
plan="${MAL_PLAN:-5:+2,10:-1,15:w=1:2:1,20:-@0,25:+1}"
MAL_PLAN="$plan" "$top/tools/malrun" -n 2 "$build/examples/jacobi" --check
MAL_PLAN="$plan" "$top/tools/malrun" -n 2 "$build/examples/cg" \
    --matrix "$top/data/matrices/bcsstk13.mtx" --iters 2000 --tol 1e-8 --check
# The 2-D heat stencil: its checksum and time against examples/heat2d_static.c's.
MAL_PLAN="$plan" sh "$top/ctest/examples/vs_static.sh" "$top/tools/malrun" 2 \
    "$build/examples/heat2d_static" "$build/examples/heat2d"
# The stall of the expansion planned at iteration $2, from rank 0's per-iteration times
# in $1 (jacobi --times: iteration,seconds,procs): each iteration's time over the
# undisturbed one (the median before the plan's), summed from the plan's iteration to
# the switch (the last at the initial process count): for a synchronous expansion the
# reconfiguring iteration alone, for an asynchronous one the switch and the slowdown of
# the iterations the background overlapped.
stall() {
    awk -F, -v at="$2" '
        NR == 1 { procs = $3 }
        $1 < at { n++; t[n] = $2
                  for (i = n; i > 1 && t[i - 1] > t[i]; i--) { x = t[i]; t[i] = t[i - 1]; t[i - 1] = x } }
        $1 >= at && $3 == procs && !switched { lost += $2; last = $1 }
        $3 != procs { switched = 1 }
        END { med = n % 2 ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
              lost -= (last - at + 1) * med
              printf "stall %.3f s over %d iteration(s) from the plan to the switch%s " \
                     "(undisturbed iteration %.4f s)\n", lost, last - at + 1,
                     switched ? "" : " (NO SWITCH)", med }' "$1"
}
expansion_times=$(mktemp -d)
trap 'rm -rf "$expansion_times"' EXIT
# jacobi_expansion NAME [--async]: 2 -> 4 at iteration 10, checked against a serial run.
jacobi_expansion() {
    name=$1
    shift
    MAL_PLAN=10:+2 MAL_ASYNC=0 "$top/tools/malrun" -n 2 "$build/examples/jacobi" --n 4096 \
        --iters 150 --check --quiet --times "$expansion_times/$name" "$@"
}
jacobi_expansion sync
jacobi_expansion async --async
launcher=${MPIEXEC:-} # empty: malrun's own, the build's MPI
if grep -q '^MAL_WITH_SHMEM:BOOL=ON' "$build/CMakeCache.txt"; then
    MAL_REDIST=shmem MAL_PLAN="5:w=1:3,15:w=2:1,25:w=1:1" MPIEXEC=oshrun \
        "$top/tools/malrun" -n 2 "$build/examples/jacobi" --check
    launcher=${MPIEXEC:-oshrun}
fi
# The cold table takes the data options of the arguments (not --csv, --method, --reps).
cold_args=""
prev=""
for a in "$@"; do
    case "$prev" in --size|--sparse|--pattern|--row-len|--headroom) cold_args="$cold_args $prev $a" ;; esac
    prev=$a
done
# shellcheck disable=SC2086
MAL_LAUNCHER="$top/tools/malrun" "$build/bench/mal_bench_redist" --cold \
    --ranks "${MAL_RANKS:-2}" --cold-reps "${MAL_COLD_REPS:-1}" --reps 3 $cold_args
MPIEXEC=$launcher "$top/tools/malrun" -n "${MAL_RANKS:-2}" "$build/bench/mal_bench_redist" "$@"
echo "# summary: Jacobi n=4096, 2 -> 4 processes at iteration 10 of 150"
echo "#   synchronous expansion:  $(stall "$expansion_times/sync" 10)"
echo "#   asynchronous expansion: $(stall "$expansion_times/async" 10)"
