#!/bin/sh
# Validation of the prediction model on this machine (Flex-MPI paper, Figure 7): Jacobi
# and CG run with reconfigurations at fixed iterations (rebalances, a release, a spawn,
# and a spawn beyond the cores); at each one libmal predicts the computation,
# communication, process and redistribution time of the sampling interval that follows
# and, when it has ended, writes the measured times beside them to the report
# ("kind":"prediction" lines of MAL_REPORT). This script collects them into a table with
# the relative error of every term, a CSV and a PNG plot. Then the policy's decisions
# against what happened (bench/regret.sh), and last one summary line:
#   model: total_median_abs_error=X% total_worst_abs_error=Y% regret_median=Z% regret_worst=W%
# (the total is a reconfiguration's own time: its process and redistribution terms).
#
# Usage: bench/validate_model.sh [OUT_DIR]     (from a configured build: MAL_BUILD_DIR,
#        default build/). Without MAL_CALIBRATION it runs mal-calibrate first.
# Sizes: MAL_VALIDATE_JACOBI_N (default 5000), MAL_VALIDATE_CG_MATRIX (poisson:700);
# MAL_VALIDATE_REGRET_REPS the repetitions of each decision scenario (default 3),
# MAL_VALIDATE_REGRET_SCENARIOS which (default all: bench/regret.sh lists them).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
out=${1:-$top/validation}
mkdir -p "$out"
run="$top/tools/malrun"

if [ -z "${MAL_CALIBRATION:-}" ]; then
    "$run" -n 2 "$build/apps/mal-calibrate" -o "$out/calibration.txt"
    MAL_CALIBRATION="$out/calibration.txt"
fi
export MAL_CALIBRATION
export MAL_SAMPLE_INTERVAL="${MAL_SAMPLE_INTERVAL:-10}"

# Reconfigurations 20 iterations apart: each interval after one is measured whole before
# the next. 2 -> 2 (skew, back), 2 -> 1, 1 -> 2, 2 -> 2 (skew, back), 2 -> 3 (beyond the
# 2 cores), 3 -> 2.
plan="20:w=1:3,40:w=1:1,60:-1,80:+1,100:w=3:1,120:w=1:1,140:+1,160:-1"
iters=180

report="$out/report.jsonl"
: > "$report"
MAL_PLAN="$plan" MAL_REPORT="$report.jacobi" "$run" -n 2 "$build/examples/jacobi" \
    --n "${MAL_VALIDATE_JACOBI_N:-5000}" --iters "$iters"
MAL_PLAN="$plan" MAL_REPORT="$report.cg" "$run" -n 2 "$build/examples/cg" \
    --matrix "${MAL_VALIDATE_CG_MATRIX:-poisson:700}" --iters "$iters" --tol 0
for app in jacobi cg; do
    grep '"kind":"prediction"' "$report.$app" | sed "s/^{/{\"app\":\"$app\",/" >> "$report"
    rm -f "$report.$app"
done

# One CSV row per reconfiguration and term: the report's fields by name.
csv="$out/validation.csv"
awk -f - "$report" > "$csv" <<'AWK'
function field(name,   m) {
    if (match($0, "\"" name "\":\"?[^,\"}]*")) {
        m = substr($0, RSTART, RLENGTH)
        sub("^\"" name "\":\"?", "", m)
        return m
    }
    return ""
}
function row(term,   p, m, e) {
    p = field(term "_pred_s"); m = field(term "_meas_s")
    e = m > 0 ? 100 * (p - m) / m : 0
    printf "%s,%s,%s,%d,%d,%s,%s,%s,%.2f\n", field("app"), field("iteration"),
           field("action"), field("procs_before"), field("procs_after"), term, p, m, e
}
BEGIN { print "app,iteration,action,procs_before,procs_after,term,predicted_s,measured_s,error_pct" }
{ row("comp"); row("comm"); row("process"); row("redist") }
AWK

