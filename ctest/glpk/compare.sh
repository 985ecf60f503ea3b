#!/bin/sh
# The class selection built with GLPK (MAL_WITH_GLPK=ON), in a build of its own: configures
# the source tree into a temporary directory, builds only the selection's unit test
# (test_select, which then runs both solvers and compares them on random instances) and
# runs it; checks that the configure summary and mal.pc say GLPK.
#
#   sh ctest/glpk/compare.sh SOURCE_DIR C_COMPILER
#
# Exit status: 0 when the test passes, 1 when a step fails, 77 (skipped) without GLPK's
# headers and library (libglpk-dev; tools/setup-deps.sh --test installs it).
set -eu
src=$1
cc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! cmake -S "$src" -B "$work" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release \
    -DMAL_WITH_GLPK=ON -DMAL_BUILD_EXAMPLES=OFF -DMAL_BUILD_APPS=OFF \
    -DMAL_BUILD_BENCH=OFF >"$work/configure.log" 2>&1; then
    if grep -q "GLPK_INCLUDE_DIR\|GLPK_LIBRARY" "$work/configure.log"; then
        echo "compare.sh: skipped: GLPK not found (install libglpk-dev)"
        exit 77
    fi
    cat "$work/configure.log"
    echo "compare.sh: FAIL: configure"
    exit 1
fi
grep "GLPK: *ON" "$work/configure.log" || { echo "compare.sh: FAIL: no 'GLPK: ON' summary line"; exit 1; }
grep -q -- "-lglpk" "$work/mal.pc" || { echo "compare.sh: FAIL: mal.pc lacks -lglpk"; exit 1; }
cmake --build "$work" --target test_select >"$work/build.log" 2>&1 || {
    cat "$work/build.log"
    echo "compare.sh: FAIL: build"
    exit 1
}
"$work/ctest/test_select"
