#!/bin/sh
# A malleable example against the static program it is made from, both started on the
# same number of processes (the malleable one follows MAL_PLAN from the environment):
#   vs_static.sh LAUNCHER N STATIC MALLEABLE [ARGS...]
# Each prints one result line "NAME: ... (P processes)"; between the name and the
# process count the two must be equal, byte for byte (for heat2d: the grid's size, the
# iterations, t in hexadecimal and the grid's checksum). Prints "vs_static: PASS", or
# "vs_static: FAIL" with both lines.
set -eu
launcher=$1 n=$2 static=$3 malleable=$4
shift 4
result() {
    sed -n 's/^[^ :]*: \(.* \)([0-9]* processes)$/\1/p'
}
want=$(MAL_PLAN= "$launcher" -n "$n" "$static" "$@" | result)
got=$("$launcher" -n "$n" "$malleable" "$@" | result)
if [ -z "$want" ] || [ "$want" != "$got" ]; then
    echo "vs_static: FAIL"
    echo "  static:    $want"
    echo "  malleable: $got"
    exit 1
fi
echo "vs_static: PASS $got"
