/* Expand and shrink (mal_expand, mal_shrink, a plan's or the policy's): change the
 * process set, then move the data (reconfig.c); and the reported rebalance, the third
 * reconfiguration a plan or the policy carries out. */
#include "core.h"
#include "platform.h"
#include "join.h"
#include "memory.h"
#include "monitor.h"
#include "plan.h"
#include "pool.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"
#include "spawning.h"

#include <stdlib.h>
#include <string.h>

#define ENGINE_MAX_CHANGE 4096

/* NULL weights mean an even split of the new process set. */
static mal_status_t check_new_weights(const double *weights, int n, const char *call)
{
    return weights == NULL ? MAL_OK : engine_check_weights(weights, n, call);
}

/* The same arguments on every rank, else the message names the first that differs and
 * its values: an expansion's count, mode, method and weights (`ranks` NULL), a shrink's
 * count, method, ranks (NULL: the last `count`, compared whole) and weights. `st`: this
 * rank's checks so far; after a failed one the arguments are not read (a bad count). */
static mal_status_t agree_resize(const engine_parts_t *parts, mal_status_t st, int count,
                                 const mal_spawn_mode_t *mode, const int *ranks,
                                 const double *weights, int n, const char *call)
{
    int64_t listed = ranks == NULL || st ? 0 : engine_hash(ENGINE_HASH_SEED, ranks,
                                                           (size_t)count * sizeof *ranks) >> 2;
    engine_arg_t args[5] = {
        {"count", count, NULL, false},
        {"the method (mal_set_redist)", parts->xfer->method, engine_method_name, false},
        {"weights", weights != NULL, engine_pointer_name, false},
        {"ranks", listed, NULL, true}};
    int nargs = 4;
    if (mode != NULL) /* an expansion's: a shrink has none */
        args[nargs - 1] = (engine_arg_t){"mode", *mode, engine_spawn_mode_name, false};
    return engine_agree_args(parts->group->comm, st, args, nargs, "weights", weights,
                             weights != NULL ? n : 0, call);
}

/* Figures of a reconfiguration that stopped before moving data. */
static void report_abandoned(const engine_parts_t *parts, mal_action_t action,
                             mal_spawn_mode_t mode, mal_status_t st, double t0, double spawn)
{
    engine_group_t *g = parts->group;
    mal_reconfig_stats_t s = {.action = action, .spawn_mode = mode,
                              .iteration = g->iteration,
                              .procs_before = g->size, .procs_after = g->size,
                              .spawn_seconds = spawn, .total_seconds = MPI_Wtime() - t0,
                              .status = st};
    engine_report(parts, g->comm, &s, NULL, NULL);
}

void engine_report_abandoned_async(const engine_parts_t *parts, int count, mal_spawn_mode_t mode,
                                   mal_status_t st, double started)
{
    engine_group_t *g = parts->group;
    double now = MPI_Wtime();
    mal_reconfig_stats_t s = {.action = MAL_ACTION_EXPAND, .spawn_mode = mode,
                              .iteration = g->iteration, .procs_before = g->size,
                              .procs_after = g->size, .spawn_seconds = now - started,
                              .total_seconds = now - started, .status = st, .async = true,
                              .spawned = count, .background_seconds = now - started};
    engine_report(parts, g->comm, &s, NULL, NULL);
}

/* ---- expand ----------------------------------------------------------------------- */

static mal_status_t check_expand(const engine_group_t *g, int count, mal_spawn_mode_t mode,
                                 const double *weights)
{
    if (count < 1 || count > ENGINE_MAX_CHANGE)
        return engine_fail(MAL_ERR_ARG, "mal_expand: count is %d, must be in 1..%d", count,
                           ENGINE_MAX_CHANGE);
    if (mode != MAL_SPAWN_PER_CALL && mode != MAL_SPAWN_BATCHED)
        return engine_fail(MAL_ERR_ARG, "mal_expand: spawn mode %d is unknown", (int)mode);
    return check_new_weights(weights, g->size + count, "mal_expand");
}