# The table, and per term the error range and median |error| (terms that are zero on
# both sides, such as the process time of a rebalance, are left out).
awk -F, -f - "$csv" <<'AWK'
NR == 1 { next }
{
    key = $1 " it " $2
    if (!(key in seen)) { seen[key] = 1; order[++n] = key; what[key] = $3 " " $4 "->" $5 }
    pred[key, $6] = $7; meas[key, $6] = $8; err[key, $6] = $9
    if ($8 > 0 || $7 > 0) {
        over = $5 > 2 || $4 > 2
        k = ++count[$6, over]; errs[$6, over, k] = $9 < 0 ? -$9 : $9
        if (!(($6, over) in lo) || $9 < lo[$6, over]) lo[$6, over] = $9
        if (!(($6, over) in hi) || $9 > hi[$6, over]) hi[$6, over] = $9
    }
}
function median(term, over,   i, j, t, c) {
    c = count[term, over]
    for (i = 1; i <= c; i++) a[i] = errs[term, over, i]
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}
END {
    split("comp comm process redist", terms, " ")
    printf "%-16s %-16s", "run", "reconfiguration"
    for (t = 1; t <= 4; t++) printf " | %-24s", terms[t] " pred/meas s (err)"
    printf "\n"
    for (i = 1; i <= n; i++) {
        k = order[i]
        printf "%-16s %-16s", k, what[k]
        for (t = 1; t <= 4; t++)
            printf " | %7.4f/%7.4f (%+6.1f%%)", pred[k, terms[t]], meas[k, terms[t]], err[k, terms[t]]
        printf "\n"
    }
    for (over = 0; over <= 1; over++) {
        printf "\n%s:\n", over ? "beyond the cores (3 processes on 2 cores)" : "within the cores (1-2 processes)"
        for (t = 1; t <= 4; t++) {
            if (!count[terms[t], over]) continue
            printf "  %-8s error range [%+.2f, %+.2f]%%, median |error| %.2f%% over %d\n", terms[t],
                   lo[terms[t], over], hi[terms[t], over], median(terms[t], over), count[terms[t], over]
        }
    }
}
AWK

# Predicted against measured, every term, log-log: the diagonal is a perfect prediction.
png="$out/validation.png"
for term in comp comm process redist; do : > "$out/points.$term.dat"; done
awk -F, 'NR > 1 && $7 > 0 && $8 > 0 { print $7, $8 > ("'"$out"'/points." $6 ".dat") }' "$csv"
if command -v gnuplot > /dev/null; then
    gnuplot <<GNUPLOT
set terminal pngcairo size 900,700
set output "$png"
set logscale xy
set xlabel "predicted (s)"
set ylabel "measured (s)"
set title "libmal CPM: predicted vs measured times of the interval after each reconfiguration"
set key top left
f(x) = x
plot f(x) title "exact" with lines lc rgb "gray", \
     "$out/points.comp.dat" title "computation" with points pt 7, \
     "$out/points.comm.dat" title "communication" with points pt 5, \
     "$out/points.process.dat" title "process" with points pt 9, \
     "$out/points.redist.dat" title "redistribution" with points pt 11
GNUPLOT
    echo "validate_model: wrote $csv and $png"
else
    echo "validate_model: wrote $csv (gnuplot not installed: no plot)"
fi

# The policy's decisions, and the summary line: the error of each reconfiguration's total
# (its process and redistribution terms: spawn or release, setup, transfer).
sh "$top/bench/regret.sh" --reps "${MAL_VALIDATE_REGRET_REPS:-3}" --out "$out/regret" \
    ${MAL_VALIDATE_REGRET_SCENARIOS:+--scenarios "$MAL_VALIDATE_REGRET_SCENARIOS"} |
    tee "$out/regret.txt"
totals=$(awk -F, 'NR > 1 && ($6 == "process" || $6 == "redist") {
        k = $1 " " $2; p[k] += $7; m[k] += $8 }
    END { for (k in p) if (m[k] > 0) { e = 100 * (p[k] - m[k]) / m[k]; print e < 0 ? -e : e } }' \
    "$csv" | sort -n)
median_total=$(echo "$totals" | awk '{ v[NR] = $1 }
    END { printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
worst_total=$(echo "$totals" | tail -1 | awk '{ printf "%.1f", $1 }')
regret=$(sed -n 's/^regret: median=\([-0-9.]*\)% worst=\([-0-9.]*\)%.*/\1 \2/p' "$out/regret.txt")
echo "model: total_median_abs_error=${median_total}% total_worst_abs_error=${worst_total}%" \
    "regret_median=${regret%% *}% regret_worst=${regret##* }%"

