/* TEMPORARY: replaced by the lead's pool.c. Until the pool and asynchronous expansion
 * land, no process is ever parked and every expansion is synchronous. */
#include "pool_stub.h"

#include "mal.h"

int engine_pool_parked(const engine_state_t *e)
{
    (void)e;
    return 0;
}

bool engine_async_on(const engine_state_t *e)
{
    (void)e;
    return false;
}

/* TEMPORARY, like the rest of this file: without a pool nothing is parked, so releasing
 * all (-1) or none of the parked processes succeeds and any other count is out of
 * range, as mal.h documents. */
mal_status_t mal_pool_release(int count)
{
    return count == -1 || count == 0 ? MAL_OK : MAL_ERR_ARG;
}
