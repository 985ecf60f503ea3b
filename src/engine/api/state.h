/* The state of this process's libmal (api/context.c): every layer's part, each of a type
 * its layer defines. Only the API layer sees it whole; it hands the layers below the
 * parts they work on (engine_parts_of). */
#ifndef MAL_API_STATE_H
#define MAL_API_STATE_H

#include "core.h"
#include "decide.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"
#include "settings.h"

#include <stdbool.h>

typedef struct {
    bool initialized;
    engine_group_t group;       /* mal_comm() and the run's progress (reconf.h)     */
    settings_t settings;        /* every setting, resolved once (core/settings.h)   */
    engine_settings_t conf;     /* the views derived from them (procs/state.c)      */
    engine_registry_t reg;
    engine_transfer_t xfer;
    engine_sink_t sink;         /* figures, monitor, report (reconf.h)              */
    engine_procs_t procs;
    engine_decider_t pol;
} engine_state_t;

/* The view of `e`'s parts the layers below take. */
static inline engine_parts_t engine_parts_of(engine_state_t *e)
{
    return (engine_parts_t){.group = &e->group, .settings = &e->settings, .conf = &e->conf,
                            .reg = &e->reg, .xfer = &e->xfer, .sink = &e->sink};
}

#endif /* MAL_API_STATE_H */
