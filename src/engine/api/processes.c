/* mal_expand and mal_shrink: the guard, then the processes layer (procs/resize.c) on the
 * state of this process's libmal. Not api/resize.c: tools/check-layers.sh names files by
 * their base name, which must be unique. */
#include "api.h"
#include "procs.h"

mal_status_t mal_expand(int count, mal_spawn_mode_t mode, const double *weights)
{
    mal_status_t st = engine_require_init("mal_expand");
    return st ? st : engine_expand(engine_context(), count, mode, weights);
}

mal_status_t mal_shrink(int count, const int *ranks, const double *weights)
{
    mal_status_t st = engine_require_init("mal_shrink");
    return st ? st : engine_shrink(engine_context(), count, ranks, weights);
}
