/* mal_rebalance (include/mal.h): thin, over the rebalance of reconf/rebalance.c. */
#include "api.h"
#include "reconf.h"

mal_status_t mal_rebalance(const double *weights)
{
    mal_status_t st = engine_require_idle("mal_rebalance");
    if (st)
        return st;
    engine_parts_t parts = engine_context_parts();
    return engine_rebalance(&parts, weights);
}
