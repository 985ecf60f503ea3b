/* Registry of structures: allocation (their capacities and layouts; the buffers
 * themselves are the transport's, transport/buffer.c), lookup and free. State comes in
 * explicitly (registry.h). */
#include "core.h"
#include "memory.h"
#include "registry_impl.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t engine_grown_capacity(const engine_registry_t *reg, int64_t rows)
{
    double extra = ceil(reg->headroom * (double)rows);
    if (extra >= (double)(INT64_MAX - rows))
        return INT64_MAX;
    return rows + (int64_t)extra;
}

void engine_array_free_buffers(engine_registry_t *reg, mal_array_t *a)
{
    for (int b = 0; b < 2; b++)
        engine_buffer_free(&reg->windows, &a->buf[b]);
}

void engine_array_destroy(engine_registry_t *reg, mal_array_t *a)
{
    engine_array_free_buffers(reg, a);
    free(a->bounds);
    free(a->offsets);
    free(a->prepulled.peers);
    free(a);
}

static uint64_t own_buffers(const mal_array_t *a)
{
    return engine_hash(ENGINE_HASH_SEED, a->name, strlen(a->name));
}

uint64_t engine_array_holder(const mal_array_t *a)
{
    return a->holds != 0 ? a->holds : own_buffers(a);
}

/* 0 where a structure is back to its own buffers. */
static void set_holder(mal_array_t *a, uint64_t holder)
{
    a->holds = holder == own_buffers(a) ? 0 : holder;
}

void engine_array_swap_buffers(mal_array_t *a, mal_array_t *b)
{
    engine_buffer_t buf[2] = {a->buf[0], a->buf[1]};
    int64_t *offsets = a->offsets;
    int current = a->current;
    uint64_t holder = engine_array_holder(a);
    memcpy(a->buf, b->buf, sizeof a->buf);
    memcpy(b->buf, buf, sizeof b->buf);
    a->offsets = b->offsets;
    b->offsets = offsets;
    a->current = b->current;
    b->current = current;
    set_holder(a, engine_array_holder(b));
    set_holder(b, holder);
}

/* Every structure back to the buffers its allocation made, where they still exist, so
 * that the frees (collective per window) come in the same order on every rank even if
 * the ranks swapped differently. Each exchange gives one more structure its own. */
static void restore_own_buffers(engine_registry_t *reg)
{
    for (mal_array_t *a = reg->arrays; a != NULL; a = a->next)
        for (mal_array_t *b = reg->arrays; b != NULL && a->holds != 0; b = b->next)
            if (b != a && engine_array_holder(b) == own_buffers(a))
                engine_array_swap_buffers(a, b);
}

void engine_array_destroy_all(engine_registry_t *reg)
{
    restore_own_buffers(reg);
    while (reg->arrays != NULL) {
        mal_array_t *a = reg->arrays;
        reg->arrays = a->next;
        engine_array_destroy(reg, a);
    }
}

char *engine_part_base(const mal_array_t *a, int b, int64_t offset_rows)
{
    return a->buf[b].base + offset_rows * a->row_bytes;
}

static mal_array_t *find(const engine_registry_t *reg, const char *name)
{
    for (mal_array_t *a = reg->arrays; a != NULL; a = a->next)
        if (strcmp(a->name, name) == 0)
            return a;
    return NULL;
}

mal_array_t *engine_array_find(const engine_registry_t *reg, const char *name)
{
    mal_array_t *a = name != NULL ? find(reg, name) : NULL;
    return a != NULL && a->part == CSR_PART_NONE ? a : NULL;
}