/* The status of a spawn that failed on rank 0, seen from another rank. The outcome sent
 * is a flag (spawned processes of earlier calls read it too), so a failure that lasted
 * the runtime's whole bound is told by the time it took, as rank 0 tells it. */
static mal_status_t spawn_failed_elsewhere(double waited)
{
    int bound = engine_spawn_bound();
    if (bound > 0 && waited >= bound - 1.0)
        return engine_fail(MAL_ERR_TIMEOUT, "mal_expand: rank 0's spawn did not complete "
                           "within %d s (see its message)", bound);
    return engine_fail(MAL_ERR_SPAWN, "mal_expand: rank 0 could not spawn (see its message)");
}

/* Rank 0 spawns; everyone learns whether it worked before the collective join. */
static mal_status_t spawn_step(const engine_parts_t *parts, const engine_procs_t *procs,
                               MPI_Comm members, int per_call, int index,
                               const engine_join_msg_t *msg, MPI_Comm *joined)
{
    engine_group_t *g = parts->group;
    MPI_Comm inter = MPI_COMM_NULL, pair = MPI_COMM_NULL;
    mal_status_t st = MAL_OK;
    double t0 = MPI_Wtime();
    if (g->rank == 0) {
        st = engine_spawn(procs, parts->conf, per_call, index, &inter, &pair);
        if (!st)
            st = engine_send_join_info(parts, procs, pair, msg);
    }
    int ok = !st;
    engine_bcast_flag(&ok, members);
    double spawned = MPI_Wtime();
    parts->sink->phases.spawn += spawned - t0; /* every rank waited for the spawn */
    if (ok)
        st = engine_join_members(members, pair, joined);
    else if (g->rank != 0)
        st = spawn_failed_elsewhere(MPI_Wtime() - t0);
    parts->sink->phases.merge += MPI_Wtime() - spawned;
    if (pair != MPI_COMM_NULL) {
        MPI_Comm_free(&pair);
        MPI_Comm_disconnect(&inter);
    }
    return st;
}

/* The spawn calls of an expansion: one per process, or a batch per run of processes
 * placed on one host. A batch over several hosts at once is started by Open MPI 4.1 as
 * one job whose processes meet across the hosts in MPI_Init: 16 over 4 hosts took 4.3 s
 * where 4 batches of 4, one per host, took 0.52 s (docs/design.md, "Dozens of processes
 * on four hosts"). Past SPAWN_RUNS_MAX runs the last batch takes the rest (one spawn
 * over its hosts, placed all the same: dpm.c). Every rank computes the same calls. */
#define SPAWN_RUNS_MAX 64
typedef struct {
    int calls;
    bool per_call;
    int sizes[SPAWN_RUNS_MAX];  /* batched: the processes of each call */
} spawn_calls_t;

static void plan_calls(const engine_parts_t *parts, const engine_procs_t *procs, int count,
                       mal_spawn_mode_t mode, spawn_calls_t *c)
{
    *c = (spawn_calls_t){.per_call = mode == MAL_SPAWN_PER_CALL};
    if (c->per_call || count == 0) {
        c->calls = count;
        return;
    }
    const char *last = NULL;
    size_t last_len = 0;
    for (int i = 0; i < count; i++) {
        size_t len;
        const char *host = engine_spawn_host_span(procs, parts->conf, procs->spawned + i, &len);
        bool same = i > 0 && len == last_len &&
                    (host == NULL ? last == NULL
                                  : last != NULL && strncmp(host, last, len) == 0);
        if (same || c->calls == SPAWN_RUNS_MAX)
            c->sizes[c->calls - 1]++;
        else
            c->sizes[c->calls++] = 1;
        last = host;
        last_len = len;
    }
}

/* Spawn and merge into `members` (the processes of the new set so far, woken ones
 * included), call by call. The processes of earlier calls and the woken ones take part
 * in the later joins; on failure they are told (ok = 0): the spawned ones exit, the
 * woken ones park again. */
