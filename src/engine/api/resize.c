/* mal_expand, mal_shrink and the pool's calls: the guard, then the processes layer
 * (procs/resize.c, procs/pool.c) on the parts of this process's libmal. */
#include "api.h"
#include "pool.h"
#include "procs.h"

mal_status_t mal_expand(int count, mal_spawn_mode_t mode, const double *weights)
{
    mal_status_t st = engine_require_idle("mal_expand");
    engine_parts_t parts = engine_context_parts();
    return st ? st : engine_expand(&parts, &engine_context()->procs, count, mode, weights);
}

mal_status_t mal_shrink(int count, const int *ranks, const double *weights)
{
    mal_status_t st = engine_require_idle("mal_shrink");
    engine_parts_t parts = engine_context_parts();
    return st ? st : engine_shrink(&parts, &engine_context()->procs, count, ranks, weights,
                                   false);
}

mal_status_t mal_pool_info(mal_pool_info_t *info)
{
    mal_status_t st = engine_require_init("mal_pool_info");
    if (st)
        return st;
    if (info == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_pool_info: info is NULL");
    const engine_state_t *e = engine_context();
    const engine_procs_t *p = &e->procs;
    *info = (mal_pool_info_t){.active = e->group.comm != MPI_COMM_NULL ? e->group.size : 0,
                              .parked = engine_pool_parked(p), .spawned = p->spawned,
                              .reused = p->reused, .released = p->released,
                              .async_pending = p->async != NULL};
    return MAL_OK;
}

mal_status_t mal_pool_release(int count)
{
    mal_status_t st = engine_require_idle("mal_pool_release");
    engine_parts_t parts = engine_context_parts();
    return st ? st : engine_pool_release(&parts, &engine_context()->procs, count);
}
