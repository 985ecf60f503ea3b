#!/bin/sh
# The test suite: build, then run every ctest test (unit tests and the MPI tests at 1..4
# ranks, each with its own timeout). Tests run one at a time: the MPI tests already
# oversubscribe the 2 cores.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# MAL_MPI=mpich: the suite against MPICH (./build-mpich; tools/build.sh); the tests an
# MPI cannot run (MPICH 4.0's ch4:ucx cannot spawn) are skipped, each with its reason.
# MAL_STACK=debian13: the suite inside a Debian 13 root (tools/stack.sh), Open MPI 5.0.7
# or MPICH 4.2.1, in ./build-debian13[-mpich].
. "$top/tools/build-dir.sh"
# MAL_SANITIZE=1: the sanitized suite (ASan + UBSan build in ./build-sanitize): the unit
# tests and every test at 2 ranks, the malleable ones included (11 minutes here, 12.5
# with the build: not part of CI). Arguments replace the selection.
if [ "${MAL_SANITIZE:-0}" = 1 ]; then
    [ $# -gt 0 ] || set -- -R '^(unit|sim)[.]|[.]n2$'
fi
sh "$top/tools/build.sh" --test
[ "${MAL_MPI:-}" = mpich ] && echo "test.sh: MPICH: the tests labelled needs-spawn and" \
    "openmpi-only do not run (cmake/malTestEnvironment.cmake says why)"
ctest --test-dir "$build" --output-on-failure "$@"
