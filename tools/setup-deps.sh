#!/bin/sh
# Install the Debian packages libmal needs, only those missing (run as root, or with sudo
# available). Used by tools/main.sh and tools/test.sh (through tools/build.sh).
# Usage: setup-deps.sh [--test]
#   (none)  what building libmal, its tools, examples and benchmarks needs
#   --test  also what only the test suite uses: doxygen (the API reference, built with
#           warnings as errors), groff-base (the man pages, rendered), a one-node Slurm
#           (slurmctld, slurmd, slurm-client, munge: the tests labelled slurm),
#           iproute2 (network namespaces: the tests labelled multihost) and libglpk-dev
#           (GLPK, GPL-3.0-or-later: the test labelled glpk builds the class selection
#           with it, MAL_WITH_GLPK=ON, and compares it with libmal's own search; libmal
#           does not need it)
#           Debian's munge, slurmctld and slurmd packages enable their system services and,
#           on a machine running systemd, start them: on a developer's machine that is a
#           munged and a Slurm running until stopped (systemctl disable --now munge
#           slurmctld slurmd). The tests do not use them: they start their own munged,
#           slurmctld and slurmd with their own key, configuration and ports, and stop them.
set -eu
PACKAGES="gcc make cmake pkg-config openmpi-bin libopenmpi-dev mpich libmpich-dev \
libpapi-dev libhwloc-dev libsuitesparse-dev gnuplot-nox"
TEST_PACKAGES="doxygen groff-base slurmctld slurmd slurm-client munge iproute2 hostname \
libglpk-dev"
[ "${1:-}" = --test ] && PACKAGES="$PACKAGES $TEST_PACKAGES"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "setup-deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing
