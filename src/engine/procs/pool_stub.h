/* TEMPORARY: replaced by the lead's pool.c (its declarations in procs.h). The pool's
 * figures the model and the policy need, so that the model19 branch builds before the
 * pool lands; drop this file, pool_stub.c and the includes of pool_stub.h at the merge. */
#ifndef MAL_POOL_STUB_H
#define MAL_POOL_STUB_H

#include "reconf.h"

#include <stdbool.h>

/* Processes parked and reusable now, the same on every active rank. */
int engine_pool_parked(const engine_state_t *e);
/* Asynchronous expansion enabled and MPI_THREAD_MULTIPLE available. */
bool engine_async_on(const engine_state_t *e);

#endif /* MAL_POOL_STUB_H */
