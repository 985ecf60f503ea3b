#!/bin/sh
# Where a reconfiguration's time goes as the process count grows (docs/design.md,
# "Dozens of processes on four hosts"): the same expansion p/2 -> p and the shrink back p -> p/2 at
# p = 4, 8, 16, 32, each in fresh processes (cold), phase by phase as libmal reports them
# (docs/report.md, phase_*_s: agree, spawn, merge, join, plan, setup, transfer, commit),
# with the data fixed per process and fixed in total. Then the fits: planning and
# agreement (agree + plan) per reconfiguration against p, as a straight line and as a
# power of p (an exponent at most 1 grows no faster than linearly), the same for join
# (for an expansion, the newcomers' start), and the transfer's seconds per byte at the
# largest p over the smallest. Each fit also shows how much its time grew at each step of
# p (a doubling: at most 2x grows no faster than p).
#
# Usage: bench/scale_phases.sh [--hosts 1|4] [--reps R] [--procs "4 8 16 32"]
#                              [--per-proc BYTES] [--total BYTES] [--out DIR]
#        bench/scale_phases.sh --table CSV    (the table and fits of an earlier run)
#   --hosts 4 (default, as root): the four emulated hosts of ctest/multihost (made and
#             removed here), 8 slots each, the processes spread over them (mpiexec's
#             --map-by node, new ones placed by libmal host by host); 1: this host
#             through tools/malrun.
#   --reps    fresh runs per cell (default 3); the table has each phase's median.
# Data: mal_soak's dense structure (checked after every step), --per-proc bytes per
# process at p (default 2 MiB, so p * 2 MiB in all) or --total bytes whatever p (64 MiB).
# Writes OUT/phases.csv (every run) and prints the table; from a configured build
# (MAL_BUILD_DIR, default build/). Run it on a quiet machine.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
soak=$build/bench/mal_soak
hosts=4 reps=3 procs="4 8 16 32" per_proc=2097152 total=67108864 out=$top/scale-phases
table=""
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) hosts=$2 ;;
    --reps) reps=$2 ;;
    --procs) procs=$2 ;;
    --per-proc) per_proc=$2 ;;
    --total) total=$2 ;;
    --out) out=$2 ;;
    --table) table=$2 ;;
    *) echo "usage: scale_phases.sh [--hosts 1|4] [--reps R] [--procs LIST]" \
            "[--per-proc BYTES] [--total BYTES] [--out DIR]" >&2; exit 2 ;;
    esac
    shift 2
done
csv=$out/phases.csv
[ -z "$table" ] || csv=$table
[ -n "$table" ] || [ -x "$soak" ] || { echo "scale_phases: no $soak (build first)" >&2; exit 2; }
[ -n "$table" ] || {
    mkdir -p "$out"
    echo "data,p,rep,action,bytes,agree,spawn,merge,join,plan,setup,transfer,commit,total" \
        > "$csv"
}

mh=$top/ctest/multihost
if [ -n "$table" ]; then
    :
elif [ "$hosts" = 4 ]; then
    export MH_COUNT=4 MH_SLOTS=8
    sh "$mh/multihost.sh" up
    trap 'sh "$mh/multihost.sh" down' EXIT
    trap 'exit 1' INT TERM HUP PIPE
    launcher=$mh/mhrun
    for h in malA malB malC malD; do echo "$h slots=8"; done > "$out/hostfile"
    export MAL_HOSTFILE="$out/hostfile"
else
    launcher=$top/tools/malrun
fi

# One run: p/2 processes grow to p and shrink back; its two records into the CSV.
run_once() {
    data=$1 p=$2 rep=$3 bytes=$4
    report=$out/run.jsonl
    rm -f "$report"
    MAL_REPORT=$report timeout 600 "$launcher" -n $((p / 2)) "$soak" --size "$bytes" \
        --script "+$((p / 2))b,-$((p / 2))" > "$out/run.log" 2>&1 ||
        { cat "$out/run.log" >&2; echo "scale_phases: the run at p=$p failed" >&2; exit 1; }
    awk -v data="$data" -v p="$p" -v rep="$rep" -F'[,:{}"]+' '
        /"kind":"reconfig"/ {
            for (i = 1; i < NF; i++) v[$i] = $(i + 1)
            printf "%s,%d,%d,%s,%s", data, p, rep, v["action"], v["bytes_moved"]
            n = split("agree spawn merge join plan setup transfer commit", ph, " ")
            for (k = 1; k <= n; k++) printf ",%s", v["phase_" ph[k] "_s"]
            printf ",%s\n", v["total_s"]
        }' "$report" >> "$csv"
}

