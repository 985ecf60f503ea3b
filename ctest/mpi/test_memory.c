/* Where a structure's buffers live and how they live on: the memory kind libmal picks
 * (direct memory on one node unless MAL_MEMORY=window), mal_alloc_array_weighted (the
 * initial split follows the weights, bad or differing weights refused on every rank),
 * and one structure through many rebalances that grow and shrink its parts, checked
 * bit-exactly after each, with the buffer count unchanged at the end.
 *
 * Usage: test_memory direct|window (the kind expected on this launch). */
#include "mal.h"
#include "mpitest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 100003
#define REBALANCES 200

static int rank, size;

static double cell(int64_t g, int64_t step)
{
    return (double)(mpitest_mix((uint64_t)g * 2654435761u + (uint64_t)step) >> 12);
}

static void fill(mal_array_t *a, int64_t step)
{
    double *d = mal_local_data(a);
    for (int64_t i = 0; i < mal_local_rows(a); i++)
        d[i] = cell(mal_first_row(a) + i, step);
}

static int64_t count_bad(mal_array_t *a, int64_t step)
{
    const double *d = mal_local_data(a);
    int64_t bad = 0;
    for (int64_t i = 0; i < mal_local_rows(a); i++)
        bad += d[i] != cell(mal_first_row(a) + i, step);
    return bad;
}

/* Parts in rank order, covering every row, each within one row of its weight's share. */
static void check_split(mal_array_t *a, const double *w, const char *when)
{
    double total = 0;
    for (int r = 0; r < size; r++)
        total += w[r];
    int64_t first = mal_first_row(a), rows = mal_local_rows(a), next = 0, sum = 0;
    MPI_Exscan(&rows, &next, 1, MPI_INT64_T, MPI_SUM, mal_comm());
    MPI_Allreduce(&rows, &sum, 1, MPI_INT64_T, MPI_SUM, mal_comm());
    CHECK(first == (rank == 0 ? 0 : next), "%s: rank %d starts at row %lld, not %lld", when,
          rank, (long long)first, (long long)next);
    CHECK(sum == ROWS, "%s: parts cover %lld rows", when, (long long)sum);
    double ideal = (double)ROWS * w[rank] / total;
    CHECK(fabs((double)rows - ideal) <= 1.0 || (w[rank] == 0 && rows == 0),
          "%s: rank %d holds %lld rows for a share of %g", when, rank, (long long)rows, ideal);
}

static void test_kind(const char *expected)
{
    mal_array_t *a;
    mal_status_t st = mal_alloc_window("kind", MPI_DOUBLE, ROWS, 1, MAL_BLOCK, &a);
    CHECK(st == MAL_OK, "mal_alloc_window: %s", mal_error_message());
    if (st != MAL_OK)
        return;
    CHECK(strcmp(mal_memory_name(a), expected) == 0, "memory is %s, expected %s",
          mal_memory_name(a), expected);
    CHECK(strcmp(mal_memory_name(NULL), "none") == 0, "mal_memory_name(NULL) is %s",
          mal_memory_name(NULL));
    mal_free_array(a);
}

