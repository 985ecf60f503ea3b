#!/bin/sh
# The main job: build, run the malleable Jacobi demo at 2 ranks through a plan that grows,
# shrinks, rebalances and releases an initial rank (checked bit for bit against a serial
# run), then the redistribution bandwidth benchmark at 2 ranks, all with the project's MPI
# settings (tools/mal-env.sh). Extra arguments go to the bandwidth benchmark, e.g.
# tools/main.sh --size 1073741824 --csv redist.csv; MAL_PLAN overrides the Jacobi plan.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
sh "$top/tools/build.sh"
MAL_PLAN="${MAL_PLAN:-5:+2,10:-1,15:w=1:2:1,20:-@0,25:+1}" \
    "$top/tools/malrun" -n 2 "$build/bench/jacobi" --check
"$top/tools/malrun" -n "${MAL_RANKS:-2}" "$build/bench/mal_bench_redist" "$@"
