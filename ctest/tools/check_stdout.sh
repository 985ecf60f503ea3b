#!/bin/sh
# tools.stdout.*: an output file named "-" is standard output, and then it holds the data
# alone: every line of stdout must match PATTERN (at least LINES of them), while the
# program's other lines (NOTICE, a line it prints on stdout otherwise) and libmal's
# notices arrive on stderr. A file that cannot be written fails with status 1 and a
# message naming it (checked by running the command again with "-" replaced).
# Usage: check_stdout.sh PATTERN LINES NOTICE COMMAND... (one argument of COMMAND is "-")
set -u
pattern=$1 lines=$2 notice=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
    echo "check_stdout: FAIL $*"
    echo "--- stdout:"
    head -20 "$dir/out"
    echo "--- stderr:"
    tail -20 "$dir/err"
    exit 1
}
"$@" >"$dir/out" 2>"$dir/err" || fail "the command exited $?"
got=$(wc -l <"$dir/out")
[ "$got" -ge "$lines" ] || fail "$got lines on stdout, expected at least $lines"
bad=$(grep -cvE "$pattern" "$dir/out")
[ "$bad" -eq 0 ] || fail "$bad lines on stdout do not match $pattern"
grep -q "$notice" "$dir/err" || fail "no '$notice' on stderr"
# The same command writing into a directory that does not exist.
missing="$dir/no/such/dir/file"
first=1
for a in "$@"; do
    [ "$first" = 1 ] && { set --; first=0; }
    if [ "$a" = "-" ]; then set -- "$@" "$missing"; else set -- "$@" "$a"; fi
done
"$@" >"$dir/out" 2>"$dir/err"
status=$?
[ "$status" -eq 1 ] || fail "writing to $missing exited $status, not 1"
grep -q "cannot write $missing" "$dir/err" || fail "no 'cannot write $missing' on stderr"
echo "check_stdout: PASS $got data lines on stdout, '$notice' on stderr; an unwritable file exits 1"
