/* Unit tests of src/partition: block boundaries from weights and transfer plans. */
#include "partition.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "unittest.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void)
{
    return unit_rng(&rng_state);
}

/* Properties every layout must have; `min_rows` applies to positive weights. */
static void check_layout(int64_t total, int p, const double *w, int64_t min_rows,
                         const int64_t *b)
{
    double wsum = 0;
    for (int r = 0; r < p; r++)
        wsum += w[r];
    CHECK(b[0] == 0 && b[p] == total, "ends %lld..%lld, total %lld", (long long)b[0],
          (long long)b[p], (long long)total);
    for (int r = 0; r < p; r++) {
        int64_t rows = b[r + 1] - b[r];
        CHECK(rows >= 0, "part %d has %lld rows", r, (long long)rows);
        if (w[r] == 0.0)
            CHECK(rows == 0, "zero weight part %d got %lld rows", r, (long long)rows);
        else
            CHECK(rows >= min_rows, "part %d below min rows", r);
        if (min_rows == 0 && total < (INT64_C(1) << 52)) {
            /* Cumulative rounding keeps every boundary within half a row of its ideal,
             * so each count is within one row of its exact share. */
            double ideal = (double)total * w[r] / wsum;
            CHECK(fabs((double)rows - ideal) <= 1.0 + 1e-9 * ideal, "part %d: %lld rows, "
                  "ideal %.3f", r, (long long)rows, ideal);
        }
    }
}

static void test_random_weights(void)
{
    int64_t bounds[65];
    double w[64];
    for (int t = 0; t < 20000; t++) {
        int p = 1 + (int)(rng() % 64);
        int64_t total = (int64_t)(rng() % (t % 3 == 0 ? 10 : 100000));
        for (int r = 0; r < p; r++)
            w[r] = (rng() % 4 == 0) ? 0.0 : (double)(rng() % 1000) / 7.0;
        w[rng() % (uint64_t)p] = 1.5; /* at least one positive */
        int64_t min_rows = (t % 5 == 0) ? (int64_t)(rng() % 4) : 0;
        mal_status_t e = partition_block(total, p, w, min_rows, bounds);
        int positive = 0;
        for (int r = 0; r < p; r++)
            positive += w[r] > 0;
        if (min_rows * positive > total) {
            CHECK(e == MAL_ERR_ARG, "min rows not refused (t=%d)", t);
            continue;
        }
        CHECK(e == MAL_OK, "error %d at t=%d", e, t);
        check_layout(total, p, w, min_rows, bounds);
    }
}

static void test_edge_cases(void)
{
    int64_t b[8];
    double one[1] = {3.0};
    CHECK(partition_block(1, 1, one, 0, b) == MAL_OK && b[1] == 1, "one row");
    double more_ranks[6] = {1, 1, 1, 1, 1, 1};
    CHECK(partition_block(4, 6, more_ranks, 0, b) == MAL_OK, "more ranks than rows");
    check_layout(4, 6, more_ranks, 0, b);
    double zeros[3] = {0, 0, 0};
    CHECK(partition_block(10, 3, zeros, 0, b) == MAL_ERR_ARG, "all zero");
    double neg[3] = {1, -1, 1};
    CHECK(partition_block(10, 3, neg, 0, b) == MAL_ERR_ARG, "negative");
    CHECK(partition_find_bad_weight(neg, 3) == 1, "negative index");
    double nan[2] = {1, NAN};
    CHECK(partition_block(10, 2, nan, 0, b) == MAL_ERR_ARG, "NaN");
    double inf[2] = {INFINITY, 1};
    CHECK(partition_block(10, 2, inf, 0, b) == MAL_ERR_ARG, "inf");
    CHECK(partition_block(10, 0, one, 0, b) == MAL_ERR_ARG, "no parts");
    CHECK(partition_block(-1, 1, one, 0, b) == MAL_ERR_ARG, "negative rows");
    double w3[3] = {1, 0, 1};
    CHECK(partition_block(7, 3, w3, 4, b) == MAL_ERR_ARG, "min rows too large");
    CHECK(partition_block(8, 3, w3, 4, b) == MAL_OK && b[1] == 4 && b[2] == 4,
          "min rows exact");
    double last_zero[3] = {1, 1, 0};
    int64_t huge = INT64_C(1) << 62;
    CHECK(partition_block(huge, 3, last_zero, 0, b) == MAL_OK && b[2] == huge &&
          b[3] == huge, "trailing zero weight at 2^62 rows");
    double tiny[2] = {1e-300, 1e300};
    CHECK(partition_block(1000, 2, tiny, 0, b) == MAL_OK && b[1] == 0, "tiny weight");
    partition_even(10, 4, b);
    CHECK(b[1] == 3 && b[2] == 6 && b[3] == 8 && b[4] == 10, "even split");
}

