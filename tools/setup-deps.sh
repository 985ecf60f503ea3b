#!/bin/sh
# Install the Debian packages libmal needs, only those missing (run as root, or with sudo
# available). Used by tools/main.sh and tools/test.sh.
set -eu
PACKAGES="gcc make cmake pkg-config openmpi-bin libopenmpi-dev libucx-dev ucx-utils \
libpapi-dev papi-tools libhwloc-dev hwloc libsuitesparse-dev libglpk-dev gnuplot-nox"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "setup-deps: installing$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing
