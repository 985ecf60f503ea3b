/* The policy in mal_step: at the end of every sampling interval rank 0 turns the gathered
 * samples into a policy_input_t, asks src/policy for a decision and broadcasts it; every
 * rank then carries it out through the processes layer (engine_expand, engine_shrink) or a reported
 * rebalance). Rank 0 decides alone because only it has the whole history (processes that
 * joined later have no work history or lambda): one broadcast keeps every rank on the
 * same decision without agreeing on floating-point results.
 *
 * The resource view sits behind engine_resources_t: the availability file (or this host
 * alone) with this host's cores from hwloc, capped by the slots of the job's allocation
 * (Slurm, a hostfile or MPI_UNIVERSE_SIZE: procs/room.c). */
#include "core.h"
#include "platform.h"
#include "decide.h"
#include "memory.h"
#include "monitor.h"
#include "pool.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the resource view ------------------------------------------------------------------ */

typedef struct {
    const char *name;
    /* Cores free for new processes on each host of `a`, given the processes the job
     * already runs there (`running`, per host). */
    void (*free_cores)(const avail_t *a, const int *running, int *free_cores);
} engine_resources_t;

static int this_host_index(const avail_t *a)
{
    char name[AVAIL_HOST_MAX] = "";
    gethostname(name, sizeof name - 1);
    return avail_find_host(a, name);
}

/* The file's cores, this host's capped by what hwloc finds. */
static void file_free_cores(const avail_t *a, const int *running, int *free_cores)
{
    int here = this_host_index(a);
    for (int h = 0; h < a->nhosts; h++) {
        int cores = a->hosts[h].cores;
        if (h == here && engine_host_cores() < cores)
            cores = engine_host_cores();
        free_cores[h] = cores > running[h] ? cores - running[h] : 0;
    }
}

static const engine_resources_t file_resources = {"availability file + hwloc",
                                                  file_free_cores};

/* Within the job's allocation (procs/room.c): an expansion beyond it would be refused,
 * so the policy sees no more free cores than the allocation has room for processes
 * (the last hosts give theirs up first). */
static void cap_by_allocation(const engine_parts_t *parts, const avail_t *a, int *free_cores)
{
    engine_group_t *g = parts->group;
    int64_t slots = parts->conf->room.slots;
    if (slots <= 0)
        return;
    int64_t room = slots > g->size ? slots - g->size : 0, total = 0;
    for (int h = 0; h < a->nhosts; h++) {
        int64_t keep = room - total < free_cores[h] ? room - total : free_cores[h];
        free_cores[h] = (int)keep;
        total += keep;
    }
}

/* ---- the availability view, on rank 0 ------------------------------------------------------ */

static int64_t file_mtime_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

/* The file as it is now: read again when its modification time changed since mal_init
 * (or the last read); a change that cannot be read keeps the previous view, with one
 * notice. Only rank 0 decides and the decision carries host names, so the other ranks
 * never need the new view. */
static const avail_t *current_view(const engine_settings_t *set, engine_decider_t *pol)
{
    const avail_t *before = pol->live_ok ? &pol->live : &set->avail;
    if (set->availability == NULL)
        return before;
    int64_t mtime = file_mtime_ns(set->availability);
    if (mtime == (pol->live_ok ? pol->live_mtime_ns : set->avail_mtime_ns))
        return before;
    avail_t now;
    char err[512];
    mal_status_t rc = avail_read(set->availability, &now, err, sizeof err);
    if (rc != MAL_OK) {
        if (!pol->live_warned)
            engine_notice("libmal: the availability file changed but cannot be read (%s); "
                          "the policy keeps the previous view\n", err);
        pol->live_warned = true;
        return before;
    }
    pol->live_mtime_ns = mtime;
    pol->live_warned = false;
    if (pol->live_ok)
        avail_free(&pol->live);
    pol->live = now;
    pol->live_ok = true;
    int cores = 0;
    for (int h = 0; h < now.nhosts; h++)
        cores += now.hosts[h].cores;
    engine_notice("libmal: availability file %s read again: %d hosts, %d cores\n",
                  set->availability, now.nhosts, cores);
    return &pol->live;
}

void engine_decider_free(engine_decider_t *pol)
{
    schedule_free(&pol->schedule);
    if (pol->live_ok)
        avail_free(&pol->live);
    pol->live_ok = false;
}

/* ---- the decision, on rank 0 -------------------------------------------------------------- */

/* What rank 0 broadcasts: the decision's fixed part, then weights, ranks and hosts. */
typedef struct {
    mal_decision_t d;
    int count;          /* processes added or released                        */
    int host_chars;     /* length of the comma-separated host list (+1), or 0 */
} decision_msg_t;

