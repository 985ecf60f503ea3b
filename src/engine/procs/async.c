/* Asynchronous expansion (mal_config_t.async): the processes an expansion needs are
 * spawned into the pool by a background thread on every active process, while the
 * application goes on iterating; a later mal_step, once every process's thread is done,
 * takes them from the pool (a pool expansion: wake, data, new communicator), which is
 * all the application waits for.
 *
 * The thread works on a copy of the state (its world, its list of parked processes, the
 * spawn count); the application's thread uses only mal_comm() meanwhile, and adopts the
 * copy's world when it joins the thread. The join information the new processes need
 * is packed before the thread starts, so the thread reads nothing the application may
 * change. Errors in the thread are its own (core/status.c keeps messages per thread);
 * a background spawn that fails abandons the expansion with a report and a notice, and
 * the application goes on as it was. */
#include "core.h"
#include "platform.h"
#include "join.h"
#include "memory.h"
#include "plan.h"
#include "pool.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"
#include "spawning.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct engine_async {
    pthread_t thread;
    /* The thread's copy of the state: its own process set and processes layer, the
     * other parts shared, read-only while it runs. */
    engine_group_t group;
    engine_procs_t procs;
    engine_parts_t parts;
    engine_bytes_t *packed;     /* rank 0: the join information of each spawn call    */
    int calls, spawn;           /* spawn calls and processes of the background phase  */
    int count;                  /* the expansion's count                             */
    mal_spawn_mode_t mode;
    double *weights;            /* g->size + count, or NULL                          */
    double started;             /* MPI_Wtime when the background phase started       */
    int64_t iteration;
    atomic_bool done;
    mal_status_t status;
    char message[640];
};

/* This process's rows of the read-mostly structures after the expansion, copied ahead
 * into its spares (reconf/prepull.c); the application does not change them meanwhile. */
static void prepull_old(engine_async_t *a)
{
    const engine_parts_t *parts = &a->parts;
    const engine_group_t *g = parts->group;
    for (mal_array_t *x = engine_array_first(parts->reg); x != NULL; x = engine_array_next(x)) {
        const engine_buffer_t *spare = engine_array_spare(x);
        const int64_t *offsets;
        const engine_peer_mem_t *peers;
        if (!engine_array_sources(x, &offsets, &peers) || spare->base == NULL ||
            (spare->peers == NULL && !spare->pending))
            continue;
        engine_prepull_src_t src = {g->size, offsets, peers};
        engine_prepull_dst_t dst = {g->size + a->count, g->rank, a->weights,
                                    settings_num(parts->settings, SETTING_MIN_ROWS),
                                    spare->base, spare->mapped};
        engine_prepull(parts->reg, x, &src, &dst);
    }
}

static void *background(void *arg)
{
    engine_async_t *a = arg;
    engine_enter("mal_step (asynchronous expansion)");
    /* The thread keeps the application's priority: at nice 19 it was starved beside the
     * iterations while the new processes, at nice 0, waited for it inside MPI_Init and
     * the join (one used 0.47 s of CPU there instead of 0.15 s), and the overlapped
     * iterations lost more (docs/design.md). */
    prepull_old(a);
    a->status = engine_pool_fill(&a->parts, &a->procs, a->spawn, a->packed);
    /* Done only when the new processes have mapped and copied ahead their part: else the
     * switch waits for that (0.06-0.17 s measured), in the application's time. */
    if (!a->status && a->group.rank == 0)
        engine_pool_wait_ready(&a->procs, a->spawn,
                               engine_spawn_bound() > 0 ? engine_spawn_bound() : 60.0);
    if (a->status)
        snprintf(a->message, sizeof a->message, "%s", engine_error_message());
    atomic_store(&a->done, true);
    return NULL;
}

static void async_free(engine_async_t *a)
{
    for (int i = 0; a->packed != NULL && i < a->calls; i++)
        free(a->packed[i].data);
    free(a->packed);
    free(a->weights);
    free(a->procs.spawn_hosts);
    free(a);
}

/* The thread's copy: its own list of parked processes and hosts, the rest read-only. */
static mal_status_t snapshot(engine_async_t *a, const engine_parts_t *parts,
                             const engine_procs_t *procs)
{
    a->group = *parts->group;
    a->procs = *procs;
    a->parts = *parts;
    a->parts.group = &a->group;
    engine_procs_t *p = &a->procs;
    p->parked = malloc((size_t)(procs->nparked + 1) * sizeof *p->parked);
    if (p->parked != NULL && procs->nparked > 0)
        memcpy(p->parked, procs->parked, (size_t)procs->nparked * sizeof *p->parked);
    p->spawn_hosts = procs->spawn_hosts != NULL ? strdup(procs->spawn_hosts) : NULL;
    bool ok = p->parked != NULL && (procs->spawn_hosts == NULL || p->spawn_hosts != NULL);
    return ok ? MAL_OK : engine_fail(MAL_ERR_NOMEM, "no memory to start an asynchronous "
                                     "expansion");
}

static mal_status_t prepare(engine_async_t *a, const engine_parts_t *parts,
                            const engine_procs_t *procs, const double *weights)
{
    engine_group_t *g = parts->group;
    int n = g->size + a->count;
    mal_status_t st = snapshot(a, parts, procs);
    if (!st && weights != NULL && (a->weights = malloc((size_t)n * sizeof *weights)) == NULL)
        st = engine_fail(MAL_ERR_NOMEM, "no memory for %d weights", n);
    if (!st && weights != NULL)
        memcpy(a->weights, weights, (size_t)n * sizeof *weights);
    a->calls = engine_pool_fill_calls(parts->conf, a->spawn, MAL_SPAWN_DEFAULT);
    if (!st && g->rank == 0) {
        a->packed = calloc((size_t)a->calls, sizeof *a->packed);
        engine_join_msg_t expansion = {.new_procs = n, .weights = a->weights};
        st = a->packed == NULL ? engine_fail(MAL_ERR_NOMEM, "no memory for join information")
                               : engine_pool_pack_fill(parts, procs, a->spawn, a->calls,
                                                       &expansion, a->packed);
    }
    return st;
}

