/* TEMPORARY: replaced by the lead's pool.c. Until the pool and asynchronous expansion
 * land, no process is ever parked and every expansion is synchronous. */
#include "pool_stub.h"

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
