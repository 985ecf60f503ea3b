#!/bin/sh
# Install missing packages, configure and build libmal in ./build (or $MAL_BUILD_DIR).
# Arguments go to tools/setup-deps.sh (tools/test.sh passes --test).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# MAL_SANITIZE=1: AddressSanitizer + UndefinedBehaviorSanitizer, in ./build-sanitize.
sanitize=OFF
[ "${MAL_SANITIZE:-0}" = 1 ] && sanitize=ON
# MAL_MPI=mpich: built for MPICH, in ./build-mpich (openmpi: Open MPI, in ./build; unset:
# the family of mpicc, Open MPI on Debian with both installed).
mpi=${MAL_MPI:-}
case $mpi in
'' | openmpi | mpich) ;;
*) echo "build.sh: MAL_MPI='$mpi': openmpi or mpich" >&2; exit 2 ;;
esac
. "$top/tools/build-dir.sh"
sh "$top/tools/setup-deps.sh" "$@" # --test: the packages only the suite uses
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAL_SANITIZE=$sanitize \
    ${mpi:+-DMAL_MPI=$mpi} >/dev/null
cmake --build "$build" -j "$(nproc)"