int64_t engine_row_bytes(MPI_Datatype type, int64_t row_len, int64_t global_rows,
                         const char *call)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    if (type == MPI_DATATYPE_NULL)
        return engine_fail(MAL_ERR_ARG, "%s: type is MPI_DATATYPE_NULL", call), 0;
    if (MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return engine_fail(MAL_ERR_ARG, "%s: type is not a valid datatype", call), 0;
    if (lb != 0 || true_lb != 0 || extent <= 0)
        return engine_fail(MAL_ERR_ARG,
                           "%s: type must have lower bound 0 and a positive extent (lb %ld, "
                           "true lb %ld, extent %ld)",
                           call, (long)lb, (long)true_lb, (long)extent), 0;
    if (row_len > INT_MAX / extent)
        return engine_fail(MAL_ERR_ARG, "%s: row_len %lld x extent %ld exceeds %d bytes",
                           call, (long long)row_len, (long)extent, INT_MAX), 0;
    int64_t rb = row_len * extent;
    if (global_rows > INT64_MAX / rb)
        return engine_fail(MAL_ERR_ARG, "%s: global_rows %lld x %lld bytes overflows", call,
                           (long long)global_rows, (long long)rb), 0;
    return rb;
}

static mal_status_t check_name(const engine_registry_t *reg, const char *name,
                               const char *call)
{
    if (name == NULL)
        return engine_fail(MAL_ERR_ARG, "%s: name is NULL", call);
    size_t len = strnlen(name, ENGINE_NAME_MAX);
    if (len == 0 || len >= ENGINE_NAME_MAX)
        return engine_fail(MAL_ERR_ARG, "%s: name must have 1..%d characters", call,
                           ENGINE_NAME_MAX - 1);
    if (find(reg, name) != NULL)
        return engine_fail(MAL_ERR_EXISTS, "%s: name \"%s\" is already registered", call,
                           name);
    return MAL_OK;
}

/* `call`: the public call the user made, which every message names. */
static mal_status_t check_alloc_args(const engine_registry_t *reg, const char *call,
                                     const char *name, MPI_Datatype type,
                                     int64_t global_rows, int64_t row_len,
                                     mal_distribution_t dist, mal_array_t **array,
                                     int64_t *row_bytes)
{
    mal_status_t st = check_name(reg, name, call);
    if (st)
        return st;
    if (array == NULL)
        return engine_fail(MAL_ERR_ARG, "%s(\"%s\"): array is NULL", call, name);
    if (global_rows <= 0)
        return engine_fail(MAL_ERR_ARG, "%s(\"%s\"): global_rows is %lld, must be > 0", call,
                           name, (long long)global_rows);
    if (row_len <= 0)
        return engine_fail(MAL_ERR_ARG, "%s(\"%s\"): row_len is %lld, must be > 0", call,
                           name, (long long)row_len);
    if (dist != MAL_BLOCK && dist != MAL_REPLICATED)
        return engine_fail(MAL_ERR_ARG, "%s(\"%s\"): distribution %d is neither MAL_BLOCK "
                           "(optionally | MAL_READ_MOSTLY) nor MAL_REPLICATED", call, name,
                           (int)dist);
    *row_bytes = engine_row_bytes(type, row_len, global_rows, call);
    return *row_bytes > 0 ? MAL_OK : MAL_ERR_ARG;
}

/* Every rank passed the same arguments, else the message names the first that differs
 * and its values ("row_len is 1 on rank 0, 2 on rank 1"). Collective. */
static mal_status_t agree_alloc(const engine_regctx_t *ctx, mal_status_t st, const char *name,
                                int64_t distribution, int64_t global_rows, int64_t row_len,
                                int64_t row_bytes, int64_t halo, const mal_csr_t *matrix,
                                const double *weights, const char *call)
{
    const engine_arg_t args[] = {
        {"the name", engine_text_value(name), NULL, true},
        {"distribution", distribution, engine_distribution_name, false},
        {"global_rows", global_rows, NULL, false},
        {"row_len", row_len, NULL, false},
        {"the bytes of a row (the type's size times row_len)", row_bytes, NULL, false},
        {"halo_rows", halo, NULL, false},
        {"the matrix", engine_text_value(matrix ? matrix->name : NULL), NULL, true},
        {"weights", weights != NULL, engine_pointer_name, false}};
    return engine_agree_args(ctx->comm, st, args, (int)(sizeof args / sizeof *args),
                             "weights", weights, weights != NULL ? ctx->size : 0, call);
}

