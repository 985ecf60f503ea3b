/* CSR matrices under random rebalance sequences: after every rebalance, with every
 * method in turn, each process checks its rows bit-exactly (row lengths, column indices,
 * values of the current version), that an aligned vector holds exactly the matrix's
 * rows, that an independent dense structure still splits rows by weight, and that the
 * nonzeros follow the weights to within one row. Then bad input: every error names the
 * problem on the rank that has it, and leaves the matrix as it was.
 *
 * Usage: test_csr [heavy] [shmem]
 *   heavy: one row holds most of the nonzeros
 *   shmem: mal_init with the SHMEM transport (run under oshrun): the data live on the
 *          symmetric heap, the steps take shmem, alltoallv and p2p in turn, and the
 *          transport's scope is checked (rma cannot reach the heap, no expand or
 *          shrink: MAL_ERR_UNSUPPORTED, data intact). */
#include "mal.h"
#include "mpitest.h"
#include "sparse_rows.h"

#include <math.h>
#include <string.h>

#define DENSE_ROWS 777
#define STEPS 40
#define MAX_RANKS 64

static int rank, size, heavy, shmem;

typedef struct {
    mal_csr_t *a;
    mal_array_t *x;     /* aligned: two doubles per row of A */
    mal_array_t *d;     /* independent block structure        */
} data_t;

static double x_value(int64_t row, int c, int64_t version)
{
    return (double)(row * 2 + c) + 0.25 * (double)(version % 4);
}

static void write_version(const data_t *s, int64_t version)
{
    sp_write_values(s->a, version);
    double *x = mal_local_data(s->x);
    for (int64_t i = 0; i < mal_local_rows(s->x); i++)
        for (int c = 0; c < 2; c++)
            x[2 * i + c] = x_value(mal_first_row(s->x) + i, c, version);
    int64_t *d = mal_local_data(s->d);
    for (int64_t i = 0; i < mal_local_rows(s->d); i++)
        d[i] = (mal_first_row(s->d) + i) * 13 + version;
}

static void check_version(const data_t *s, int64_t version, const char *when)
{
    int64_t bad = sp_count_bad(s->a, heavy, version);
    CHECK(bad == 0, "%s: %lld wrong matrix rows/entries", when, (long long)bad);
    CHECK(mal_first_row(s->x) == mal_csr_first_row(s->a) &&
              mal_local_rows(s->x) == mal_csr_local_rows(s->a),
          "%s: aligned x holds rows %lld+%lld, the matrix %lld+%lld", when,
          (long long)mal_first_row(s->x), (long long)mal_local_rows(s->x),
          (long long)mal_csr_first_row(s->a), (long long)mal_csr_local_rows(s->a));
    const double *x = mal_local_data(s->x);
    for (int64_t i = 0, xbad = 0; i < mal_local_rows(s->x) && !xbad; i++)
        for (int c = 0; c < 2; c++)
            if (x[2 * i + c] != x_value(mal_first_row(s->x) + i, c, version))
                CHECK(++xbad == 0, "%s: x row %lld wrong", when,
                      (long long)(mal_first_row(s->x) + i));
    const int64_t *d = mal_local_data(s->d);
    for (int64_t i = 0; i < mal_local_rows(s->d); i++)
        if (d[i] != (mal_first_row(s->d) + i) * 13 + version) {
            CHECK(0, "%s: dense row %lld wrong", when, (long long)(mal_first_row(s->d) + i));
            break;
        }
    int64_t sums[2] = {mal_csr_local_rows(s->a), mal_csr_local_nnz(s->a)};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_INT64_T, MPI_SUM, mal_comm());
    CHECK(sums[0] == SP_ROWS && sums[1] == sp_total_nnz(heavy) &&
              mal_csr_global_nnz(s->a) == sums[1],
          "%s: parts cover %lld rows / %lld nnz", when, (long long)sums[0], (long long)sums[1]);
}

/* Nonzeros in proportion to the weights, to within one row (and the target rounding);
 * the independent structure by rows, exactly as the dense rule says. */
