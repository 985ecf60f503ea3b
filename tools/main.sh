#!/bin/sh
# The main job: build, run the malleable Jacobi and CG demos at 2 ranks through a plan that
# grows, shrinks, rebalances and releases an initial rank (each checked bit for bit against
# a serial run), then the redistribution benchmark at 2 ranks: the cold table (every
# measurement in fresh processes: what one reconfiguration really costs, beside a plain
# MPI_Alltoallv baseline) and the warm table (repeated rebalances), all with the
# project's MPI settings (tools/mal-env.sh). MAL_COLD_REPS sets the fresh runs per cell
# of the cold table (default 1; the README's figures use 3). Extra arguments go to the bandwidth benchmark,
# e.g. tools/main.sh --size 1073741824 --csv redist.csv, or --sparse poisson:1000 for a
# CSR matrix; MAL_PLAN overrides the plan of both demos. With OpenSHMEM built
# (MAL_WITH_SHMEM), Jacobi also rebalances on the SHMEM transport, and the benchmark runs
# under oshrun so its table has the shmem rows.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
sh "$top/tools/build.sh"
plan="${MAL_PLAN:-5:+2,10:-1,15:w=1:2:1,20:-@0,25:+1}"
MAL_PLAN="$plan" "$top/tools/malrun" -n 2 "$build/examples/jacobi" --check
MAL_PLAN="$plan" "$top/tools/malrun" -n 2 "$build/examples/cg" \
    --matrix "$top/data/matrices/bcsstk13.mtx" --iters 2000 --tol 1e-8 --check
launcher=${MPIEXEC:-mpiexec}
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