static mal_status_t spawn_and_join(const engine_parts_t *parts, const engine_procs_t *procs,
                                   MPI_Comm members, const engine_join_msg_t *all,
                                   const spawn_calls_t *c, MPI_Comm *merged)
{
    int calls = c->calls, done = 0;
    MPI_Comm m = members;
    mal_status_t st = MAL_OK;
    for (int i = 0; i < calls && !st; i++) {
        MPI_Comm next = MPI_COMM_NULL;
        engine_join_msg_t msg = *all;
        msg.remaining = calls - 1 - i;
        /* Hosts are used in turn across expansions, not from the first at each. */
        int host_index = (int)(procs->spawned + done);
        int size = c->per_call ? 1 : c->sizes[i];
        st = spawn_step(parts, procs, m, size, host_index, &msg, &next);
        done += size;
        if (m != members)
            MPI_Comm_free(&m);
        m = st ? members : next;
    }
    *merged = m;
    return st;
}

static mal_status_t expand_data(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm merged,
                                const engine_join_msg_t *msg, mal_spawn_mode_t mode, double t0,
                                double spawn)
{
    engine_group_t *g = parts->group;
    int n = msg->new_procs;
    const double *weights = msg->weights;
    engine_reconfig_t rc = engine_reconfig_of(parts, MAL_ACTION_EXPAND);
    rc.u = rc.n = merged;
    rc.me_u = rc.me_n = g->rank;
    rc.n_u = rc.n_n = n;
    rc.old_procs = g->size;
    rc.weights = weights;
    mal_status_t st = engine_reconfig_prepare(&rc);
    /* A planning failure here is agreed inside engine_reconfig_move, with the joiners. */
    st = engine_reconfig_move(&rc, st);
    /* Until the newcomers arrive in the move's first collective, the parents wait on
     * their start (a woken process reads its join message first): process time. */
    spawn += rc.t_meet;
    mal_reconfig_stats_t s = {
        .action = MAL_ACTION_EXPAND, .spawn_mode = mode, .iteration = g->iteration,
        .procs_before = g->size, .procs_after = st ? g->size : n,
        .bytes_moved = rc.bytes_in, .spawn_seconds = spawn, .process_seconds = spawn,
        .window_seconds = rc.t_windows,
        .redist_seconds = rc.t_redist, .total_seconds = MPI_Wtime() - t0, .status = st,
        .pooled = msg->woken, .spawned = msg->spawning, .bytes_ahead = rc.bytes_ahead};
    s.switch_seconds = s.total_seconds;
    if (procs->async_started > 0) { /* the switch of an asynchronous expansion */
        s.async = true;
        s.spawned = procs->async_spawned;
        s.pooled -= procs->async_spawned;
        s.background_seconds = t0 - procs->async_started;
        s.total_seconds = MPI_Wtime() - procs->async_started;
    }
    const report_change_t change = {.weights = weights, .nweights = weights ? n : 0};
    /* Committed before the report, so that the report has the commit's time: the
     * commit's collectives are over the old communicator, the report's over the merged
     * one, which the joiners enter first (joininfo.c). */
    double t_commit = MPI_Wtime();
    if (!st)
        engine_reconfig_commit(&rc, true);
    engine_phases_of(parts->sink, &rc, MPI_Wtime() - t_commit);
    engine_report(parts, merged, &s, &rc.moved, &change);
    if (!st) {
        MPI_Comm_free(&g->comm);
        g->comm = merged;
        MPI_Comm_size(merged, &g->size);
        procs->spawned += msg->spawning;
        engine_pool_after_expand(g, procs, msg->woken, msg->spawning > 0);
    } else {
        MPI_Comm_free(&merged); /* the joiners leave on their own, the woken park again */
    }
    engine_reconfig_release(&rc);
    return st;
}