static void check_balance(const data_t *s, const double *w, const char *when)
{
    double wsum = 0;
    for (int r = 0; r < size; r++)
        wsum += w[r];
    double ideal = (double)sp_total_nnz(heavy) * w[rank] / wsum;
    double got = (double)mal_csr_local_nnz(s->a);
    CHECK(fabs(got - ideal) <= (double)sp_max_row(heavy) + 1.0,
          "%s: %g nonzeros for weight %g, ideal %g", when, got, w[rank], ideal);
    if (w[rank] == 0.0)
        CHECK(mal_csr_local_rows(s->a) == 0, "%s: weight 0 but %lld rows", when,
              (long long)mal_csr_local_rows(s->a));
    double drows = (double)mal_local_rows(s->d), dideal = DENSE_ROWS * w[rank] / wsum;
    CHECK(fabs(drows - dideal) <= 1.0, "%s: dense structure has %g rows, ideal %g", when,
          drows, dideal);
}

/* The initial blocks: uneven, rank r's share grows with r. */
static void initial_rows(int64_t *first, int64_t *count)
{
    int64_t tri = (int64_t)size * (size + 1) / 2;
    int64_t lo = SP_ROWS * ((int64_t)rank * (rank + 1) / 2) / tri;
    int64_t hi = SP_ROWS * ((int64_t)(rank + 1) * (rank + 2) / 2) / tri;
    *first = lo;
    *count = hi - lo;
}

static mal_status_t set_generated(mal_csr_t *a, int64_t first, int64_t count, int64_t version)
{
    int64_t *rp;
    mal_colind_t *c;
    double *v;
    int64_t nnz = sp_block(first, count, heavy, version, &rp, &c, &v);
    mal_status_t st = mal_csr_set_rows(a, count, nnz, rp, c, v);
    free(rp);
    free(c);
    free(v);
    return st;
}

static void random_weights(uint64_t *seed, double *w)
{
    int positive = 0;
    for (int r = 0; r < size; r++) {
        uint64_t x = mpitest_rand(seed);
        w[r] = x % 5 == 0 ? 0.0 : (double)(1 + x % 7);
        positive += w[r] > 0;
    }
    if (!positive)
        w[mpitest_rand(seed) % (uint64_t)size] = 1.0;
}

static void rebalance_sequence(data_t *s)
{
    static const mal_redist_t mpi[] = {MAL_REDIST_RMA, MAL_REDIST_RMA_GET,
                                       MAL_REDIST_ALLTOALLV, MAL_REDIST_P2P};
    static const mal_redist_t sym[] = {MAL_REDIST_SHMEM, MAL_REDIST_ALLTOALLV,
                                       MAL_REDIST_SHMEM, MAL_REDIST_P2P};
    const mal_redist_t *methods = shmem ? sym : mpi;
    uint64_t seed = 12345;
    double w[MAX_RANKS];
    char when[96];
    for (int64_t step = 1; step <= STEPS; step++) {
        mal_redist_t m = methods[step % 4];
        random_weights(&seed, w);
        write_version(s, step);
        mal_set_redist(m);
        mal_status_t st = mal_rebalance(w);
        snprintf(when, sizeof when, "step %lld (%s)", (long long)step, mal_redist_name(m));
        CHECK(st == MAL_OK, "%s: mal_rebalance: %s", when, mal_error_message());
        check_version(s, step, when);
        check_balance(s, w, when);
    }
}

