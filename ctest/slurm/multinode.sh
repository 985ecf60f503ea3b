#!/bin/sh
# Nodes given back to Slurm (MAL_RELEASE_NODES; docs/guide/running.md, "Slurm"), on a
# three-node Slurm of the test's own over emulated hosts (ctest/multihost/hosts.sh,
# namespaces slA, slB, slC and slhub).
#
#   multinode.sh release MALRUN JACOBI [CHECK_REPORT]
#
# munged runs here (its socket is a file, which every namespace reaches), slurmctld in
# slA's namespace (only the hosts' addresses reach it), one `slurmd -N slX` in each host's
# namespace with NodeAddr= its address. Two jobs of `salloc -N 2 -n 4` (slA and slB, 2
# CPUs each) run jacobi with MAL_RELEASE_NODES=1: it starts with 2 processes on slA, the
# plan places 2 new ones on slB at iteration 3, releases them at 6 (slB is empty) and
# asks for 1 more at 9.
#  1. Open MPI's daemons started outside the job (OMPI_MCA_plm=rsh through ctest's
#     rsh-agent, as ssh would): libmal returns slB. The test takes the time of the
#     shrink from the report (its record, polled every 10 ms) and polls sinfo and
#     scontrol: slB must be idle and out of the job's node list within 1 s while the job
#     still runs; the expansion at 9 must be refused for want of slots (2 left), and
#     jacobi must PASS (bit-identical).
#  2. Open MPI's default launch in an allocation (plm slurm: its daemon on slB is a task
#     of an srun step): returning slB would make Slurm end that daemon and mpiexec abort
#     (measured, docs/design.md), so libmal keeps slB and says why; the job keeps slB,
#     the expansion at 9 goes there, jacobi PASSes.
# Every daemon started here is stopped at the end, the namespaces removed, and the script
# checks that nothing is left. Exit 77 (ctest's skip) without root, the packages or
# namespaces; every wait is bounded.
set -u
mode=${1:?mode: release}
malrun=${2:?path of tools/malrun}
jacobi=${3:?path of examples/jacobi}
check_report=${4:-}
dir=$(cd "$(dirname "$0")" && pwd)
MH_PREFIX=sl MH_COUNT=3
export MH_PREFIX MH_COUNT # rsh-agent, started by mpiexec, reads them
. "$dir/../multihost/hosts.sh"
started=$(date +%s.%N)
T=$(mktemp -d /tmp/mal-slurm-nodes.XXXXXX) || exit 1
chmod 755 "$T" # munged wants its socket's directory searchable by all
pids=""
hosts_made=0

say() { echo "slurm multinode ($mode): $*"; }
elapsed() { awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
fail() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }

# Slurm's commands reach slurmctld only from a host's namespace.
sl() { mh_run slA "$@"; }

# Poll `command` until it succeeds, for at most `seconds`; the daemons must stay up.
wait_for() {
    seconds=$1 what=$2
    shift 2
    deadline=$(($(date +%s) + seconds))
    until "$@"; do
        for p in $pids; do
            kill -0 "$p" 2>/dev/null || fail "a daemon (pid $p) ended while waiting for $what; $(tail -n 5 "$T"/*.log "$T"/*.out 2>/dev/null)"
        done
        [ "$(date +%s)" -lt "$deadline" ] || fail "$what not within $seconds s"
        sleep 0.2
    done
}

nodes_idle() { [ "$(sl sinfo -h -N -o %t 2>/dev/null | sort -u)" = idle ]; }
no_jobs() { [ -z "$(sl squeue -h -o %i 2>/dev/null)" ]; }

# This run's processes: those whose environment or command line names $T (SLURM_CONF
# reaches slurmstepd, mpiexec and the job's processes; munged names $T on its command
# line), read from /proc; "[.]" keeps grep from matching its own command line.
ours() {
    pattern=$(printf '%s' "$T" | sed 's/[.]/[.]/g')
    grep -l -- "$pattern" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null |
        sed 's|^/proc/\([0-9]*\)/.*|\1|' | sort -u | grep -vx "$$"
}

# Jobs cancelled, daemons ended (by pid), the namespaces removed (which kills what is
# left in them), then nothing of this run may remain.
stop_all() {
    status=$?
    if [ -n "$pids" ]; then
        jobs=$(sl squeue -h -o %i 2>/dev/null)
        [ -z "$jobs" ] || sl scancel $jobs 2>/dev/null
        deadline=$(($(date +%s) + 15))
        while ! no_jobs && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
        for p in $pids; do kill "$p" 2>/dev/null; done
        deadline=$(($(date +%s) + 15))
        for p in $pids; do
            while kill -0 "$p" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
            kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null
        done
    fi
    [ "$hosts_made" = 1 ] && mh_down
    for h in $MH_ALL_HOSTS $MH_HUB; do
        ip netns list 2>/dev/null | grep -qw "^$h" && { say "FAIL: namespace $h left"; status=1; }
    done
    unset SLURM_CONF
    left=$(ours)
    if [ -n "$left" ]; then
        say "FAIL: processes left after the run (killed now):"
        for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo; done
        kill -9 $left 2>/dev/null
        status=1
    fi
    rm -rf "$T"
    say "took $(elapsed) s"
    exit "$status"
}
trap stop_all EXIT
trap 'exit 1' INT TERM HUP

