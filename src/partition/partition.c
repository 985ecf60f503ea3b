/* Block partitioning and transfer plans (pure; see partition.h). */
#include "partition.h"

#include <math.h>

int partition_find_bad_weight(const double *weights, int nparts)
{
    for (int r = 0; r < nparts; r++)
        if (!isfinite(weights[r]) || weights[r] < 0.0)
            return r;
    return -1;
}

static int count_positive(const double *weights, int nparts)
{
    int n = 0;
    for (int r = 0; r < nparts; r++)
        n += weights[r] > 0.0;
    return n;
}

/* Rows in [0, rest] at cumulative weight `cum` of `total_weight`. Long double keeps the
 * 64-bit row counts exact; computing rest * cum before dividing keeps the map monotone in
 * cum, and cum == total_weight maps to exactly `rest`, so trailing zero weights get 0. */
static int64_t rounded_share(int64_t rest, long double cum, long double total_weight)
{
    if (cum >= total_weight)
        return rest;
    long double x = floorl((long double)rest * cum / total_weight + 0.5L);
    return x >= (long double)rest ? rest : (int64_t)x;
}

mal_status_t partition_block(int64_t total_rows, int nparts, const double *weights,
                             int64_t min_rows, int64_t *bounds)
{
    if (nparts < 1 || total_rows < 0 || weights == NULL || bounds == NULL ||
        partition_find_bad_weight(weights, nparts) >= 0)
        return MAL_ERR_ARG;
    int positive = count_positive(weights, nparts);
    if (positive == 0 || min_rows < 0 || (min_rows > 0 && min_rows > total_rows / positive))
        return MAL_ERR_ARG;

    long double total_weight = 0.0L;
    for (int r = 0; r < nparts; r++)
        total_weight += weights[r];

    int64_t rest = total_rows - min_rows * positive;
    long double cum = 0.0L;
    int64_t reserved = 0;
    bounds[0] = 0;
    for (int r = 0; r < nparts; r++) {
        cum += weights[r];
        reserved += weights[r] > 0.0 ? min_rows : 0;
        bounds[r + 1] = reserved + rounded_share(rest, cum, total_weight);
    }
    return MAL_OK;
}

void partition_even(int64_t total_rows, int nparts, int64_t *bounds)
{
    /* First (total % nparts) parts get one row more; exact in 64-bit integers. */
    int64_t base = total_rows / nparts, extra = total_rows % nparts;
    bounds[0] = 0;
    for (int r = 0; r < nparts; r++)
        bounds[r + 1] = bounds[r] + base + (r < extra ? 1 : 0);
}

bool partition_same(const int64_t *a, const int64_t *b, int nparts)
{
    for (int r = 0; r <= nparts; r++)
        if (a[r] != b[r])
            return false;
    return true;
}