/* The SHMEM transport's scope: every refusal comes before anything moves. */
static void shmem_scope(data_t *s, int64_t version)
{
    double w[MAX_RANKS];
    for (int r = 0; r < size; r++)
        w[r] = 1.0 + r;
    CHECK(mal_set_redist(MAL_REDIST_RMA) == MAL_OK, "set rma");
    mal_status_t st = mal_rebalance(w);
    CHECK(st == MAL_ERR_UNSUPPORTED && strstr(mal_error_message(), "symmetric heap"),
          "rma on the symmetric heap: status %d, '%s'", (int)st, mal_error_message());
    check_version(s, version, "after the refused rma rebalance");
    CHECK(mal_set_redist(MAL_REDIST_SHMEM) == MAL_OK, "set shmem");
    st = mal_expand(1, MAL_SPAWN_DEFAULT, NULL);
    CHECK(st == MAL_ERR_UNSUPPORTED && strstr(mal_error_message(), "fixes the set of PEs"),
          "expand under SHMEM: status %d, '%s'", (int)st, mal_error_message());
    if (size > 1) {
        st = mal_shrink(1, NULL, NULL);
        CHECK(st == MAL_ERR_UNSUPPORTED, "shrink under SHMEM: status %d", (int)st);
    }
    int p = 0;
    MPI_Comm_size(mal_comm(), &p);
    CHECK(p == size, "the process set changed to %d", p);
    check_version(s, version, "after the refused expand and shrink");
    /* 2 TiB of doubles fit no symmetric heap (the launcher's is 2 GiB); the test must not
     * depend on SMA_SYMMETRIC_SIZE being small. */
    mal_array_t *big = NULL;
    int windows = mal_buffer_count();
    st = mal_alloc_window("big", MPI_DOUBLE, INT64_C(1) << 38, 1, MAL_BLOCK, &big);
    CHECK(st == MAL_ERR_NOMEM && strstr(mal_error_message(), "SMA_SYMMETRIC_SIZE"),
          "a structure past the symmetric heap: status %d, '%s'", (int)st,
          mal_error_message());
    CHECK(big == NULL && mal_buffer_count() == windows, "the failed allocation left %d "
          "blocks (had %d)", mal_buffer_count(), windows);
    check_version(s, version, "after the refused allocation");
    CHECK(mal_rebalance(w) == MAL_OK, "rebalance after the refused allocation: %s",
          mal_error_message());
    check_version(s, version, "rebalanced after the refused allocation");
    /* Memory follows each rank's method: ranks that disagree on shmem are refused
     * before any of them allocates. */
    if (size > 1) {
        mal_set_redist(rank == 0 ? MAL_REDIST_ALLTOALLV : MAL_REDIST_SHMEM);
        st = mal_alloc_window("split", MPI_DOUBLE, 100, 1, MAL_BLOCK, &big);
        CHECK(st == MAL_ERR_MISMATCH && big == NULL && mal_buffer_count() == windows,
              "allocation with shmem on some ranks only: status %d, %d blocks", (int)st,
              mal_buffer_count());
        CHECK(mal_set_redist(MAL_REDIST_SHMEM) == MAL_OK, "set shmem");
    }
}

/* One rank gives bad input: it gets MAL_ERR_ARG naming the problem, the others
 * MAL_ERR_REMOTE, and the matrix is unchanged. */
static void expect_local_error(mal_status_t st, int bad_rank, const char *needle,
                               const char *what)
{
    mal_status_t want = rank == bad_rank ? MAL_ERR_ARG : MAL_ERR_REMOTE;
    CHECK(st == want, "%s: status %d, expected %d", what, (int)st, (int)want);
    if (rank == bad_rank)
        CHECK(strstr(mal_error_message(), needle) != NULL, "%s: message '%s' lacks '%s'",
              what, mal_error_message(), needle);
}

