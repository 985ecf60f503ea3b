#!/bin/sh
# The multihost tests: emulated hosts (hosts.sh; two, four for scale) made, used and removed
# by each run.
# Usage: multihost.sh jacobi|mixed|cycles|policy JACOBI | redist BENCH | scale|scale-soak SOAK |
#        clean | up | down
#   jacobi  1 process on malA; the plan grows it by one process placed on malB by name
#           (MAL_HOSTS), rebalances across the hosts and shrinks back; x must be
#           bit-identical to the serial recomputation, Open MPI's daemon on malB must
#           have started the new process, and at least the bytes the report says moved
#           must have crossed the link.
#   mixed   4 processes, 2 per host, rebalanced: pairs on one host copy by cross-memory
#           attach, the others through windows over the link (the report's split).
#   cycles  6 expansions onto malB, rebalances and shrinks in one run, without and with
#           the pool: windows over libmal's memory on merged and pool communicators.
#   redist  mal_bench_redist with one rank per host: every row checked after every
#           method and pattern, MPI windows across the hosts (no direct memory), and the
#           data over the link.
#   scale SOAK   four hosts, 8 slots each (a hostfile): 8 processes on malA and malB grow
#           to 16 (+8, one spawn per process) and 32 (+16 batched) over the four, are
#           rebalanced to skewed weights, shrink to 8 releasing every process of malB
#           (initial ones included) and malC, grow by 8 placed on the free slots (malA,
#           then malB) and shrink again; without and with the pool (the woken processes
#           must be the parked ones of the hosts placed on). mal_soak checks every element
#           of a dense structure and a CSR matrix after every step.
#   policy JACOBI   four hosts of 2 cores each in an availability file (MAL_AVAILABILITY):
#           2 processes on malA, the policy (MAL_POLICY=preferred=8, no plan) grows the
#           job to 8 and must place the 6 new ones on the hosts with free cores, 2 each
#           on malB, malC and malD (Open MPI's daemons say where they started them).
#   scale-soak SOAK   100 random reconfigurations between 16 and 32 processes over the
#           four hosts (mal_soak --procs 16-32), every element checked after each, the
#           MPI objects flat at the end.
#   clean   remove whatever a run left (ctest runs it after the others, even after a
#           failure or a timeout), say what, and check that nothing of ours remains.
#   up, down  make the hosts and leave them (for measurements through mhrun), remove them.
# Exit 77 (ctest SKIP_RETURN_CODE) where the namespaces cannot be made, with the reason.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
what=${1:-}
# The hosts each test needs, whatever the caller exported: mhrun and rsh-agent read
# MH_COUNT; each run sets MH_SLOTS, MH_MAP or MH_ALLOCATE itself where it needs them.
case $what in
scale* | policy) MH_COUNT=4 ;;
up | down | clean) : "${MH_COUNT:=2}" ;;
*) MH_COUNT=2 ;;
esac
export MH_COUNT
[ "$what" = up ] || unset MH_SLOTS MH_MAP MH_ALLOCATE
# The tests name malA, malB, ...: a caller's MH_PREFIX (another set) must not move them;
# clean, up and down take it (slurm.clean removes the Slurm tests' set, sl).
case $what in
clean | up | down) : "${MH_PREFIX:=mal}" ;;
*) MH_PREFIX=mal ;;
esac
export MH_PREFIX
. "$dir/hosts.sh"
LIMIT=45 # seconds for an MPI job: the script, not ctest, must end it, to clean up after it
# MPICH 4.0's MPI_Finalize may wait for a peer that left, until libmal ends the process
# (2 x MAL_RECONF_TIMEOUT, ctest's 20 s; src/engine/platform/mpich.c).
[ "${MAL_MPI:-openmpi}" = mpich ] && LIMIT=90
fail() { echo "multihost: FAIL $what: $*"; exit 1; }
# Only the settings each run gives: a caller's MAL_MEMORY, MAL_REDIST, MAL_QUIET or
# MAL_PLAN would change what it checks (ctest's MAL_RECONF_TIMEOUT bound stays, and
# MAL_MPI, the family ctest built for, which mhrun starts).
for v in $(env | sed -n 's/^\(MAL_[A-Z_]*\)=.*/\1/p'); do
    case $v in MAL_RECONF_TIMEOUT | MAL_MPI) ;; *) unset "$v" ;; esac
done

# Nothing of ours left: no namespace (the probe's included), no hosts file.
check_clean() {
    for h in $MH_ALL_HOSTS $MH_HUB $MH_PROBE; do
        ip netns list | grep -qw "^$h" && fail "namespace $h left behind"
        [ -e "/etc/netns/$h" ] && fail "/etc/netns/$h left behind"
    done
    return 0
}

