/* The registry layer (array.c, access.c, csr.c, values.c, arrived.c): the structures,
 * matrices and values of this process, created, found, read and freed. What they hold is
 * private to the layer (registry_impl.h): the other layers use the functions below. It
 * reads no global: the API layer hands it the communicator the structures span and the
 * parts of the state it works with. */
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

/* A value registered with mal_register_value (what it holds: registry_impl.h). */
typedef struct engine_value engine_value_t;

/* The registry layer's state: every registered structure and value of this process.
 * Other layers walk the lists with engine_array_first, engine_csr_first and
 * engine_value_first, never through these heads. */
typedef struct {
    mal_array_t *arrays;
    mal_csr_t *matrices;        /* in creation order on every rank                */
    engine_value_t *values;
    int windows;                /* buffers present in this process (mal_buffer_count) */
    int64_t generation;         /* bumped when a structure or value is (un)registered:
                                 * a parked process that held an older one is stale   */
    double headroom;            /* mal_config_t.headroom: how much capacities grow  */
} engine_registry_t;

/* Initial layout of structure `a` over `nprocs` ranks with block bounds `bounds`: the
 * capacity of every rank (headroom split before and after the part) and where each
 * part starts in it (array.c). */
void engine_initial_place(const engine_registry_t *reg, const mal_array_t *a,
                          const int64_t *bounds, int nprocs, int64_t *caps, int64_t *offsets);

/* `rows` with the registry's headroom. */
int64_t engine_grown_capacity(const engine_registry_t *reg, int64_t rows);
/* The capacity a new buffer of `a` gets for a part of `rows` rows: the headroom, and its
 * halo on both sides (array.c). */
int64_t engine_array_capacity(const engine_registry_t *reg, const mal_array_t *a,
                              int64_t rows);
/* Where a part of `rows` rows goes in a new buffer of `a`: that capacity, and the offset
 * that centres the part in the headroom, its halo before and after it (array.c). */
void engine_array_fresh_place(const engine_registry_t *reg, const mal_array_t *a,
                              int64_t rows, int64_t *cap, int64_t *offset);

/* ---- a structure as the other layers see it (access.c) ----
 * A structure has a block layout (every rank's rows, `bounds`) or is replicated (every
 * rank holds every row), two buffers (the current one holds the data, the spare is
 * where a rebalance moves rows that do not fit in place) and, in the current buffer,
 * every rank's part at its offset. */

/* Every structure of the registry, matrices' parts included, in registry order (the
 * order of every collective over them): the first, the one after `a` (NULL past the
 * last), and how many. */
mal_array_t *engine_array_first(const engine_registry_t *reg);
mal_array_t *engine_array_next(const mal_array_t *a);
int engine_array_count(const engine_registry_t *reg);
const char *engine_array_name(const mal_array_t *a);
int64_t engine_array_global_rows(const mal_array_t *a);
int64_t engine_array_row_len(const mal_array_t *a);
int64_t engine_array_row_bytes(const mal_array_t *a);
/* Bytes of every row: what one replicated copy or all the parts together hold. */
int64_t engine_array_bytes(const mal_array_t *a);
/* The public call whose pointer leads into the structure's part ("mal_local_data",
 * "mal_csr_colind", ...): what a message about a stale pointer tells the user to call
 * again. */
const char *engine_array_pointer_call(const mal_array_t *a);
/* MAL_REPLICATED (no layout, never rebalanced), else MAL_BLOCK. */
bool engine_array_replicated(const mal_array_t *a);
/* MAL_READ_MOSTLY: unchanged between iterations, copied ahead of an expansion. */
bool engine_array_read_mostly(const mal_array_t *a);
/* Rows of room (mal_alloc_halo) every part keeps before and after it in every buffer:
 * a part of `rows` at offset `off` in a buffer of `cap` rows needs off >= halo and
 * off + rows + halo <= cap. No move writes or reads them. 0 without a halo. */
int64_t engine_array_halo(const mal_array_t *a);
/* The layout over the current ranks (size + 1 bounds) and where each rank's part starts
 * in the current buffer (rows; NULL on a process that joined, until its data phase). */
