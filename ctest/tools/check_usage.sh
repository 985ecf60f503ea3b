#!/bin/sh
# tools.usage.*: a program given a wrong command line fails like a Unix tool: exit
# status 2, nothing on stdout, and on stderr a message that starts with the program's
# name and points to --help. Nothing is launched: the options are read before MPI starts.
# Usage: check_usage.sh PROGRAM NAME ARG...
set -u
program=$1 name=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$program" "$@" >"$dir/out" 2>"$dir/err"
status=$?
fail() {
    echo "check_usage: FAIL $name $*"
    echo "--- stderr:"
    cat "$dir/err"
    exit 1
}
[ "$status" -eq 2 ] || fail "$* exited $status, not 2"
[ ! -s "$dir/out" ] || fail "$* wrote on stdout: $(head -c 200 "$dir/out")"
grep -q "^$name: .*(try --help)\$" "$dir/err" || fail "$* said no '$name: ... (try --help)'"
echo "check_usage: PASS $name $*: $(cat "$dir/err")"
