#!/bin/sh
# The policy's decisions measured against what happened: for each scenario, a run with
# the policy deciding (no plan) finds the iteration K of its first decision and what it
# did; then every alternative at K (nothing, and the listed plan entries: an expansion, a
# shrink, ...) is run from the same start in fresh runs, with the policy off and the
# alternative as the plan. Jacobi runs are timed over mal_init and their iterations (the
# sum of `jacobi --times --times-init`, reconfigurations included): the launch and the
# first allocation, which no decision changes, vary by up to 0.75 s between identical
# runs here (the memory's state); mal_init is in, because a plan that spawns pays Open
# MPI's platform probe (0.2 s) there, where the policy pays it at its first expansion. CG, which has no per-iteration
# times, is timed by the wall seconds of the whole job. Regret = the policy's time over
# the best time among the alternatives and the policy's own, minus 1 (0: the policy chose
# the best). Medians over --reps runs of each.
#
# Usage: bench/regret.sh [--reps R] [--out DIR] [--scenarios "NAME ..."]
# Prints one line per scenario, mal-sim's replay of the Jacobi scenarios (the policy's
# first decision and every alternative at every decision point, priced with the costs
# measured in these runs: OUT/replay.csv) and, last,
#   regret: median=Z% worst=W% short_run_reconfigured=0|1
# and writes OUT/regret.csv (every run), OUT/regret_table.csv (each scenario's medians)
# and, with gnuplot, OUT/regret.png (each scenario's runs against its best). From a configured build (MAL_BUILD_DIR, default
# build/); run it on a quiet machine (2 cores here: one or two processes per core).
#
# Scenarios (fixed here; 1 process grows to the machine's 2 cores at most):
#   jacobi-goal  Jacobi n=4000, 240 iterations, 1 process, MAL_POLICY speedup=0.3 under
#                the efficiency constraint: alternatives nothing, +1
#   cg-goal      CG poisson:700 (490,000 rows), 240 iterations, the same objective:
#                nothing, +1
#   short-run    Jacobi n=4000, 20 iterations, the same objective: with 10 iterations
#                left at the first decision an expansion cannot pay (measured: +1 at 10
#                adds 0.08 s and saves 2 ms per iteration); nothing, +1
#   loaded-core  Jacobi n=4000, 240 iterations, 2 processes bound to cores 0 and 1; once
#                iteration 5 is done another user's busy loop starts on core 1 and runs
#                to the end (Dyn-MPI's experiment); MAL_POLICY mode=loaded: nothing, a
#                rebalance to the halved core's power (w=2:1), the release of rank 1 (-1)
#   host-free    Jacobi n=4000, 240 iterations, 1 process; another user's busy loop holds
#                core 1 and the availability file gives this host 1 core until iteration
#                10 is done, when the loop ends and the file gives 2 (the run waits at
#                the marker until both are in place: jacobi --resume-on); the jacobi-goal
#                objective: nothing, +1
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MAL_BUILD_DIR:-$top/build}
run=$top/tools/malrun
reps=3 out=$top/validation/regret
scenarios="jacobi-goal cg-goal short-run loaded-core host-free"
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2 ;;
    --out) out=$2 ;;
    --scenarios) scenarios=$2 ;;
    *) echo "usage: regret.sh [--reps R] [--out DIR] [--scenarios LIST]" >&2; exit 2 ;;
    esac
    shift 2
done
mkdir -p "$out"
trap 'stop_busy; stop_running; exit 130' INT TERM
# Only the settings each run gives: a caller's MAL_POOL, MAL_LEARN, MAL_ASYNC, ... would
# change what is compared (the calibration and the build stay the caller's).
for v in $(env | sed -n 's/^\(MAL_[A-Z_]*\)=.*/\1/p'); do
    case $v in MAL_BUILD_DIR | MAL_CALIBRATION | MAL_RECONF_TIMEOUT) ;; *) unset "$v" ;; esac
done
: > "$out/replay_runs.csv"
csv=$out/regret.csv
echo "scenario,rep,run,decision,seconds" > "$csv"
jacobi="$build/examples/jacobi --n 4000 --quiet --times $out/times.csv --times-init"
cg="$build/examples/cg --matrix poisson:700 --tol 0"
goal="speedup=0.3,constraint=efficiency"