const int64_t *engine_array_bounds(const mal_array_t *a);
const int64_t *engine_array_offsets(const mal_array_t *a);
/* The rows rank `rank` holds: all of a replicated structure, its part of a block one;
 * and the global index of its first (0 for a replicated one). */
int64_t engine_array_local_rows(const mal_array_t *a, int rank);
int64_t engine_array_first_row(const mal_array_t *a, int rank);
/* Where this process's part starts in the current buffer (`me`: its rank). */
char *engine_array_local_data(const mal_array_t *a, int me);
/* The buffer holding the data, and the spare (a rebalance's target when the parts do
 * not fit in place; after a reconfiguration, the memory kept for the next one). */
engine_buffer_t *engine_array_current(const mal_array_t *a);
engine_buffer_t *engine_array_spare(const mal_array_t *a);
/* The largest block structure (by bytes; the first of equals), NULL when none: its
 * rows are the work's unit when the application reports none. */
const mal_array_t *engine_array_largest_block(const engine_registry_t *reg);
/* Bytes of one process's buffer when `procs` share `a` evenly, headroom included: what
 * a prespawned process prepares for the share of one more process. */
int64_t engine_array_share_bytes(const engine_registry_t *reg, const mal_array_t *a,
                                 int64_t procs);
/* Where the old owners' rows of `a` are, for copying them ahead of an expansion: every
 * old owner's offset and direct memory. On a process that holds a MAL_READ_MOSTLY
 * structure with its own layout in direct memory, its current buffer's; on a new
 * process, what the join message carried (engine_array_arrived). False when neither. */
bool engine_array_sources(const mal_array_t *a, const int64_t **offsets,
                          const engine_peer_mem_t **peers);
/* The record of its rows copied ahead of an expansion (reconf/prepull.c keeps it). */
engine_prepull_t *engine_array_prepulled(const mal_array_t *a);
/* A rebalance's commit: the new layout over the same ranks (`nprocs` + 1 bounds,
 * `nprocs` offsets, copied), moved to the spare buffer unless it was `in_place`. Both
 * buffers have now exchanged data: their first-transfer costs are paid. */
void engine_array_rebalanced(mal_array_t *a, const int64_t *bounds, const int64_t *offsets,
                             int nprocs, bool in_place);
/* A change of communicator's commit, the old buffers freed: the structure takes over
 * `bounds` and `offsets` (over the new ranks) and `target` as its current buffer, or,
 * on a leaver (`target` NULL), keeps its layout without a buffer; `kept` becomes its
 * spare. */
void engine_array_install(mal_array_t *a, int64_t *bounds, int64_t *offsets,
                          const engine_buffer_t *target, engine_buffer_t kept);
/* Free both buffers, in index order (collective over the structure's communicator for
 * windows: every rank frees the same in the same order; array.c). */
void engine_array_free_buffers(engine_registry_t *reg, mal_array_t *a);
/* Free every structure (collective, in registry order) and empty the list (array.c). */
void engine_array_destroy_all(engine_registry_t *reg);

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
/* The new bounds of a structure that follows a matrix (over N, n_n + 1 entries), NULL
 * for one with its own layout (split by the weights). */
const int64_t *engine_csr_next_bounds(const mal_array_t *a);
/* Free every matrix handle (their structures are freed with the registry). */
void engine_csr_free_all(engine_registry_t *reg);
/* The matrices in creation order, and how many (as engine_array_first). */
mal_csr_t *engine_csr_first(const engine_registry_t *reg);
mal_csr_t *engine_csr_next(const mal_csr_t *m);
int engine_csr_count(const engine_registry_t *reg);
/* One of the three structures a matrix is made of. */
mal_array_t *engine_csr_part(const mal_csr_t *m, csr_part_t part);
/* This process's row pointer, rebased to 0 (local rows + 1 entries). */
const int64_t *engine_csr_local_rowptr(const mal_csr_t *m);

/* Free the registered and carried values (registry/values.c). */
void engine_free_values(engine_registry_t *reg);

/* ---- what the join message carries (arrived.c; procs/joininfo.c writes and reads
 * the message): each structure, matrix and value described on the sender and made
 * again, unregistered and without buffers, on the joining process ---- */

typedef struct {
    const char *name;
    int64_t global_rows, global_cols, value_bytes;
} engine_csr_desc_t;