start_munge() {
    dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$T/munge.key"
    munged -F --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
        --log-file="$T/munged.log" --seed-file="$T/munged.seed" &
    pids="$pids $!"
    wait_for 10 "munged's socket" test -S "$T/munge.sock"
}

# Ports are the namespaces' own: nothing else listens there.
write_config() {
    mkdir -p "$T/state" "$T/spool"
    {
        cat <<EOF
ClusterName=malnodes
SlurmctldHost=slA($(mh_address slA))
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
AuthInfo=socket=$T/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.%n.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
EOF
        for h in $MH_HOSTS; do echo "NodeName=$h NodeAddr=$(mh_address "$h") CPUs=2 State=UNKNOWN"; done
        echo "PartitionName=sl Nodes=$(echo $MH_HOSTS | tr ' ' ,) Default=YES MaxTime=INFINITE State=UP"
    } >"$T/slurm.conf"
    export SLURM_CONF="$T/slurm.conf"
}

# slurmd needs the cgroup file systems (its cgroup plugin starts whatever the plugins
# in use), which `ip netns exec` hides behind the namespace's own /sys: the mounts of
# /sys/fs/cgroup here are made again inside (the same hierarchies; the mount namespace
# is the host's own and goes with it).
cgroup_mounts() {
    awk '$2 ~ "^/sys/fs/cgroup" { print $3, $4, $2 }' /proc/self/mounts >"$T/cgroup.mounts"
    [ -s "$T/cgroup.mounts" ] || skip "no cgroup file system under /sys/fs/cgroup for slurmd"
}

start_slurmd() {
    mh_run "$1" sh -c '[ -s "$1/cgroup.mounts" ] || exit 3
        while read -r type opts at; do
            mkdir -p "$at" 2>/dev/null
            mount -t "$type" -o "$opts" "$type" "$at" || { : >"$1/cgroup.failed"; exit 3; }
        done <"$1/cgroup.mounts"
        exec slurmd -D -N "$0"' "$1" "$T" >"$T/slurmd.$1.out" 2>&1 &
    pids="$pids $!"
}

start_slurm() {
    [ "$(id -u)" = 0 ] || skip "needs root (namespaces, slurmd and munged run here as root)"
    for c in munged slurmctld slurmd sinfo squeue salloc scancel scontrol srun; do
        command -v "$c" >/dev/null || skip "$c not installed (tools/setup-deps.sh --test)"
    done
    why=$(mh_unavailable)
    case $why in
    "") ;;
    *"already exists"*) fail "$why" ;;
    *) skip "the emulated hosts cannot be made here: $why" ;;
    esac
    hosts_made=1
    mh_up || fail "setting up the namespaces and their link"
    start_munge
    write_config
    cgroup_mounts
    mh_run slA slurmctld -D >"$T/slurmctld.out" 2>&1 &
    pids="$pids $!"
    for h in $MH_HOSTS; do start_slurmd "$h"; done
    sleep 0.5
    [ -e "$T/cgroup.failed" ] && skip "the cgroup file systems cannot be mounted in a namespace"
    wait_for 30 "nodes $MH_HOSTS idle in sinfo" nodes_idle
    say "three-node Slurm up after $(elapsed) s"
    sl sinfo -N
}

# The job: jacobi through malrun with the link's settings (ctest/multihost/mhrun says
# why each); $1 is "rsh" to start Open MPI's daemons outside the job, "slurm" for its
# default (srun).
write_job() {
    cat >"$T/job.sh" <<EOF
#!/bin/sh
export UCX_TLS=tcp,self UCX_NET_DEVICES=$MH_DEV OMPI_MCA_oob_tcp_if_include=$MH_DEV \\
    OMPI_MCA_btl_tcp_if_include=$MH_DEV
if [ "\$1" = rsh ]; then
    export OMPI_MCA_plm=rsh OMPI_MCA_plm_rsh_agent="$dir/../multihost/rsh-agent" \\
        OMPI_MCA_plm_rsh_args= OMPI_MCA_plm_rsh_no_tree_spawn=1
fi
echo "job \$SLURM_JOB_ID on \$SLURM_JOB_NODELIST (\$SLURM_JOB_CPUS_PER_NODE CPUs), launch \$1"
exec env MAL_RELEASE_NODES=1 MAL_PLAN=3:+2,6:-2,9:+1 MAL_REPORT="\$2" MAL_RECONF_TIMEOUT=20 \\
    "$malrun" -n 2 "$jacobi" --check --n 400 --iters \$3
EOF
}

# Field $2 of the report's records of kind $1 ("nodes" or the shrink's "reconfig").
has_record() { grep -q "$1" "$2" 2>/dev/null; }