/* Collective over g->comm: the background phase of an expansion by `count`. */
static mal_status_t start(const engine_parts_t *parts, engine_procs_t *procs, int count,
                          mal_spawn_mode_t mode, const double *weights)
{
    engine_group_t *g = parts->group;
    engine_async_t *a = calloc(1, sizeof *a);
    mal_status_t st = a == NULL ? engine_fail(MAL_ERR_NOMEM, "no memory to start an "
                                              "asynchronous expansion")
                                : MAL_OK;
    if (a != NULL) {
        a->count = count;
        a->mode = mode;
        a->spawn = count - engine_pool_parked(procs);
        a->iteration = g->iteration;
        st = prepare(a, parts, procs, weights);
    }
    st = engine_agree_in(g->comm, st, 0, "mal_step (asynchronous expansion)");
    if (st) {
        if (a != NULL && a->procs.parked != NULL)
            free(a->procs.parked);
        if (a != NULL)
            async_free(a);
        return engine_expand(parts, procs, count, mode, weights);
    }
    a->started = MPI_Wtime();
    /* The thread copies rows ahead into the spares, which debug mode may have protected
     * since the last reconfiguration: the next one has begun. */
    engine_stale_release_all();
    /* Every rank's thread takes part in the same collectives: one that cannot start
     * runs the background phase here, which costs this rank's overlap, not the run. */
    if (pthread_create(&a->thread, NULL, background, a) != 0) {
        background(a);
        a->thread = pthread_self();
    }
    procs->async = a;
    if (g->rank == 0 && parts->conf->summary)
        engine_notice("libmal: it %lld expand %d -> %d procs started in the background (%d to "
               "spawn)\n", (long long)g->iteration, g->size, g->size + count, a->spawn);
    return MAL_CONTINUE;
}

mal_status_t engine_expand_planned(const engine_parts_t *parts, engine_procs_t *procs, int count,
                                   mal_spawn_mode_t mode, const double *weights)
{
    /* One beyond the allocation, were it all spawned, goes to engine_expand, which
     * wakes what is parked or refuses it (and reports) with the parked ones kept. */
    bool background = engine_async_on(parts->conf, procs) && procs->async == NULL &&
                      count > 0 && engine_room_fits(parts->group, parts->conf, count);
    /* Stale parked processes would be released at the switch and their replacements
     * spawned there, in the application's time: release them now, spawn here. */
    mal_status_t st = background ? engine_pool_drop_stale(parts, procs) : MAL_OK;
    if (st)
        return st;
    /* Nothing to spawn, or no way to: engine_expand wakes or refuses. */
    background = background && count > engine_pool_parked(procs) &&
                 engine_spawn_supported(NULL);
    if (!background)
        return engine_expand(parts, procs, count, mode, weights);
    bool placed = engine_room_place(parts, procs, count);
    st = start(parts, procs, count, mode, weights);
    engine_room_unplace(procs, placed);
    return st;
}

/* The thread is done on this process: adopt its world and parked processes. */
static void adopt(engine_procs_t *procs, engine_async_t *a)
{
    if (!pthread_equal(a->thread, pthread_self()))
        pthread_join(a->thread, NULL);
    procs->world = a->procs.world;
    free(procs->parked);
    procs->parked = a->procs.parked;
    procs->nparked = a->procs.nparked;
    procs->spawned = a->procs.spawned;
    a->procs.parked = NULL;
    procs->async = NULL;
}

mal_status_t engine_async_poll(const engine_parts_t *parts, engine_procs_t *procs)
{
    engine_group_t *g = parts->group;
    engine_async_t *a = procs->async;
    int done = atomic_load(&a->done);
    PMPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_MIN, g->comm);
    if (!done)
        return MAL_CONTINUE;
    adopt(procs, a);
    /* Rank 0 spawned: its status is the expansion's on every rank (the others only know
     * that it failed). */
    int root_status = a->status;
    PMPI_Bcast(&root_status, 1, MPI_INT, 0, g->comm);
    mal_status_t st = a->status ? engine_fail(root_status ? (mal_status_t)root_status
                                                          : a->status, "%s", a->message)
                                : MAL_OK;
    st = engine_agree_in(g->comm, st, 0, "mal_step (asynchronous expansion)");
    if (st && root_status)
        st = (mal_status_t)root_status;
    if (st) {
        engine_report_abandoned_async(parts, a->count, a->mode, st, a->started);
        if (g->rank == 0)
            engine_notice("libmal: the asynchronous expansion started at iteration %lld "
                    "was abandoned (%s); the application goes on with its %d processes\n",
                    (long long)a->iteration, engine_error_message(), g->size);
        async_free(a);
        return MAL_CONTINUE;
    }
    procs->async_started = a->started;
    procs->async_spawned = a->spawn;
    st = engine_expand(parts, procs, a->count, a->mode, a->weights);
    procs->async_started = 0;
    procs->async_spawned = 0;
    async_free(a);
    return st;
}

void engine_async_finish(engine_procs_t *procs)
{
    engine_async_t *a = procs->async;
    if (a == NULL)
        return;
    adopt(procs, a); /* every rank's thread ends with the same collectives */
    async_free(a);
}
