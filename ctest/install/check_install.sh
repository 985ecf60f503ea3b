#!/bin/sh
# The install as a user meets it: `cmake --install` into a scratch prefix, then, with only
# PREFIX/bin, /usr/bin and /bin on PATH and no LD_LIBRARY_PATH, everything from there:
#   a consumer built out of tree with find_package(mal) (shared and static libmal) and
#   with pkg-config, run through the installed malrun; mal-sim (--help, scenario 1
#   checked); a benchmark through malrun; mal-calibrate --quick through malrun;
# then the prefix moved elsewhere and the same again (relocatable: RUNPATH $ORIGIN, the
# CMake package and mal.pc relative to themselves), and the benchmark's cold driver, which
# launches the malrun installed beside it by default. Also: no private header installed, no
# path of this machine's libraries in the CMake package, RUNPATH $ORIGIN on every
# installed executable and on libmal-pmpi.
# Usage: check_install.sh BUILD_DIR CONSUMER_SRC_DIR CMAKE CC
set -eu
build=$1 src=$2 cmake=$3 cc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install: FAIL ($*)"; exit 1; }

"$cmake" --install "$build" --prefix "$work/prefix" >/dev/null
unset LD_LIBRARY_PATH MAL_LAUNCHER
export PATH="$work/prefix/bin:/usr/bin:/bin"

# A consumer configured with the other MPI family's compiler wrapper than the one libmal
# ($3, mal.pc's mpi variable) was built for is refused by find_package(mal), with a
# message naming both; skipped where the other family is not installed.
check_other_mpi() {
    case $3 in
    openmpi) other=mpich ;;
    mpich) other=openmpi ;;
    *) fail "$2: mal.pc says mpi='$3'" ;;
    esac
    wrapper=$(command -v "mpicc.$other") || return 0
    if "$cmake" -S "$src" -B "$work/$2-other" -DCMAKE_PREFIX_PATH="$1" \
        -DCMAKE_C_COMPILER="$cc" -DMPI_C_COMPILER="$wrapper" >"$work/other.log" 2>&1; then
        fail "$2: a consumer built with $wrapper found a libmal built for $3"
    fi
    grep -q "was built for $3" "$work/other.log" ||
        { cat "$work/other.log"; fail "$2: the refusal does not name the MPI"; }
}

# Checks the prefix $1 as installed; $2 names the round in the messages.
check_prefix() {
    p=$1 round=$2
    test -z "$(find "$p/include" -name '*.h' ! -name mal.h ! -name mal_version.h \
        ! -name mal_status.h ! -name mal_pmpi.h)" || fail "$round: private headers installed"
    ! grep -rqE '/usr/lib|/usr/local/lib' "$p/lib/cmake" "$p/lib/pkgconfig" ||
        fail "$round: a library path of this machine in the CMake package or mal.pc"
    for exe in "$p"/bin/* "$p"/lib/libmal-pmpi.so; do
        head -c 4 "$exe" | grep -q ELF || continue # malrun is a script
        readelf -d "$exe" | grep -q 'RUNPATH.*\$ORIGIN' || fail "$round: $exe has no RUNPATH \$ORIGIN"
    done
    [ "$(command -v malrun)" = "$p/bin/malrun" ] || fail "$round: malrun is not $p/bin/malrun"

    b="$work/$round-cmake"
    "$cmake" -S "$src" -B "$b" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_COMPILER="$cc" >/dev/null ||
        fail "$round: find_package(mal)"
    "$cmake" --build "$b" >/dev/null || fail "$round: building the find_package consumer"
    malrun -n 2 "$b/consumer" | grep -q 'consumer: PASS' || fail "$round: consumer (CMake)"
    malrun -n 2 "$b/consumer_static" | grep -q 'consumer: PASS' ||
        fail "$round: consumer (CMake, mal::mal_static)"
    pc="$p/lib/pkgconfig"
    check_other_mpi "$p" "$round" "$(PKG_CONFIG_PATH="$pc" pkg-config --variable=mpi mal)"
    libdir=$(PKG_CONFIG_PATH="$pc" pkg-config --variable=libdir mal)
    # shellcheck disable=SC2046 # the flags are words
    "$cc" -o "$work/$round-pc-consumer" "$src/consumer.c" -Wl,-rpath,"$libdir" \
        $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs mal) || fail "$round: pkg-config build"
    malrun -n 2 "$work/$round-pc-consumer" | grep -q 'consumer: PASS' ||
        fail "$round: consumer (pkg-config)"

    mal-sim --help | grep -q "$p/bin/.*/mal/scenarios/jb8.avail" ||
        fail "$round: mal-sim --help names no installed default cluster"
    mal-sim scenario1 --check | grep -q 'mal-sim: scenario 1 PASS' || fail "$round: mal-sim scenario1"
    malrun -n 2 mal_bench_redist --size 65536 --reps 1 --pattern one-to-all >"$work/redist" 2>&1 &&
        grep -q " alltoallv " "$work/redist" || { cat "$work/redist"; fail "$round: mal_bench_redist"; }
    echo "install: $round: consumers, mal-sim and mal_bench_redist pass from $p"
}

check_prefix "$work/prefix" installed
malrun -n 2 mal-calibrate --quick -o "$work/calibration.txt" >/dev/null 2>&1 &&
    grep -q '^alpha' "$work/calibration.txt" || fail "mal-calibrate --quick through malrun"
mv "$work/prefix" "$work/moved"
export PATH="$work/moved/bin:/usr/bin:/bin"
check_prefix "$work/moved" moved
# The cold driver launches its fresh jobs itself, with the malrun beside it by default.
mal_bench_redist --cold --size 65536 --cold-reps 1 --reps 1 --pattern one-to-all \
    >"$work/cold" 2>&1 && grep -q mpi-alltoallv "$work/cold" ||
    { cat "$work/cold"; fail "moved: mal_bench_redist --cold (the malrun beside it)"; }
echo "install: PASS"
