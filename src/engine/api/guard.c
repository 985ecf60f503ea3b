/* The check every public call that needs libmal's state starts with. */
#include "api.h"
#include "core.h"
#include "reconf.h"

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

mal_status_t engine_require_idle(const char *call)
{
    mal_status_t st = engine_require_init(call);
    if (!st && engine_context()->procs.async != NULL)
        st = engine_fail(MAL_ERR_UNSUPPORTED, "%s: an asynchronous expansion is under way "
                         "(mal_pool_info: async_pending); call mal_step until it completes",
                         call);
    return st;
}
