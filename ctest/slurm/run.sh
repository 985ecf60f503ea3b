#!/bin/sh
# The Jacobi example grows to what it was given and is refused beyond it (docs/guide/running.md,
# "Slurm").
#
#   run.sh salloc|sbatch MALRUN JACOBI    a one-node Slurm of its own (munge, slurmctld,
#                                         slurmd from Debian's packages, as root), then
#                                         jacobi under `salloc -n 4` or `sbatch --wait -n 4`
#   run.sh hostfile MALRUN JACOBI         no Slurm: MAL_HOSTFILE with 3 slots on two hosts
#   run.sh prefetch MALRUN JACOBI         no Slurm: the pool's prefetch within 3 slots
#
# Through tools/malrun (oversubscription on, so mal_init's MPI_UNIVERSE_SIZE check is
# off) jacobi starts with 2 processes (1 for the hostfile) and its plan adds one process
# at iterations 3, 6 and 9: the first two fit, the third goes beyond the slots and must be
# refused at its step with the notice, the run going on to PASS with the processes it
# has. Every daemon started here is stopped at the end, and the script checks that none
# is left. Exit 77 (ctest's skip) without root or without the packages.
set -u
mode=${1:?mode: salloc, sbatch or hostfile}
malrun=${2:?path of tools/malrun}
jacobi=${3:?path of examples/jacobi}
started=$(date +%s.%N)
# The short name: slurmd looks itself up by it (a fully qualified NodeName is not found
# and slurmd exits), and libmal matches host names up to their first dot.
host=$(hostname)
host=${host%%.*}
T=$(mktemp -d /tmp/mal-slurm.XXXXXX) || exit 1
chmod 755 "$T" # munged wants its socket's directory searchable by all
pids=""

say() { echo "slurm test ($mode): $*"; }
elapsed() { awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
fail() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; rm -rf "$T"; exit 77; }

. "$(dirname "$0")/daemons.sh"

node_idle() { [ "$(sinfo -h -N -o %t 2>/dev/null)" = idle ]; }

# Ends the daemons started here (by pid), jobs first, then checks that nothing of this
# run is left, and kills what is.
stop_all() {
    status=$?
    stop_daemons
    check_left
    say "took $(elapsed) s"
    exit "$status"
}
trap stop_all EXIT
trap 'exit 1' INT TERM

# Whether TCP port $1 is taken (listening or connected) by anything; without ss, no.
port_taken() {
    ss -tan 2>/dev/null | awk -v p=":$1" '
        substr($4, length($4) - length(p) + 1) == p { taken = 1 } END { exit !taken }'
}

# Ports of this run's own (a Slurm the machine may run keeps its own): slurmctld's and
# slurmd's, the next one; 10 pairs tried from one picked by the pid, then a skip.
pick_ports() {
    for try in 0 1 2 3 4 5 6 7 8 9; do
        port=$((20000 + ($$ + 1009 * try) % 20000))
        port_taken "$port" || port_taken $((port + 1)) || return 0
    done
    skip "no free port pair for slurmctld and slurmd (last tried $port)"
}

write_config() {
    pick_ports
    mkdir -p "$T/state" "$T/spool"
    cat >"$T/slurm.conf" <<EOF
ClusterName=malci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
EOF
    conf_common >>"$T/slurm.conf"
    cat >>"$T/slurm.conf" <<EOF
NodeName=$host CPUs=4 State=UNKNOWN
PartitionName=mal Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$T/slurm.conf"
}

# 4 CPUs on a 2-core machine (config_overrides): room for two expansions from 2.
start_slurm() {
    [ "$(id -u)" = 0 ] || skip "needs root (slurmd and munged run here as root)"
    getent hosts "$host" >/dev/null || skip "this host's name '$host' does not resolve"
    for c in munged slurmctld slurmd sinfo squeue salloc sbatch scancel; do
        command -v "$c" >/dev/null || skip "$c not installed (tools/setup-deps.sh --test)"
    done
    start_munge
    write_config
    slurmctld -D >"$T/slurmctld.out" 2>&1 &
    pids="$pids $!"
    slurmd -D -N "$host" >"$T/slurmd.out" 2>&1 &
    pids="$pids $!"
    wait_for 30 "node $host idle in sinfo" node_idle
    say "one-node Slurm up after $(elapsed) s"
}

