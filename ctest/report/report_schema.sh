#!/bin/sh
# report.schema: the report of real runs checked against docs/report.md.
# Usage: report_schema.sh LAUNCHER JACOBI CHECK_REPORT SCHEMA.md WORKDIR
# Run 1, a plan: expand at 4, rebalance at 10, shrink at 16 (reconfig records, the
# predictions checked after each, and the released process's parked record).
# Run 2, no plan: the policy decides at the end of every sampling interval (decision
# records). Run 3: an abandoned reconfiguration. Both reports must pass, and hold every
# kind between them.
set -eu
launcher=$1 jacobi=$2 check=$3 schema=$4 dir=$5
mkdir -p "$dir"
plan_report="$dir/plan.jsonl"
policy_report="$dir/policy.jsonl"
rm -f "$plan_report" "$policy_report"
MAL_PLAN="4:+1,10:w=1:2:1,16:-1" MAL_SAMPLE_INTERVAL=2 MAL_GRACE=0 MAL_QUIET=1 \
    MAL_REPORT="$plan_report" "$launcher" -n 2 "$jacobi" --n 640 --iters 24 --check
MAL_SAMPLE_INTERVAL=2 MAL_GRACE=0 MAL_QUIET=1 MAL_REPORT="$policy_report" \
    "$launcher" -n 2 "$jacobi" --n 640 --iters 8 --check
# Run 3, a rebalance that fails half-way (MAL_FAULT_DIRECT): an abandoned reconfig record
# (outcome and error), appended to the plan's report. rma: both ranks copy, so rank 0's
# own transfer fails (MAL_ERR_MPI); with a pull only rank 1 copies.
MAL_PLAN="4:w=1:2" MAL_REDIST=rma MAL_FAULT_DIRECT=1 MAL_QUIET=1 MAL_REPORT="$plan_report" \
    "$launcher" -n 2 "$jacobi" --n 640 --iters 8 --check 2>/dev/null
grep -q '"outcome":"MAL_ERR_MPI","error":' "$plan_report" ||
    { echo "report_schema: FAIL no abandoned reconfiguration in the report"; exit 1; }
# What each reconfiguration asked for: the rebalance's weights, the shrink's released rank.
grep -q '"action":"rebalance","procs_before":3,"procs_after":3,"weights":"1:2:1"' \
    "$plan_report" || { echo "report_schema: FAIL no weights in the rebalance record"; exit 1; }
grep -q '"action":"shrink","procs_before":3,"procs_after":2,"released":"2"' "$plan_report" ||
    { echo "report_schema: FAIL no released rank in the shrink record"; exit 1; }
cat "$plan_report" "$policy_report"
"$check" "$schema" "$plan_report" "$policy_report" --require reconfig,prediction,parked,decision