/* The model's prediction before processes come or go: new rank k was old_of_new[k]. */
static void predict_resize(const engine_parts_t *parts, const engine_procs_t *procs,
                           mal_action_t action, int count, mal_spawn_mode_t mode,
                           const bool *leaving, const double *weights)
{
    engine_group_t *g = parts->group;
    int p = g->size, n = action == MAL_ACTION_EXPAND ? p + count : p - count, k = 0;
    /* Without memory for the map the prediction guesses ranks keep their numbers; the
     * call itself (collective) must happen on every rank. */
    int *old_of_new = malloc((size_t)n * sizeof *old_of_new);
    for (int r = 0; r < p && old_of_new != NULL; r++)
        if (leaving == NULL || !leaving[r])
            old_of_new[k++] = r;
    while (old_of_new != NULL && k < n)
        old_of_new[k++] = -1;
    /* The new processes' hosts (dpm.c). */
    const char *placed = procs->spawn_hosts;
    engine_host_list_t hosts = {placed ? placed : parts->conf->hosts,
                                procs->spawned - (placed ? procs->spawn_hosts_base : 0)};
    engine_change_t change = {.count = count};
    if (action == MAL_ACTION_EXPAND) { /* the pool wakes what it can, the rest spawn */
        change.parked = engine_pool_parked(procs);
        spawn_calls_t calls;
        plan_calls(parts, procs, count > change.parked ? count - change.parked : 0, mode,
                   &calls);
        change.spawn_calls = calls.calls;
    }
    engine_monitor_predict(parts->sink->mon, g->comm, g->iteration, action, change,
                           old_of_new, n, weights, hosts);
    free(old_of_new);
}

/* Every rank answers alike: the transport was agreed at mal_init. */
static mal_status_t check_transport(const char *call)
{
    if (!engine_shmem_active())
        return MAL_OK;
    return engine_fail(MAL_ERR_UNSUPPORTED, "%s: SHMEM, started in this process by "
                       "MAL_REDIST=shmem at mal_init, fixes the set of PEs at start; only "
                       "mal_rebalance can change the layout", call);
}

/* The agreed expansion, its new processes placed (room.c). */
static mal_status_t expand_agreed(const engine_parts_t *parts, engine_procs_t *procs, int count,
                                  mal_spawn_mode_t mode, const double *weights, double t0);

/* An expansion that must spawn, where the MPI cannot: refused on every rank alike (one
 * library, the same pool), before anything changes. */
static mal_status_t check_can_spawn(const engine_procs_t *procs, int count)
{
    const char *why = NULL;
    if (count <= engine_pool_parked(procs) || engine_spawn_supported(&why))
        return MAL_OK;
    return engine_fail(MAL_ERR_UNSUPPORTED, "mal_expand: %d process%s to spawn, but %s",
                       count - engine_pool_parked(procs),
                       count - engine_pool_parked(procs) == 1 ? "" : "es", why);
}

mal_status_t engine_expand(const engine_parts_t *parts, engine_procs_t *procs, int count,
                           mal_spawn_mode_t mode, const double *weights)
{
    engine_group_t *g = parts->group;
    double t0 = MPI_Wtime();
    parts->sink->phases = (report_phases_t){0};
    mal_status_t st = check_transport("mal_expand");
    if (st)
        return st;
    if (mode == MAL_SPAWN_DEFAULT)
        mode = parts->conf->spawn_mode;
    st = check_expand(g, count, mode, weights);
    /* Beyond the allocation's slots: refused before anything is spawned (every rank
     * judges alike from the same settings), reported, and the processes go on. */
    if (!st)
        st = engine_room_check(parts, procs, count);
    st = agree_resize(parts, st, count, &mode, NULL, weights, g->size + count, "mal_expand");
    /* Stale parked processes are released before the placement, which then counts the
     * processes really spawned (the pool wakes only fresh ones). */
    if (!st)
        st = engine_pool_drop_stale(parts, procs);
    if (!st)
        st = check_can_spawn(procs, count);
    if (st) {
        report_abandoned(parts, MAL_ACTION_EXPAND, mode, st, t0, MPI_Wtime() - t0);
        return st;
    }
    bool placed = engine_room_place(parts, procs, count);
    st = expand_agreed(parts, procs, count, mode, weights, t0);
    engine_room_unplace(procs, placed);
    return st;
}

