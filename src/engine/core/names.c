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

const char *engine_distribution_name(int64_t distribution)
{
    switch (distribution) {
    case MAL_BLOCK: return "MAL_BLOCK";
    case MAL_REPLICATED: return "MAL_REPLICATED";
    case MAL_BLOCK | MAL_READ_MOSTLY: return "MAL_BLOCK | MAL_READ_MOSTLY";
    case MAL_REPLICATED | MAL_READ_MOSTLY: return "MAL_REPLICATED | MAL_READ_MOSTLY";
    }
    return "an unknown distribution";
}

const char *engine_spawn_mode_name(int64_t mode)
{
    switch (mode) {
    case MAL_SPAWN_DEFAULT: return "MAL_SPAWN_DEFAULT";
    case MAL_SPAWN_PER_CALL: return "MAL_SPAWN_PER_CALL";
    case MAL_SPAWN_BATCHED: return "MAL_SPAWN_BATCHED";
    }
    return "an unknown spawn mode";
}

const char *engine_pointer_name(int64_t given)
{
    return given ? "given" : "NULL";
}

const char *engine_method_name(int64_t method)
{
    return engine_redist_name((mal_redist_t)method);
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