int64_t engine_array_capacity(const engine_registry_t *reg, const mal_array_t *a,
                              int64_t rows)
{
    int64_t grown = engine_grown_capacity(reg, rows);
    return grown > INT64_MAX - 2 * a->halo ? INT64_MAX : grown + 2 * a->halo;
}

void engine_array_fresh_place(const engine_registry_t *reg, const mal_array_t *a,
                              int64_t rows, int64_t *cap, int64_t *offset)
{
    *cap = engine_array_capacity(reg, a, rows);
    *offset = a->halo + (*cap - 2 * a->halo - rows) / 2;
}

void engine_initial_place(const engine_registry_t *reg, const mal_array_t *a,
                          const int64_t *bounds, int nprocs, int64_t *caps, int64_t *offsets)
{
    bool replicated = a->distribution == MAL_REPLICATED;
    for (int r = 0; r < nprocs; r++) {
        caps[r] = a->global_rows;
        offsets[r] = 0;
        if (!replicated)
            engine_array_fresh_place(reg, a, bounds[r + 1] - bounds[r], &caps[r], &offsets[r]);
    }
}

static void spare_caps(const engine_registry_t *reg, const mal_array_t *a, int p, int64_t *caps)
{
    int64_t even = engine_array_capacity(reg, a, (a->global_rows + p - 1) / p);
    for (int r = 0; r < p; r++)
        caps[r] = caps[r] > even ? caps[r] : even;
}

/* Initial buffers: headroom split evenly before and after each part, so a later
 * rebalance can grow a part in either direction without moving the rows it keeps.
 * Double-buffered for the moves that do not fit in place; a replicated structure needs
 * one buffer. Collective; `a` may be NULL on a rank that failed to allocate it. */
static mal_status_t create_buffers(const engine_regctx_t *ctx, mal_array_t *a)
{
    int p = ctx->size;
    int64_t *caps = a ? malloc((size_t)p * sizeof *caps) : NULL;
    if (caps != NULL)
        engine_initial_place(ctx->reg, a, a->bounds, p, caps, a->offsets);
    /* A NULL caps still takes part in the collective allocation, as a failure. */
    int nbuf = a == NULL || a->distribution == MAL_BLOCK ? 2 : 1;
    int64_t row_bytes = a ? a->row_bytes : 1;
    engine_buffer_t scratch[2] = {{.win = MPI_WIN_NULL}, {.win = MPI_WIN_NULL}};
    engine_buffer_t *bufs = a ? a->buf : scratch;
    mal_status_t st = MAL_OK;
    /* Both populated now: a page first touched inside a move would put its fault on
     * the reconfiguration's critical path (docs/design.md, "Cold transfers"). The
     * spare holds at least the even share with headroom, so a return to balance from
     * an uneven start never has to grow it. */
    for (int b = 0; b < nbuf && !st; b++) {
        if (b == 1 && caps != NULL)
            spare_caps(ctx->reg, a, p, caps);
        st = engine_buffer_alloc(ctx->comm, &ctx->reg->windows, ctx->xfer, &bufs[b],
                                 row_bytes, caps, ctx->announce);
    }
    if (st)
        engine_buffer_free(&ctx->reg->windows, &bufs[0]);
    free(caps);
    return st;
}

/* A block layout given by `bounds` (NULL: the even split). */
static mal_array_t *new_array(int nprocs, const char *name, int64_t global_rows,
                              int64_t row_len, int64_t row_bytes, mal_distribution_t dist,
                              int64_t halo, const int64_t *bounds)
{
    size_t p = (size_t)nprocs;
    mal_array_t *a = calloc(1, sizeof *a);
    int64_t *b = malloc((p + 1) * sizeof *b);
    int64_t *offsets = malloc(p * sizeof *offsets);
    if (a == NULL || b == NULL || offsets == NULL) {
        free(a);
        free(b);
        free(offsets);
        return NULL;
    }
    strcpy(a->name, name);
    a->distribution = dist;
    a->global_rows = global_rows;
    a->row_len = row_len;
    a->row_bytes = row_bytes;
    a->halo = halo;
    a->bounds = b;
    a->offsets = offsets;
    a->buf[0].win = a->buf[1].win = MPI_WIN_NULL;
    if (bounds != NULL)
        memcpy(b, bounds, (p + 1) * sizeof *b);
    else
        partition_even(global_rows, nprocs, b);
    return a;
}

