/* Rank weights as every layer takes them: checked once, NULL meaning even. */
#include "core.h"
#include "partition.h"

#include <stdlib.h>

mal_status_t engine_check_weights(const double *weights, int n, const char *call)
{
    int bad = partition_find_bad_weight(weights, n);
    if (bad >= 0)
        return engine_fail(MAL_ERR_ARG, "%s: weights[%d] is %g; weights must be finite and "
                           ">= 0", call, bad, weights[bad]);
    for (int r = 0; r < n; r++)
        if (weights[r] > 0.0)
            return MAL_OK;
    return engine_fail(MAL_ERR_ARG, "%s: all %d weights are zero", call, n);
}

double *engine_even_weights(int n)
{
    double *w = malloc((size_t)n * sizeof *w);
    for (int r = 0; w != NULL && r < n; r++)
        w[r] = 1.0;
    return w;
}
