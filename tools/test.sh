#!/bin/sh
# The test suite: build, then run every ctest test (unit tests and the MPI tests at 1..4
# ranks, each with its own timeout). Tests run one at a time: the MPI tests already
# oversubscribe the 2 cores.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
sh "$top/tools/build.sh"
ctest --test-dir "$build" --output-on-failure "$@"