/* Apply a plan literally: every destination row must come from the source row that held
 * the same global index, and every row must arrive exactly once. */
static void check_plan(const int64_t *ob, int op, const int64_t *nb, int np)
{
    partition_segment_t *seg = malloc(sizeof *seg * (size_t)(op > np ? op : np));
    int64_t recv_rows = 0, send_rows = 0;
    for (int d = 0; d < np; d++) {
        size_t n = partition_plan_recv(ob, op, nb, np, d, seg);
        CHECK(n <= (size_t)op, "too many segments");
        int64_t next = 0;
        for (size_t i = 0; i < n; i++) {
            CHECK(seg[i].rows > 0, "empty segment");
            CHECK(seg[i].dst_offset == next, "gap in destination %d", d);
            int64_t g_src = ob[seg[i].peer] + seg[i].src_offset;
            CHECK(g_src == nb[d] + seg[i].dst_offset, "wrong source row for dest %d", d);
            CHECK(seg[i].src_offset + seg[i].rows <= ob[seg[i].peer + 1] - ob[seg[i].peer],
                  "segment past source part");
            next += seg[i].rows;
        }
        CHECK(next == nb[d + 1] - nb[d], "destination %d incomplete", d);
        recv_rows += next;
    }
    for (int s = 0; s < op; s++) {
        size_t n = partition_plan_send(ob, op, nb, np, s, seg);
        for (size_t i = 0; i < n; i++) {
            CHECK(ob[s] + seg[i].src_offset == nb[seg[i].peer] + seg[i].dst_offset,
                  "send plan rows of %d", s);
            send_rows += seg[i].rows;
        }
    }
    CHECK(recv_rows == ob[op] && send_rows == ob[op], "plan moves %lld/%lld of %lld rows",
          (long long)recv_rows, (long long)send_rows, (long long)ob[op]);
    free(seg);
}

/* Zero weights anywhere, no rows at all, more ranks than rows, and refusals that leave
 * the bounds as they were. */
