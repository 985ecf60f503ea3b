#!/bin/sh
# The main job: build, run the malleable Jacobi and CG demos at 2 ranks through a plan that
# grows, shrinks, rebalances and releases an initial rank (each checked bit for bit against
# a serial run), then the redistribution bandwidth benchmark at 2 ranks, all with the
# project's MPI settings (tools/mal-env.sh). Extra arguments go to the bandwidth benchmark,
# e.g. tools/main.sh --size 1073741824 --csv redist.csv, or --sparse poisson:1000 for a
# CSR matrix; MAL_PLAN overrides the plan of both demos.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
sh "$top/tools/build.sh"
plan="${MAL_PLAN:-5:+2,10:-1,15:w=1:2:1,20:-@0,25:+1}"
MAL_PLAN="$plan" "$top/tools/malrun" -n 2 "$build/bench/jacobi" --check
MAL_PLAN="$plan" "$top/tools/malrun" -n 2 "$build/bench/cg" \
    --matrix "$top/data/matrices/bcsstk13.mtx" --iters 2000 --tol 1e-8 --check
"$top/tools/malrun" -n "${MAL_RANKS:-2}" "$build/bench/mal_bench_redist" "$@"
