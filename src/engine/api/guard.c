/* The checks every public call that needs libmal's state starts with, and the agreement
 * over mal_comm() for the layers that do not yet take their communicator. */
#include "engine.h"

mal_status_t engine_require_init(const char *call)
{
    const engine_state_t *e = engine_context();
    engine_enter(call);
    if (!e->initialized)
        return engine_fail(MAL_ERR_NOT_INITIALIZED, "%s called before mal_init", call);
    if (e->procs.removed)
        return engine_fail(MAL_ERR_RELEASED, "%s called on a process that a shrink released "
                           "(only mal_finalize is left)", call);
    return MAL_OK;
}

/* Transitional (issue 18): the layers that still call it should call engine_agree_in
 * with their communicator. */
mal_status_t engine_agree(mal_status_t local, uint64_t fingerprint, const char *call)
{
    return engine_agree_in(engine_context()->comm, local, fingerprint, call);
}