static void test_zero_weights_and_few_rows(void)
{
    int64_t b[8];
    double lead_mid[5] = {0, 2, 0, 0, 1};
    CHECK(partition_block(9, 5, lead_mid, 0, b) == MAL_OK && b[1] == 0 && b[2] == 6 &&
          b[3] == 6 && b[4] == 6 && b[5] == 9, "leading and middle zero weights");
    CHECK(partition_block(9, 5, lead_mid, 1, b) == MAL_OK && b[2] - b[1] >= 1 &&
          b[5] - b[4] >= 1 && b[1] == 0 && b[3] == b[2], "min rows skip zero weights");
    double even[4] = {1, 1, 1, 1};
    CHECK(partition_block(0, 4, even, 0, b) == MAL_OK && b[0] == 0 && b[4] == 0,
          "no rows at all");
    CHECK(partition_block(0, 4, even, 1, b) == MAL_ERR_ARG, "min rows with no rows");
    double seven[7] = {1, 1, 1, 1, 1, 1, 1};
    CHECK(partition_block(3, 7, seven, 0, b) == MAL_OK, "7 ranks, 3 rows");
    check_layout(3, 7, seven, 0, b);
    CHECK(partition_block(3, 7, seven, 1, b) == MAL_ERR_ARG, "7 ranks, 3 rows, 1 each");
    int64_t kept[3] = {-7, -7, -7};
    double zeros[2] = {0, 0};
    CHECK(partition_block(5, 2, zeros, 0, kept) == MAL_ERR_ARG && kept[0] == -7 &&
          kept[1] == -7 && kept[2] == -7, "a refusal writes no bound");
    CHECK(partition_block(5, 2, NULL, 0, kept) == MAL_ERR_ARG, "no weights");
    CHECK(partition_block(5, 2, even, -1, kept) == MAL_ERR_ARG, "negative min rows");
    int64_t x[3] = {0, 1, 2}, y[3] = {0, 1, 2}, z[3] = {0, 2, 2};
    CHECK(partition_same(x, y, 2) && !partition_same(x, z, 2), "same layouts");
    /* A plan from 2 parts to more parts than rows: empty parts receive nothing. */
    int64_t ob[3], nb[8];
    CHECK(partition_block(3, 2, even, 0, ob) == MAL_OK &&
          partition_block(3, 7, seven, 0, nb) == MAL_OK, "layouts for the plan");
    check_plan(ob, 2, nb, 7);
    check_plan(nb, 7, ob, 2);
}

static void test_plans(void)
{
    int64_t ob[33], nb[33];
    double w[32];
    for (int t = 0; t < 3000; t++) {
        int op = 1 + (int)(rng() % 32), np = 1 + (int)(rng() % 32);
        int64_t total = (int64_t)(rng() % 5000);
        for (int r = 0; r < 32; r++)
            w[r] = (double)(rng() % 3);
        w[0] = 1;
        partition_block(total, op, w, 0, ob);
        for (int r = 0; r < 32; r++)
            w[r] = (double)(rng() % 5);
        w[np - 1] = 2;
        partition_block(total, np, w, 0, nb);
        check_plan(ob, op, nb, np);
    }
}

/* Row counts past 2^31 (and 2^40): the plan arithmetic is 64-bit throughout. */
static void test_large_plans(void)
{
    int64_t total = (INT64_C(1) << 40) + 12345;
    int64_t ob[5], nb[5];
    double even[4] = {1, 1, 1, 1}, skew[4] = {0, 1, 7, 0.5};
    CHECK(partition_block(total, 4, even, 0, ob) == MAL_OK, "large even");
    CHECK(partition_block(total, 4, skew, 0, nb) == MAL_OK, "large skew");
    check_layout(total, 4, skew, 0, nb);
    check_plan(ob, 4, nb, 4);
    partition_segment_t seg[4];
    size_t n = partition_plan_recv(ob, 4, nb, 4, 2, seg);
    CHECK(n >= 2 && seg[n - 1].rows > (INT64_C(1) << 31), "segments past 2^31 rows");
    CHECK(partition_owner(ob, 4, total - 1) == 3, "owner of the last row");
    int64_t with_empty[5] = {0, 0, INT64_C(3) << 31, INT64_C(3) << 31, INT64_C(1) << 33};
    CHECK(partition_owner(with_empty, 4, 0) == 1, "owner skips an empty first part");
    CHECK(partition_owner(with_empty, 4, INT64_C(3) << 31) == 3, "owner skips empty part");
}

/* Flows count rows that change owner; push shares stay within the segment and split
 * the copy work evenly in the cases where the answer is known. */
