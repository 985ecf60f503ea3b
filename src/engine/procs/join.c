/* Joining: the mal_init of a process started by an expansion. It reads the join
 * information (joininfo.c) and enters the application's communicator, or, spawned into
 * the pool, parks until an expansion wakes it (pool.c, wake.c). */
#include "core.h"
#include "join.h"
#include "monitor.h"
#include "plan.h"
#include "pool.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"
#include "spawning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A spawned process that cannot take part: say why (unless its spawn was abandoned by
 * rank 0, who reports that), release the spawn's communicators as rank 0 does, and
 * leave MPI with the rest of this MPI job (engine_leave_abandoned exits). */
static _Noreturn void leave_unjoined(engine_procs_t *procs, MPI_Comm *parent, MPI_Comm *pair,
                                     const char *why)
{
    if (*why != '\0')
        engine_notice("libmal: mal_init on a process spawned by an expansion: %s; it "
                "leaves without joining (the application goes on without it)\n", why);
    if (*parent != MPI_COMM_NULL)
        MPI_Comm_disconnect(parent);
    engine_leave_abandoned(procs, pair);
}

/* Through the spawn's pair communicator into the application's communicator *comm
 * (with the joins that follow in a one-per-call expansion); the parts and `procs`
 * receive the join information. A process that cannot join leaves MPI here. */
static void enter_application(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm parent,
                              MPI_Comm *comm, engine_join_header_t *h)
{
    MPI_Comm pair = MPI_COMM_NULL;
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    MPI_Intercomm_merge(parent, 1, &pair);
    const char *why = engine_receive_join_info(pair, parts, procs, h);
    if (why != NULL)
        leave_unjoined(procs, &parent, &pair, why);
    mal_status_t st = engine_join_children(pair, comm);
    MPI_Comm_free(&pair);
    MPI_Comm_disconnect(&parent);
    if (!st)
        st = engine_follow_joins(procs, h->remaining, comm);
    if (st) {
        char reason[600];
        snprintf(reason, sizeof reason, "joining the application failed (%s)",
                 engine_error_message());
        leave_unjoined(procs, &parent, comm, reason);
    }
}

/* Spawned into the pool for an expansion under way: copy ahead this process's rows of
 * the read-mostly structures, into the memory prepared for them. */
static void prepull_new(const engine_parts_t *parts, engine_procs_t *procs,
                        const engine_join_header_t *h)
{
    int me = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me); /* its place in its spawn call */
    for (mal_array_t *a = engine_array_first(parts->reg); h->first >= 0 && a != NULL;
         a = engine_array_next(a)) {
        engine_prepull_src_t src = {.old_procs = (int)h->old_procs};
        engine_prepull_dst_t dst = {.procs = (int)h->new_procs, .me = (int)h->first + me,
                                    .weights = h->weights,
                                    .min_rows = settings_num(parts->settings, SETTING_MIN_ROWS)};
        if (engine_array_sources(a, &src.offsets, &src.peers) &&
            engine_pool_reserved(procs, engine_array_name(a), &dst.base, &dst.mapped))
            engine_prepull(parts->reg, a, &src, &dst);
    }
}

/* Spawned into the pool: memory for the share of one more process of each structure
 * it was told of, then parked until an expansion takes it (or it is released: it
 * leaves MPI and exits here, as an abandoned spawn does). */
static void park_prespawned(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm world,
                            engine_join_header_t *h)
{
    procs->world = world;
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    int64_t after = h->old_procs + 1;
    for (mal_array_t *a = engine_array_first(parts->reg); a != NULL; a = engine_array_next(a))
        engine_pool_reserve(procs, engine_array_name(a),
                            engine_array_share_bytes(parts->reg, a, after));
    prepull_new(parts, procs, h);
    if (h->first >= 0) /* an asynchronous expansion waits for this (async.c) */
        engine_pool_say_ready(procs);
    free(h->weights);
    MPI_Comm comm = MPI_COMM_NULL;
    do {
        *h = (engine_join_header_t){0};
        if (engine_pool_wait(parts, procs, h, &comm) != MAL_OK) {
            engine_pool_drop_reserves(procs);
            engine_leave_abandoned(procs, &procs->world);
        }
    } while (engine_join_woken(parts, procs, comm, h) != MAL_OK);
}

mal_status_t engine_join(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm parent,
                         const mal_config_t *cfg)
{
    MPI_Comm_dup(MPI_COMM_WORLD, &procs->job);
    MPI_Comm comm = MPI_COMM_NULL;
    engine_join_header_t h = {0};
    enter_application(parts, procs, parent, &comm, &h); /* the settings come with it */
    engine_set_logging(cfg->log_errors);
    procs->world = MPI_COMM_NULL;
    if (h.park) {
        park_prespawned(parts, procs, comm, &h);
        return MAL_OK;
    }
    engine_state_enter(parts, procs, comm);
    mal_status_t st = engine_join_data(parts, comm, &h);
    free(h.weights);
    if (st)
        engine_leave_abandoned(procs, &parts->group->comm);
    if (engine_pool_enabled(parts->conf)) { /* spawning empties the pool: world is the
                                             * new set */
        MPI_Comm_dup(comm, &procs->world);
        MPI_Comm_set_errhandler(procs->world, MPI_ERRORS_RETURN);
    }
    return MAL_OK;
}