static void discard_array(mal_array_t *a)
{
    if (a != NULL) {
        free(a->bounds);
        free(a->offsets);
        free(a);
    }
}

/* Register-less creation shared by every allocating call: agree that every rank has its
 * handle before the collective window creation. */
static mal_status_t create_array(const engine_regctx_t *ctx, const char *name,
                                 int64_t global_rows, int64_t row_len, int64_t row_bytes,
                                 mal_distribution_t dist, int64_t halo, const int64_t *bounds,
                                 const char *call, mal_array_t **out)
{
    mal_array_t *a = new_array(ctx->size, name, global_rows, row_len, row_bytes, dist, halo,
                               bounds);
    mal_status_t st = a ? MAL_OK : engine_fail(MAL_ERR_NOMEM, "%s: no memory to register "
                                               "\"%s\"", call, name);
    /* Memory follows each rank's method (create_buffers): window creation on one rank
     * and shmem_malloc on another would never meet. */
    bool symmetric = ctx->xfer->method == MAL_REDIST_SHMEM;
    uint64_t fp = engine_hash(ENGINE_HASH_SEED, &symmetric, sizeof symmetric);
    if ((st = engine_agree_in(ctx->comm, st, fp, call)) || (st = create_buffers(ctx, a))) {
        discard_array(a);
        return st;
    }
    *out = a;
    return MAL_OK;
}

mal_status_t engine_array_create(const engine_regctx_t *ctx, const char *call,
                                 const char *name, int64_t global_rows, int64_t row_len,
                                 int64_t row_bytes, const int64_t *bounds, mal_array_t **out)
{
    return create_array(ctx, name, global_rows, row_len, row_bytes, MAL_BLOCK, 0, bounds, call,
                        out);
}

void engine_array_link(engine_registry_t *reg, mal_array_t *a)
{
    a->next = reg->arrays;
    reg->arrays = a;
    reg->generation++;
}

void engine_array_unlink(engine_registry_t *reg, mal_array_t *a)
{
    for (mal_array_t **p = &reg->arrays; *p != NULL; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            reg->generation++;
            return;
        }
}

/* On a joining process: hand back a structure that arrived with the join, after
 * checking the program asks for the same one. Local: the others are not calling. */
static mal_status_t adopt(const char *call, mal_array_t *a, MPI_Datatype type,
                          int64_t global_rows, int64_t row_len, mal_distribution_t dist,
                          int64_t halo, const mal_csr_t *matrix, mal_array_t **array)
{
    int64_t row_bytes = engine_row_bytes(type, row_len, global_rows, call);
    if (row_bytes <= 0)
        return MAL_ERR_ARG;
    if (array == NULL)
        return engine_fail(MAL_ERR_ARG, "%s(\"%s\"): array is NULL", call, a->name);
    if (global_rows != a->global_rows || row_len != a->row_len ||
        row_bytes != a->row_bytes || dist != a->distribution || matrix != a->matrix)
        return engine_fail(MAL_ERR_MISMATCH, "%s(\"%s\") on a joining process: "
                           "%lld rows x %lld (%lld bytes) %s%s, but the application holds "
                           "%lld x %lld (%lld bytes) %s%s", call, a->name,
                           (long long)global_rows, (long long)row_len, (long long)row_bytes,
                           engine_distribution_name(dist), matrix ? " aligned" : "",
                           (long long)a->global_rows, (long long)a->row_len,
                           (long long)a->row_bytes, engine_distribution_name(a->distribution),
                           a->matrix ? " aligned" : "");
    if (halo != a->halo)
        return engine_fail(MAL_ERR_MISMATCH, "%s(\"%s\") on a joining process: a halo of %lld "
                           "rows, but the application holds %lld", call, a->name,
                           (long long)halo, (long long)a->halo);
    a->adoptable = false;
    *array = a;
    return MAL_OK;
}