static void test_flows_and_push(void)
{
    int64_t ob[4] = {0, 10, 20, 30}, nb[4] = {0, 4, 20, 30}, in[3], out[3];
    partition_flows(ob, nb, 3, in, out);
    CHECK(in[0] == 0 && out[0] == 6 && in[1] == 6 && out[1] == 0 && in[2] == 0 && out[2] == 0,
          "flows of a shift");
    int64_t disjoint_old[3] = {0, 10, 10}, disjoint_new[3] = {0, 0, 10};
    partition_flows(disjoint_old, disjoint_new, 2, in, out);
    CHECK(in[1] == 10 && out[0] == 10 && in[0] == 0 && out[1] == 0, "flows all-to-one");
    CHECK(partition_push_rows(100, 100, 100) == 50, "one pair shares evenly");
    /* one-to-all at 4 ranks: the source sends 3 segments of 25; each of its receivers
     * pulls 3/4 and the source pushes 1/4, so all four copy 18.75 rows. */
    CHECK(partition_push_rows(25, 25, 75) == 6, "one-to-all share");
    CHECK(partition_push_rows(25, 75, 25) == 19, "all-to-one share");
    CHECK(partition_push_rows(0, 5, 5) == 0 && partition_push_rows(7, 0, 0) == 0, "empty");
    for (int t = 0; t < 10000; t++) {
        int64_t rows = (int64_t)(rng() % 1000), a = (int64_t)(rng() % 5000),
                b = (int64_t)(rng() % 5000);
        int64_t push = partition_push_rows(rows, a, b);
        CHECK(push >= 0 && push <= rows, "push %lld of %lld", (long long)push, (long long)rows);
    }
    int64_t big = INT64_C(1) << 40;
    CHECK(partition_push_rows(big, big, big) == big / 2, "push past 2^31 rows");
}

/* ---- nnz-weighted partition ---------------------------------------------------------- */

/* A random row pointer: empty rows, short rows, and with `heavy` one row holding most
 * of the nonzeros. */
static int64_t *random_prefix(int64_t nrows, int heavy, int64_t *max_row)
{
    int64_t *prefix = malloc(((size_t)nrows + 1) * sizeof *prefix);
    int64_t big = heavy ? (int64_t)(rng() % (uint64_t)nrows) : -1;
    *max_row = 0;
    prefix[0] = 0;
    for (int64_t i = 0; i < nrows; i++) {
        int64_t len = rng() % 3 == 0 ? 0 : (int64_t)(rng() % 9);
        if (i == big)
            len = 50 * nrows;
        *max_row = len > *max_row ? len : *max_row;
        prefix[i + 1] = prefix[i] + len;
    }
    return prefix;
}

/* Every rank gets its weight's share of the nonzeros to within one row (plus the
 * rounding of the targets), bounds are a layout, nnz bounds are the prefix at them. */
static void check_nnz_layout(const int64_t *prefix, int64_t nrows, int p, const double *w,
                             const int64_t *rows, const int64_t *nnz, int64_t max_row)
{
    int64_t total = prefix[nrows];
    double wsum = 0;
    for (int r = 0; r < p; r++)
        wsum += w[r];
    CHECK(rows[0] == 0 && rows[p] == nrows, "row ends %lld..%lld of %lld", (long long)rows[0],
          (long long)rows[p], (long long)nrows);
    for (int r = 0; r < p; r++) {
        CHECK(rows[r] <= rows[r + 1], "part %d: rows %lld > %lld", r, (long long)rows[r],
              (long long)rows[r + 1]);
        CHECK(nnz[r] == prefix[rows[r]], "part %d: nnz bound %lld, prefix %lld", r,
              (long long)nnz[r], (long long)prefix[rows[r]]);
        double ideal = (double)total * w[r] / wsum, got = (double)(nnz[r + 1] - nnz[r]);
        CHECK(fabs(got - ideal) <= (double)max_row + 1.0, "part %d: %g nnz, ideal %g, max row "
              "%lld", r, got, ideal, (long long)max_row);
        if (w[r] == 0.0 && total > 0)
            CHECK(rows[r] == rows[r + 1], "part %d has weight 0 but %lld rows", r,
                  (long long)(rows[r + 1] - rows[r]));
    }
}

