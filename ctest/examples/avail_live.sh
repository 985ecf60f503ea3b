#!/bin/sh
# The availability file read again during the run (a host's core that becomes free):
# 1 process of Jacobi, an availability file that gives this host 1 core, the policy
# wanting 2 processes (preferred=2: grow while cores are free). Once iteration 12 is
# done, Jacobi waits until the file gives this host 2 cores (--resume-on). The policy
# must not expand before that and must expand at a decision after it, with the notice
# of the file read again; x must be bit-exact (--check).
#   avail_live.sh LAUNCHER JACOBI
set -eu
launcher=$1 jacobi=$2
if [ "$(nproc)" -lt 2 ]; then # libmal caps this host's cores by what hwloc finds
    echo "avail_live: SKIPPED: needs 2 cores, this machine has $(nproc)"
    exit 77
fi
dir=$(mktemp -d)
job=""
trap '[ -z "$job" ] || kill "$job" 2>/dev/null; rm -rf "$dir"' EXIT
host=$(hostname)
printf '%s 1 local 1.0 0\n' "$host" > "$dir/avail"
env MAL_AVAILABILITY="$dir/avail" MAL_POLICY=preferred=2 MAL_REPORT="$dir/report.jsonl" \
    MAL_SAMPLE_INTERVAL=4 MAL_GRACE=1 "$launcher" -n 1 "$jacobi" --n 300 --iters 40 \
    --check --mark "$dir/mark" --mark-at 12 --resume-on "$dir/go" > "$dir/out" 2>&1 &
job=$!
while [ ! -e "$dir/mark" ] && kill -0 "$job" 2>/dev/null; do sleep 0.01; done
# A new file moved into place: the policy never reads a half-written one.
printf '%s 2 local 1.0 0\n' "$host" > "$dir/avail.new"
touch -d '+1 second' "$dir/avail.new" # a new modification time, however coarse the clock
mv "$dir/avail.new" "$dir/avail"
: > "$dir/go"
status=0
wait "$job" || status=$?
job=
fail() {
    echo "avail_live: FAIL: $1"
    cat "$dir/out"
    cat "$dir/report.jsonl" 2>/dev/null
    exit 1
}
[ "$status" = 0 ] || fail "jacobi exited with $status"
grep -q "jacobi: PASS" "$dir/out" || fail "jacobi --check did not pass"
grep -q "availability file .* read again: 1 hosts, 2 cores" "$dir/out" ||
    fail "no notice of the file read again"
first=$(awk '/"kind":"reconfig"/ && /"action":"expand"/ {
        match($0, /"iteration":[0-9]+/); print substr($0, RSTART + 12, RLENGTH - 12); exit }' \
    "$dir/report.jsonl")
[ -n "$first" ] || fail "the policy never expanded"
[ "$first" -gt 12 ] || fail "expanded at iteration $first, before the core became free"
echo "avail_live: PASS (expanded at iteration $first)"