/* The initial block bounds: the matrix's rows, the weights' split, or NULL (even). */
static mal_status_t initial_bounds(const engine_regctx_t *ctx, int64_t global_rows,
                                   const double *weights, const mal_csr_t *matrix,
                                   int64_t **out)
{
    *out = NULL;
    if (matrix != NULL || weights == NULL)
        return MAL_OK;
    int p = ctx->size;
    mal_status_t st = engine_check_weights(weights, p, "mal_alloc_array_weighted");
    if (st)
        return st;
    *out = malloc(((size_t)p + 1) * sizeof **out);
    if (*out == NULL)
        return engine_fail(MAL_ERR_NOMEM, "mal_alloc_array_weighted: no memory for bounds");
    if (partition_block(global_rows, p, weights, ctx->min_rows, *out)) {
        free(*out);
        *out = NULL;
        return engine_fail(MAL_ERR_ARG, "mal_alloc_array_weighted: min_rows %lld for every "
                           "positive weight exceeds the %lld rows",
                           (long long)ctx->min_rows, (long long)global_rows);
    }
    return MAL_OK;
}

/* At most the global rows (a halo wider than the grid holds nothing more), and a count
 * of rows an MPI call takes (the exchange's messages, stencil.c). */
static mal_status_t check_halo(const char *call, const char *name, int64_t halo,
                               int64_t global_rows)
{
    int64_t most = global_rows < INT_MAX ? global_rows : INT_MAX;
    if (halo >= 0 && halo <= most)
        return MAL_OK;
    return engine_fail(MAL_ERR_ARG, "%s(\"%s\"): halo_rows is %lld, must be 0..%lld (at most "
                       "the global rows)", call, name, (long long)halo, (long long)most);
}

/* The shared body of mal_alloc_window, mal_alloc_array_weighted, mal_alloc_array_aligned
 * and mal_alloc_halo (the only one with `halo` rows of room around every part). */
static mal_status_t alloc_window(const engine_regctx_t *ctx, const char *call,
                                 const char *name, MPI_Datatype type, int64_t global_rows,
                                 int64_t row_len, mal_distribution_t distribution,
                                 int64_t halo, const double *weights, mal_csr_t *matrix,
                                 mal_array_t **array)
{
    int64_t asked = distribution; /* as the program gave it, for messages */
    /* A flag of block arrays only: MAL_REPLICATED | MAL_READ_MOSTLY stays refused. */
    bool read_mostly = (distribution & MAL_READ_MOSTLY) &&
                       (distribution & ~MAL_READ_MOSTLY) == MAL_BLOCK;
    if (read_mostly)
        distribution = MAL_BLOCK;
    mal_array_t *joined = name != NULL ? find(ctx->reg, name) : NULL;
    if (joined != NULL && joined->adoptable)
        return adopt(call, joined, type, global_rows, row_len, distribution, halo, matrix,
                     array);
    int64_t row_bytes = 0;
    mal_status_t st = check_alloc_args(ctx->reg, call, name, type, global_rows, row_len,
                                       distribution, array, &row_bytes);
    if (!st)
        st = check_halo(call, name, halo, global_rows);
    int64_t *bounds = NULL;
    if (!st)
        st = initial_bounds(ctx, global_rows, weights, matrix, &bounds);
    st = agree_alloc(ctx, st, name, asked, global_rows, row_len, row_bytes, halo, matrix,
                     matrix == NULL ? weights : NULL, call);
    if (st) {
        free(bounds);
        return st;
    }
    mal_array_t *a = NULL;
    st = create_array(ctx, name, global_rows, row_len, row_bytes, distribution, halo,
                      matrix ? matrix->rowptr->bounds : bounds, call, &a);
    free(bounds);
    if (st)
        return st;
    a->layout = matrix ? ENGINE_LAYOUT_ROWS : ENGINE_LAYOUT_OWN;
    a->matrix = matrix;
    a->read_mostly = read_mostly;
    engine_array_link(ctx->reg, a);
    *array = a;
    return MAL_OK;
}

