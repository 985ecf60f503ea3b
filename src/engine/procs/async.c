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
#include "plan.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct engine_async {
    pthread_t thread;
    engine_state_t snap;        /* the thread's copy of the state                    */
    engine_bytes_t *packed;     /* rank 0: the join information of each spawn call    */
    int calls, spawn;           /* spawn calls and processes of the background phase  */
    int count;                  /* the expansion's count                             */
    mal_spawn_mode_t mode;
    double *weights;            /* e->size + count, or NULL                          */
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
    engine_state_t *e = &a->snap;
    for (mal_array_t *x = engine_array_first(&e->reg); x != NULL; x = engine_array_next(x)) {
        const engine_buffer_t *spare = engine_array_spare(x);
        const int64_t *offsets;
        const engine_peer_mem_t *peers;
        if (!engine_array_sources(x, &offsets, &peers) || spare->base == NULL ||
            (spare->peers == NULL && !spare->pending))
            continue;
        engine_prepull_src_t src = {e->size, offsets, peers};
        engine_prepull_dst_t dst = {e->size + a->count, e->rank, a->weights,
                                    settings_num(&e->settings, SETTING_MIN_ROWS), spare->base, spare->mapped};
        engine_prepull(&e->reg, x, &src, &dst);
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
    a->status = engine_pool_fill(&a->snap, a->spawn, a->packed);
    /* Done only when the new processes have mapped and copied ahead their part: else the
     * switch waits for that (0.06-0.17 s measured), in the application's time. */
    if (!a->status && a->snap.rank == 0)
        engine_pool_wait_ready(&a->snap.procs, a->spawn,
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
    free(a->snap.procs.spawn_hosts);
    free(a);
}

/* The thread's copy: its own list of parked processes and hosts, the rest read-only. */
static mal_status_t snapshot(engine_async_t *a, const engine_state_t *e)
{
    a->snap = *e;
    engine_procs_t *p = &a->snap.procs;
    p->parked = malloc((size_t)(e->procs.nparked + 1) * sizeof *p->parked);
    if (p->parked != NULL && e->procs.nparked > 0)
        memcpy(p->parked, e->procs.parked, (size_t)e->procs.nparked * sizeof *p->parked);
    p->spawn_hosts = e->procs.spawn_hosts != NULL ? strdup(e->procs.spawn_hosts) : NULL;
    bool ok = p->parked != NULL && (e->procs.spawn_hosts == NULL || p->spawn_hosts != NULL);
    return ok ? MAL_OK : engine_fail(MAL_ERR_NOMEM, "no memory to start an asynchronous "
                                     "expansion");
}

static mal_status_t prepare(engine_async_t *a, const engine_state_t *e, const double *weights)
{
    int n = e->size + a->count;
    mal_status_t st = snapshot(a, e);
    if (!st && weights != NULL && (a->weights = malloc((size_t)n * sizeof *weights)) == NULL)
        st = engine_fail(MAL_ERR_NOMEM, "no memory for %d weights", n);
    if (!st && weights != NULL)
        memcpy(a->weights, weights, (size_t)n * sizeof *weights);
    a->calls = engine_pool_fill_calls(e, a->spawn, MAL_SPAWN_DEFAULT);
    if (!st && e->rank == 0) {
        a->packed = calloc((size_t)a->calls, sizeof *a->packed);
        engine_join_msg_t expansion = {.new_procs = n, .weights = a->weights};
        st = a->packed == NULL ? engine_fail(MAL_ERR_NOMEM, "no memory for join information")
                               : engine_pool_pack_fill(e, a->spawn, a->calls, &expansion,
                                                       a->packed);
    }
    return st;
}

/* Collective over e->comm: the background phase of an expansion by `count`. */
static mal_status_t start(engine_state_t *e, int count, mal_spawn_mode_t mode,
                          const double *weights)
{
    engine_async_t *a = calloc(1, sizeof *a);
    mal_status_t st = a == NULL ? engine_fail(MAL_ERR_NOMEM, "no memory to start an "
                                              "asynchronous expansion")
                                : MAL_OK;
    if (a != NULL) {
        a->count = count;
        a->mode = mode;
        a->spawn = count - engine_pool_parked(e);
        a->iteration = e->iteration;
        st = prepare(a, e, weights);
    }
    st = engine_agree_in(e->comm, st, 0, "mal_step (asynchronous expansion)");
    if (st) {
        if (a != NULL && a->snap.procs.parked != NULL)
            free(a->snap.procs.parked);
        if (a != NULL)
            async_free(a);
        return engine_expand(e, count, mode, weights);
    }
    a->started = MPI_Wtime();
    /* Every rank's thread takes part in the same collectives: one that cannot start
     * runs the background phase here, which costs this rank's overlap, not the run. */
    if (pthread_create(&a->thread, NULL, background, a) != 0) {
        background(a);
        a->thread = pthread_self();
    }
    e->procs.async = a;
    if (e->rank == 0 && e->procs.settings.summary)
        engine_notice("libmal: it %lld expand %d -> %d procs started in the background (%d to "
               "spawn)\n", (long long)e->iteration, e->size, e->size + count, a->spawn);
    return MAL_CONTINUE;
}

mal_status_t engine_expand_planned(engine_state_t *e, int count, mal_spawn_mode_t mode,
                                   const double *weights)
{
    /* One beyond the allocation, were it all spawned, goes to engine_expand, which
     * wakes what is parked or refuses it (and reports) with the parked ones kept. */
    bool background = engine_async_on(e) && e->procs.async == NULL && count > 0 &&
                      engine_room_fits(e, count);
    /* Stale parked processes would be released at the switch and their replacements
     * spawned there, in the application's time: release them now, spawn here. */
    mal_status_t st = background ? engine_pool_drop_stale(e) : MAL_OK;
    if (st)
        return st;
    background = background && count > engine_pool_parked(e);
    if (!background)
        return engine_expand(e, count, mode, weights);
    bool placed = engine_room_place(e, count);
    st = start(e, count, mode, weights);
    engine_room_unplace(e, placed);
    return st;
}

/* The thread is done on this process: adopt its world and parked processes. */
static void adopt(engine_state_t *e, engine_async_t *a)
{
    if (!pthread_equal(a->thread, pthread_self()))
        pthread_join(a->thread, NULL);
    engine_procs_t *p = &e->procs;
    p->world = a->snap.procs.world;
    free(p->parked);
    p->parked = a->snap.procs.parked;
    p->nparked = a->snap.procs.nparked;
    p->spawned = a->snap.procs.spawned;
    a->snap.procs.parked = NULL;
    p->async = NULL;
}

mal_status_t engine_async_poll(engine_state_t *e)
{
    engine_async_t *a = e->procs.async;
    int done = atomic_load(&a->done);
    PMPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_MIN, e->comm);
    if (!done)
        return MAL_CONTINUE;
    adopt(e, a);
    /* Rank 0 spawned: its status is the expansion's on every rank (the others only know
     * that it failed). */
    int root_status = a->status;
    PMPI_Bcast(&root_status, 1, MPI_INT, 0, e->comm);
    mal_status_t st = a->status ? engine_fail(root_status ? (mal_status_t)root_status
                                                          : a->status, "%s", a->message)
                                : MAL_OK;
    st = engine_agree_in(e->comm, st, 0, "mal_step (asynchronous expansion)");
    if (st && root_status)
        st = (mal_status_t)root_status;
    if (st) {
        engine_report_abandoned_async(e, a->count, a->mode, st, a->started);
        if (e->rank == 0)
            engine_notice("libmal: the asynchronous expansion started at iteration %lld "
                    "was abandoned (%s); the application goes on with its %d processes\n",
                    (long long)a->iteration, engine_error_message(), e->size);
        async_free(a);
        return MAL_CONTINUE;
    }
    e->procs.async_started = a->started;
    e->procs.async_spawned = a->spawn;
    st = engine_expand(e, a->count, a->mode, a->weights);
    e->procs.async_started = 0;
    e->procs.async_spawned = 0;
    async_free(a);
    return st;
}

void engine_async_finish(engine_state_t *e)
{
    engine_async_t *a = e->procs.async;
    if (a == NULL)
        return;
    adopt(e, a); /* every rank's thread ends with the same collectives */
    async_free(a);
}