case $what in
clean | down)
    left=$(for h in $MH_ALL_HOSTS $MH_HUB $MH_PROBE; do
        ip netns list | grep -qw "^$h" && echo "$h"
    done)
    [ -n "$left" ] && [ "$what" = clean ] &&
        echo "multihost: removing what a run left: namespaces" $left
    mh_down
    check_clean
    [ "$what" = clean ] && echo "multihost: PASS clean"
    exit 0 ;;
up)
    why=$(mh_unavailable)
    [ -z "$why" ] || { echo "multihost: cannot make the hosts: $why" >&2; exit 1; }
    mh_up || { mh_down; exit 1; }
    exit 0 ;;
esac

why=$(mh_unavailable)
if [ -n "$why" ]; then
    case $why in
    *"already exists"*) fail "$why" ;;
    esac
    echo "multihost: SKIP $what: $MH_COUNT emulated hosts cannot be made here: $why"
    exit 77
fi
trap 'mh_down; check_clean' EXIT
trap 'exit 1' INT TERM HUP
mh_up || fail "setting up the namespaces and their link"
out=$(mktemp -d)
trap 'mh_down; rm -rf "$out"; check_clean' EXIT

# Bytes through the link so far (both directions, malA's end).
link_before=$(mh_link_bytes malA)
link_moved() { echo $(($(mh_link_bytes malA) - link_before)); }

# The daemon log's line for starting process RANK of job JOB (1: the initial one), as a
# sed/grep pattern: Open MPI 4 names it [[JOBID,JOB],RANK], PRRTE [prterun-HOST-PID@JOB,RANK].
child_named() {
    echo "odls:launch spawning child \\[\\(\\[[0-9]*,\\|prterun-[^@]*@\\)$1\\]\\{0,1\\},$2\\]"
}

run_jacobi() {
    jacobi=$1
    report=$out/report.jsonl
    # The daemons' log names the host that starts each process (mhrun's MH_DAEMON_LOG).
    MAL_HOSTS=malB MAL_PLAN=4:+1,8:w=1:3,12:-1 MAL_REPORT=$report MH_DAEMON_LOG=1 \
        timeout $LIMIT "$dir/mhrun" -n 1 "$jacobi" --n 2000 --iters 16 --check \
        > "$out/log" 2>&1
    rc=$?
    grep -v '^\[mal[AB]:[0-9]*\] \[\(\[\|prterun\)\|MPIR\|^ *(i, host' "$out/log"
    grep 'odls:launch spawning child' "$out/log" # where the daemons started each process
    [ $rc = 0 ] || fail "jacobi exited with $rc"
    grep -q '^jacobi: PASS' "$out/log" || fail "no PASS from jacobi"
    grep -q "^\\[malA:[0-9]*\\] .* $(child_named 1 0)" "$out/log" ||
        fail "rank 0 was not started on malA"
    grep -q "^\\[malB:[0-9]*\\] .* $(child_named 2 0)" "$out/log" ||
        fail "the new process was not started on malB"
    grep -q '"action":"expand","procs_before":1,"procs_after":2' "$report" ||
        fail "no expansion 1 -> 2 in the report"
    [ "$(grep -c '"outcome":"MAL_OK"' "$report")" = 3 ] ||
        fail "not 3 reconfigurations carried out (report: $(cat "$report"))"
    moved=$(sed -n 's/.*"bytes_moved":\([0-9]*\).*/\1/p' "$report" | awk '{s += $1} END {print s + 0}')
    link=$(link_moved)
    echo "multihost: $moved bytes moved by the reconfigurations, $link bytes through the link"
    [ "$moved" -gt 0 ] && [ "$link" -ge "$moved" ] ||
        fail "the data did not cross the link ($moved bytes moved, $link through the link)"
}

# A job of 2 hosts x 2 ranks (ranks 0, 1 on malA, 2, 3 on malB) rebalanced to 1:1:1:5
# and back: of the 2000 rows, 750 move between ranks of one host and 500 across the
# hosts each time. Under rma (one-sided), the pairs on one host must copy by cross-memory attach
# (bytes_by_memory), only the others through MPI windows over the link (bytes_by_mpi):
# 3:2 in every structure, and the link carries less than all the bytes moved.
run_mixed() {
    jacobi=$1
    report=$out/report.jsonl
    MH_MAP=slot MAL_REDIST=rma MAL_PLAN=4:w=1:1:1:5,8:w=1:1:1:1 MAL_REPORT=$report \
        timeout $LIMIT "$dir/mhrun" -n 4 "$jacobi" --n 2000 --iters 12 --check \
        > "$out/log" 2>&1
    rc=$?
    cat "$out/log"
    [ $rc = 0 ] || fail "jacobi exited with $rc"
    grep -q '^jacobi: PASS' "$out/log" || fail "no PASS from jacobi"
    [ "$(grep -c '"action":"rebalance".*"outcome":"MAL_OK"' "$report")" = 2 ] ||
        fail "not 2 rebalances carried out (report: $(cat "$report"))"
    field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$report" | awk '{s += $1} END {print s + 0}'; }
    moved=$(field bytes_moved) memory=$(field bytes_by_memory) mpi=$(field bytes_by_mpi)
    link=$(link_moved)
    echo "multihost: $moved bytes moved: $memory by cross-memory attach, $mpi through MPI;" \
        "$link bytes through the link"
    [ "$memory" -gt 0 ] && [ "$mpi" -gt 0 ] || fail "not both paths used"
    [ $((memory + mpi)) = "$moved" ] || fail "the paths do not add up to the bytes moved"
    [ $((memory * 2)) = $((mpi * 3)) ] || fail "not 3:2 between one host and across"
    [ "$link" -ge "$mpi" ] && [ "$link" -lt "$moved" ] ||
        fail "the link carried $link bytes: not the cross-host share of $moved"
}