# The job: the same under salloc, sbatch and without Slurm.
write_job() {
    cat >"$T/job.sh" <<EOF
#!/bin/sh
exec env MAL_PLAN=3:+1,6:+1,9:+1 MAL_REPORT="$T/report.jsonl" MAL_RECONF_TIMEOUT=20 \\
    "$malrun" -n $1 "$jacobi" --check --n 400 --iters 12
EOF
}

# What the run must show: the two growths, the refusal with its notice, PASS.
check_output() {
    out=$1 slots=$2 source=$3
    last=$((slots - 1))
    cat "$out"
    for want in "jacobi: PASS" \
        "libmal: resources: $source: expansions up to $slots processes" \
        "placing 1 new process on [^ ]*: the first free slots of the $source" \
        "it 3 expand $((slots - 2)) -> $last procs.*: ok" \
        "it 6 expand $last -> $slots procs.*: ok" \
        "libmal\[0\]: .*mal_step: mal_expand: 1 more process refused: $slots -> $((slots + 1)) processes goes beyond the $slots slots of the $source; the application goes on with its $slots processes" \
        "it 9 expand $slots -> $slots procs.*abandoned, MAL_ERR_LIMIT" \
        "jacobi: procs $slots iterations 12"; do
        grep -q -- "$want" "$out" || fail "no line matching: $want"
    done
    grep -q '"outcome":"MAL_ERR_LIMIT"' "$T/report.jsonl" ||
        fail "the report has no record of the refusal"
}

slurm_source="Slurm allocation (job [0-9]*: 1 node, 4 CPUs)"
case $mode in
salloc)
    start_slurm
    write_job 2
    timeout 120 salloc -n 4 --time=5 sh "$T/job.sh" >"$T/out" 2>&1 ||
        { st=$?; cat "$T/out"; fail "salloc exited with status $st"; }
    check_output "$T/out" 4 "$slurm_source"
    ;;
sbatch)
    start_slurm
    write_job 2
    timeout 120 sbatch --wait -n 4 --time=5 -o "$T/out" "$T/job.sh" >"$T/sbatch.out" 2>&1 ||
        { st=$?; cat "$T/sbatch.out" "$T/out"; fail "sbatch --wait exited with status $st"; }
    check_output "$T/out" 4 "$slurm_source"
    ;;
hostfile)
    # Two names of this machine: the first fills (1 running, 1 free), then the second.
    printf '%s slots=2\nlocalhost slots=1\n' "$host" >"$T/hostfile"
    write_job 1
    MAL_HOSTFILE="$T/hostfile" timeout 120 sh "$T/job.sh" >"$T/out" 2>&1 ||
        { cat "$T/out"; fail "jacobi failed"; }
    source="hostfile $T/hostfile (MAL_HOSTFILE: 2 hosts, 3 slots)"
    check_output "$T/out" 3 "$source"
    grep -q "placing 1 new process on $host: the first free slots of the $source" "$T/out" &&
        grep -A1 "placing 1 new process on $host:" "$T/out" | grep -q "it 3 expand 1 -> 2" &&
        grep -A1 "placing 1 new process on localhost:" "$T/out" | grep -q "it 6 expand 2 -> 3" ||
        fail "the new processes were not placed $host first, then localhost"
    ;;
prefetch)
    # The pool's prefetch stays within the slots: 4 asked, 1 free (3 slots, 2 running).
    echo "$host slots=3" >"$T/hostfile"
    MAL_HOSTFILE="$T/hostfile" MAL_POOL=1 MAL_PREFETCH=4 MAL_PLAN=3:+1,6:+1 timeout 120 \
        "$malrun" -n 2 "$jacobi" --check --n 400 --iters 8 >"$T/out" 2>&1 ||
        { cat "$T/out"; fail "jacobi failed"; }
    cat "$T/out"
    for want in "jacobi: PASS" "1 process spawned into the pool (1 parked)" \
        "it 3 expand 2 -> 3 procs.*: ok" "3 -> 4 processes goes beyond the 3 slots" \
        "it 6 expand 3 -> 3 procs.*abandoned, MAL_ERR_LIMIT"; do
        grep -q -- "$want" "$T/out" || fail "no line matching: $want"
    done
    ! grep -q "processes spawned into the pool" "$T/out" || fail "the prefetch went beyond the slots"
    ;;
*)
    fail "unknown mode '$mode'"
    ;;
esac
say "PASS"
