/* The registry layer (array.c, csr.c, values.c): the structures, matrices and values of
 * this process, created, found and freed. It reads no global: the API layer hands it the
 * communicator the structures span and the parts of the state it works with. */
#ifndef MAL_REGISTRY_H
#define MAL_REGISTRY_H

#include "mal.h"
#include "memory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ENGINE_NAME_MAX 64

/* Where a structure's new block layout comes from at a rebalance or reconfiguration. */
typedef enum {
    ENGINE_LAYOUT_OWN = 0, /* its rows split by the weights (partition_block)           */
    ENGINE_LAYOUT_ROWS,    /* a matrix's nnz-weighted row layout (row pointer, aligned)  */
    ENGINE_LAYOUT_NNZ      /* that layout in nonzeros (column indices, values)           */
} engine_layout_t;

/* Which part of a matrix a structure is (internal structures are not the user's). */
typedef enum { CSR_PART_NONE = 0, CSR_PART_ROWPTR, CSR_PART_COLIND, CSR_PART_VALUES }
    csr_part_t;

/* A MAL_READ_MOSTLY structure's part of an asynchronous expansion under way, copied in
 * the background (reconf/prepull.c) into the memory its new buffer will borrow: valid
 * when `base` is set. The switch checks it against its own plan before skipping the
 * move (reconf/reconfig.c). */
typedef struct {
    char *base;                 /* the memory written, NULL: nothing copied          */
    int64_t lo, hi, offset;     /* global rows [lo, hi) at `offset` rows into it     */
    int procs;                  /* the process count they were planned for           */
    engine_peer_mem_t *peers;   /* a new process: the old owners' memory (owned)     */
} engine_prepull_t;

