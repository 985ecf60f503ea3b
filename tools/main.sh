#!/bin/sh
# The main job: build, then run the redistribution bandwidth benchmark at 2 ranks with
# the project's MPI settings (tools/mal-env.sh). Extra arguments go to the benchmark,
# e.g. tools/main.sh --size 1073741824 --csv redist.csv
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
sh "$top/tools/build.sh"
"$top/tools/malrun" -n "${MAL_RANKS:-2}" "$build/bench/mal_bench_redist" "$@"
