/* The registry layer's private half: what a structure, a matrix and a value hold. Only
 * the files of src/engine/registry/ include it; every other layer reads and changes them
 * through the functions of registry.h, so a field can change without touching the
 * planner, the join or the API. */
#ifndef MAL_REGISTRY_IMPL_H
#define MAL_REGISTRY_IMPL_H

#include "registry.h"

struct mal_array {
    char name[ENGINE_NAME_MAX];
    engine_layout_t layout;
    struct mal_csr *matrix;     /* the matrix followed (layout != OWN)             */
    csr_part_t part;            /* != NONE: one of that matrix's own parts         */
    mal_distribution_t distribution;
    int64_t global_rows;
    int64_t row_len;
    int64_t row_bytes;
    int64_t halo;               /* rows of room before and after every part, in every
                                 * buffer (mal_alloc_halo); never moved             */
    int64_t *bounds;            /* layout: nparts + 1 boundaries (all ranks)      */
    int64_t *offsets;           /* where each rank's part starts in buf[current],
                                 * in rows (all ranks)                             */
    engine_buffer_t buf[2];     /* buf[current] holds the data, the other is spare */
    int current;
    /* Whose buffers these are: 0 for its own, else the name hash of the structure whose
     * allocation made them (mal_swap_arrays exchanges buffers; buffers made over a new
     * communicator are its own again). Every rank must agree: checked by the
     * reconfigurations and the free. */
    uint64_t holds;
    bool adoptable;             /* arrived with a join: the next mal_alloc_window of
                                 * this name hands it back without communicating    */
    bool read_mostly;           /* MAL_READ_MOSTLY: unchanged between iterations     */
    engine_prepull_t prepulled; /* its rows for the coming expansion, copied ahead   */
    struct mal_array *next;
};

/* A CSR matrix: three block structures in the registry. The row pointer holds, for each
 * row, the global nnz offset of its end: those numbers stay valid wherever the row goes,
 * so it moves as plain bytes and only the local rebased copy is rebuilt after a move.
 * Column indices and values are structures whose "rows" are nonzeros, laid out by the
 * nnz offsets of the row bounds (ENGINE_LAYOUT_NNZ), so a row range moves as one
 * contiguous range of each. */
struct mal_csr {
    char name[ENGINE_NAME_MAX];
    int64_t global_rows, global_cols, value_bytes;
    mal_array_t *rowptr, *colind, *values;
    int64_t *local_rowptr;      /* local rows + 1, rebased to 0                    */
    /* The layout a rebalance or reconfiguration is moving to, over the new process
     * set, and this process's rebased row pointer for it (allocated before anything
     * moves, filled after the commit). NULL outside one. */
    int64_t *next_rows, *next_nnz, *next_local;
    /* Row pointers are double-buffered like the data (capacities in entries): a move
     * writes the one that is free, so its pages are not first touched on the critical
     * path (a fresh 3 MiB row pointer cost 8 ms of faults here). */
    int64_t local_cap, next_cap, *spare_local, spare_cap;
    bool adoptable;             /* arrived with a join (see mal_array.adoptable)   */
    struct mal_csr *next;
};

/* A value registered with mal_register_value, or (pending) one carried to a joining
 * process and not yet claimed by its mal_register_value. */
struct engine_value {
    char name[ENGINE_NAME_MAX];
    void *ptr;                  /* user memory; NULL while pending                  */
    unsigned char *carried;     /* bytes received at the join; NULL once claimed    */
    size_t bytes;
    struct engine_value *next;
};

/* ---- between the registry's files ---- */

/* Where a part starts in buffer `b` of `a`, `offset_rows` into it (array.c). */
char *engine_part_base(const mal_array_t *a, int b, int64_t offset_rows);
/* Free a structure's windows (collective) and memory; the caller unlinks it (array.c). */
void engine_array_destroy(engine_registry_t *reg, mal_array_t *a);
/* Create a structure with the given block layout (ctx->size + 1 bounds), unregistered;
 * collective (a matrix's parts; array.c). */
mal_status_t engine_array_create(const engine_regctx_t *ctx, const char *call,
                                 const char *name, int64_t global_rows, int64_t row_len,
                                 int64_t row_bytes, const int64_t *bounds, mal_array_t **out);
/* Whose buffers `a` holds (the name hash of the structure whose allocation made them),
 * and the exchange of two structures' buffers, offsets and holders (array.c). */
uint64_t engine_array_holder(const mal_array_t *a);
void engine_array_swap_buffers(mal_array_t *a, mal_array_t *b);
/* Link into / unlink from the registry (array.c). */
void engine_array_link(engine_registry_t *reg, mal_array_t *a);
void engine_array_unlink(engine_registry_t *reg, mal_array_t *a);
/* Bytes of one row of `row_len` elements of `type`, 0 with the error recorded
 * (array.c). */
int64_t engine_row_bytes(MPI_Datatype type, int64_t row_len, int64_t global_rows,
                         const char *call);
/* A matrix handle, unregistered (csr.c). */
mal_csr_t *engine_csr_new(const char *name, int64_t rows, int64_t cols, int64_t value_bytes);
/* Append a matrix to the registry: matrices stay in creation order on every rank
 * (csr.c). */
void engine_csr_append(engine_registry_t *reg, mal_csr_t *m);

#endif /* MAL_REGISTRY_IMPL_H */
