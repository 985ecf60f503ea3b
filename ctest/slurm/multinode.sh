#!/bin/sh
# Nodes given back to Slurm (MAL_RELEASE_NODES; docs/guide/running.md, "Slurm"), on a
# three-node Slurm of the test's own over emulated hosts (ctest/multihost/hosts.sh,
# namespaces slA, slB, slC and slhub).
#
#   multinode.sh release MALRUN JACOBI [CHECK_REPORT]
#
# munged runs here (its socket is a file, which every namespace reaches), slurmctld in
# slA's namespace (only the hosts' addresses reach it), one `slurmd -N slX` in each host's
# namespace with NodeAddr= its address (2 CPUs each). jacobi runs with MAL_RELEASE_NODES=1
# and starts with 2 processes on slA:
#  1. Open MPI's daemons started outside the job (OMPI_MCA_plm=rsh through ctest's
#     rsh-agent, as ssh would), `salloc -N 3 -n 6`: the plan places 4 new processes on
#     slB and slC at iteration 3 and releases slC's two at 6: libmal returns slC. The test
#     takes the time of the shrink from the report (its record, polled every 10 ms) and
#     polls sinfo and scontrol: slC must be idle and out of the job's node list within
#     1 s while the job still runs. The plan releases slB's two at 9: Slurm 22.05 without
#     accounting storage refuses a second resize of a job (after 5 s), so libmal says it
#     could not return slB and goes on; the expansion at 12 goes to slB, not slC; jacobi
#     must PASS (bit-identical).
#  2. Open MPI's default launch in an allocation (plm slurm: its daemon on slB is a task
#     of an srun step), `salloc -N 2 -n 4`: the plan places 2 new processes on slB at 3,
#     releases them at 6 and asks for 1 more at 9. Returning slB would make Slurm end
#     that daemon and mpiexec abort (measured, docs/design.md), so libmal keeps slB and
#     says why; the job keeps slB, the expansion at 9 goes there, jacobi PASSes.
#  3. Daemons outside the job again, 4 initial processes (2 on slA, 2 on slB), the two
#     on slB released at 3: they wait for the others' MPI_Finalize, so slB is kept, with
#     the notice, and jacobi PASSes.
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
slurm_via=sl
. "$dir/daemons.sh"

nodes_idle() { [ "$(sl sinfo -h -N -o %t 2>/dev/null | sort -u)" = idle ]; }

# Jobs cancelled, daemons ended (by pid), the namespaces removed (which kills what is
# left in them), then nothing of this run may remain.
stop_all() {
    status=$?
    stop_daemons
    [ "$hosts_made" = 1 ] && mh_down
    for h in $MH_ALL_HOSTS $MH_HUB; do
        ip netns list 2>/dev/null | grep -qw "^$h" && { say "FAIL: namespace $h left"; status=1; }
    done
    check_left
    say "took $(elapsed) s"
    exit "$status"
}
trap stop_all EXIT
trap 'exit 1' INT TERM HUP

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
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.%n.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.%n.log
EOF
        conf_common
        for h in $MH_HOSTS; do echo "NodeName=$h NodeAddr=$(mh_address "$h") CPUs=2 State=UNKNOWN"; done
        echo "PartitionName=sl Nodes=$(echo $MH_HOSTS | tr ' ' ,) Default=YES MaxTime=INFINITE State=UP"
    } >"$T/slurm.conf"
    export SLURM_CONF="$T/slurm.conf"
}

# slurmd needs the cgroup file systems (its cgroup plugin starts whatever the plugins
# in use), which `ip netns exec` hides behind the namespace's own /sys: the mounts of
# /sys/fs/cgroup here are made again inside (the same hierarchies, in the mount
# namespace `ip netns exec` made for that slurmd, which ends with it).
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
exec env MAL_RELEASE_NODES=1 MAL_PLAN="\$4" MAL_REPORT="\$2" MAL_RECONF_TIMEOUT=20 \\
    "$malrun" -n \${5:-2} "$jacobi" --check --n 400 --iters \$3
EOF
}

# Whether report $2 has a line with $1.
has_record() { grep -q "$1" "$2" 2>/dev/null; }

# The job's node list and state as scontrol shows them.
job_nodes() { sl scontrol show job "$1" 2>/dev/null | sed -n 's/^ *NodeList=\([^ ]*\).*/\1/p'; }
job_state() { sl squeue -h -j "$1" -o %t 2>/dev/null; }
node_state() { sl sinfo -h -n "$1" -o %t 2>/dev/null; }

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

# salloc in the background (its pid in $job_pid): nodes launch report iterations plan
# output [initial processes, 2 by default].
# The job gets the first nodes by name (Slurm may otherwise pick slC for 2), once every
# node is idle again (the last job's may still be completing).
run_job() {
    wait_for 20 "nodes $MH_HOSTS idle before the next job" nodes_idle
    nodes=$(echo $MH_HOSTS | cut -d' ' -f1-"$1" | tr ' ' ,)
    mh_run slA timeout 60 salloc -N "$1" -n $(($1 * 2)) -w "$nodes" --time=5 \
        sh "$T/job.sh" "$2" "$3" "$4" "$5" "${7:-2}" >"$6" 2>&1 &
    job_pid=$!
}

finish_job() { # output
    wait "$job_pid"
    st=$?
    cat "$1"
    [ "$st" = 0 ] || fail "salloc exited with status $st"
    grep -q "jacobi: PASS" "$1" || fail "no PASS from jacobi"
}

check_schema() {
    [ -z "$check_report" ] || "$check_report" "$dir/../../docs/report.md" "$1" --require nodes ||
        fail "the report does not match docs/report.md"
}