static void test_weighted_errors(void)
{
    double *w = malloc((size_t)size * sizeof *w);
    mal_array_t *a = NULL;
    for (int r = 0; r < size; r++)
        w[r] = 1.0;
    /* NULL weights on the last rank only: every rank fails, that one with ERR_ARG. */
    mal_status_t st = mal_alloc_array_weighted("w", MPI_DOUBLE, ROWS, 1,
                                                rank == size - 1 ? NULL : w, &a);
    CHECK(st == (rank == size - 1 ? MAL_ERR_ARG : size > 1 ? MAL_ERR_REMOTE : MAL_ERR_ARG),
          "NULL weights on rank %d: status %d", size - 1, (int)st);
    if (rank == size - 1)
        CHECK(strstr(mal_error_message(), "mal_alloc_array_weighted") &&
              strstr(mal_error_message(), "weights is NULL"), "message: %s",
              mal_error_message());
    w[0] = -1.0;
    st = mal_alloc_array_weighted("w", MPI_DOUBLE, ROWS, 1, w, &a);
    CHECK(st == MAL_ERR_ARG, "a negative weight: status %d", (int)st);
    CHECK(strstr(mal_error_message(), "mal_alloc_array_weighted: weights[0] is -1") != NULL,
          "message: %s", mal_error_message());
    w[0] = rank + 1.0; /* differs between ranks */
    st = mal_alloc_array_weighted("w", MPI_DOUBLE, ROWS, 1, w, &a);
    CHECK(size == 1 ? st == MAL_OK : st == MAL_ERR_MISMATCH, "weights differing between "
          "ranks: status %d", (int)st);
    if (st == MAL_OK)
        mal_free_array(a);
    CHECK(mal_find_array("w") == NULL, "a refused allocation left a structure");
    /* Messages name the call the user made, not the one it shares code with. */
    for (int r = 0; r < size; r++)
        w[r] = 1.0;
    st = mal_alloc_array_weighted("w", MPI_DOUBLE, 0, 1, w, &a);
    CHECK(st == MAL_ERR_ARG && strstr(mal_error_message(),
                                      "mal_alloc_array_weighted(\"w\"): global_rows is 0"),
          "zero rows: %d, message: %s", (int)st, mal_error_message());
    st = mal_alloc_array_weighted("w", MPI_DOUBLE, ROWS, 1, w, NULL);
    CHECK(st == MAL_ERR_ARG && strstr(mal_error_message(),
                                      "mal_alloc_array_weighted(\"w\"): array is NULL"),
          "NULL output: %d, message: %s", (int)st, mal_error_message());
    mal_csr_t *m = NULL;
    st = mal_alloc_csr("m", 16, 16, MPI_DOUBLE, &m);
    CHECK(st == MAL_OK, "mal_alloc_csr: %s", mal_error_message());
    if (st == MAL_OK) {
        st = mal_alloc_array_aligned("x", MPI_DOUBLE, 0, m, &a);
        CHECK(st == MAL_ERR_ARG && strstr(mal_error_message(),
                                          "mal_alloc_array_aligned(\"x\"): row_len is 0"),
              "aligned, zero row length: %d, message: %s", (int)st, mal_error_message());
        mal_free_csr(m);
    }
    free(w);
}

static void test_lifecycle(void)
{
    double *w = malloc((size_t)size * sizeof *w);
    for (int r = 0; r < size; r++)
        w[r] = (double)(r + 1) * (r + 1);
    int before = mal_buffer_count();
    mal_array_t *a;
    mal_status_t st = mal_alloc_array_weighted("life", MPI_DOUBLE, ROWS, 1, w, &a);
    CHECK(st == MAL_OK, "mal_alloc_array_weighted: %s", mal_error_message());
    if (st != MAL_OK) {
        free(w);
        return;
    }
    check_split(a, w, "weighted allocation");
    const double *d = mal_local_data(a);
    int64_t nonzero = 0;
    for (int64_t i = 0; i < mal_local_rows(a); i++)
        nonzero += d[i] != 0.0;
    CHECK(nonzero == 0, "%lld rows not zero-initialised", (long long)nonzero);
    uint64_t seed = 12345;
    int64_t bad = 0;
    for (int64_t step = 0; step < REBALANCES; step++) {
        fill(a, step);
        mpitest_weights(&seed, size, 5, 16, w); /* zeros included */
        st = mal_rebalance(w);
        CHECK(st == MAL_OK, "rebalance %lld: %s", (long long)step, mal_error_message());
        bad += count_bad(a, step);
        if (step % 50 == 0)
            check_split(a, w, "rebalance");
    }
    CHECK(bad == 0, "%lld rows wrong over %d rebalances", (long long)bad, REBALANCES);
    CHECK(mal_buffer_count() == before + 2, "%d buffers held, expected %d",
          mal_buffer_count(), before + 2);
    mal_free_array(a);
    CHECK(mal_buffer_count() == before, "%d buffers after the free, expected %d",
          mal_buffer_count(), before);
    free(w);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *expected = argc > 1 ? argv[1] : "direct";
    mal_status_t st = mal_init(MPI_COMM_WORLD, NULL);
    CHECK(st == MAL_OK, "mal_init: %s", mal_error_message());
    if (st == MAL_OK) {
        MPI_Comm_rank(mal_comm(), &rank);
        MPI_Comm_size(mal_comm(), &size);
        test_kind(size == 1 && strcmp(expected, "direct") == 0 ? "direct" : expected);
        test_weighted_errors();
        test_lifecycle();
        mal_finalize();
    }
    int rc = mpitest_verdict("test_memory", expected);
    MPI_Finalize();
    return rc;
}