/* What a distributed caller does: each target is resolved by the old part that holds it,
 * from that part's rebased slice alone. It must give the single-process answer. */
static void distributed_nnz(const int64_t *prefix, int64_t nrows, const int64_t *ob, int op,
                            int p, const double *w, int64_t *rows, int64_t *nnz)
{
    int64_t total = prefix[nrows];
    int64_t *oz = malloc(((size_t)op + 1) * sizeof *oz);
    for (int q = 0; q <= op; q++)
        oz[q] = prefix[ob[q]];
    partition_block(total, p, w, 0, nnz);
    for (int k = 0, q = 0; k <= p; k++) {
        int64_t t = nnz[k];
        if (partition_nnz_trivial(t, total, nrows, &rows[k], &nnz[k]))
            continue;
        q = partition_nnz_owner(oz, op, t, q); /* the engine's walk over the parts */
        int64_t len = ob[q + 1] - ob[q];
        int64_t *slice = malloc(((size_t)len + 1) * sizeof *slice);
        for (int64_t i = 0; i <= len; i++)
            slice[i] = prefix[ob[q] + i] - oz[q];
        CHECK(oz[q] < t && t <= oz[q + 1], "owner %d of target %lld holds %lld..%lld", q,
              (long long)t, (long long)oz[q], (long long)oz[q + 1]);
        partition_nnz_resolve(slice, len, ob[q], oz[q], t, &rows[k], &nnz[k]);
        free(slice);
    }
    free(oz);
}

static void test_nnz_partition(void)
{
    for (int t = 0; t < 3000; t++) {
        int64_t nrows = 1 + (int64_t)(rng() % 300), max_row;
        int p = 1 + (int)(rng() % 8), op = 1 + (int)(rng() % 8);
        int64_t *prefix = random_prefix(nrows, t % 4 == 0, &max_row);
        double w[8];
        for (int r = 0; r < p; r++)
            w[r] = rng() % 4 == 0 ? 0.0 : (double)(1 + rng() % 9);
        w[rng() % (uint64_t)p] = 1.0 + (double)(rng() % 3);
        int64_t rows[9], nnz[9], drows[9], dnnz[9], ob[9];
        CHECK(partition_nnz(prefix, nrows, p, w, rows, nnz) == MAL_OK, "refused");
        if (prefix[nrows] > 0)
            check_nnz_layout(prefix, nrows, p, w, rows, nnz, max_row);
        double ow[8];
        for (int r = 0; r < op; r++)
            ow[r] = (double)(rng() % 5);
        ow[0] = 1.0;
        partition_block(nrows, op, ow, 0, ob);
        if (prefix[nrows] > 0) {
            distributed_nnz(prefix, nrows, ob, op, p, w, drows, dnnz);
            for (int k = 0; k <= p; k++)
                CHECK(drows[k] == rows[k] && dnnz[k] == nnz[k], "bound %d: distributed %lld/%lld,"
                      " single %lld/%lld", k, (long long)drows[k], (long long)dnnz[k],
                      (long long)rows[k], (long long)nnz[k]);
        }
        free(prefix);
    }
}

