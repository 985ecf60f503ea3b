/* A parked process that an expansion wakes (pool.c): the join information grafted onto
 * what it holds, the spawns that complete the expansion, its data phase. */
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

/* The arrived registry onto this process's (engine_registry_graft); a structure that
 * kept no memory of its own takes what the pool prepared for it. */
static void graft_registry(engine_procs_t *procs, engine_registry_t *own,
                           engine_registry_t *fresh)
{
    engine_registry_graft(own, fresh);
    for (mal_array_t *a = engine_array_first(own); a != NULL; a = engine_array_next(a))
        if (!engine_array_spare(a)->pending)
            engine_pool_claim(procs, engine_array_name(a), engine_array_spare(a));
}

/* What a woken process reads before it takes it over: a state of its own, as a joining
 * process would build it. */
typedef struct {
    engine_group_t group;
    settings_t settings;
    engine_settings_t conf;
    engine_registry_t reg;
    engine_transfer_t xfer;
    engine_sink_t sink;
    engine_procs_t procs;
} received_t;

static void received_free(received_t *t)
{
    engine_settings_free(&t->conf);
    settings_free(&t->settings);
    free(t->procs.parked);
    engine_array_destroy_all(&t->reg);
    engine_csr_free_all(&t->reg);
    engine_free_values(&t->reg);
}

/* The active processes' progress, pool, registry and settings (which mal_set_redist may
 * have changed while this process was parked) onto this process's. */
static void adopt_received(const engine_parts_t *parts, engine_procs_t *procs, received_t *t)
{
    parts->group->iteration = t->group.iteration;
    parts->group->plan_next = t->group.plan_next;
    procs->spawned = t->procs.spawned;
    free(procs->parked);
    procs->parked = t->procs.parked;
    procs->nparked = t->procs.nparked;
    procs->reused = t->procs.reused;
    procs->released = t->procs.released;
    t->procs.parked = NULL;
    graft_registry(procs, parts->reg, &t->reg);
    parts->reg->generation = t->reg.generation; /* the active processes' count */
    settings_free(parts->settings);
    *parts->settings = t->settings;
    t->settings = (settings_t){0};
    parts->xfer->method = t->xfer.method;
}

mal_status_t engine_receive_wake(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm pair,
                                 engine_join_header_t *h)
{
    received_t t = {.group.comm = MPI_COMM_NULL};
    engine_parts_t into = {.group = &t.group, .settings = &t.settings, .conf = &t.conf,
                           .reg = &t.reg, .xfer = &t.xfer, .sink = &t.sink};
    *h = (engine_join_header_t){0};
    const char *why = engine_receive_join_info(pair, &into, &t.procs, h);
    if (why == NULL) {
        adopt_received(parts, procs, &t);
    } else {
        free(h->weights);
        h->weights = NULL;
    }
    received_free(&t);
    engine_pool_drop_reserves(procs);
    return why == NULL ? MAL_OK : engine_fail(MAL_ERR_SPAWN, "a parked process %s", why);
}

mal_status_t engine_follow_spawns(MPI_Comm *comm, int64_t remaining)
{
    for (int64_t i = 0; i < remaining; i++) {
        int ok = 0;
        engine_bcast_flag(&ok, *comm);
        MPI_Comm next = MPI_COMM_NULL;
        mal_status_t st = ok ? engine_join_members(*comm, MPI_COMM_NULL, &next)
                             : engine_fail(MAL_ERR_SPAWN, "the expansion was abandoned");
        MPI_Comm_free(comm);
        if (st)
            return st;
        *comm = next;
    }
    return MAL_OK;
}

mal_status_t engine_join_woken(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm comm,
                               engine_join_header_t *h)
{
    engine_state_enter(parts, procs, comm); /* the data phase reports to the monitor */
    mal_status_t st = engine_join_data(parts, comm, h);
    free(h->weights);
    h->weights = NULL;
    if (st) { /* parked again, in no active set */
        MPI_Comm_free(&parts->group->comm);
        engine_set_log_rank(-1);
        return st;
    }
    procs->removed = false;
    if (h->remaining > 0) { /* processes were spawned after it: world is the new set */
        MPI_Comm_free(&procs->world);
        MPI_Comm_dup(comm, &procs->world);
        MPI_Comm_set_errhandler(procs->world, MPI_ERRORS_RETURN);
    }
    return MAL_OK;
}