static void bad_set_rows(data_t *s, int64_t version)
{
    int64_t first = mal_csr_first_row(s->a), count = mal_csr_local_rows(s->a);
    int64_t *rp;
    mal_colind_t *c;
    double *v;
    int64_t nnz = sp_block(first, count, heavy, version + 1, &rp, &c, &v);
    int bad = size - 1; /* the last rank always holds rows here: weights below */
    const char *cases[] = {"rowptr decreases", "spans", "outside the"};
    for (int k = 0; k < 3; k++) {
        int64_t *rp2 = malloc(((size_t)count + 1) * sizeof *rp2);
        memcpy(rp2, rp, ((size_t)count + 1) * sizeof *rp2);
        mal_colind_t saved = nnz > 0 ? c[nnz - 1] : 0;
        int64_t n = nnz;
        if (rank == bad && k == 0 && count >= 2)
            rp2[1] = rp2[2] + 1;
        if (rank == bad && k == 1)
            n = nnz + 1;
        if (rank == bad && k == 2 && nnz > 0)
            c[nnz - 1] = SP_COLS;
        mal_status_t st = mal_csr_set_rows(s->a, count, n, rp2, c, v);
        expect_local_error(st, bad, cases[k], cases[k]);
        if (nnz > 0)
            c[nnz - 1] = saved;
        free(rp2);
        check_version(s, version, cases[k]);
    }
    /* Rows that do not add up are every rank's error. */
    int64_t none = 0;
    mal_status_t st = rank == 0 ? mal_csr_set_rows(s->a, 0, 0, &none, NULL, NULL)
                                : mal_csr_set_rows(s->a, count, nnz, rp, c, v);
    CHECK(st == MAL_ERR_ARG && strstr(mal_error_message(), "rows in all"),
          "row sum: status %d (%s)", (int)st, mal_error_message());
    /* A new layout while x is aligned to the matrix. */
    int64_t f2, n2;
    initial_rows(&f2, &n2);
    if (size > 1) {
        st = set_generated(s->a, f2, n2, version + 1);
        CHECK(st == MAL_ERR_ARG && strstr(mal_error_message(), "aligned") != NULL,
              "relayout with followers: %d (%s)", (int)st, mal_error_message());
    }
    check_version(s, version, "after bad set_rows");
    /* The same layout with new values is fine. */
    st = mal_csr_set_rows(s->a, count, nnz, rp, c, v);
    CHECK(st == MAL_OK, "set_rows on the current layout: %s", mal_error_message());
    free(rp);
    free(c);
    free(v);
}

static void bad_registrations(data_t *s)
{
    mal_csr_t *m = NULL;
    CHECK(mal_alloc_csr("this-name-is-far-too-long-for-a-matrix-because-of-suffixes", 10, 10,
                        MPI_DOUBLE, &m) == MAL_ERR_ARG, "long name accepted");
    CHECK(mal_alloc_csr("B", 10, (int64_t)MAL_COLIND_MAX + 1, MPI_DOUBLE, &m) == MAL_ERR_ARG,
          "2^31 columns accepted with 32-bit indices");
    CHECK(mal_alloc_csr("B", 0, 10, MPI_DOUBLE, &m) == MAL_ERR_ARG, "0 rows accepted");
    CHECK(mal_alloc_csr("A", 10, 10, MPI_DOUBLE, &m) == MAL_ERR_EXISTS, "duplicate matrix");
    mal_array_t *arr = NULL;
    CHECK(mal_alloc_window("A:values", MPI_DOUBLE, 5, 1, MAL_BLOCK, &arr) == MAL_ERR_EXISTS,
          "a part's name was taken by a dense structure");
    CHECK(mal_find_array("A:rowptr") == NULL, "a matrix part is visible as a structure");
    CHECK(mal_find_csr("A") == s->a, "mal_find_csr");
    CHECK(mal_free_csr(s->a) == MAL_ERR_ARG && strstr(mal_error_message(), "aligned"),
          "freeing a matrix with an aligned structure: %s", mal_error_message());
    CHECK(mal_alloc_array_aligned("y", MPI_DOUBLE, 1, NULL, &arr) == MAL_ERR_ARG,
          "aligned to NULL accepted");
    CHECK(mal_csr_set_rows(NULL, 0, 0, NULL, NULL, NULL) == MAL_ERR_ARG, "NULL matrix");
}