static void test_nnz_edge_cases(void)
{
    /* Twice the weight, twice the nonzeros: 1000 rows of 3. */
    int64_t prefix[1001];
    for (int i = 0; i <= 1000; i++)
        prefix[i] = 3 * i;
    double w[3] = {1.0, 2.0, 1.0};
    int64_t rows[4], nnz[4];
    partition_nnz(prefix, 1000, 3, w, rows, nnz);
    CHECK(nnz[1] == 750 && nnz[2] == 2250 && rows[1] == 250 && rows[2] == 750,
          "1:2:1 split at rows %lld/%lld", (long long)rows[1], (long long)rows[2]);
    /* No nonzero: rows are split by weight, nnz bounds all 0. */
    int64_t empty[11] = {0};
    partition_nnz(empty, 10, 3, w, rows, nnz);
    CHECK(rows[1] == 3 && rows[2] == 8 && rows[3] == 10 && nnz[3] == 0, "empty matrix rows %lld/%lld",
          (long long)rows[1], (long long)rows[2]);
    /* Empty rows at both ends go to the nearest positive weight; zero weights at the
     * ends get nothing. */
    int64_t ends[7] = {0, 0, 0, 4, 8, 8, 8};
    double z[4] = {0.0, 1.0, 1.0, 0.0};
    int64_t r5[5], z5[5];
    partition_nnz(ends, 6, 4, z, r5, z5);
    CHECK(r5[0] == 0 && r5[1] == 0 && r5[3] == 6 && r5[4] == 6 && z5[2] == 4,
          "zero-weight ends: %lld %lld %lld %lld %lld", (long long)r5[0], (long long)r5[1],
          (long long)r5[2], (long long)r5[3], (long long)r5[4]);
    /* One row with every nonzero: it goes whole to one part. */
    int64_t one[5] = {0, 0, 100, 100, 100};
    double even[3] = {1.0, 1.0, 1.0};
    partition_nnz(one, 4, 3, even, rows, nnz);
    int holders = 0;
    for (int r = 0; r < 3; r++)
        holders += nnz[r + 1] - nnz[r] == 100;
    CHECK(holders == 1, "the heavy row is split over %d parts", holders);
    CHECK(partition_nnz(one, 4, 3, (double[]){-1.0, 1.0, 1.0}, rows, nnz) ==
              MAL_ERR_ARG, "negative weight accepted");
    CHECK(partition_nnz(one, 4, 3, (double[]){0.0, 0.0, 0.0}, rows, nnz) == MAL_ERR_ARG,
          "all-zero weights accepted");
}

/* Every nonzero in one row, at either end or inside, with zero weights and more ranks
 * than rows: the row goes whole to one positive-weight part, the others get no nonzero. */
static void test_nnz_one_row(void)
{
    int64_t first[4] = {0, 60, 60, 60}, last[4] = {0, 0, 0, 60}, mid[4] = {0, 0, 60, 60};
    const int64_t *prefixes[3] = {first, last, mid};
    double w[6] = {0.0, 1.0, 3.0, 0.0, 1.0, 0.0};
    for (int k = 0; k < 3; k++) {
        int64_t rows[7], nnz[7];
        CHECK(partition_nnz(prefixes[k], 3, 6, w, rows, nnz) == MAL_OK, "case %d", k);
        check_nnz_layout(prefixes[k], 3, 6, w, rows, nnz, 60);
        int holders = 0;
        for (int r = 0; r < 6; r++) {
            int64_t got = nnz[r + 1] - nnz[r];
            CHECK(got == 0 || got == 60, "case %d: part %d holds %lld of the row", k, r,
                  (long long)got);
            CHECK(got == 0 || w[r] > 0.0, "case %d: zero-weight part %d holds it", k, r);
            holders += got == 60;
        }
        CHECK(holders == 1, "case %d: %d parts hold the row", k, holders);
    }
    bool trivial;
    int64_t row = -1, nnz = -1;
    trivial = partition_nnz_trivial(0, 60, 3, &row, &nnz);
    CHECK(trivial && row == 0 && nnz == 0, "target 0 is row 0");
    trivial = partition_nnz_trivial(60, 60, 3, &row, &nnz);
    CHECK(trivial && row == 3 && nnz == 60, "target total is the last boundary");
    CHECK(!partition_nnz_trivial(30, 60, 3, &row, &nnz), "an inner target needs the data");
}

int main(void)
{
    test_flows_and_push();
    test_edge_cases();
    test_zero_weights_and_few_rows();
    test_random_weights();
    test_plans();
    test_large_plans();
    test_nnz_partition();
    test_nnz_edge_cases();
    test_nnz_one_row();
    if (failures) {
        printf("test_partition: %d checks failed\n", failures);
        return 1;
    }
    printf("test_partition: all checks passed\n");
    return 0;
}