typedef struct {
    double *weights;    /* d.procs_after                                       */
    int *ranks;         /* count, shrink                                       */
    char *hosts;        /* host_chars, expand on named hosts                   */
} decision_arrays_t;

static void arrays_free(decision_arrays_t *a)
{
    free(a->weights);
    free(a->ranks);
    free(a->hosts);
    *a = (decision_arrays_t){0};
}

/* Rows per rank of the largest block structure (the work's unit when nothing else is
 * reported) and the bytes of all block structures per row of it, and of those marked
 * MAL_READ_MOSTLY (an asynchronous expansion moves them in the background). */
static void data_rows(const engine_registry_t *reg, policy_input_t *in, policy_proc_t *procs)
{
    const mal_array_t *largest = engine_array_largest_block(reg);
    double bytes = 0, read_mostly = 0;
    for (const mal_array_t *a = engine_array_first(reg); a != NULL; a = engine_array_next(a)) {
        if (engine_array_replicated(a))
            continue;
        double b = (double)engine_array_global_rows(a) * (double)engine_array_row_bytes(a);
        bytes += b;
        read_mostly += engine_array_read_mostly(a) ? b : 0;
    }
    in->rows = 0;
    for (int r = 0; r < in->nprocs; r++) {
        procs[r].rows = largest ? engine_array_local_rows(largest, r) : 0;
        in->rows += procs[r].rows;
    }
    int64_t largest_rows = largest ? engine_array_global_rows(largest) : 0;
    in->row_bytes = largest_rows > 0 ? (int64_t)ceil(bytes / (double)largest_rows) : 0;
    in->read_mostly_row_bytes = largest_rows > 0
                        ? (int64_t)floor(read_mostly / (double)largest_rows) : 0;
}

/* What an expansion would cost beyond spawning: parked processes are woken, not spawned
 * (the pool's count only: where they are parked is left to the pool, which takes them
 * before it spawns, so the policy counts the first new processes as the pooled ones),
 * and with async an expansion that spawns runs in the background. */
static void pool_view(const engine_parts_t *parts, const engine_procs_t *procs, const avail_t *a,
                      policy_input_t *in, int *parked_on)
{
    in->parked = engine_pool_parked(procs);
    in->async = engine_async_on(parts->conf, procs);
    /* Where they are parked, when every one of them is on a host of the view. */
    int placed = 0;
    for (int i = 0; i < in->parked; i++)
        for (int h = 0; h < a->nhosts; h++)
            if (procs->parked[i].host != 0 &&
                engine_host_hash(a->hosts[h].name) == procs->parked[i].host) {
                parked_on[h]++;
                placed++;
                break;
            }
    in->parked_on = placed == in->parked ? parked_on : NULL;
}

/* Each rank's availability host; -1 when some rank runs on a host the view lacks. */
static int map_hosts(const avail_t *a, const double *hashes, policy_proc_t *procs, int n,
                     int *running)
{
    for (int r = 0; r < n; r++) {
        procs[r].host = -1;
        for (int h = 0; h < a->nhosts && procs[r].host < 0; h++)
            if (engine_host_hash(a->hosts[h].name) == hashes[r])
                procs[r].host = h;
        if (procs[r].host < 0)
            return -1;
        running[procs[r].host]++;
    }
    return 0;
}

static mal_action_t engine_action(policy_action_t a)
{
    return a == POLICY_EXPAND ? MAL_ACTION_EXPAND : a == POLICY_SHRINK ? MAL_ACTION_SHRINK
           : a == POLICY_REBALANCE                                    ? MAL_ACTION_REBALANCE
                                                                      : MAL_ACTION_NONE;
}

/* The host names of a decided expansion, when they come from a file (this host alone
 * is left to the MPI runtime, which places spawns there anyway). */
static char *host_list(const engine_settings_t *set, const avail_t *a,
                       const policy_decision_t *pd)
{
    if (set->availability == NULL)
        return NULL;
    size_t len = 1;
    for (int k = 0; k < pd->count; k++)
        len += strlen(a->hosts[pd->hosts[k]].name) + 1;
    char *list = calloc(len, 1);
    for (int k = 0; list != NULL && k < pd->count; k++) {
        if (k > 0)
            strcat(list, ",");
        strcat(list, a->hosts[pd->hosts[k]].name);
    }
    return list;
}

