/* The API layer (api/): what only the public calls use, and libmal's whole state
 * (state.h), which no layer below sees. */
#ifndef MAL_API_H
#define MAL_API_H

#include "reconf.h"
#include "state.h"

/* The state of this process's libmal (api/context.c): for the API layer only. */
engine_state_t *engine_context(void);
/* The parts of it the layers below take (engine_parts_of). */
engine_parts_t engine_context_parts(void);

/* Guard for calls that need mal_init (api/guard.c) (it names `call` as the call in progress, see
 * engine_enter); returns MAL_OK when initialised. */
mal_status_t engine_require_init(const char *call);
/* The same for a call that reconfigures: refused (MAL_ERR_UNSUPPORTED) while an
 * asynchronous expansion runs, whose background phase relies on the layout and the pool
 * staying as they were. */
mal_status_t engine_require_idle(const char *call);

/* Resolve MAL_REDIST_DEFAULT from the environment; MAL_ERR_ARG (naming `call`) on an
 * unknown value. */
mal_status_t engine_resolve_method(mal_redist_t requested, mal_redist_t *method,
                                   const char *call);

#endif /* MAL_API_H */