# Scenario NAME: processes, program and arguments, iterations, policy, a first plan
# entry every run shares (or nothing), the alternatives, the outside event (event()).
scenario() {
    case $1 in
    jacobi-goal) echo "1|$jacobi --iters 240|240|$goal||+1|" ;;
    cg-goal) echo "1|$cg --iters 240|240|$goal||+1|" ;;
    short-run) echo "1|$jacobi --iters 20|20|$goal||+1|" ;;
    loaded-core) echo "2|$jacobi --iters 240|240|mode=loaded||w=2:1 -1|load@5" ;;
    host-free) echo "1|$jacobi --iters 240|240|$goal||+1|free@10" ;;
    *) echo "regret: unknown scenario $1" >&2; exit 2 ;;
    esac
}

. "$top/bench/busy_core.sh"
# This host with CORES cores in the policy's availability file, moved into place with a
# modification time SECONDS ahead (the policy never reads a half-written file, and sees
# the change however coarse the clock).
availability() {
    printf '%s %s local 1.0 0\n' "$(hostname)" "$1" > "$out/avail.new"
    touch -d "+$2 seconds" "$out/avail.new"
    mv "$out/avail.new" "$out/avail"
}

# Run the job "$@" with the scenario's outside event EVENT:
#   load@I  a busy loop on core 1 starts once iteration I is done, and runs to the end;
#   free@I  a busy loop on core 1 and an availability file of 1 core until iteration I
#           is done, then no loop and 2 cores.
# The job waits at the marker until the change is in place (jacobi --resume-on).
event() {
    ev=$1
    shift
    if [ -z "$ev" ]; then "$@"; return; fi
    at=${ev#*@}
    rm -f "$out/mark" "$out/go"
    job=""
    # This runs in a subshell (timed's command substitution), which the main shell's
    # traps do not reach: neither the loop nor the job may outlive an interruption.
    trap 'stop_busy; [ -z "$job" ] || kill "$job" 2>/dev/null; exit 130' INT TERM
    trap 'stop_busy' EXIT
    if [ "${ev%@*}" = free ]; then start_busy; availability 1 0; fi
    "$@" --mark "$out/mark" --mark-at "$at" --resume-on "$out/go" &
    job=$!
    echo "$job $busy_pid" > "$out/running" # for the main shell's trap
    while [ ! -e "$out/mark" ] && kill -0 "$job" 2>/dev/null; do sleep 0.002; done
    if [ "${ev%@*}" = free ]; then stop_busy; availability 2 1; else start_busy; fi
    echo "$job $busy_pid" > "$out/running"
    : > "$out/go"
    rc=0
    wait "$job" || rc=$?
    stop_busy
    rm -f "$out/running"
    return "$rc"
}

# An interruption reaches this shell only: the job and the loop a run started in its
# subshell (event) are ended from what it wrote down.
stop_running() {
    if [ -s "$out/running" ]; then
        # shellcheck disable=SC2046
        kill $(cat "$out/running") 2>/dev/null || true
        rm -f "$out/running"
    fi
}

# Seconds of one run: its iterations' when it wrote them to $out/times.csv (jacobi
# --times), else the whole job's wall time; its report in $out/report.jsonl.
timed() {
    rm -f "$out/report.jsonl" "$out/times.csv"
    t0=$(date +%s.%N)
    event "$ev_spec" env MAL_REPORT="$out/report.jsonl" MAL_SAMPLE_INTERVAL=10 MAL_GRACE=2 \
        ${avail_file:+MAL_AVAILABILITY="$avail_file"} "$@" > "$out/run.log" 2>&1 ||
        { cat "$out/run.log" >&2; echo "regret: a run failed" >&2; exit 1; }
    t1=$(date +%s.%N)
    if [ -s "$out/times.csv" ]; then
        awk -F, '{ s += $2 } END { printf "%.3f", s }' "$out/times.csv"
    else
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
    fi
}

# The policy's first decision in the report: "K ACTION" ("K none" when it kept the set
# at K, the first decision taken; "0 none" when it never decided).
first_decision() {
    awk '
        /"kind":"reconfig"/ && /"decided_by":"policy"/ && !done {
            match($0, /"iteration":[0-9]+/); k = substr($0, RSTART + 12, RLENGTH - 12)
            match($0, /"action":"[a-z]+"/); a = substr($0, RSTART + 10, RLENGTH - 11)
            print k, a; done = 1 }
        /"kind":"decision"/ && !first {
            match($0, /"iteration":[0-9]+/); first = substr($0, RSTART + 12, RLENGTH - 12) }
        END { if (!done) print (first ? first : 0), "none" }' "$out/report.jsonl"
}

# The measured costs of one Jacobi run, for mal-sim's replay (apps/sim_replay.c), from
# its per-iteration times (line 0: mal_init): WHAT=none: mal_init's time (K = 0) and that
# of mal_init and its first K iterations for K = 10, 20, ... and all of them;
# WHAT=policy: its first decision ACTION at K and its total; else an alternative at K:
# its mal_init and what iteration K took beyond the mean of the 3 before it (the
# reconfiguration), the mean iteration after K, and the total.
record_costs() {
    [ -s "$out/times.csv" ] || return 0
    awk -F, -v s="$1" -v rep="$2" -v what="$3" -v k="$4" -v act="${5:-}" -v n="$iters" '
        { t[$1] = $2; total += $2; if ($1 % 10 == 0) prefix[$1] = total }
        END {
            if (what == "none") {
                if (0 in t) printf "prefix,%s,%d,0,%.6f\n", s, rep, t[0]
                for (i = 10; i < n; i += 10) printf "prefix,%s,%d,%d,%.6f\n", s, rep, i, prefix[i]
                printf "prefix,%s,%d,%d,%.6f\n", s, rep, n, total
            } else if (what == "policy") {
                printf "policy,%s,%d,%s,%d,%.6f\n", s, rep, act, k, total
            } else {
                before = (t[k - 1] + t[k - 2] + t[k - 3]) / 3
                for (i = k + 1; i <= n; i++) after += t[i]
                if (n > k) # its own mal_init is part of what it costs (the probe of a spawn)
                    printf "alt,%s,%d,%s,%d,%.6f,%.6f,%.6f\n", s, rep, what, k,
                           t[k] - before + t[0], after / (n - k), total
            }
        }' "$out/times.csv" >> "$out/replay_runs.csv"
}

# The alternative of the scenario's list that the policy's ACTION equals (its first
# decision as a plan entry): expand is the "+" entry, shrink the "-" one, rebalance the
# "w=" one; none stays none.
as_alternative() {
    [ "$1" = none ] && { echo none; return; }
    for a in $2; do
        case $1:$a in expand:+* | shrink:-* | rebalance:w=*) echo "$a"; return ;; esac
    done
    echo unmatched # not among the alternatives: mal-sim replay says so
}

