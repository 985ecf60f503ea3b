/* The one place a transport is chosen, and what the choice implies: which table moves a
 * structure's rows and who copies each segment of a one-sided one. Calls the tables;
 * none of them calls it. */
#include "transport.h"

bool engine_method_one_sided(mal_redist_t method)
{
    return method == MAL_REDIST_RMA || method == MAL_REDIST_RMA_GET ||
           method == MAL_REDIST_SHMEM;
}

const engine_transport_t *engine_transport_choose(mal_redist_t method, bool replicated)
{
    if (replicated)
        return &engine_transport_rma;
    switch (method) {
    case MAL_REDIST_ALLTOALLV: return &engine_transport_alltoallv;
    case MAL_REDIST_P2P: return &engine_transport_p2p;
    case MAL_REDIST_SHMEM: return &engine_transport_shmem;
    default: return &engine_transport_rma;
    }
}

engine_rma_mode_t engine_transport_mode(mal_redist_t method, mal_action_t action)
{
    if (action == MAL_ACTION_EXPAND)
        return ENGINE_RMA_PUSH;
    if (action == MAL_ACTION_SHRINK || method == MAL_REDIST_RMA_GET ||
        method == MAL_REDIST_SHMEM)
        return ENGINE_RMA_PULL;
    return ENGINE_RMA_SPLIT;
}
