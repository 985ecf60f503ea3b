/* Read-mostly rows copied ahead of an asynchronous expansion (procs/async.c): every
 * process, old or new, copies the rows of its part after the expansion into the memory
 * its new buffer will borrow (an old process's spare, a new process's prepared memory),
 * at the place the switch will put them, by cross-memory attach from the old owners,
 * who take no part. The switch checks each copy against its own plan and skips the
 * structures every process has (engine_prepulled_skip in reconfig.c). */
#include "core.h"
#include "partition.h"
#include "plan.h"
#include "registry.h"
#include "transport.h"

#include <stdlib.h>

mal_status_t engine_expanded_part(const engine_registry_t *reg, const mal_array_t *a, int n,
                                  const double *weights, int64_t min_rows, int me,
                                  engine_part_t *part)
{
    int64_t *bounds = malloc(((size_t)n + 1) * sizeof *bounds);
    double *even = weights != NULL ? NULL : engine_even_weights(n);
    const double *w = weights != NULL ? weights : even;
    mal_status_t st = bounds == NULL || w == NULL
                          ? engine_fail(MAL_ERR_NOMEM, "no memory for a layout of %d", n)
                          : partition_block(engine_array_global_rows(a), n, w, min_rows,
                                            bounds);
    if (!st) {
        part->lo = bounds[me];
        part->hi = bounds[me + 1];
        engine_array_fresh_place(reg, a, part->hi - part->lo, &part->cap, &part->offset);
    }
    free(bounds);
    free(even);
    return st;
}

/* Rows [lo, hi) from the old owners (`old_procs` parts with the structure's bounds, their
 * offsets in their buffers and their memory) into `dst`. */
static mal_status_t copy_rows(const mal_array_t *a, const engine_prepull_src_t *src,
                              int64_t lo, int64_t hi, char *dst)
{
    const int64_t *b = engine_array_bounds(a);
    int64_t rb = engine_array_row_bytes(a);
    for (int u = 0; u < src->old_procs; u++) {
        int64_t s = lo > b[u] ? lo : b[u];
        int64_t t = hi < b[u + 1] ? hi : b[u + 1];
        if (s >= t)
            continue;
        int64_t disp = (src->offsets[u] + (s - b[u])) * rb;
        mal_status_t st = engine_direct_transfer(src->peers, false, dst + (s - lo) * rb,
                                                 (t - s) * rb, u, disp);
        if (st)
            return st;
    }
    return MAL_OK;
}

mal_status_t engine_prepull(const engine_registry_t *reg, mal_array_t *a,
                            const engine_prepull_src_t *src, const engine_prepull_dst_t *dst)
{
    engine_part_t part;
    engine_prepull_t *done = engine_array_prepulled(a);
    int64_t rb = engine_array_row_bytes(a);
    done->base = NULL;
    mal_status_t st = engine_expanded_part(reg, a, dst->procs, dst->weights, dst->min_rows,
                                           dst->me, &part);
    if (st || (size_t)(part.cap * rb) > dst->mapped)
        return st; /* memory too small: the switch moves the rows as usual */
    st = copy_rows(a, src, part.lo, part.hi, dst->base + part.offset * rb);
    if (!st)
        *done = (engine_prepull_t){.base = dst->base, .lo = part.lo, .hi = part.hi,
                                   .offset = part.offset, .procs = dst->procs,
                                   .peers = done->peers};
    return st;
}

void engine_prepull_forget(mal_array_t *a)
{
    engine_prepull_t *done = engine_array_prepulled(a);
    free(done->peers);
    *done = (engine_prepull_t){0};
}