static mal_status_t expand_agreed(const engine_parts_t *parts, engine_procs_t *procs, int count,
                                  mal_spawn_mode_t mode, const double *weights, double t0)
{
    engine_group_t *g = parts->group;
    predict_resize(parts, procs, MAL_ACTION_EXPAND, count, mode, NULL, weights);
    engine_join_msg_t msg = {.new_procs = g->size + count, .weights = weights};
    mal_status_t st = engine_pool_take(parts, procs, count, &msg.woken);
    msg.spawning = count - msg.woken;
    spawn_calls_t calls;
    plan_calls(parts, procs, msg.spawning, mode, &calls);
    msg.remaining = calls.calls;
    MPI_Comm grown = g->comm, merged = g->comm;
    double t_wake = MPI_Wtime();
    parts->sink->phases.agree = t_wake - t0;
    if (!st)
        st = engine_pool_wake(parts, procs, &msg, &grown);
    parts->sink->phases.spawn += MPI_Wtime() - t_wake; /* processes from the pool */
    if (!st && msg.spawning > 0)
        st = spawn_and_join(parts, procs, grown, &msg, &calls, &merged);
    else
        merged = grown;
    if (st) {
        if (grown != g->comm)
            MPI_Comm_free(&grown);
        report_abandoned(parts, MAL_ACTION_EXPAND, mode, st, t0, MPI_Wtime() - t0);
        return st;
    }
    if (grown != g->comm && grown != merged)
        MPI_Comm_free(&grown);
    st = expand_data(parts, procs, merged, &msg, mode, t0, MPI_Wtime() - t0);
    return st ? st : MAL_RECONFIGURED;
}

/* ---- shrink ----------------------------------------------------------------------- */

/* Which ranks leave: the given ones, or the last `count`. */
static mal_status_t leaving_set(const engine_group_t *g, int count, const int *ranks,
                                bool *leaving)
{
    int p = g->size;
    if (count < 1 || count >= p)
        return engine_fail(MAL_ERR_ARG, "mal_shrink: count is %d; with %d processes it must "
                           "be in 1..%d", count, p, p - 1);
    for (int i = 0; i < count; i++) {
        int r = ranks ? ranks[i] : p - count + i;
        if (r < 0 || r >= p)
            return engine_fail(MAL_ERR_ARG, "mal_shrink: ranks[%d] is %d, not a rank of "
                               "the %d processes", i, r, p);
        if (leaving[r])
            return engine_fail(MAL_ERR_ARG, "mal_shrink: rank %d is listed twice", r);
        leaving[r] = true;
    }
    return MAL_OK;
}