mal_status_t engine_array_alloc(const engine_regctx_t *ctx, const char *name,
                                MPI_Datatype type, int64_t global_rows, int64_t row_len,
                                mal_distribution_t distribution, mal_array_t **array)
{
    return alloc_window(ctx, "mal_alloc_window", name, type, global_rows, row_len,
                        distribution, 0, NULL, NULL, array);
}

mal_status_t engine_array_alloc_halo(const engine_regctx_t *ctx, const char *name,
                                     MPI_Datatype type, int64_t global_rows, int64_t row_len,
                                     int64_t halo, mal_array_t **array)
{
    return alloc_window(ctx, "mal_alloc_halo", name, type, global_rows, row_len, MAL_BLOCK,
                        halo, NULL, NULL, array);
}

mal_status_t engine_array_alloc_weighted(const engine_regctx_t *ctx, const char *name,
                                         MPI_Datatype type, int64_t global_rows,
                                         int64_t row_len, const double *weights,
                                         mal_array_t **array)
{
    mal_array_t *joined = name != NULL ? find(ctx->reg, name) : NULL;
    /* Agreed like any bad argument (one allreduce), except where the call is local: a
     * joiner handed back what it received ignores the weights. */
    if (weights == NULL && !(joined != NULL && joined->adoptable))
        return engine_agree_in(ctx->comm,
                               engine_fail(MAL_ERR_ARG, "mal_alloc_array_weighted(\"%s\"): "
                                           "weights is NULL", name ? name : "(null)"),
                               0, "mal_alloc_array_weighted");
    return alloc_window(ctx, "mal_alloc_array_weighted", name, type, global_rows, row_len,
                        MAL_BLOCK, 0, weights, NULL, array);
}

mal_status_t engine_array_alloc_aligned(const engine_regctx_t *ctx, const char *name,
                                        MPI_Datatype type, int64_t row_len,
                                        const mal_csr_t *matrix, mal_array_t **array)
{
    mal_array_t *joined = name != NULL ? find(ctx->reg, name) : NULL;
    if (matrix == NULL && !(joined != NULL && joined->adoptable)) {
        /* Still collective: the others learn why this rank stopped. */
        mal_status_t st = engine_fail(MAL_ERR_ARG, "mal_alloc_array_aligned(\"%s\"): "
                                      "matrix is NULL", name ? name : "(null)");
        return engine_agree_in(ctx->comm, st, 0, "mal_alloc_array_aligned");
    }
    return alloc_window(ctx, "mal_alloc_array_aligned", name, type,
                        matrix ? matrix->global_rows : -1, row_len, MAL_BLOCK, 0, NULL,
                        (mal_csr_t *)matrix, array);
}

mal_status_t engine_array_free(const engine_regctx_t *ctx, mal_array_t *array)
{
    mal_status_t st = MAL_OK;
    if (array != NULL && array->part != CSR_PART_NONE)
        st = engine_fail(MAL_ERR_ARG, "mal_free_array(\"%s\"): part of matrix \"%s\"; "
                         "free the matrix with mal_free_csr", array->name, array->matrix->name);
    /* Collective even for NULL, so a NULL on some ranks is reported, not a hang. The
     * buffers it holds too: their frees are collective, and mal_swap_arrays is local. */
    uint64_t fp = 0;
    if (array != NULL) {
        uint64_t holder = engine_array_holder(array);
        fp = engine_hash(ENGINE_HASH_SEED, array->name, strlen(array->name));
        fp = engine_hash(fp, &holder, sizeof holder);
    }
    if ((st = engine_agree_in(ctx->comm, st, fp, "mal_free_array")) || array == NULL)
        return st;
    engine_array_unlink(ctx->reg, array);
    engine_array_destroy(ctx->reg, array);
    return MAL_OK;
}