# Every run's costs averaged over the repetitions that measured them at the same
# iteration, the file mal-sim replay reads; the policy's decisions each with the number
# of repetitions that took it (the replay follows the most frequent).
write_replay() {
    awk -F, '
        function remember(k) { if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
        $1 == "prefix" { k = "prefix" SUBSEP $2 SUBSEP $4; remember(k); a[k] += $5; c[k]++ }
        $1 == "alt" { k = "alt" SUBSEP $2 SUBSEP $4 SUBSEP $5; remember(k)
                      a[k] += $6; b[k] += $7; t[k] += $8; c[k]++ }
        $1 == "policy" { k = "policy" SUBSEP $2 SUBSEP $4 SUBSEP $5; remember(k)
                         t[k] += $6; c[k]++ }
        END {
            for (i = 1; i <= n; i++) {
                k = order[i]
                split(k, f, SUBSEP)
                if (f[1] == "prefix") printf "prefix,%s,%s,%.6f\n", f[2], f[3], a[k] / c[k]
                if (f[1] == "alt") printf "alt,%s,%s,%s,%.6f,%.6f,%.6f\n", f[2], f[3], f[4],
                                          a[k] / c[k], b[k] / c[k], t[k] / c[k]
                if (f[1] == "policy") printf "policy,%s,%s,%s,%.6f,%d\n", f[2], f[3], f[4],
                                             t[k] / c[k], c[k]
            }
        }' "$out/replay_runs.csv" > "$out/replay.csv"
}

median() {
    sort -n | awk '{ v[NR] = $1 }
        END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

regrets=""
short_reconfigured=0
table=$out/regret_table.csv
echo "scenario,run,median_s" > "$table"
for name in $scenarios; do
    IFS='|' read -r procs prog iters policy first alts ev_spec <<EOF
$(scenario "$name")
EOF
    # Only host-free's view changes; the others see this host as hwloc does.
    avail_file=""
    case $ev_spec in free@*) avail_file=$out/avail ;; esac
    # Processes bound one per core where another user's load lands on one of them.
    case $ev_spec in
    load@*) export OMPI_MCA_hwloc_base_binding_policy=core ;;
    *) unset OMPI_MCA_hwloc_base_binding_policy ;;
    esac
    for rep in $(seq 1 "$reps"); do
        # The policy's run first (its decision gives K), then the alternatives; every
        # other repetition runs one alternative before it too, so that no run always
        # inherits the machine state of the same predecessor.
        if [ $((rep % 2)) = 0 ]; then
            # shellcheck disable=SC2086
            t=$(timed MAL_PLAN="$first" MAL_POLICY=off "$run" -n "$procs" $prog)
            echo "$name,$rep,none,none at ?,$t" >> "$csv"
            record_costs "$name" "$rep" none 0
        fi
        # shellcheck disable=SC2086
        t=$(timed MAL_PLAN="$first" MAL_POLICY="${policy:+$policy,}iterations=$iters" \
            "$run" -n "$procs" $prog)
        set -- $(first_decision)
        k=$1 decision=$2
        cp "$out/report.jsonl" "$out/policy.$name.$rep.jsonl" # what it decided, and why
        echo "$name,$rep,policy,$decision at $k,$t" >> "$csv"
        [ "$name" = short-run ] && [ "$decision" != none ] && short_reconfigured=1
        [ "$k" -gt 0 ] || k=10
        record_costs "$name" "$rep" policy "$k" "$(as_alternative "$decision" "$alts")"
        for alt in none $alts; do
            [ "$alt" = none ] && [ $((rep % 2)) = 0 ] && continue
            plan=$first
            [ "$alt" = none ] || plan="${first:+$first,}$k:$alt"
            # shellcheck disable=SC2086
            t=$(timed MAL_PLAN="$plan" MAL_POLICY=off "$run" -n "$procs" $prog)
            echo "$name,$rep,$alt,$alt at $k,$t" >> "$csv"
            record_costs "$name" "$rep" "$alt" "$k"
        done
    done
    line=$(awk -F, -v s="$name" '$1 == s { print $3 " " $5 }' "$csv" |
        awk '{ t[$1] = t[$1] " " $2 } END { for (r in t) print r, t[r] }')
    best="" policy_t="" summary=""
    while read -r what times; do
        m=$(echo "$times" | tr ' ' '\n' | grep . | median)
        summary="$summary $what=${m}s"
        echo "$name,$what,$m" >> "$table"
        [ "$what" = policy ] && policy_t=$m
        if [ -z "$best" ] || awk -v a="$m" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$m
        fi
    done <<EOF