static void leave(const engine_parts_t *parts, engine_procs_t *procs)
{
    engine_group_t *g = parts->group;
    engine_array_destroy_all(parts->reg);
    engine_csr_free_all(parts->reg);
    if (g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    if (procs->world != MPI_COMM_NULL)
        MPI_Comm_free(&procs->world);
    procs->removed = true;
}

/* A released process in the pool: parked until an expansion takes it (its structures
 * then hold their new parts: MAL_RECONFIGURED) or it is released for good (MAL_REMOVED,
 * as without the pool). */
static mal_status_t park_released(const engine_parts_t *parts, engine_procs_t *procs)
{
    for (;;) {
        engine_join_header_t h = {0};
        MPI_Comm comm = MPI_COMM_NULL;
        if (engine_pool_wait(parts, procs, &h, &comm) != MAL_OK) {
            leave(parts, procs);
            return MAL_REMOVED;
        }
        if (engine_join_woken(parts, procs, comm, &h) == MAL_OK)
            return MAL_RECONFIGURED;
    }
}

/* The new set after the data moved: survivors take the new communicator; leavers leave
 * or, with the pool, park at the end of world. */
static void commit_shrink(const engine_parts_t *parts, engine_procs_t *procs,
                          const engine_reconfig_t *rc, const bool *leaving, int stay)
{
    engine_group_t *g = parts->group;
    int old_size = g->size, old_rank = g->rank;
    /* Where every process of the old set runs: the pool keeps the leavers' hosts. */
    double *hosts = procs->world != MPI_COMM_NULL ? calloc((size_t)old_size, sizeof *hosts)
                                                    : NULL;
    if (hosts != NULL) {
        char name[MPI_MAX_PROCESSOR_NAME];
        int len = 0;
        MPI_Get_processor_name(name, &len);
        double mine = engine_host_hash(name);
        PMPI_Allgather(&mine, 1, MPI_DOUBLE, hosts, 1, MPI_DOUBLE, g->comm);
    }
    MPI_Comm_free(&g->comm);
    g->comm = rc->n;
    if (rc->n != MPI_COMM_NULL) {
        g->rank = rc->me_n;
        engine_set_log_rank(rc->me_n);
        g->size = stay;
    }
    if (procs->world != MPI_COMM_NULL &&
        engine_pool_after_shrink(parts, procs, leaving, old_size, old_rank, hosts,
                                 rc->park_leavers) != MAL_OK)
        MPI_Comm_free(&procs->world); /* no pool any more on this process */
    free(hosts);
    if (rc->n == MPI_COMM_NULL) {
        procs->removed = procs->world == MPI_COMM_NULL;
        if (procs->removed)
            leave(parts, procs);
    }
}

/* The shrink's report, with the ranks it releases (old numbering) and its weights. */
static void report_released(const engine_parts_t *parts, mal_reconfig_stats_t *s,
                            const engine_moved_t *moved, const bool *leaving,
                            const double *weights)
{
    int p = parts->group->size, leavers = 0, n = 0;
    for (int r = 0; r < p; r++)
        leavers += leaving[r];
    int *released = malloc((size_t)p * sizeof *released); /* without it: not listed */
    for (int r = 0; released != NULL && r < p; r++)
        if (leaving[r])
            released[n++] = r;
    const report_change_t change = {.released = released, .nreleased = n, .weights = weights,
                                    .nweights = weights ? p - leavers : 0};
    engine_report(parts, parts->group->comm, s, moved, &change);
    free(released);
}

static mal_status_t shrink_data(const engine_parts_t *parts, engine_procs_t *procs,
                                const bool *leaving, const double *weights, bool park, double t0)
{
    engine_group_t *g = parts->group;
    int p = g->size, stay = 0;
    /* The model's parameters too: MAL_REDIST_AUTO picks a shrink's executor from the
     * calibration, as an expansion's. */
    engine_reconfig_t rc = engine_reconfig_of(parts, MAL_ACTION_SHRINK);
    rc.u = g->comm;
    rc.me_u = g->rank;
    rc.n_u = rc.old_procs = p;
    rc.weights = weights;
    rc.park_leavers = park;
    mal_status_t st = engine_reconfig_prepare(&rc);
    for (int r = 0; r < p; r++) {
        if (rc.n_of_u != NULL)
            rc.n_of_u[r] = leaving[r] ? -1 : stay;
        stay += !leaving[r];
    }
    rc.n_n = stay;
    double t_split = MPI_Wtime();
    parts->sink->phases.agree = t_split - t0;
    int rc_split = MPI_Comm_split(g->comm, leaving[g->rank] ? MPI_UNDEFINED : 0,
                                  g->rank, &rc.n);
    t_split = MPI_Wtime() - t_split;
    parts->sink->phases.merge = t_split;
    if (!st)
        st = engine_mpi_check(rc_split, "MPI_Comm_split");
    if (rc.n != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(rc.n, MPI_ERRORS_RETURN);
        MPI_Comm_rank(rc.n, &rc.me_n);
    }
    st = engine_reconfig_move(&rc, st);
    mal_reconfig_stats_t s = {
        .action = MAL_ACTION_SHRINK, .iteration = g->iteration, .procs_before = p,
        .procs_after = st ? p : stay, .bytes_moved = rc.bytes_in, .process_seconds = t_split,
        .window_seconds = rc.t_meet + rc.t_windows, .redist_seconds = rc.t_redist,
        .total_seconds = MPI_Wtime() - t0, .status = st};
    /* Committed before the report (which has the commit's time); every process of the
     * old set does both, in this order. */
    double t_commit = MPI_Wtime();
    if (!st)
        engine_reconfig_commit(&rc, true);
    engine_phases_of(parts->sink, &rc, MPI_Wtime() - t_commit);
    report_released(parts, &s, &rc.moved, leaving, weights);
    if (st) {
        if (rc.n != MPI_COMM_NULL)
            MPI_Comm_free(&rc.n);
    } else {
        commit_shrink(parts, procs, &rc, leaving, stay);
    }
    engine_reconfig_release(&rc);
    return st;
}

/* Prefetch after a shrink: the pool is brought back to mal_config_t.prefetch parked
 * processes. A spawn that fails leaves it smaller (said on stderr); the shrink stands. */
static void refill_pool(const engine_parts_t *parts, engine_procs_t *procs)
{
    int missing = parts->conf->prefetch - engine_pool_parked(procs);
    int free_slots = engine_room_free_slots(parts->group, parts->conf, procs);
    missing = missing < free_slots ? missing : free_slots;
    /* An MPI that cannot spawn ignored the prefetch at start (pool.c): so here. */
    if (missing > 0 && procs->world != MPI_COMM_NULL && engine_spawn_supported(NULL))
        engine_pool_fill(parts, procs, missing, NULL);
}

mal_status_t engine_shrink(const engine_parts_t *parts, engine_procs_t *procs, int count,
                           const int *ranks, const double *weights, bool for_good)
{
    engine_group_t *g = parts->group;
    double t0 = MPI_Wtime();
    parts->sink->phases = (report_phases_t){0};
    mal_status_t st = check_transport("mal_shrink");
    if (st)
        return st;
    bool *leaving = calloc((size_t)g->size, sizeof *leaving);
    st = leaving ? leaving_set(g, count, ranks, leaving)
                 : engine_fail(MAL_ERR_NOMEM, "no memory for %d flags", g->size);
    if (!st)
        st = check_new_weights(weights, g->size - count, "mal_shrink");
    st = agree_resize(parts, st, count, NULL, ranks, weights, g->size - count, "mal_shrink");
    if (st) {
        free(leaving);
        report_abandoned(parts, MAL_ACTION_SHRINK, MAL_SPAWN_DEFAULT, st, t0, 0);
        return st;
    }
    predict_resize(parts, procs, MAL_ACTION_SHRINK, count, MAL_SPAWN_DEFAULT, leaving,
                   weights);
    engine_release_survey_t survey; /* where every process runs, for MAL_RELEASE_NODES */
    engine_release_survey(parts, &survey);
    st = shrink_data(parts, procs, leaving, weights, parts->conf->pool && !for_good, t0);
    /* Before the pool's refill, which would spawn into the returned slots. */
    if (!st)
        engine_release_nodes(parts, procs, leaving, &survey);
    engine_release_survey_free(&survey);
    free(leaving);
    if (st)
        return st;
    if (g->comm == MPI_COMM_NULL && !procs->removed)
        return park_released(parts, procs);
    if (!procs->removed)
        refill_pool(parts, procs);
    return procs->removed ? MAL_REMOVED : MAL_RECONFIGURED;
}


/* ---- rebalance ---------------------------------------------------------------------- */
