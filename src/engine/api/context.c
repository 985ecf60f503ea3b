/* The one handle of libmal's state: every public call (src/engine/api/) starts from it
 * and hands the layers below the parts they need, explicitly. Nothing outside api/ calls
 * engine_context() (tools/check-layers.sh refuses an upward call). */
#include "api.h"
#include "state.h"

static engine_state_t the_engine = {.group.comm = MPI_COMM_NULL};

engine_state_t *engine_context(void)
{
    return &the_engine;
}

engine_parts_t engine_context_parts(void)
{
    return engine_parts_of(&the_engine);
}
