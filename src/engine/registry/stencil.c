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

/* What this rank receives from and sends to rank r (on one side of it, within reach of
 * the halo): r's rows that fall in this rank's halo, and its rows that fall in r's. */
typedef struct {
    char *in, *out;
    int64_t in_rows, out_rows;
} pair_t;

static pair_t pair_with(const mal_array_t *a, char *data, int me, int r)
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
    return (pair_t){data + (in_lo - first) * rb, data + (out_lo - first) * rb,
                    in_hi - in_lo, out_hi - out_lo};
}

/* The ranks this rank exchanges with: every one holding rows within `halo` rows of its
 * block, from the lowest to the highest (none when it holds no rows). Both sides of a
 * pair find each other: r reaches this block exactly when this block reaches r's. */
static int lowest_partner(const mal_array_t *a, int me)
{
    int lowest = me;
    for (int r = me - 1; r >= 0 && a->bounds[r + 1] > a->bounds[me] - a->halo; r--)
        lowest = r;
    return lowest;
}

static int highest_partner(const mal_array_t *a, int me, int size)
{
    int highest = me;
    for (int r = me + 1; r < size && a->bounds[r] < a->bounds[me + 1] + a->halo; r++)
        highest = r;
    return highest;
}

/* `rows` rows as MPI sees them: bytes, or (past INT_MAX bytes) rows of one element. */
static void message(int64_t rows, int64_t row_bytes, MPI_Datatype *row, MPI_Datatype *type,
                    int *count)
{
    *type = MPI_BYTE;
    *count = (int)(rows * row_bytes);
    if (rows * row_bytes <= INT_MAX)
        return;
    if (*row == MPI_DATATYPE_NULL) { /* rows <= halo <= INT_MAX (engine_array_alloc_halo) */
        MPI_Type_contiguous((int)row_bytes, MPI_BYTE, row);
        MPI_Type_commit(row);
    }
    *type = *row;
    *count = (int)rows;
}

/* Up to EXCHANGE_POSTED messages (both neighbours, a halo no wider than their blocks)
 * are posted at once; more, one pair of ranks at a time (MPI_Sendrecv), in an order
 * every rank follows: pairs by their lower rank, then their higher. The lowest pair not
 * done yet then has both its ranks at it, so the exchange cannot wait for ever, and it
 * needs no memory that could be missing on one rank while its partners wait. */
#define EXCHANGE_POSTED 4

/* Through MPI_, not PMPI_: this is the application's communication, which libmal-pmpi
 * counts for the monitor. */
static mal_status_t exchange_posted(const mal_array_t *a, char *data, int me, int lo, int hi,
                                    MPI_Comm comm, MPI_Datatype *row)
{
    MPI_Request reqs[EXCHANGE_POSTED];
    int n = 0, rc = MPI_SUCCESS;
    for (int r = lo; r <= hi && rc == MPI_SUCCESS; r++) {
        if (r == me || !holds_rows(a, r))
            continue;
        pair_t q = pair_with(a, data, me, r);
        MPI_Datatype type;
        int count;
        if (q.in_rows > 0) {
            message(q.in_rows, a->row_bytes, row, &type, &count);
            rc = MPI_Irecv(q.in, count, type, r, MAL_HALO_TAG, comm, &reqs[n]);
            n += rc == MPI_SUCCESS;
        }
        if (q.out_rows > 0 && rc == MPI_SUCCESS) {
            message(q.out_rows, a->row_bytes, row, &type, &count);
            rc = MPI_Isend(q.out, count, type, r, MAL_HALO_TAG, comm, &reqs[n]);
            n += rc == MPI_SUCCESS;
        }
    }
    int waited = engine_waitall(n, reqs, false);
    return engine_mpi_check(rc != MPI_SUCCESS ? rc : waited, "mal_halo_exchange");
}

static mal_status_t exchange_pairwise(const mal_array_t *a, char *data, int me, int lo,
                                      int hi, MPI_Comm comm, MPI_Datatype *row)
{
    int rc = MPI_SUCCESS;
    for (int r = lo; r <= hi && rc == MPI_SUCCESS; r++) {
        if (r == me || !holds_rows(a, r))
            continue;
        pair_t q = pair_with(a, data, me, r);
        MPI_Datatype in_type, out_type;
        int in_count, out_count;
        message(q.in_rows, a->row_bytes, row, &in_type, &in_count);
        message(q.out_rows, a->row_bytes, row, &out_type, &out_count);
        /* A direction without rows is no message (MPI_PROC_NULL), as in exchange_posted:
         * the partner, posting or pairing, sends or expects none either. */
        rc = MPI_Sendrecv(q.out, out_count, out_type, q.out_rows > 0 ? r : MPI_PROC_NULL,
                          MAL_HALO_TAG, q.in, in_count, in_type,
                          q.in_rows > 0 ? r : MPI_PROC_NULL, MAL_HALO_TAG, comm,
                          MPI_STATUS_IGNORE);
    }
    return engine_mpi_check(rc, "mal_halo_exchange: MPI_Sendrecv");
}

mal_status_t engine_halo_exchange(const engine_regctx_t *ctx, const mal_array_t *a)
{
    mal_status_t st = check_block("mal_halo_exchange", a);
    if (st)
        return st;
    if (a->halo == 0)
        return engine_fail(MAL_ERR_ARG, "mal_halo_exchange(\"%s\"): the array has no halo "
                           "(allocate it with mal_alloc_halo)", a->name);
    int me = ctx->rank;
    if (!holds_rows(a, me))
        return MAL_OK;
    char *data = engine_array_local_data(a, me);
    int lo = lowest_partner(a, me), hi = highest_partner(a, me, ctx->size), messages = 0;
    for (int r = lo; r <= hi; r++) {
        pair_t q = r == me || !holds_rows(a, r) ? (pair_t){0} : pair_with(a, data, me, r);
        messages += (q.in_rows > 0) + (q.out_rows > 0);
    }
    MPI_Datatype row = MPI_DATATYPE_NULL;
    st = messages <= EXCHANGE_POSTED ? exchange_posted(a, data, me, lo, hi, ctx->comm, &row)
                                     : exchange_pairwise(a, data, me, lo, hi, ctx->comm, &row);
    if (row != MPI_DATATYPE_NULL)
        MPI_Type_free(&row);
    return st;
}
