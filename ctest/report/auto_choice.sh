#!/bin/sh
# report.auto: MAL_REDIST unset (auto) takes, per reconfiguration, the executor the
# calibration names fastest for its link class and state, and says which, in the report
# and in rank 0's summary line. A calibration whose redist_host_* keys make p2p the
# fastest cold and alltoallv the fastest warm (the documented defaults say otherwise):
# the expansion (new memory: cold) must run p2p, the rebalances after it (buffers that
# exchanged data: warm) alltoallv; MAL_REDIST=rma must not be overridden; every run
# bit-exact (jacobi --check).
# Usage: auto_choice.sh LAUNCHER JACOBI WORKDIR
set -eu
launcher=$1 jacobi=$2 dir=$3
mkdir -p "$dir"
fail() { echo "report_auto: FAIL $*"; exit 1; }
# Only what this test sets: a caller's MAL_QUIET, MAL_REDIST or MAL_PLAN would change
# what it checks (ctest's MAL_RECONF_TIMEOUT bound stays).
for v in $(env | sed -n 's/^\(MAL_[A-Z_]*\)=.*/\1/p'); do
    [ "$v" = MAL_RECONF_TIMEOUT ] || unset "$v"
done
cal=$dir/calibration.txt
{
    printf 'alpha = 1e-6\nbeta = 1e-10\ngamma = 1e-10\nget_bandwidth = 5e9\n'
    printf 'get_latency = 1e-6\ncopy_bandwidth = 8e9\nepoch_seconds = 1e-4\n'
    printf 'window_seconds = 1e-4\nwindow_byte_seconds = 1e-10\nspawn_seconds = 0.1\n'
    printf 'remove_seconds = 0.001\ncores = 2\n'
    for state in warm cold; do
        for m in rma alltoallv p2p rma-get; do
            bw=1e9
            [ $state = cold ] && [ $m = p2p ] && bw=9e9
            [ $state = warm ] && [ $m = alltoallv ] && bw=9e9
            printf 'redist_host_%s_%s = %s\n' $state $m $bw
        done
    done
} >"$cal"
report=$dir/auto.jsonl
rm -f "$report"
MAL_PLAN="3:+1,6:w=1:2:1,9:w=1:1:1" MAL_CALIBRATION="$cal" MAL_REPORT="$report" \
    "$launcher" -n 2 "$jacobi" --n 600 --iters 12 --check >"$dir/log" 2>&1 ||
    { cat "$dir/log"; fail "jacobi under auto exited with $?"; }
cat "$dir/log" "$report"
grep -q '^jacobi: PASS' "$dir/log" || fail "no PASS from jacobi"
grep -q '"action":"expand".*"method":"p2p","auto":true' "$report" ||
    fail "the expansion (cold) did not run p2p under auto"
[ "$(grep -c '"action":"rebalance".*"method":"alltoallv","auto":true' "$report")" = 2 ] ||
    fail "the two rebalances (warm) did not run alltoallv under auto"
grep -q 'expand 2 -> 3 procs, .* moved by p2p (auto: one host, cold)' "$dir/log" ||
    fail "rank 0's summary does not say what auto took for the expansion"
grep -q 'rebalance 3 -> 3 procs, .* moved by alltoallv (auto: one host, warm)' "$dir/log" ||
    fail "rank 0's summary does not say what auto took for a rebalance"
# An explicit method stays what it is.
rm -f "$report"
MAL_REDIST=rma MAL_PLAN="3:+1,6:w=1:2:1" MAL_CALIBRATION="$cal" MAL_REPORT="$report" \
    "$launcher" -n 2 "$jacobi" --n 600 --iters 8 --check >"$dir/log" 2>&1 ||
    { cat "$dir/log"; fail "jacobi under rma exited with $?"; }
[ "$(grep -c '"method":"rma","auto":false' "$report")" = 2 ] ||
    fail "MAL_REDIST=rma was not kept (report: $(cat "$report"))"
echo "report_auto: PASS"
