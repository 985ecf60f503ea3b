#!/bin/sh
# Install the build tree into a scratch prefix, then build and run a consumer through
# find_package(mal) and through pkg-config. Usage: check_install.sh BUILD_DIR SRC_DIR LAUNCHER
set -eu
build=$1 src=$2 launcher=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$launcher" -n 1 "$work/cmake-build/consumer"
libdir=$(find "$work/prefix" -name mal.pc -exec dirname {} \;)
PKG_CONFIG_PATH="$libdir" cc -o "$work/pc-consumer" "$src/consumer.c" \
    $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs mal)
LD_LIBRARY_PATH="$libdir/..:${LD_LIBRARY_PATH:-}" "$launcher" -n 1 "$work/pc-consumer"
test -z "$(find "$work/prefix/include" -name '*.h' ! -name mal.h ! -name mal_version.h \
    ! -name mal_status.h ! -name mal_pmpi.h)" || {
    echo "consumer: FAIL (private headers installed)"; exit 1; }
echo "install: PASS"
