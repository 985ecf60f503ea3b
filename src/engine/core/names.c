/* The names reports, summaries and messages give methods, actions and outcomes. */
#include "core.h"

const char *engine_redist_name(mal_redist_t method)
{
    switch (method) {
    case MAL_REDIST_DEFAULT: return "default";
    case MAL_REDIST_RMA: return "rma";
    case MAL_REDIST_ALLTOALLV: return "alltoallv";
    case MAL_REDIST_P2P: return "p2p";
    case MAL_REDIST_RMA_GET: return "rma-get";
    case MAL_REDIST_SHMEM: return "shmem";
    case MAL_REDIST_AUTO: return "auto";
    }
    return "unknown";
}

const char *engine_action_name(mal_action_t a)
{
    switch (a) {
    case MAL_ACTION_EXPAND: return "expand";
    case MAL_ACTION_SHRINK: return "shrink";
    case MAL_ACTION_REBALANCE: return "rebalance";
    case MAL_ACTION_NONE: break;
    }
    return "none";
}

const char *engine_status_name(mal_status_t status)
{
    switch (status) {
#define ENGINE_STATUS_NAME_(name, value, text) case name: return #name;
        MAL_STATUS_LIST(ENGINE_STATUS_NAME_)
#undef ENGINE_STATUS_NAME_
    }
    return "MAL_UNKNOWN";
}