# 1. Daemons outside the job: slC goes back to Slurm within 1 s of the shrink; slB's
# return fails and the application goes on.
returned() {
    report=$T/returned.jsonl out=$T/returned.out
    run_job 3 rsh "$report" 3000 3:+4,6:-2,9:-2,12:+1 "$out"
    t_shrink=$(wait_shrink "$report" "$job_pid") || { finish_job "$out"; fail "no shrink in the report"; }
    job=$(sl squeue -h -o %i | head -n 1)
    deadline=$(($(date +%s) + 5))
    until [ "$(node_state slC)" = idle ] && [ "$(job_nodes "$job")" = "slA,slB" ]; do
        [ "$(date +%s)" -lt "$deadline" ] || { finish_job "$out"; fail "slC not idle and out of job $job within 5 s of the shrink (slC $(node_state slC), job on $(job_nodes "$job"))"; }
        sleep 0.02
    done
    t_idle=$(now)
    state=$(job_state "$job")
    took=$(seconds_between "$t_shrink" "$t_idle")
    say "slC idle in sinfo and out of job $job (now on $(job_nodes "$job"), state $state) $took s after the shrink"
    sl sinfo -N
    [ "$state" = R ] || fail "job $job no longer running when slC was seen idle ($state): the check saw nothing"
    awk -v t="$took" 'BEGIN { exit !(t <= 1.0) }' || fail "slC returned $took s after the shrink (more than 1 s)"
    finish_job "$out"
    for want in "it 3 expand 2 -> 6 procs.*: ok" "it 6 shrink 6 -> 4 procs.*: ok" \
        "libmal: returned node slC to Slurm (job $job) after the shrink at iteration 6: no process of the application runs there; the job keeps slA,slB, 4 slots" \
        "it 9 shrink 4 -> 2 procs.*: ok" \
        "libmal: could not return node slB to Slurm (job $job) after the shrink at iteration 9: scontrol exited with status 1: .*; the application goes on, and no node will be returned in this run" \
        "placing 1 new process on slB: the first free slots of the Slurm allocation (job $job, 2 nodes and 4 slots left after nodes were returned to Slurm)" \
        "it 12 expand 2 -> 3 procs.*: ok" "jacobi: procs 3 iterations 3000"; do
        grep -q -- "$want" "$out" || fail "no line matching: $want"
    done
    grep -q '"kind":"nodes","iteration":6,"job":"'"$job"'","nodes":"slC","outcome":"returned","remaining":"slA,slB","slots_after":4' "$report" &&
        grep -q '"kind":"nodes","iteration":9,"job":"'"$job"'","nodes":"slB","outcome":"failed","remaining":"slA","slots_after":4' "$report" ||
        fail "the report has not slC returned and slB failed: $(grep nodes "$report")"
    check_schema "$report"
}

# 2. Open MPI's default launch (its daemon on slB in an srun step of the job): slB kept.
kept() {
    report=$T/kept.jsonl out=$T/kept.out
    run_job 2 slurm "$report" 3000 3:+2,6:-2,9:+1 "$out"
    wait_shrink "$report" "$job_pid" >/dev/null || { finish_job "$out"; fail "no shrink in the report"; }
    job=$(sl squeue -h -o %i | head -n 1)
    deadline=$(($(date +%s) + 10))
    until has_record '"kind":"nodes"' "$report"; do
        [ "$(date +%s)" -lt "$deadline" ] || { finish_job "$out"; fail "no nodes record after the shrink"; }
        sleep 0.02
    done
    nodes=$(job_nodes "$job")
    say "after the shrink job $job is on $nodes, slB $(node_state slB)"
    finish_job "$out"
    [ "$nodes" = "slA,slB" ] || fail "job $job lost slB ($nodes)"
    for want in "it 3 expand 2 -> 4 procs.*: ok" "it 6 shrink 4 -> 2 procs.*: ok" \
        "libmal: node slB kept in Slurm job $job after the shrink at iteration 6: the application's processes there were started inside a Slurm step" \
        "placing 1 new process on slB" "it 9 expand 2 -> 3 procs.*: ok"; do
        grep -q -- "$want" "$out" || fail "no line matching: $want"
    done
    grep -q '"kind":"nodes","iteration":6,"job":"'"$job"'","nodes":"slB","outcome":"kept","remaining":"slA,slB","slots_after":4' "$report" ||
        fail "the report has no record of slB kept: $(grep nodes "$report")"
    check_schema "$report"
}

# 3. Initial processes on slB (4 from the start, 2 per node), the two there released:
# they wait for MPI_Finalize, so slB stays in the job, said once.
held() {
    report=$T/held.jsonl out=$T/held.out
    run_job 2 rsh "$report" 300 3:-2 "$out" 4
    finish_job "$out"
    for want in "it 3 shrink 4 -> 2 procs.*: ok" \
        "libmal: node slB kept in Slurm job [0-9]* after the shrink at iteration 3: released initial processes wait there"; do
        grep -q -- "$want" "$out" || fail "no line matching: $want"
    done
    grep -q '"kind":"nodes","iteration":3,"job":"[0-9]*","nodes":"slB","outcome":"kept","remaining":"slA,slB","slots_after":4' "$report" ||
        fail "the report has no record of slB kept: $(grep nodes "$report")"
    ! grep -q "returned node" "$out" || fail "a node with initial processes was returned"
}

case $mode in
release)
    start_slurm
    write_job
    returned
    kept
    held
    ;;
*)
    fail "unknown mode '$mode'"
    ;;
esac
say "PASS"
