/* The public calls on CSR matrices: check mal_init, hand the registry (csr.c) its state.
 * Accessors of this process's rows are here, beside mal_local_data, which they use. */
#include "api.h"
#include "reconf.h"
#include "registry.h"
#include "registry_ctx.h"

mal_status_t mal_alloc_csr(const char *name, int64_t global_rows, int64_t global_cols,
                           MPI_Datatype value_type, mal_csr_t **csr)
{
    mal_status_t st = engine_require_init("mal_alloc_csr");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_csr_alloc(&ctx, name, global_rows, global_cols, value_type, csr);
}

mal_status_t mal_csr_set_rows(mal_csr_t *csr, int64_t local_rows, int64_t local_nnz,
                              const int64_t *rowptr, const mal_colind_t *colind,
                              const void *values)
{
    mal_status_t st = engine_require_init("mal_csr_set_rows");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_csr_set_rows(&ctx, csr, local_rows, local_nnz, rowptr, colind, values);
}

mal_status_t mal_free_csr(mal_csr_t *csr)
{
    mal_status_t st = engine_require_init("mal_free_csr");
    if (st)
        return st;
    engine_regctx_t ctx = engine_regctx(engine_context());
    return engine_csr_free(&ctx, csr);
}

mal_csr_t *mal_find_csr(const char *name)
{
    engine_state_t *e = engine_context();
    return e->initialized ? engine_csr_find(&e->reg, name) : NULL;
}

const int64_t *mal_csr_rowptr(const mal_csr_t *m)
{
    return m ? engine_csr_local_rowptr(m) : NULL;
}

int64_t mal_csr_global_rows(const mal_csr_t *m)
{
    return m ? engine_csr_describe(m).global_rows : -1;
}

int64_t mal_csr_global_cols(const mal_csr_t *m)
{
    return m ? engine_csr_describe(m).global_cols : -1;
}

int64_t mal_csr_global_nnz(const mal_csr_t *m)
{
    return m ? engine_array_global_rows(engine_csr_part(m, CSR_PART_COLIND)) : -1;
}

const mal_colind_t *mal_csr_colind(const mal_csr_t *m)
{
    return m ? mal_local_data(engine_csr_part(m, CSR_PART_COLIND)) : NULL;
}

void *mal_csr_values(const mal_csr_t *m)
{
    return m ? mal_local_data(engine_csr_part(m, CSR_PART_VALUES)) : NULL;
}

int64_t mal_csr_first_row(const mal_csr_t *m)
{
    return m ? mal_first_row(engine_csr_part(m, CSR_PART_ROWPTR)) : -1;
}

int64_t mal_csr_local_rows(const mal_csr_t *m)
{
    return m ? mal_local_rows(engine_csr_part(m, CSR_PART_ROWPTR)) : -1;
}

int64_t mal_csr_local_nnz(const mal_csr_t *m)
{
    return m ? mal_local_rows(engine_csr_part(m, CSR_PART_COLIND)) : -1;
}