int partition_owner(const int64_t *bounds, int nparts, int64_t row)
{
    int lo = 0, hi = nparts - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (bounds[mid] <= row)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Overlaps of the range [lo, hi) with the parts of `bounds`: the common walk of both
 * plan directions. `range_is_dst` says whether [lo, hi) is the destination part. */
static size_t overlap_segments(const int64_t *bounds, int nparts, int64_t lo, int64_t hi,
                               int range_is_dst, partition_segment_t *segments)
{
    size_t n = 0;
    if (lo >= hi)
        return 0;
    for (int p = partition_owner(bounds, nparts, lo); p < nparts && bounds[p] < hi; p++) {
        int64_t first = lo > bounds[p] ? lo : bounds[p];
        int64_t end = hi < bounds[p + 1] ? hi : bounds[p + 1];
        if (first >= end)
            continue;
        int64_t range_off = first - lo, part_off = first - bounds[p];
        segments[n++] = (partition_segment_t){
            .peer = p,
            .src_offset = range_is_dst ? part_off : range_off,
            .dst_offset = range_is_dst ? range_off : part_off,
            .rows = end - first,
        };
    }
    return n;
}

size_t partition_plan_recv(const int64_t *old_bounds, int old_parts,
                           const int64_t *new_bounds, int new_parts, int rank,
                           partition_segment_t *segments)
{
    if (rank < 0 || rank >= new_parts)
        return 0;
    return overlap_segments(old_bounds, old_parts, new_bounds[rank], new_bounds[rank + 1],
                            1, segments);
}

size_t partition_plan_send(const int64_t *old_bounds, int old_parts,
                           const int64_t *new_bounds, int new_parts, int rank,
                           partition_segment_t *segments)
{
    if (rank < 0 || rank >= old_parts)
        return 0;
    return overlap_segments(new_bounds, new_parts, old_bounds[rank], old_bounds[rank + 1],
                            0, segments);
}

void partition_flows(const int64_t *old_bounds, const int64_t *new_bounds, int nparts,
                     int64_t *in, int64_t *out)
{
    for (int r = 0; r < nparts; r++) {
        int64_t lo = old_bounds[r] > new_bounds[r] ? old_bounds[r] : new_bounds[r];
        int64_t hi = old_bounds[r + 1] < new_bounds[r + 1] ? old_bounds[r + 1]
                                                           : new_bounds[r + 1];
        int64_t kept = hi > lo ? hi - lo : 0;
        in[r] = new_bounds[r + 1] - new_bounds[r] - kept;
        out[r] = old_bounds[r + 1] - old_bounds[r] - kept;
    }
}

int64_t partition_push_rows(int64_t rows, int64_t dst_in, int64_t src_out)
{
    if (rows <= 0 || dst_in + src_out <= 0)
        return 0;
    long double x = floorl((long double)rows * dst_in / ((long double)dst_in + src_out) + 0.5L);
    return x >= (long double)rows ? rows : x <= 0 ? 0 : (int64_t)x;
}

bool partition_nnz_trivial(int64_t t, int64_t total, int64_t nrows, int64_t *row,
                           int64_t *nnz)
{
    if (t <= 0) {
        *row = 0;
        *nnz = 0;
        return true;
    }
    if (t >= total) {
        *row = nrows;
        *nnz = total;
        return true;
    }
    return false;
}

int partition_nnz_owner(const int64_t *nnz_bounds, int nparts, int64_t t, int from)
{
    int q = from < 0 ? 0 : from;
    while (q < nparts - 1 && nnz_bounds[q + 1] < t)
        q++;
    return q;
}

void partition_nnz_resolve(const int64_t *prefix, int64_t rows, int64_t row0, int64_t nnz0,
                           int64_t t, int64_t *row, int64_t *nnz)
{
    int64_t local = t - nnz0;
    /* First i in (0, rows] with prefix[i] >= local: the target's lower bound. */
    int64_t lo = 1, hi = rows;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (prefix[mid] >= local)
            hi = mid;
        else
            lo = mid + 1;
    }
    /* Row lo - 1 ends strictly below the target: take it only when strictly nearer, so
     * the choice is the same wherever the slice boundaries of the caller fall. */
    if (local - prefix[lo - 1] < prefix[lo] - local)
        lo--;
    *row = row0 + lo;
    *nnz = nnz0 + prefix[lo];
}

mal_status_t partition_nnz(const int64_t *prefix, int64_t nrows, int nparts,
                           const double *weights, int64_t *row_bounds, int64_t *nnz_bounds)
{
    int64_t total = nrows > 0 ? prefix[nrows] : 0;
    if (total == 0 || nrows <= 0) {
        mal_status_t st = partition_block(nrows, nparts, weights, 0, row_bounds);
        for (int r = 0; st == MAL_OK && r <= nparts; r++)
            nnz_bounds[r] = 0;
        return st;
    }
    mal_status_t st = partition_block(total, nparts, weights, 0, nnz_bounds);
    if (st != MAL_OK)
        return st;
    for (int r = 0; r <= nparts; r++) {
        int64_t t = nnz_bounds[r];
        if (!partition_nnz_trivial(t, total, nrows, &row_bounds[r], &nnz_bounds[r]))
            partition_nnz_resolve(prefix, nrows, 0, 0, t, &row_bounds[r], &nnz_bounds[r]);
    }
    return MAL_OK;
}
