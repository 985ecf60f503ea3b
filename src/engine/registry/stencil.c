/* What stencil codes need of a structure (registry.h): the ranks that hold the rows next
 * to a block, the exchange of the halo rows (mal_alloc_halo) over mal_comm(), and the
 * swap of two structures' buffers (double buffering), checked by every reconfiguration
 * through the holders' hash. */
#include "core.h"
#include "registry_impl.h"

#include <limits.h>
#include <stdlib.h>

uint64_t engine_registry_holders(const engine_registry_t *reg)
{
    uint64_t h = ENGINE_HASH_SEED;
    for (const mal_array_t *a = reg->arrays; a != NULL; a = a->next) {
        uint64_t holder = engine_array_holder(a);
        h = engine_hash(h, &holder, sizeof holder);
    }
    return h;
}

/* ---- the swap ---- */

static mal_status_t check_swappable(const char *which, const mal_array_t *a)
{
    if (a == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_swap_arrays: %s is NULL", which);
    if (a->read_mostly)
        return engine_fail(MAL_ERR_ARG, "mal_swap_arrays: \"%s\" is MAL_READ_MOSTLY (its rows "
                           "must not change between iterations)", a->name);
    return MAL_OK;
}

static mal_status_t differ(const mal_array_t *a, const mal_array_t *b, const char *what,
                           int64_t in_a, int64_t in_b)
{
    return engine_fail(MAL_ERR_ARG, "mal_swap_arrays(\"%s\", \"%s\"): %s differ (%lld and "
                       "%lld)", a->name, b->name, what, (long long)in_a, (long long)in_b);
}

/* The first part whose rows differ, or MAL_OK when both have the same layout. */
static mal_status_t check_bounds(const mal_array_t *a, const mal_array_t *b, int size)
{
    for (int r = 0; r < size && a->distribution == MAL_BLOCK; r++)
        if (a->bounds[r] != b->bounds[r] || a->bounds[r + 1] != b->bounds[r + 1])
            return engine_fail(MAL_ERR_ARG, "mal_swap_arrays(\"%s\", \"%s\"): block layouts "
                               "differ (rank %d holds rows %lld..%lld of the first, %lld..%lld "
                               "of the second)", a->name, b->name, r, (long long)a->bounds[r],
                               (long long)a->bounds[r + 1] - 1, (long long)b->bounds[r],
                               (long long)b->bounds[r + 1] - 1);
    return MAL_OK;
}

static mal_status_t check_same_layout(const mal_array_t *a, const mal_array_t *b, int size)
{
    if (a->distribution != b->distribution)
        return engine_fail(MAL_ERR_ARG, "mal_swap_arrays(\"%s\", \"%s\"): distributions "
                           "differ (%s and %s)", a->name, b->name,
                           a->distribution == MAL_BLOCK ? "MAL_BLOCK" : "MAL_REPLICATED",
                           b->distribution == MAL_BLOCK ? "MAL_BLOCK" : "MAL_REPLICATED");
    if (a->global_rows != b->global_rows)
        return differ(a, b, "global rows", a->global_rows, b->global_rows);
    if (a->row_len != b->row_len)
        return differ(a, b, "row lengths", a->row_len, b->row_len);
    if (a->row_bytes != b->row_bytes)
        return differ(a, b, "row sizes in bytes", a->row_bytes, b->row_bytes);
    if (a->halo != b->halo)
        return differ(a, b, "halo rows", a->halo, b->halo);
    if (a->matrix != b->matrix)
        return engine_fail(MAL_ERR_ARG, "mal_swap_arrays(\"%s\", \"%s\"): they follow "
                           "different layouts (%s%s%s and %s%s%s)", a->name, b->name,
                           a->matrix ? "the rows of \"" : "their own",
                           a->matrix ? a->matrix->name : "", a->matrix ? "\"" : "",
                           b->matrix ? "the rows of \"" : "their own",
                           b->matrix ? b->matrix->name : "", b->matrix ? "\"" : "");
    return check_bounds(a, b, size);
}

mal_status_t engine_array_swap(mal_array_t *a, mal_array_t *b, int size)
{
    mal_status_t st = check_swappable("a", a);
    if (st || (st = check_swappable("b", b)))
        return st;
    if (a == b)
        return engine_fail(MAL_ERR_ARG, "mal_swap_arrays(\"%s\", \"%s\"): a and b are the same "
                           "array", a->name, b->name);
    if ((st = check_same_layout(a, b, size)))
        return st;
    engine_array_swap_buffers(a, b);
    return MAL_OK;
}

/* ---- neighbours ---- */

static bool holds_rows(const mal_array_t *a, int r)
{
    return a->bounds[r + 1] > a->bounds[r];
}

static mal_status_t check_block(const char *call, const mal_array_t *a)
{
    if (a == NULL)
        return engine_fail(MAL_ERR_ARG, "%s: array is NULL", call);
    if (a->distribution != MAL_BLOCK)
        return engine_fail(MAL_ERR_ARG, "%s(\"%s\"): a replicated array has no neighbours "
                           "(every rank holds every row)", call, a->name);
    return MAL_OK;
}

mal_status_t engine_array_neighbors(const mal_array_t *a, int me, int size, int *up,
                                    int *down)
{
    mal_status_t st = check_block("mal_neighbors", a);
    if (st)
        return st;
    if (up == NULL || down == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_neighbors(\"%s\"): %s is NULL", a->name,
                           up == NULL ? "up" : "down");
    int above = MPI_PROC_NULL, below = MPI_PROC_NULL;
    for (int r = me - 1; r >= 0 && holds_rows(a, me) && above == MPI_PROC_NULL; r--)
        above = holds_rows(a, r) ? r : MPI_PROC_NULL;
    for (int r = me + 1; r < size && holds_rows(a, me) && below == MPI_PROC_NULL; r++)
        below = holds_rows(a, r) ? r : MPI_PROC_NULL;
    *up = above;
    *down = below;
    return MAL_OK;
}

/* ---- the halo exchange ---- */

/* The messages of one exchange: counted first (reqs NULL), then posted. */
typedef struct {
    MPI_Request *reqs;
    int count;
    MPI_Datatype row;  /* a row as one element, for a message past INT_MAX bytes */
    MPI_Comm comm;
    mal_status_t st;
} posts_t;

/* One message of `rows` rows at `at` to or from `peer`. Through MPI_, not PMPI_: this is
 * the application's communication, which libmal-pmpi counts for the monitor. */
static void post(posts_t *p, int64_t row_bytes, char *at, int64_t rows, int peer, bool send)
{
    if (rows <= 0 || p->st)
        return;
    if (p->reqs == NULL) {
        p->count++;
        return;
    }
    MPI_Datatype type = MPI_BYTE;
    int64_t count = rows * row_bytes;
    if (count > INT_MAX) { /* rows <= halo <= INT_MAX (engine_array_alloc_halo) */
        if (p->row == MPI_DATATYPE_NULL) {
            MPI_Type_contiguous((int)row_bytes, MPI_BYTE, &p->row);
            MPI_Type_commit(&p->row);
        }
        type = p->row;
        count = rows;
    }
    int rc = send ? MPI_Isend(at, (int)count, type, peer, MAL_HALO_TAG, p->comm,
                              &p->reqs[p->count])
                  : MPI_Irecv(at, (int)count, type, peer, MAL_HALO_TAG, p->comm,
                              &p->reqs[p->count]);
    p->count += rc == MPI_SUCCESS;
    p->st = engine_mpi_check(rc, send ? "mal_halo_exchange: MPI_Isend"
                                      : "mal_halo_exchange: MPI_Irecv");
}

/* With rank r, on one side of this rank (`me`) within reach of the halo: this rank
 * receives r's rows that fall in its halo and sends r its rows that fall in r's. */
static void exchange_with(posts_t *p, const mal_array_t *a, char *data, int me, int r)
{
    int64_t h = a->halo, first = a->bounds[me], end = a->bounds[me + 1];
    int64_t r_first = a->bounds[r], r_end = a->bounds[r + 1], rb = a->row_bytes;
    int64_t in_lo = r_first, in_hi = r_end, out_lo = first, out_hi = end;
    if (r < me) {
        in_lo = r_first > first - h ? r_first : first - h;
        out_hi = end < r_end + h ? end : r_end + h;
    } else {
        in_hi = r_end < end + h ? r_end : end + h;
        out_lo = first > r_first - h ? first : r_first - h;
    }
    post(p, rb, data + (in_lo - first) * rb, in_hi - in_lo, r, false);
    post(p, rb, data + (out_lo - first) * rb, out_hi - out_lo, r, true);
}

/* Every rank holding rows within `halo` rows of this rank's block, nearest first. */
static void exchange_all(posts_t *p, const mal_array_t *a, char *data, int me, int size)
{
    int64_t h = a->halo, first = a->bounds[me], end = a->bounds[me + 1];
    if (first == end)
        return;
    for (int r = me - 1; r >= 0 && a->bounds[r + 1] > first - h; r--)
        if (holds_rows(a, r))
            exchange_with(p, a, data, me, r);
    for (int r = me + 1; r < size && a->bounds[r] < end + h; r++)
        if (holds_rows(a, r))
            exchange_with(p, a, data, me, r);
}

mal_status_t engine_halo_exchange(const engine_regctx_t *ctx, const mal_array_t *a)
{
    mal_status_t st = check_block("mal_halo_exchange", a);
    if (st)
        return st;
    if (a->halo == 0)
        return engine_fail(MAL_ERR_ARG, "mal_halo_exchange(\"%s\"): the array has no halo "
                           "(allocate it with mal_alloc_halo)", a->name);
    char *data = engine_array_local_data(a, ctx->rank);
    posts_t p = {.reqs = NULL, .row = MPI_DATATYPE_NULL, .comm = ctx->comm};
    exchange_all(&p, a, data, ctx->rank, ctx->size);
    /* At most 4 messages with a halo no wider than the neighbours' blocks. */
    MPI_Request few[8];
    p.reqs = p.count <= 8 ? few : malloc((size_t)p.count * sizeof *p.reqs);
    if (p.reqs == NULL)
        return engine_fail(MAL_ERR_NOMEM, "mal_halo_exchange(\"%s\"): no memory for %d "
                           "requests", a->name, p.count);
    p.count = 0;
    exchange_all(&p, a, data, ctx->rank, ctx->size);
    int rc = MPI_Waitall(p.count, p.reqs, MPI_STATUSES_IGNORE);
    st = p.st ? p.st : engine_mpi_check(rc, "mal_halo_exchange: MPI_Waitall");
    if (p.row != MPI_DATATYPE_NULL)
        MPI_Type_free(&p.row);
    if (p.reqs != few)
        free(p.reqs);
    return st;
}