# Rotated order: the memory state one run leaves is not always the next size's.
[ -n "$table" ] && reps=0
for rep in $(seq 1 "$reps"); do
    order=$procs
    [ $((rep % 2)) = 0 ] && order=$(echo "$procs" | tr ' ' '\n' | sort -rn | tr '\n' ' ')
    for p in $order; do
        run_once per-proc "$p" "$rep" $((per_proc * p))
        run_once total "$p" "$rep" "$total"
    done
done

# The table (medians over the reps) and the fits.
awk -F, -v procs="$procs" '
# Least squares over p, as a line and as a power of p, per data mode and action.
function fit(title, t,   d, a, i, n, x, y, sx, sy, sxx, sxy, lx, ly, lxx, lxy, slope,
             icpt, expo) {
    print title ", against p:"
    for (d = 1; d <= 2; d++) for (a = 1; a <= 2; a++) {
        sx = sy = sxx = sxy = lx = ly = lxx = lxy = 0; n = 0
        for (i = 1; i <= np; i++) {
            x = P[i]; y = t[d, a, i]
            if (y <= 0) continue
            n++; sx += x; sy += y; sxx += x * x; sxy += x * y
            lx += log(x); ly += log(y); lxx += log(x) ^ 2; lxy += log(x) * log(y)
        }
        if (n < 2) continue
        slope = (n * sxy - sx * sy) / (n * sxx - sx * sx); icpt = (sy - slope * sx) / n
        expo = (n * lxy - lx * ly) / (n * lxx - lx * lx)
        printf "  %-8s %-6s t = %.5f + %.6f p s; t ~ p^%.2f (%s); per step of p:", D[d],
               A[a], icpt, slope, expo,
               expo <= 1.0 ? "no faster than linear" : "faster than linear"
        for (i = 2; i <= np; i++)
            if (t[d, a, i - 1] > 0)
                printf " %.2fx", t[d, a, i] / t[d, a, i - 1]
        printf "\n"
    }
}
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
        t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
NR > 1 {
    key = $1 SUBSEP $2 SUBSEP $4
    for (c = 5; c <= 14; c++) cell[key, c] = cell[key, c] " " $c
}
END {
    split("bytes agree spawn merge join plan setup transfer commit total", name, " ")
    np = split(procs, P, " ")
    split("per-proc total", D, " ")
    split("expand shrink", A, " ")
    printf "%-8s %-6s %3s %10s", "data", "action", "p", "MiB moved"
    for (c = 6; c <= 14; c++) printf " %9s", name[c - 4]
    printf " %9s\n", "s/GB"
    for (d = 1; d <= 2; d++) for (a = 1; a <= 2; a++) for (i = 1; i <= np; i++) {
        key = D[d] SUBSEP P[i] SUBSEP A[a]
        if (cell[key, 5] == "") continue
        printf "%-8s %-6s %3d %10.1f", D[d], A[a], P[i], median(cell[key, 5]) / 1048576
        for (c = 6; c <= 14; c++) {
            m[c] = median(cell[key, c]); printf " %9.4f", m[c]
        }
        bytes = median(cell[key, 5])
        xfer[d, a, i] = bytes > 0 ? m[12] / bytes * 1e9 : 0
        coord[d, a, i] = m[6] + m[10]
        join[d, a, i] = m[9]
        printf " %9.3f\n", xfer[d, a, i]
    }
    print ""
    fit("planning and agreement (agree + plan)", coord)
    fit("join (an expansion: the newcomers arrive and set up)", join)
    print "transfer seconds per byte, largest p over smallest:"
    for (d = 1; d <= 2; d++) for (a = 1; a <= 2; a++)
        if (xfer[d, a, 1] > 0)
            printf "  %-8s %-6s %.2fx (p=%d over p=%d)\n", D[d], A[a],
                   xfer[d, a, np] / xfer[d, a, 1], P[np], P[1]
}' "$csv"
echo "scale_phases: every run in $csv"
