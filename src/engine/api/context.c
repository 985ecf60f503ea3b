/* The one handle of libmal's state: every public call (src/engine/api/) starts from it
 * and hands the layers below the parts they need, explicitly. Nothing outside api/ may
 * call engine_context(). */
#include "engine.h"

/* Transitional: still visible to the files not yet converted (issue 18), hidden from
 * the library's users by the visibility preset. */
engine_state_t engine = {.comm = MPI_COMM_NULL};

engine_state_t *engine_context(void)
{
    return &engine;
}