# Windows over libmal's memory on merged and pool communicators, again and again: one
# process on malA grows onto malB, rebalances and shrinks back, 6 times, without and with
# the pool (the second time the process on malB is woken from the pool, over the pool's
# communicator). rma: the rows across the hosts go through the windows (gets and puts).
# Every reconfiguration must be carried out, x bit-identical.
run_cycles() {
    jacobi=$1
    plan=2:+1,3:w=1:3,4:-1,6:+1,7:w=3:1,8:-1,10:+1,11:w=1:2,12:-1,14:+1,15:w=2:1,16:-1
    plan=$plan,18:+1,19:w=1:1,20:-1,22:+1,23:w=1:4,24:-1
    for pool in 0 1; do
        report=$out/cycles$pool.jsonl
        MAL_HOSTS=malB MAL_POOL=$pool MAL_REDIST=rma MAL_PLAN=$plan MAL_REPORT=$report \
            timeout $LIMIT "$dir/mhrun" -n 1 "$jacobi" --n 1200 --iters 26 --check \
            > "$out/log" 2>&1
        rc=$?
        grep -v '^\[mal[AB]:[0-9]*\] \[\[' "$out/log"
        [ $rc = 0 ] || fail "jacobi (pool $pool) exited with $rc"
        grep -q '^jacobi: PASS' "$out/log" || fail "no PASS from jacobi (pool $pool)"
        [ "$(grep -c '"outcome":"MAL_OK"' "$report")" = 18 ] ||
            fail "not 18 reconfigurations carried out (pool $pool): $(cat "$report")"
        mpi=$(sed -n 's/.*"bytes_by_mpi":\([0-9]*\).*/\1/p' "$report" | awk '{s += $1} END {print s + 0}')
        [ "$mpi" -gt 0 ] || fail "no byte went through the windows across the hosts (pool $pool)"
        if [ $pool = 1 ]; then
            [ "$(grep -c '"action":"expand".*"pooled":1' "$report")" -ge 5 ] ||
                fail "the pool did not serve the expansions: $(cat "$report")"
        fi
    done
}

run_redist() {
    bench=$1
    size=8388608
    timeout $LIMIT "$dir/mhrun" -n 2 "$bench" --size $size --reps 2 > "$out/log" 2>&1
    rc=$?
    cat "$out/log"
    [ $rc = 0 ] || fail "mal_bench_redist exited with $rc"
    grep -q 'FAIL\|failed' "$out/log" && fail "a transfer went wrong"
    grep -q '^all-to-one  *rma  *2 ' "$out/log" || fail "no table"
    grep -q '^libmal: memory: MPI windows' "$out/log" ||
        fail "libmal did not choose MPI windows across the hosts"
    # Windows reused: once uniform-to-skewed grew the spares, the patterns that fit in
    # them create none (the table's windows column) with any method.
    for p in skewed-to-uniform one-to-all; do
        grep "^$p " "$out/log" | awk '$2 != "memcpy" && $7 != 0 { bad = 1 } END { exit bad }' ||
            fail "$p created windows: the windows across the hosts were not reused"
    done
    link=$(link_moved)
    echo "multihost: $link bytes through the link"
    [ "$link" -ge $size ] || fail "less than --size ($size bytes) crossed the link"
}

# The four hosts' slots for libmal (MAL_HOSTFILE: the limit and the placement); the job
# starts on malA and malB, 4 processes each (MH_MAP=slot, 4 slots each for mpiexec).
write_hostfile() {
    for h in $MH_HOSTS; do echo "$h slots=8"; done >"$out/hostfile"
}

# The distribution rank 0 printed after `cycle`: "malA 8, malB 4".
hosts_after() {
    sed -n "s/^mal_soak: cycle $1: [0-9]* procs: //p" "$out/log"
}