/* A matrix without nonzeros is split by rows and stays consistent. */
static void empty_matrix(void)
{
    mal_csr_t *e = NULL;
    CHECK(mal_alloc_csr("E", 50, 50, MPI_FLOAT, &e) == MAL_OK, "alloc E: %s",
          mal_error_message());
    double w[MAX_RANKS];
    for (int r = 0; r < size; r++)
        w[r] = r % 4 == 2 && r != size - 1 ? 0.0 : 1.0 + r % 3;
    CHECK(mal_rebalance(w) == MAL_OK, "rebalance with an empty matrix: %s", mal_error_message());
    const int64_t *rp = mal_csr_rowptr(e);
    int64_t rows = mal_csr_local_rows(e), sum = rows;
    for (int64_t i = 0; i <= rows; i++)
        CHECK(rp[i] == 0, "empty matrix row pointer [%lld] = %lld", (long long)i,
              (long long)rp[i]);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT64_T, MPI_SUM, mal_comm());
    CHECK(sum == 50 && mal_csr_local_nnz(e) == 0, "empty matrix covers %lld rows",
          (long long)sum);
    CHECK(mal_free_csr(e) == MAL_OK, "free E");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        heavy |= strcmp(argv[i], "heavy") == 0;
        shmem |= strcmp(argv[i], "shmem") == 0;
    }
    if (size > MAX_RANKS) {
        if (rank == 0)
            printf("test_csr: FAIL (at most %d ranks)\n", MAX_RANKS);
        MPI_Finalize();
        return 1;
    }
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.log_errors = false;
    if (shmem)
        cfg.redist = MAL_REDIST_SHMEM;
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "mal_init: %s", mal_error_message());
    data_t s;
    CHECK(mal_alloc_csr("A", SP_ROWS, SP_COLS, MPI_DOUBLE, &s.a) == MAL_OK, "alloc A: %s",
          mal_error_message());
    int64_t first, count;
    initial_rows(&first, &count);
    CHECK(set_generated(s.a, first, count, 0) == MAL_OK, "set_rows: %s", mal_error_message());
    CHECK(mal_csr_first_row(s.a) == first && mal_csr_local_rows(s.a) == count,
          "set_rows layout %lld+%lld", (long long)mal_csr_first_row(s.a),
          (long long)mal_csr_local_rows(s.a));
    CHECK(mal_alloc_array_aligned("x", MPI_DOUBLE, 2, s.a, &s.x) == MAL_OK, "alloc x: %s",
          mal_error_message());
    CHECK(mal_alloc_window("d", MPI_INT64_T, DENSE_ROWS, 1, MAL_BLOCK, &s.d) == MAL_OK,
          "alloc d");
    write_version(&s, 0);
    check_version(&s, 0, "initial");
    rebalance_sequence(&s);
    if (shmem)
        shmem_scope(&s, STEPS);
    double w[MAX_RANKS];
    for (int r = 0; r < size; r++)
        w[r] = 1.0 + (r == 0 && rank == 0); /* differs on rank 0 */
    if (size > 1) {
        mal_status_t st = mal_rebalance(w);
        CHECK(st == MAL_ERR_MISMATCH, "weights differing between ranks: status %d", (int)st);
        check_version(&s, STEPS, "after mismatched weights");
    }
    w[0] = 1.0;
    CHECK(mal_rebalance(w) == MAL_OK, "even rebalance");
    write_version(&s, STEPS + 1);
    bad_set_rows(&s, STEPS + 1);
    CHECK(sp_count_bad(s.a, heavy, STEPS + 2) == 0, "after set_rows: wrong matrix data");
    bad_registrations(&s);
    empty_matrix();
    /* Once x is gone the layout may change, and the matrix can be freed. */
    CHECK(mal_free_array(s.x) == MAL_OK, "free x");
    CHECK(set_generated(s.a, first, count, 7) == MAL_OK, "set_rows, new layout: %s",
          mal_error_message());
    CHECK(mal_csr_first_row(s.a) == first && sp_count_bad(s.a, heavy, 7) == 0,
          "new layout not applied");
    CHECK(mal_free_csr(s.a) == MAL_OK, "free A");
    CHECK(mal_buffer_count() == 2, "%d windows left, expected d's 2", mal_buffer_count());
    mal_free_array(s.d);
    mal_finalize();
    char summary[160];
    snprintf(summary, sizeof summary, "%d ranks, %d rebalances%s%s", size, STEPS,
             heavy ? ", one heavy row" : "",
             shmem ? ", symmetric heap (shmem, alltoallv, p2p), scope refused" : "");
    int code = mpitest_verdict("test_csr", summary);
    MPI_Finalize();
    return code;
}
