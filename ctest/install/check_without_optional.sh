#!/bin/sh
# libmal without its optional dependencies, as a user without libpapi-dev and
# libsuitesparse-dev builds it: configured with MAL_WITH_PAPI=OFF and MAL_WITH_CHOLMOD=OFF
# in a scratch directory, the summary must say so, libmal must not need libpapi, and the
# Matrix Market reader's unit test (files refused with a message, generators checked) and
# the monitor's MPI test (no hardware counter) must pass there.
# Usage: check_without_optional.sh SOURCE_DIR CMAKE CTEST
set -eu
src=$1 cmake=$2 ctest=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "without-optional: FAIL ($*)"; exit 1; }

"$cmake" -S "$src" -B "$work" -DMAL_WITH_PAPI=OFF -DMAL_WITH_CHOLMOD=OFF \
    -DMAL_BUILD_BENCH=OFF -DMAL_BUILD_APPS=OFF -DMAL_BUILD_EXAMPLES=OFF >"$work/configure.log" ||
    { cat "$work/configure.log"; fail "configure"; }
grep -q 'PAPI: *off (MAL_WITH_PAPI=OFF)' "$work/configure.log" || fail "summary: PAPI"
grep -q 'CHOLMOD: *off (MAL_WITH_CHOLMOD=OFF)' "$work/configure.log" || fail "summary: CHOLMOD"
"$cmake" --build "$work" -j 2 --target test_matrix_input test_monitor >"$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log"; fail "build"; }
! grep -q 'warning:' "$work/build.log" || { grep 'warning:' "$work/build.log"; fail "warnings"; }
! readelf -d "$work/src/libmal.so" | grep -q 'libpapi' || fail "libmal.so needs libpapi"
"$ctest" --test-dir "$work" -R '^(unit.matrix_input|mpi.monitor.n1)$' --output-on-failure ||
    fail "tests"
echo "without-optional: PASS"