/* From engine_array_describe its pointers are the structure's own, to read; into
 * engine_array_arrived they are the new structure's, which keeps them. */
typedef struct {
    const char *name;
    mal_distribution_t distribution;
    int64_t global_rows, row_len, row_bytes, halo;
    engine_layout_t layout;
    csr_part_t part;
    bool read_mostly;
    mal_csr_t *matrix;          /* the matrix it follows or is part of, NULL none   */
    int64_t *bounds;            /* the old layout: old process count + 1            */
    int64_t *offsets;           /* for a copy ahead (engine_array_sources), every  */
    engine_peer_mem_t *peers;   /* old owner's offset and memory; NULL without     */
} engine_array_desc_t;

/* A value the application registered: its name and bytes (`data`: its memory; into
 * engine_value_arrived, the carried bytes, which the value keeps). */
typedef struct {
    const char *name;
    void *data;
    size_t bytes;
} engine_value_desc_t;

engine_csr_desc_t engine_csr_describe(const mal_csr_t *m);
/* Append the matrix the message describes: adoptable by the joiner's mal_alloc_csr.
 * False without memory or with a name too long. */
bool engine_csr_arrived(engine_registry_t *reg, const engine_csr_desc_t *d);
engine_array_desc_t engine_array_describe(const mal_array_t *a);
/* Append the structure the message describes, adoptable by the joiner's
 * mal_alloc_window (a matrix's part is linked into its matrix instead). Its pointers are
 * taken over, also on failure: false without memory, with a name too long, or when
 * a structure that follows a matrix names none. */
bool engine_array_arrived(engine_registry_t *reg, const engine_array_desc_t *d);
/* The registered values (pending ones are not the application's yet): the first, the
 * one after `v`, NULL past the last. */
const engine_value_t *engine_value_first(const engine_registry_t *reg);
const engine_value_t *engine_value_next(const engine_value_t *v);
engine_value_desc_t engine_value_describe(const engine_value_t *v);
/* A value carried to the joining process, pending until its mal_register_value. Takes
 * d->data over, also on failure: false without memory or with a bad name or size. */
bool engine_value_arrived(engine_registry_t *reg, const engine_value_desc_t *d);
/* A parked process woken by an expansion: the arrived registry `fresh` (in the sender's
 * order, which every collective follows) onto its own `own`. Its own structures and
 * matrices keep their identity (the application's handles) and take the arrived old
 * layout, with no buffer but the memory they kept; the arrived ones fill the gaps;
 * structures the active processes no longer have are freed; the values take the
 * arrived bytes. `fresh` is left empty of structures, matrices and values. */
void engine_registry_graft(engine_registry_t *own, engine_registry_t *fresh);

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
/* mal_alloc_halo's body: a block structure with `halo` rows of room around every part. */
mal_status_t engine_array_alloc_halo(const engine_regctx_t *ctx, const char *name,
                                     MPI_Datatype type, int64_t global_rows, int64_t row_len,
                                     int64_t halo, mal_array_t **array);
mal_status_t engine_array_free(const engine_regctx_t *ctx, mal_array_t *array);
/* The user's structure named `name` (not a matrix's part), NULL when none. */
mal_array_t *engine_array_find(const engine_registry_t *reg, const char *name);

/* ---- stencil codes (stencil.c): local unless said ---- */
/* mal_swap_arrays's body: the layouts checked (the same over `size` ranks), then the
 * buffers exchanged (engine_array_swap_buffers). */
mal_status_t engine_array_swap(mal_array_t *a, mal_array_t *b, int size);
/* mal_neighbors's body: the nearest ranks above and below rank `me` of `size` whose
 * parts hold rows, MPI_PROC_NULL where none (and both for an empty part). */
mal_status_t engine_array_neighbors(const mal_array_t *a, int me, int size, int *up,
                                    int *down);
/* mal_halo_exchange's body: point to point over ctx->comm with every rank whose rows
 * fall in this rank's halo or whose halo holds its rows. */
mal_status_t engine_halo_exchange(const engine_regctx_t *ctx, const mal_array_t *a);
/* A hash of whose buffers every structure holds, in registry order: equal on every rank
 * unless they swapped differently (the reconfigurations compare it, plan.c). */
uint64_t engine_registry_holders(const engine_registry_t *reg);

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