static void to_message(const engine_settings_t *set, const avail_t *a,
                       const policy_decision_t *pd, decision_msg_t *m, decision_arrays_t *out)
{
    mal_decision_t *d = &m->d;
    d->action = engine_action(pd->action);
    d->procs_after = pd->procs_after;
    d->goal = pd->goal;
    d->current = pd->current;
    d->comp = pd->predicted.comp;
    d->comm = pd->predicted.comm;
    d->process = pd->predicted.process;
    d->redist = pd->predicted.redist;
    snprintf(d->reason, sizeof d->reason, "%s", pd->reason);
    m->count = pd->count;
    if (pd->action == POLICY_NONE)
        return;
    out->weights = malloc((size_t)pd->procs_after * sizeof *out->weights);
    if (out->weights != NULL)
        memcpy(out->weights, pd->weights, (size_t)pd->procs_after * sizeof *out->weights);
    if (pd->action == POLICY_SHRINK && (out->ranks = malloc((size_t)pd->count *
                                                            sizeof *out->ranks)) != NULL)
        memcpy(out->ranks, pd->ranks, (size_t)pd->count * sizeof *out->ranks);
    if (pd->action == POLICY_EXPAND && (out->hosts = host_list(set, a, pd)))
        m->host_chars = (int)strlen(out->hosts) + 1;
    bool missing = out->weights == NULL || (pd->action == POLICY_SHRINK && !out->ranks) ||
                   (pd->action == POLICY_EXPAND && set->availability && !out->hosts);
    if (missing) { /* nothing half-decided goes out */
        arrays_free(out);
        *m = (decision_msg_t){.d = {.action = MAL_ACTION_NONE}};
        snprintf(m->d.reason, sizeof m->d.reason, "no memory to carry out the decision");
    }
}

static void none_because(decision_msg_t *m, int size, const char *why)
{
    m->d.action = MAL_ACTION_NONE;
    m->d.procs_after = size;
    /* A policy message longer than the field is cut short on purpose. */
    snprintf(m->d.reason, sizeof m->d.reason, "%.*s", (int)sizeof m->d.reason - 1, why);
}

/* The policy may grow the job to `most` processes at most. */
static void cap_growth(policy_config_t *cfg, int most)
{
    if (cfg->max_procs <= 0 || cfg->max_procs > most)
        cfg->max_procs = most;
    if (cfg->min_procs > most)
        cfg->min_procs = most;
    if (cfg->preferred > most)
        cfg->preferred = most;
}

/* The policy's answer for the sampled input `in` (its procs mapped to hosts). */
static void ask_policy(const engine_parts_t *parts, engine_decider_t *pol, const avail_t *a,
                       policy_input_t *in, const int *free_cores, decision_msg_t *m,
                       decision_arrays_t *out)
{
    engine_group_t *g = parts->group;
    const engine_settings_t *set = parts->conf;
    in->free_cores = free_cores;
    in->elapsed = MPI_Wtime() - pol->start_seconds;
    policy_decision_t pd;
    char err[320];
    policy_config_t cfg = set->policy;
    /* SHMEM's PE set is fixed at start: only rebalances remain open to the policy. */
    if (engine_shmem_active()) {
        cfg.min_procs = cfg.max_procs = g->size;
        cfg.preferred = 0;
        cfg.release = false;
    }
    /* An MPI that cannot start processes: growth only by the parked ones. */
    if (!engine_spawn_supported(NULL))
        cap_growth(&cfg, g->size + in->parked);
    predict_params_t params = set->params;
    engine_monitor_correct_params(parts->sink->mon, &params);
    mal_status_t rc = policy_decide(&cfg, a, &params, in, &pol->policy_state, &pd, err,
                                    sizeof err);
    if (rc)
        none_because(m, g->size, err);
    else
        to_message(set, a, &pd, m, out);
    policy_decision_free(&pd);
}

static void decide_on_root(const engine_parts_t *parts, engine_procs_t *procs,
                           engine_decider_t *pol, decision_msg_t *m, decision_arrays_t *out)
{
    engine_group_t *g = parts->group;
    const avail_t *a = current_view(parts->conf, pol);
    policy_input_t in = {0};
    policy_proc_t *sampled = calloc((size_t)g->size, sizeof *sampled);
    double *hashes = calloc((size_t)g->size, sizeof *hashes);
    int *running = calloc((size_t)a->nhosts, sizeof *running);
    int *free_cores = calloc((size_t)a->nhosts, sizeof *free_cores);
    int *parked_on = calloc((size_t)a->nhosts + 1, sizeof *parked_on);
    if (!sampled || !hashes || !running || !free_cores || !parked_on)
        none_because(m, g->size, "no memory for the decision's input");
    else if (!engine_monitor_sample(parts->sink->mon, g->iteration, g->size, &in, sampled, hashes))
        none_because(m, g->size, "no steady iteration on some rank in this interval: "
                                 "nothing to decide from");
    else if (map_hosts(a, hashes, sampled, g->size, running))
        none_because(m, g->size, "a rank runs on a host that is not in the availability "
                                 "view");
    else {
        data_rows(parts->reg, &in, sampled);
        pool_view(parts, procs, a, &in, parked_on);
        file_resources.free_cores(a, running, free_cores);
        cap_by_allocation(parts, a, free_cores);
        ask_policy(parts, pol, a, &in, free_cores, m, out);
    }
    free(sampled);
    free(hashes);
    free(running);
    free(free_cores);
    free(parked_on);
}

