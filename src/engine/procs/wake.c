/* A parked process that an expansion wakes (pool.c): the join information grafted onto
 * what it holds, the spawns that complete the expansion, its data phase. */
#include "core.h"
#include "monitor.h"
#include "plan.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"

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

mal_status_t engine_receive_wake(engine_state_t *e, MPI_Comm pair, engine_join_header_t *h)
{
    engine_state_t t = {.comm = MPI_COMM_NULL};
    *h = (engine_join_header_t){0};
    const char *why = engine_receive_join_info(pair, &t, h);
    if (why == NULL) {
        e->iteration = t.iteration;
        e->pol.next_action = t.pol.next_action;
        e->procs.spawned = t.procs.spawned;
        free(e->procs.parked);
        e->procs.parked = t.procs.parked;
        e->procs.nparked = t.procs.nparked;
        e->procs.reused = t.procs.reused;
        e->procs.released = t.procs.released;
        t.procs.parked = NULL;
        graft_registry(&e->procs, &e->reg, &t.reg);
        e->reg.generation = t.reg.generation; /* the active processes' count */
        /* The active processes' settings, which mal_set_redist may have changed while
         * this process was parked. */
        settings_free(&e->settings);
        e->settings = t.settings;
        t.settings = (settings_t){0};
        e->xfer.method = t.xfer.method;
    } else {
        free(h->weights);
        h->weights = NULL;
    }
    engine_settings_free(&t.procs.settings);
    settings_free(&t.settings);
    free(t.procs.parked);
    engine_array_destroy_all(&t.reg);
    engine_csr_free_all(&t.reg);
    engine_free_values(&t.reg);
    engine_pool_drop_reserves(&e->procs);
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

mal_status_t engine_join_woken(engine_state_t *e, MPI_Comm comm, engine_join_header_t *h)
{
    if (e->mon == NULL)
        e->mon = engine_monitor_init(&e->procs.settings, e->procs.initial, e->iteration, false);
    mal_status_t st = engine_join_data(e, comm, h);
    free(h->weights);
    h->weights = NULL;
    if (st) {
        MPI_Comm_free(&comm);
        return st;
    }
    e->comm = comm;
    MPI_Comm_rank(comm, &e->rank);
    MPI_Comm_size(comm, &e->size);
    engine_set_log_rank(e->rank);
    e->procs.removed = false;
    if (h->remaining > 0) { /* processes were spawned after it: world is the new set */
        MPI_Comm_free(&e->procs.world);
        MPI_Comm_dup(comm, &e->procs.world);
        MPI_Comm_set_errhandler(e->procs.world, MPI_ERRORS_RETURN);
    }
    return MAL_OK;
}
