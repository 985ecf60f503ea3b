#!/bin/sh
# The main job: build, run the malleable Jacobi and CG demos at 2 ranks through a plan that
# grows, shrinks, rebalances and releases an initial rank (each checked bit for bit against
# a serial run), then the redistribution bandwidth benchmark at 2 ranks, all with the
# project's MPI settings (tools/mal-env.sh). Extra arguments go to the bandwidth benchmark,
# e.g. tools/main.sh --size 1073741824 --csv redist.csv, or --sparse poisson:1000 for a
# CSR matrix; MAL_PLAN overrides the plan of both demos. With OpenSHMEM built
# (MAL_WITH_SHMEM), Jacobi also rebalances on the SHMEM transport, and the benchmark runs
# under oshrun so its table has the shmem rows.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
sh "$top/tools/build.sh"
plan="${MAL_PLAN:-5:+2,10:-1,15:w=1:2:1,20:-@0,25:+1}"
MAL_PLAN="$plan" "$top/tools/malrun" -n 2 "$build/bench/jacobi" --check
MAL_PLAN="$plan" "$top/tools/malrun" -n 2 "$build/bench/cg" \
    --matrix "$top/data/matrices/bcsstk13.mtx" --iters 2000 --tol 1e-8 --check
launcher=${MPIEXEC:-mpiexec}
if grep -q '^MAL_WITH_SHMEM:BOOL=ON' "$build/CMakeCache.txt"; then
    MAL_REDIST=shmem MAL_PLAN="5:w=1:3,15:w=2:1,25:w=1:1" MPIEXEC=oshrun \
        "$top/tools/malrun" -n 2 "$build/bench/jacobi" --check
    launcher=${MPIEXEC:-oshrun}
fi
MPIEXEC=$launcher "$top/tools/malrun" -n "${MAL_RANKS:-2}" "$build/bench/mal_bench_redist" "$@"