# The job's node list and state as scontrol shows them.
job_nodes() { sl scontrol show job "$1" 2>/dev/null | sed -n 's/^ *NodeList=\([^ ]*\).*/\1/p'; }
job_state() { sl squeue -h -j "$1" -o %t 2>/dev/null; }
slB_state() { sl sinfo -h -n slB -o %t 2>/dev/null; }

now() { date +%s.%N; }
seconds_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# Until the report holds the shrink (every 10 ms, at most 60 s): its time on stdout.
wait_shrink() {
    deadline=$(($(date +%s) + 60))
    until has_record '"action":"shrink"' "$1"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.01
    done
    now
}

run_job() { # launch report iterations output: salloc in the background, its pid in $job_pid
    mh_run slA timeout 100 salloc -N 2 -n 4 --time=5 sh "$T/job.sh" "$1" "$2" "$3" >"$4" 2>&1 &
    job_pid=$!
}

finish_job() { # output
    wait "$job_pid"
    st=$?
    cat "$1"
    [ "$st" = 0 ] || fail "salloc exited with status $st"
    for want in "jacobi: PASS" "it 3 expand 2 -> 4 procs.*: ok" "it 6 shrink 4 -> 2 procs.*: ok"; do
        grep -q -- "$want" "$1" || fail "no line matching: $want"
    done
}

check_schema() {
    [ -z "$check_report" ] || "$check_report" "$dir/../../docs/report.md" "$1" --require nodes ||
        fail "the report does not match docs/report.md"
}

# 1. Daemons outside the job: slB goes back to Slurm within 1 s of the shrink.
returned() {
    report=$T/returned.jsonl out=$T/returned.out
    run_job rsh "$report" 12000 "$out"
    t_shrink=$(wait_shrink "$report" "$job_pid") || { finish_job "$out"; fail "no shrink in the report"; }
    job=$(sl squeue -h -o %i | head -n 1)
    deadline=$(($(date +%s) + 5))
    until [ "$(slB_state)" = idle ] && [ "$(job_nodes "$job")" = slA ]; do
        [ "$(date +%s)" -lt "$deadline" ] || { finish_job "$out"; fail "slB not idle and out of job $job within 5 s of the shrink (slB $(slB_state), job on $(job_nodes "$job"))"; }
        sleep 0.02
    done
    t_idle=$(now)
    state=$(job_state "$job")
    took=$(seconds_between "$t_shrink" "$t_idle")
    say "slB idle in sinfo and out of job $job (now on $(job_nodes "$job"), state $state) $took s after the shrink"
    sl sinfo -N
    [ "$state" = R ] || fail "job $job no longer running when slB was seen idle ($state): the check saw nothing"
    awk -v t="$took" 'BEGIN { exit !(t <= 1.0) }' || fail "slB returned $took s after the shrink (more than 1 s)"
    finish_job "$out"
    for want in "libmal: returned node slB to Slurm (job $job) after the shrink at iteration 6" \
        "2 -> 3 processes goes beyond the 2 slots of the Slurm allocation (job $job, 1 node and 2 slots left after nodes were returned to Slurm)" \
        "it 9 expand 2 -> 2 procs.*abandoned, MAL_ERR_LIMIT" "jacobi: procs 2 iterations 12000"; do
        grep -q -- "$want" "$out" || fail "no line matching: $want"
    done
    grep -q '"kind":"nodes","iteration":6,"job":"'"$job"'","nodes":"slB","outcome":"returned","remaining":"slA","slots_after":2' "$report" ||
        fail "the report has no record of slB returned: $(grep nodes "$report")"
    check_schema "$report"
}

# 2. Open MPI's default launch (its daemon on slB in an srun step of the job): slB kept.
kept() {
    report=$T/kept.jsonl out=$T/kept.out
    run_job slurm "$report" 3000 "$out"
    wait_shrink "$report" "$job_pid" >/dev/null || { finish_job "$out"; fail "no shrink in the report"; }
    job=$(sl squeue -h -o %i | head -n 1)
    deadline=$(($(date +%s) + 10))
    until has_record '"kind":"nodes"' "$report"; do
        [ "$(date +%s)" -lt "$deadline" ] || { finish_job "$out"; fail "no nodes record after the shrink"; }
        sleep 0.02
    done
    nodes=$(job_nodes "$job")
    say "after the shrink job $job is on $nodes, slB $(slB_state)"
    finish_job "$out"
    [ "$nodes" = "slA,slB" ] || fail "job $job lost slB ($nodes)"
    for want in "libmal: node slB kept in Slurm job $job after the shrink at iteration 6: the application's processes there were started inside a Slurm step" \
        "placing 1 new process on slB" "it 9 expand 2 -> 3 procs.*: ok"; do
        grep -q -- "$want" "$out" || fail "no line matching: $want"
    done
    grep -q '"kind":"nodes","iteration":6,"job":"'"$job"'","nodes":"slB","outcome":"kept","remaining":"slA,slB","slots_after":4' "$report" ||
        fail "the report has no record of slB kept: $(grep nodes "$report")"
    check_schema "$report"
}

case $mode in
release)
    start_slurm
    write_job
    returned
    kept
    ;;
*)
    fail "unknown mode '$mode'"
    ;;
esac
say "PASS"
