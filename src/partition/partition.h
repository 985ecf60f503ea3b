/* Pure block partitioning and transfer plans: numbers in, numbers out, no MPI.
 * Private to libmal (never installed). */
#ifndef MAL_PARTITION_H
#define MAL_PARTITION_H

#include "mal_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Index of the first invalid weight, or -1 when all are finite and >= 0. */
int partition_find_bad_weight(const double *weights, int nparts);

/* Block boundaries proportional to weights: bounds[0] = 0, bounds[nparts] = total_rows,
 * part r owns rows [bounds[r], bounds[r+1]). Each positive-weight part first receives
 * min_rows, the remaining rows are split by rounding the cumulative weight shares, so
 * counts sum exactly, boundaries are monotone and a zero weight gets zero rows.
 * O(nparts) time, no allocation. bounds must hold nparts + 1 entries.
 * Returns MAL_OK, or MAL_ERR_ARG (bounds untouched) when nparts < 1, total_rows < 0, a
 * weight is negative, NaN or infinite (partition_find_bad_weight names it), no weight
 * is positive, or min_rows is negative or more than the rows allow for every positive
 * weight; the caller, who knows which argument came from the user, words the message. */
mal_status_t partition_block(int64_t total_rows, int nparts, const double *weights,
                             int64_t min_rows, int64_t *bounds);

/* Even split (all weights equal), the layout of a newly allocated structure. */
void partition_even(int64_t total_rows, int nparts, int64_t *bounds);

/* Whether two layouts of the same number of parts are identical. */
bool partition_same(const int64_t *a, const int64_t *b, int nparts);

/* The part owning global row `row` (bounds sorted, empty parts skipped): the last r with
 * bounds[r] <= row < bounds[r+1]. O(log nparts). */
int partition_owner(const int64_t *bounds, int nparts, int64_t row);

/* One contiguous run of rows moving from one part to another. Offsets are in rows,
 * relative to the start of the source part (old layout) and of the destination part
 * (new layout). `peer` is the other side: the source in a receive plan, the destination
 * in a send plan. */
typedef struct {
    int peer;
    int64_t src_offset;
    int64_t dst_offset;
    int64_t rows;
} partition_segment_t;

/* What part `rank` of the new layout receives, in ascending peer order; returns the
 * number of segments written (at most old_parts, empty overlaps skipped). */
size_t partition_plan_recv(const int64_t *old_bounds, int old_parts,
                           const int64_t *new_bounds, int new_parts, int rank,
                           partition_segment_t *segments);

/* What part `rank` of the old layout sends, in ascending peer order; returns the number
 * of segments written (at most new_parts). */
size_t partition_plan_send(const int64_t *old_bounds, int old_parts,
                           const int64_t *new_bounds, int new_parts, int rank,
                           partition_segment_t *segments);

/* Rows of every part that change owner: in[r] arrive at part r, out[r] leave it, for
 * two layouts of the same nparts. O(nparts). */
void partition_flows(const int64_t *old_bounds, const int64_t *new_bounds, int nparts,
                     int64_t *in, int64_t *out);

/* How many of the `rows` of one segment its source should push (the destination pulls
 * the rest), so that both sides share the copy work: the fraction dst_in / (dst_in +
 * src_out). A receiver with much to pull leaves more to its senders, a sender with much
 * to send leaves more to its receivers; for one pair each side copies half. Both sides
 * compute it from the same numbers, so they agree without communicating. */
int64_t partition_push_rows(int64_t rows, int64_t dst_in, int64_t src_out);

/* ---- nnz-weighted row partition (sparse matrices) ------------------------------------
 * A row-distributed matrix is split so that part r holds about weights[r] / sum of the
 * nonzeros: the nnz targets are partition_block() over the nonzeros, and each target is
 * moved to the row boundary whose nnz prefix is nearest to it. The search for a target
 * needs only the slice of the row pointer that holds it, so a distributed caller resolves
 * each target on the one part that owns it and combines the answers (O(p) per rank). */

/* Whether target `t` of `total` nonzeros is decided without data: t <= 0 is row 0 and
 * t >= total is the last row boundary (leading and trailing zero weights get no rows,
 * empty rows at the ends go to the nearest positive weight). Sets *row and *nnz then. */
bool partition_nnz_trivial(int64_t t, int64_t total, int64_t nrows, int64_t *row,
                           int64_t *nnz);

/* The part that resolves a non-trivial target: the q with nnz_bounds[q] < t <=
 * nnz_bounds[q+1] (unique, and never an empty part), searched forward from part `from`
 * (at most the answer): a caller walking targets in increasing order passes the previous
 * answer and visits every part once, O(nparts) for all targets. */
int partition_nnz_owner(const int64_t *nnz_bounds, int nparts, int64_t t, int from);

/* Resolve target `t` inside one part: `prefix` holds rows + 1 nnz prefixes rebased to 0
 * (prefix[0] == 0 < t - nnz0 <= prefix[rows]), the part starts at global row `row0` and
 * nonzero `nnz0`. The boundary is the first row whose prefix reaches t, or the row before
 * it when that prefix is strictly nearer to t. Monotone in t. O(log rows). */
void partition_nnz_resolve(const int64_t *prefix, int64_t rows, int64_t row0, int64_t nnz0,
                           int64_t t, int64_t *row, int64_t *nnz);

/* The whole computation on one process, for a full row pointer (prefix[0] == 0):
 * row_bounds and nnz_bounds (nparts + 1 each) of the nnz-weighted split. With no nonzero
 * at all, rows are split by weight as partition_block() does. Returns MAL_OK, or
 * MAL_ERR_ARG for the weights and counts partition_block() refuses. */
mal_status_t partition_nnz(const int64_t *prefix, int64_t nrows, int nparts,
                           const double *weights, int64_t *row_bounds, int64_t *nnz_bounds);

#endif /* MAL_PARTITION_H */