$line
EOF
    decided=$(awk -F, -v s="$name" '$1 == s && $3 == "policy" { print $4 }' "$csv" | sort |
        uniq -c | sort -rn | head -1 | sed 's/^ *[0-9]* //')
    regret=$(awk -v p="$policy_t" -v b="$best" 'BEGIN { printf "%.1f", 100 * (p / b - 1) }')
    echo "regret: $name: the policy: $decided;$summary; regret $regret%"
    regrets="$regrets $regret"
done
echo "$regrets" | tr ' ' '\n' | grep . > "$out/regrets.txt"
worst=$(sort -n "$out/regrets.txt" | tail -1)

# Each scenario's runs as bars, relative to its best (1: the best; the policy's bar
# above 1 by its regret).
if command -v gnuplot > /dev/null; then
    awk -F, 'NR > 1 { t[$1, $2] = $3; if (!($1 in best) || $3 < best[$1]) best[$1] = $3
                      if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
        END { for (i = 1; i <= n; i++) { s = order[i]
                  printf "%s %.4f %.4f 1\n", s, t[s, "policy"] / best[s], t[s, "none"] / best[s] }
            }' "$table" \
        > "$out/regret_bars.dat"
    gnuplot <<GNUPLOT
set terminal pngcairo size 900,500
set output "$out/regret.png"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "run time / best alternative's"
set yrange [0:*]
set title "libmal policy: each scenario's run time against the best alternative (bench/regret.sh)"
set key top right
plot "$out/regret_bars.dat" using 2:xtic(1) title "the policy", '' using 3 title "nothing", \
     '' using 4 title "best alternative"
GNUPLOT
fi
# The same decisions replayed with the measured costs, against every decision point.
write_replay
if [ -x "$build/apps/mal-sim" ] && [ -s "$out/replay.csv" ]; then
    "$build/apps/mal-sim" replay "$out/replay.csv" | tee "$out/replay.txt"
fi
echo "regret: median=$(median < "$out/regrets.txt")% worst=$worst%" \
    "short_run_reconfigured=$short_reconfigured"
