/* The registry's view of libmal's state, for the public calls of api/arrays.c,
 * api/matrices.c and api/replicated.c. */
#ifndef MAL_API_REGISTRY_CTX_H
#define MAL_API_REGISTRY_CTX_H

#include "reconf.h"
#include "registry.h"

/* What the registry needs from `e`: mal_comm(), this process's registry and transport,
 * the configuration; rank 0 announces where structures live before the first
 * iteration, when summaries are on. */
static inline engine_regctx_t engine_regctx(engine_state_t *e)
{
    return (engine_regctx_t){
        .comm = e->group.comm, .rank = e->group.rank, .size = e->group.size, .reg = &e->reg,
        .xfer = &e->xfer, .min_rows = settings_num(&e->settings, SETTING_MIN_ROWS),
        .announce = e->group.iteration == 0 && e->conf.summary};
}

#endif /* MAL_API_REGISTRY_CTX_H */
