#!/bin/sh
# Install missing packages, configure and build libmal in ./build (or $MAL_BUILD_DIR).
# Arguments go to tools/setup-deps.sh (tools/test.sh passes --test).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# MAL_SANITIZE=1: AddressSanitizer + UndefinedBehaviorSanitizer, in ./build-sanitize.
sanitize=OFF
[ "${MAL_SANITIZE:-0}" = 1 ] && sanitize=ON
default_build=$top/build
[ "$sanitize" = ON ] && default_build=$top/build-sanitize
build=${MAL_BUILD_DIR:-$default_build}
sh "$top/tools/setup-deps.sh" "$@" # --test: the packages only the suite uses
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAL_SANITIZE=$sanitize >/dev/null
cmake --build "$build" -j "$(nproc)"
