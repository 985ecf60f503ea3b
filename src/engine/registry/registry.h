/* The registry layer (array.c, csr.c, values.c): the structures, matrices and values of
 * this process, created, found and freed. It reads no global: the API layer hands it the
 * communicator the structures span and the parts of the state it works with. */
#ifndef MAL_REGISTRY_H
#define MAL_REGISTRY_H

#include "engine.h"

/* What a public registry call works over. */
typedef struct {
    MPI_Comm comm;                 /* mal_comm(): every structure spans it            */
    int rank, size;                /* this process's rank in comm, and comm's size    */
    engine_registry_t *reg;
    const engine_transfer_t *xfer; /* memory follows the method in effect             */
    const mal_config_t *cfg;       /* min_rows of a weighted layout                   */
    bool announce;                 /* summaries on, before the first iteration: rank 0
                                    * says once where structures live                 */
} engine_regctx_t;

/* ---- structures (array.c); `call` is the public call, which messages name ---- */
/* mal_alloc_window's body: collective over ctx->comm. */
mal_status_t engine_array_alloc(const engine_regctx_t *ctx, const char *name,
                                MPI_Datatype type, int64_t global_rows, int64_t row_len,
                                mal_distribution_t distribution, mal_array_t **array);
mal_status_t engine_array_alloc_weighted(const engine_regctx_t *ctx, const char *name,
                                         MPI_Datatype type, int64_t global_rows,
                                         int64_t row_len, const double *weights,
                                         mal_array_t **array);
mal_status_t engine_array_alloc_aligned(const engine_regctx_t *ctx, const char *name,
                                        MPI_Datatype type, int64_t row_len,
                                        const mal_csr_t *matrix, mal_array_t **array);
mal_status_t engine_array_free(const engine_regctx_t *ctx, mal_array_t *array);
/* Create a structure with the given block layout (ctx->size + 1 bounds), unregistered;
 * collective (a matrix's parts). */
mal_status_t engine_array_create(const engine_regctx_t *ctx, const char *call,
                                 const char *name, int64_t global_rows, int64_t row_len,
                                 int64_t row_bytes, const int64_t *bounds, mal_array_t **out);
/* The user's structure named `name` (not a matrix's part), NULL when none. */
mal_array_t *engine_array_find(const engine_registry_t *reg, const char *name);

/* ---- matrices (csr.c) ---- */
mal_status_t engine_csr_alloc(const engine_regctx_t *ctx, const char *name,
                              int64_t global_rows, int64_t global_cols,
                              MPI_Datatype value_type, mal_csr_t **csr);
mal_status_t engine_csr_set_rows(const engine_regctx_t *ctx, mal_csr_t *csr,
                                 int64_t local_rows, int64_t local_nnz,
                                 const int64_t *rowptr, const mal_colind_t *colind,
                                 const void *values);
mal_status_t engine_csr_free(const engine_regctx_t *ctx, mal_csr_t *csr);
mal_csr_t *engine_csr_find(const engine_registry_t *reg, const char *name);

/* ---- values (values.c) ---- */
/* mal_register_value's body: local. */
mal_status_t engine_value_register(engine_registry_t *reg, const char *name, void *value,
                                   size_t bytes);

#endif /* MAL_REGISTRY_H */