struct mal_array {
    char name[ENGINE_NAME_MAX];
    engine_layout_t layout;
    struct mal_csr *matrix;     /* the matrix followed (layout != OWN)             */
    csr_part_t part;            /* != NONE: one of that matrix's own parts         */
    mal_distribution_t distribution;
    int64_t global_rows;
    int64_t row_len;
    int64_t row_bytes;
    int64_t *bounds;            /* layout: nparts + 1 boundaries (all ranks)      */
    int64_t *offsets;           /* where each rank's part starts in buf[current],
                                 * in rows (all ranks)                             */
    engine_buffer_t buf[2];     /* buf[current] holds the data, the other is spare */
    int current;
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
typedef struct engine_value {
    char name[ENGINE_NAME_MAX];
    void *ptr;                  /* user memory; NULL while pending                  */
    unsigned char *carried;     /* bytes received at the join; NULL once claimed    */
    size_t bytes;
    struct engine_value *next;
} engine_value_t;

/* The registry layer's state: every registered structure and value of this process. */
typedef struct {
    mal_array_t *arrays;
    mal_csr_t *matrices;        /* in creation order on every rank                */
    engine_value_t *values;
    int windows;
    int64_t generation;         /* bumped when a structure or value is (un)registered:
                                 * a parked process that held an older one is stale   */
    double headroom;            /* mal_config_t.headroom: how much capacities grow  */
} engine_registry_t;

/* How data moves: the transport chosen at mal_init (or by mal_set_redist). The transport
 * layer's settings, declared here because the registry (array.c: which memory a buffer
 * gets) is the lowest layer that reads them; the transports take engine_plan_t. */
typedef struct {
    mal_redist_t method;
    bool direct;                /* buffers may be direct memory (MAL_MEMORY)           */
    bool shmem;                 /* this mal_init started (or reused) the SHMEM transport
                                 * over mal_comm(): symmetric allocations are allowed  */
    int64_t count_limit;        /* largest count handed to one MPI call (MAL_MAX_COUNT) */
} engine_transfer_t;

/* The transport's settings from the settings object: the initial start's and a join's. */
static inline engine_transfer_t engine_transfer_of(const settings_t *set)
{
    mal_redist_t method = (mal_redist_t)settings_num(set, SETTING_REDIST);
    return (engine_transfer_t){
        .method = method, .shmem = method == MAL_REDIST_SHMEM,
        .direct = settings_num(set, SETTING_MEMORY) == MAL_MEMORY_DIRECT,
        .count_limit = settings_num(set, SETTING_MAX_COUNT)};
}

/* How one reconfiguration's rows moved: the executor (the method set, or what
 * MAL_REDIST_AUTO took for its link class and state) and the bytes this rank copied
 * per path (ENGINE_PATH_*: cross-memory attach, MPI). */
typedef struct {
    mal_redist_t method;
    bool automatic;             /* taken by MAL_REDIST_AUTO                          */
    int link, state;            /* what it was taken for: PREDICT_LINK_*, PREDICT_*  */
    int64_t by[2];
} engine_moved_t;

/* Initial layout of a structure over `nprocs` ranks with block bounds `bounds`: the
 * capacity of every rank (headroom split before and after the part) and where each
 * part starts in it (array.c). */
void engine_initial_place(const engine_registry_t *reg, mal_distribution_t dist,
                          int64_t global_rows, const int64_t *bounds, int nprocs,
                          int64_t *caps, int64_t *offsets);

/* Buffers of a structure (array.c): direct memory or a window (symmetric-heap blocks
 * are the registry's own allocations); every page is populated now, so no first touch
 * lands in a move; `reg` counts them (mal_buffer_count). */
/* Whether the buffer holds memory (a window or a symmetric block). */
bool engine_buffer_present(const engine_buffer_t *buf);
/* A reconfiguration's new buffer over `comm`, collective; `caps` must be the same on
 * every rank (MAL_ERR_MISMATCH otherwise). `donor`: this process's spare of the
 * structure (its memory is borrowed where large enough), NULL on a joining process. */
mal_status_t engine_buffer_alloc_in(MPI_Comm comm, engine_registry_t *reg,
                                    const engine_transfer_t *xfer, engine_buffer_t *buf,
                                    int64_t row_bytes, const int64_t *caps,
                                    const engine_buffer_t *donor);
/* Give `buf` (over `comm`, mal_comm()) the capacities `caps`: direct memory is kept by
 * the ranks it still fits, otherwise the buffer is freed and allocated again (a
 * symmetric block when `symmetric`). Collective; on failure the buffer is absent on
 * every rank. */
mal_status_t engine_buffer_regrow(MPI_Comm comm, engine_registry_t *reg,
                                  const engine_transfer_t *xfer, engine_buffer_t *buf,
                                  int64_t row_bytes, const int64_t *caps, bool symmetric);
void engine_buffer_free(engine_registry_t *reg, engine_buffer_t *buf);
/* Whether rank `rank`'s direct memory of `buf` (a buffer or kept memory) already holds
 * `cap` rows: a new buffer of that capacity maps nothing there. For the model. */
bool engine_buffer_holds(const engine_buffer_t *buf, int rank, int64_t cap);
/* "direct", "window", "symmetric" or "none". */
const char *engine_buffer_kind(const engine_buffer_t *buf);
/* `b` borrowed its memory from `donor`: hand it over for good (the donor's free no
 * longer unmaps it). */
void engine_buffer_settle(engine_buffer_t *b, engine_buffer_t *donor);
/* Free a structure's windows (collective) and memory; the caller unlinks it. */
void engine_array_destroy(engine_registry_t *reg, mal_array_t *a);
/* `rows` with the registry's headroom. */
int64_t engine_grown_capacity(const engine_registry_t *reg, int64_t rows);

/* Where this rank's local part starts in buffer `b` of `a`. */
char *engine_part_base(const mal_array_t *a, int b, int64_t offset_rows);

/* ---- CSR matrices (csr.c) ---- */

/* A change of process set as the nnz-weighted layout sees it: the union U of old and new
 * processes (the old ones first, in their old order: `old_procs` of them; the others
 * held nothing), this process's rank in the new set N (-1 on a leaver), N's size and its
 * weights (NULL = even). A rebalance is U = N = mal_comm(). */
typedef struct {
    MPI_Comm u;
    int me_u, old_procs;
    int me_n, n_n;
    const double *weights;
    uint64_t fingerprint;       /* of the arguments that must agree (weights), or 0  */
} engine_relayout_t;

/* Collective over U: every matrix's next layout over N (next_rows, next_nnz) and this
 * process's next rebased row pointer buffer. Each nnz target is resolved by the process
 * holding it and one allreduce combines them. `local` is this rank's status so far; it
 * is agreed, with the fingerprint, before the allreduce (weights that differ between
 * ranks would give each rank another layout). Returns this rank's status after it, for the caller's
 * next agreement; on failure the caller calls engine_csr_discard. */
mal_status_t engine_csr_relayout(engine_registry_t *reg, const engine_relayout_t *r,
                                 mal_status_t local);
/* After the structures were committed to the next layout: rebuild the rebased row
 * pointers of process `me` (its rank in the new set) and drop the planning data. */
void engine_csr_commit(engine_registry_t *reg, int me);
void engine_csr_discard(engine_registry_t *reg);
/* The new bounds of a structure that follows a matrix (over N, n_n + 1 entries). */
const int64_t *engine_csr_next_bounds(const mal_array_t *a);
/* Free every matrix handle (their structures are freed with the registry). */
void engine_csr_free_all(engine_registry_t *reg);
/* Link into / unlink from the registry. */
void engine_array_link(engine_registry_t *reg, mal_array_t *a);
void engine_array_unlink(engine_registry_t *reg, mal_array_t *a);
/* Bytes of one row of `row_len` elements of `type`, 0 with the error recorded. */
int64_t engine_row_bytes(MPI_Datatype type, int64_t row_len, int64_t global_rows,
                         const char *call);

/* Free the registered and carried values (registry/values.c). */
void engine_free_values(engine_registry_t *reg);

/* What a public registry call works over. */
typedef struct {
    MPI_Comm comm;                 /* mal_comm(): every structure spans it            */
    int rank, size;                /* this process's rank in comm, and comm's size    */
    engine_registry_t *reg;
    const engine_transfer_t *xfer; /* memory follows the method in effect             */
    int64_t min_rows;              /* of a weighted layout (SETTING_MIN_ROWS)         */
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