/* ---- every rank ------------------------------------------------------------------------------ */

static mal_status_t receive_decision(const engine_group_t *g, decision_msg_t *m,
                                     decision_arrays_t *arr)
{
    PMPI_Bcast(m, (int)sizeof *m, MPI_BYTE, 0, g->comm);
    if (m->d.action == MAL_ACTION_NONE)
        return MAL_OK;
    bool root = g->rank == 0;
    if (!root) {
        arr->weights = malloc((size_t)m->d.procs_after * sizeof *arr->weights);
        if (m->d.action == MAL_ACTION_SHRINK)
            arr->ranks = malloc((size_t)m->count * sizeof *arr->ranks);
        if (m->host_chars > 0)
            arr->hosts = malloc((size_t)m->host_chars);
    }
    /* The arrays follow in one broadcast each; a rank short of memory receives them
     * into scratch and fails after the collective calls (see below). */
    int ok = arr->weights && (m->d.action != MAL_ACTION_SHRINK || arr->ranks) &&
             (m->host_chars == 0 || arr->hosts);
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, g->comm);
    if (!ok)
        return engine_fail(MAL_ERR_NOMEM, "policy: no memory on some rank for the decision "
                           "at iteration %lld", (long long)g->iteration);
    PMPI_Bcast(arr->weights, m->d.procs_after, MPI_DOUBLE, 0, g->comm);
    if (arr->ranks != NULL)
        PMPI_Bcast(arr->ranks, m->count, MPI_INT, 0, g->comm);
    if (arr->hosts != NULL)
        PMPI_Bcast(arr->hosts, m->host_chars, MPI_CHAR, 0, g->comm);
    return MAL_OK;
}

static mal_status_t carry_out(const engine_parts_t *parts, engine_procs_t *procs,
                              const decision_msg_t *m, const decision_arrays_t *arr)
{
    engine_group_t *g = parts->group;
    switch (m->d.action) {
    case MAL_ACTION_EXPAND: {
        procs->spawn_hosts = arr->hosts;
        procs->spawn_hosts_base = procs->spawned;
        mal_status_t st = engine_expand_planned(parts, procs, m->count, MAL_SPAWN_DEFAULT,
                                                arr->weights);
        procs->spawn_hosts = NULL;
        return st;
    }
    case MAL_ACTION_SHRINK:
        return engine_shrink(parts, procs, m->count, arr->ranks, arr->weights, false);
    case MAL_ACTION_REBALANCE:
        return engine_reported_rebalance(parts, arr->weights, m->d.procs_after, g->iteration);
    case MAL_ACTION_NONE:
        break;
    }
    return MAL_CONTINUE;
}

/* Every decision, kept or not, as one record of the report: why the set stayed is as
 * much the operator's business as why it changed. */
static void log_decision(const char *report, const mal_decision_t *d)
{
    if (report != NULL)
        report_decision(report, d);
}

static void announce(const mal_decision_t *d, bool summary)
{
    if (!summary || d->action == MAL_ACTION_NONE)
        return;
    engine_notice("libmal: policy at it %lld: %s %d -> %d procs: %s\n",
                  (long long)d->iteration, engine_action_name(d->action), d->procs_before,
                  d->procs_after, d->reason);
}

mal_status_t engine_policy_step(const engine_parts_t *parts, engine_procs_t *procs,
                                engine_decider_t *pol)
{
    engine_group_t *g = parts->group;
    const engine_settings_t *set = parts->conf;
    if (!set->policy_on)
        return MAL_CONTINUE;
    decision_msg_t m = {0};
    decision_arrays_t arr = {0};
    if (g->rank == 0)
        decide_on_root(parts, procs, pol, &m, &arr);
    mal_status_t st = receive_decision(g, &m, &arr);
    m.d.iteration = g->iteration;
    m.d.procs_before = g->size;
    pol->decision = m.d;
    if (!st) {
        if (g->rank == 0) {
            log_decision(set->report, &m.d);
            announce(&m.d, set->summary);
        }
        parts->sink->reason = &pol->decision; /* the report names it */
        st = carry_out(parts, procs, &m, &arr);
        parts->sink->reason = NULL;
    }
    arrays_free(&arr);
    return st;
}
