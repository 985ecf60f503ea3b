/* The queries on libmal's state: local, communicate nothing, and answer a neutral value
 * (or MAL_ERR_NOT_INITIALIZED where they return a status) outside mal_init..mal_finalize. */
#include "api.h"
#include "core.h"
#include "reconf.h"
#include "registry.h"

bool mal_is_initialized(void)
{
    return engine_context()->initialized;
}

MPI_Comm mal_comm(void)
{
    const engine_state_t *e = engine_context();
    return e->initialized ? e->group.comm : MPI_COMM_NULL;
}

mal_redist_t mal_get_redist(void)
{
    const engine_state_t *e = engine_context();
    return e->initialized ? e->xfer.method : MAL_REDIST_DEFAULT;
}

int64_t mal_iteration(void)
{
    const engine_state_t *e = engine_context();
    return e->initialized ? e->group.iteration : 0;
}

bool mal_is_initial_process(void)
{
    const engine_state_t *e = engine_context();
    return !e->initialized || e->procs.initial;
}

mal_status_t mal_last_rebalance(mal_rebalance_stats_t *stats)
{
    mal_status_t st = engine_require_init("mal_last_rebalance");
    if (st)
        return st;
    if (stats == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_last_rebalance: stats is NULL");
    *stats = engine_context()->sink.stats.last;
    return MAL_OK;
}

/* Unlike mal_last_rebalance, answered on a process a shrink released too: its last
 * reconfiguration is the one that released it. */
mal_status_t mal_last_reconfig(mal_reconfig_stats_t *stats)
{
    const engine_state_t *e = engine_context();
    engine_enter("mal_last_reconfig");
    if (!e->initialized)
        return engine_fail(MAL_ERR_NOT_INITIALIZED, "mal_last_reconfig called before mal_init");
    if (stats == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_last_reconfig: stats is NULL");
    *stats = e->sink.stats.reconfig;
    return MAL_OK;
}

int mal_buffer_count(void)
{
    const engine_state_t *e = engine_context();
    return e->initialized ? e->reg.windows : 0;
}

const char *mal_memory_name(const mal_array_t *array)
{
    if (!engine_context()->initialized || array == NULL)
        return "none";
    return engine_buffer_kind(engine_array_current(array));
}

const char *mal_csr_memory_name(const mal_csr_t *matrix)
{
    return mal_memory_name(matrix != NULL ? engine_csr_part(matrix, CSR_PART_VALUES) : NULL);
}
