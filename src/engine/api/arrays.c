/* The public calls on structures: check mal_init, hand the registry (array.c) its state.
 * Accessors that need this process's rank read it here. */
#include "api.h"
#include "reconf.h"
#include "registry.h"
#include "registry_ctx.h"

mal_status_t mal_alloc_window(const char *name, MPI_Datatype type, int64_t global_rows,
                              int64_t row_len, mal_distribution_t distribution,
                              mal_array_t **array)
{
    mal_status_t st = engine_require_init("mal_alloc_window");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_array_alloc(&ctx, name, type, global_rows, row_len, distribution, array);
}

mal_status_t mal_alloc_array_weighted(const char *name, MPI_Datatype type,
                                       int64_t global_rows, int64_t row_len,
                                       const double *weights, mal_array_t **array)
{
    mal_status_t st = engine_require_init("mal_alloc_array_weighted");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_array_alloc_weighted(&ctx, name, type, global_rows, row_len, weights, array);
}

mal_status_t mal_alloc_array_aligned(const char *name, MPI_Datatype type, int64_t row_len,
                                      const mal_csr_t *matrix, mal_array_t **array)
{
    mal_status_t st = engine_require_init("mal_alloc_array_aligned");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_array_alloc_aligned(&ctx, name, type, row_len, matrix, array);
}

mal_status_t mal_free_array(mal_array_t *array)
{
    mal_status_t st = engine_require_init("mal_free_array");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_array_free(&ctx, array);
}

mal_array_t *mal_find_array(const char *name)
{
    engine_state_t *e = engine_context();
    return e->initialized ? engine_array_find(&e->reg, name) : NULL;
}

void *mal_local_data(const mal_array_t *a)
{
    return a ? engine_array_local_data(a, engine_context()->group.rank) : NULL;
}

int64_t mal_global_rows(const mal_array_t *a)
{
    return a ? engine_array_global_rows(a) : -1;
}

int64_t mal_row_len(const mal_array_t *a)
{
    return a ? engine_array_row_len(a) : -1;
}

int64_t mal_first_row(const mal_array_t *a)
{
    if (a == NULL)
        return -1;
    return engine_array_first_row(a, engine_context()->group.rank);
}

int64_t mal_local_rows(const mal_array_t *a)
{
    if (a == NULL)
        return -1;
    return engine_array_local_rows(a, engine_context()->group.rank);
}

mal_status_t mal_alloc_halo(const char *name, MPI_Datatype type, int64_t global_rows,
                            int64_t row_len, int64_t halo_rows, mal_array_t **array)
{
    mal_status_t st = engine_require_init("mal_alloc_halo");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_array_alloc_halo(&ctx, name, type, global_rows, row_len, halo_rows, array);
}

int64_t mal_halo_rows(const mal_array_t *a)
{
    return a ? engine_array_halo(a) : -1;
}

mal_status_t mal_neighbors(const mal_array_t *array, int *up, int *down)
{
    mal_status_t st = engine_require_init("mal_neighbors");
    if (st)
        return st;
    const engine_group_t *g = &engine_context()->group;
    return engine_array_neighbors(array, g->rank, g->size, up, down);
}

mal_status_t mal_halo_exchange(mal_array_t *array)
{
    mal_status_t st = engine_require_init("mal_halo_exchange");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_halo_exchange(&ctx, array);
}

mal_status_t mal_swap_arrays(mal_array_t *a, mal_array_t *b)
{
    mal_status_t st = engine_require_init("mal_swap_arrays");
    if (st)
        return st;
    return engine_array_swap(a, b, engine_context()->group.size);
}