run_scale() {
    soak=$1
    write_hostfile
    script=+8,+16b,rskew,-24@malB:malC,+8,rskew,-8@malB
    for pool in 0 1; do
        report=$out/scale$pool.jsonl
        MH_SLOTS=4 MH_MAP=slot MAL_HOSTFILE="$out/hostfile" MAL_POOL=$pool \
            MAL_REPORT=$report timeout $((LIMIT * 2)) "$dir/mhrun" -n 8 "$soak" \
            --watchdog $LIMIT --size 33554432 --sparse poisson:200 --script "$script" \
            > "$out/log" 2>&1
        rc=$?
        grep -v '^\[mal[A-D]:[0-9]*\] ' "$out/log"
        [ $rc = 0 ] || fail "mal_soak (pool $pool) exited with $rc"
        grep -q '^mal_soak: PASS 7 cycles' "$out/log" || fail "no PASS (pool $pool)"
        for want in "0:malA 4, malB 4" "1:malA 8, malB 8" "2:malA 8, malB 8, malC 8, malD 8" \
            "4:malA 4, malD 4" "5:malA 8, malD 4, malB 4"; do
            [ "$(hosts_after "${want%%:*}")" = "${want#*:}" ] ||
                fail "after cycle ${want%%:*} (pool $pool) the processes run on" \
                    "'$(hosts_after "${want%%:*}")', not '${want#*:}'"
        done
        # The 3 expansions and 2 shrinks (mal_rebalance called by a program is not reported).
        [ "$(grep -c '"outcome":"MAL_OK"' "$report")" = 5 ] ||
            fail "not 5 reconfigurations reported carried out (pool $pool)"
        if [ $pool = 1 ]; then
            grep -q '"action":"expand","procs_before":8,"procs_after":16.*"pooled":8' \
                "$report" || fail "the growth after the shrink did not wake 8 parked processes"
        fi
    done
}

run_scale_soak() {
    soak=$1
    write_hostfile
    MH_SLOTS=4 MH_MAP=slot MAL_HOSTFILE="$out/hostfile" timeout $((LIMIT * 8)) \
        "$dir/mhrun" -n 16 "$soak" --verbose --watchdog $((LIMIT * 2)) --procs 16-32 \
        --cycles 100 \
        --size 16777216 --sparse poisson:100 --flat > "$out/log" 2>&1
    rc=$?
    grep -v '^\[mal[A-D]:[0-9]*\] ' "$out/log"
    [ $rc = 0 ] || fail "mal_soak exited with $rc"
    grep -q '^mal_soak: PASS 100 cycles' "$out/log" || fail "no PASS"
}

run_policy() {
    jacobi=$1
    for h in $MH_HOSTS; do echo "$h 2 C1 1.0 0.1"; done >"$out/availability"
    MH_SLOTS=2 MH_MAP=slot MAL_AVAILABILITY="$out/availability" MAL_POLICY=preferred=8 \
        MAL_SAMPLE_INTERVAL=3 MAL_GRACE=0 MH_DAEMON_LOG=1 \
        timeout $LIMIT "$dir/mhrun" -n 2 "$jacobi" --n 2000 \
        --iters 18 --check > "$out/log" 2>&1
    rc=$?
    grep -v '^\[mal[A-D]:[0-9]*\] ' "$out/log"
    [ $rc = 0 ] || fail "jacobi exited with $rc"
    grep -q '^jacobi: PASS' "$out/log" || fail "no PASS from jacobi"
    # At the end of the first sampling interval with steady iterations (3, or later on a
    # loaded machine).
    grep -q 'policy at it [0-9]*: expand 2 -> 8 procs' "$out/log" ||
        fail "the policy did not grow to 8"
    # Where the daemons started the spawned jobs' processes (job 1 is the initial one).
    child=$(child_named '\([0-9]*\)' '[0-9]*')
    started=$(sed -n "s/^\\[\\(mal[A-D]\\):[0-9]*\\] .* $child.*/\\1 \\3/p" "$out/log" |
        awk '$2 > 1 { n[$1]++ } END { for (h in n) print h, n[h] }' | sort | tr '\n' ' ')
    echo "multihost: new processes per host: $started"
    [ "$started" = "malB 2 malC 2 malD 2 " ] ||
        fail "the new processes were not placed 2 each on malB, malC, malD: $started"
}

case $what in
policy) run_policy "$2" ;;
scale) run_scale "$2" ;;
scale-soak) run_scale_soak "$2" ;;
jacobi) run_jacobi "$2" ;;
redist) run_redist "$2" ;;
mixed) run_mixed "$2" ;;
cycles) run_cycles "$2" ;;
*) echo "usage: multihost.sh jacobi|mixed|cycles|policy JACOBI | redist BENCH |" \
    "scale|scale-soak SOAK | clean | up | down" >&2; exit 2 ;;
esac
echo "multihost: PASS $what"
