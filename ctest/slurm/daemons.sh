# What the Slurm tests (run.sh, multinode.sh) share, sourced by them: waiting on the
# daemons they start, munged, and the end of a run. The script sets T (its temporary
# directory), pids (the daemons' pids, "" at first) and, where Slurm's commands must run
# elsewhere (in a host's namespace), slurm_via (a command prefix, empty by default); it
# defines fail.
: "${slurm_via:=}"

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

no_jobs() { [ -z "$($slurm_via squeue -h -o %i 2>/dev/null)" ]; }

# This run's processes, by pid: those whose environment or command line names $T.
# SLURM_CONF and MAL_REPORT (or MAL_HOSTFILE) reach slurmstepd and the job's processes,
# mpiexec and jacobi included, which salloc starts outside any step and a timeout leaves
# running; munged names $T on its command line. Another Slurm's slurmstepd (CI itself in
# a Slurm job) does not. Read from /proc (procps may be missing); "[.]" keeps grep from
# matching its own command line, and SLURM_CONF must be unset by then (grep, sed and sort
# would carry it in their environment).
ours() {
    pattern=$(printf '%s' "$T" | sed 's/[.]/[.]/g')
    grep -l -- "$pattern" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null |
        sed 's|^/proc/\([0-9]*\)/.*|\1|' | sort -u | grep -vx "$$"
}

# The jobs cancelled, then the daemons started here ended by pid (15 s each at most).
stop_daemons() {
    [ -n "$pids" ] || return 0
    jobs=$($slurm_via squeue -h -o %i 2>/dev/null)
    [ -z "$jobs" ] || $slurm_via scancel $jobs 2>/dev/null
    deadline=$(($(date +%s) + 15))
    while ! no_jobs && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
    for p in $pids; do kill "$p" 2>/dev/null; done
    deadline=$(($(date +%s) + 15))
    for p in $pids; do
        while kill -0 "$p" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
        kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null
    done
    return 0
}

# Nothing of this run may be left: what is, is named and killed, and `status` set to 1;
# then the temporary directory goes.
check_left() {
    unset SLURM_CONF
    left=$(ours)
    if [ -n "$left" ]; then
        say "FAIL: processes left after the run (killed now):"
        for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo; done
        kill -9 $left 2>/dev/null
        status=1
    fi
    rm -rf "$T"
}

start_munge() {
    dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$T/munge.key"
    munged -F --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
        --log-file="$T/munged.log" --seed-file="$T/munged.seed" &
    pids="$pids $!"
    wait_for 10 "munged's socket" test -S "$T/munge.sock"
}

# The lines of slurm.conf every test's Slurm has: munge, no cgroup plugin, no accounting
# storage (so a job can be resized once: docs/design.md), CPUs as configured
# (config_overrides: more than the machine's cores).
conf_common() {
    cat <<EOC
AuthType=auth/munge
AuthInfo=socket=$T/munge.sock
CredType=cred/munge
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
EOC
}
