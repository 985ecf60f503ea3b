/* Bad input: every call returns a clear mal_ error whose message names the problem, and
 * changes nothing (layout, data, registry and window count stay as they were). */
#include "mal.h"
#include "mpitest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* The call returned `want` and the message mentions `needle`. */
#define EXPECT(call, want, needle)                                                    \
    do {                                                                              \
        mal_status_t got_ = (call);                                                   \
        CHECK(got_ == (want), "%s returned %d (%s), want %s", #call, (int)got_,       \
              mal_strerror(got_), #want);                                             \
        CHECK(strstr(mal_error_message(), (needle)) != NULL,                          \
              "%s: message \"%s\" does not name \"%s\"", #call, mal_error_message(),  \
              (needle));                                                              \
    } while (0)

static void test_before_init(void)
{
    mal_array_t *a = NULL;
    double w[1] = {1};
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_NOT_INITIALIZED,
           "mal_alloc_window");
    CHECK(a == NULL, "output written on failure");
    EXPECT(mal_rebalance(w), MAL_ERR_NOT_INITIALIZED, "mal_rebalance");
    EXPECT(mal_free_window(NULL), MAL_ERR_NOT_INITIALIZED, "mal_free_window");
    EXPECT(mal_finalize(), MAL_ERR_NOT_INITIALIZED, "mal_finalize");
    EXPECT(mal_set_redist(MAL_REDIST_RMA), MAL_ERR_NOT_INITIALIZED, "mal_set_redist");
    CHECK(mal_comm() == MPI_COMM_NULL && !mal_initialized(), "state before init");
    CHECK(mal_find_window("x") == NULL && mal_window_count() == 0, "registry before init");
}

/* The SHMEM transport refused before shmem_init is ever reached (this test runs under
 * mpiexec): a plan that changes the process set, a communicator short of the job. */
static void test_bad_shmem_init(const mal_config_t *base)
{
    mal_config_t cfg = *base;
    cfg.redist = MAL_REDIST_SHMEM;
    cfg.plan = "5:w=1,10:+1";
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_UNSUPPORTED, "plan entry 2 (iteration 10)");
    cfg.plan = NULL;
    if (size > 1) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        EXPECT(mal_init(half, &cfg), MAL_ERR_UNSUPPORTED,
               mal_redist_supported(MAL_REDIST_SHMEM) ? "over all" : "without OpenSHMEM");
        MPI_Comm_free(&half);
    }
    CHECK(!mal_initialized(), "a refused SHMEM init left libmal initialised");
}

static void test_bad_init(void)
{
    mal_config_t cfg;
    EXPECT(mal_config_init(NULL), MAL_ERR_ARG, "config");
    mal_config_init(&cfg);
    cfg.log_errors = false;
    EXPECT(mal_init(MPI_COMM_NULL, &cfg), MAL_ERR_ARG, "comm");
    cfg.headroom = NAN;
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "headroom");
    cfg.headroom = 0.5;
    cfg.min_rows = -2;
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "min_rows");
    cfg.min_rows = 0;
    cfg.redist = (mal_redist_t)42;
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "42");
    cfg.redist = MAL_REDIST_DEFAULT;
    setenv("MAL_REDIST", "carrier-pigeon", 1);
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "MAL_REDIST");
    unsetenv("MAL_REDIST");
    if (size > 1) {
        /* Settings every rank computes with must agree; the duplicate is released. */
        cfg.headroom = rank == 1 ? 0.25 : 0.5;
        EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_MISMATCH, "differ");
        cfg.headroom = 0.5;
        if (rank == 1)
            setenv("MAL_MAX_COUNT", "1000", 1);
        EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_MISMATCH, "MAL_MAX_COUNT");
        unsetenv("MAL_MAX_COUNT");
        mal_config_t bad = cfg;
        bad.headroom = -1.0;
        if (rank == 1)
            EXPECT(mal_init(MPI_COMM_WORLD, &bad), MAL_ERR_ARG, "headroom");
        else
            EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_REMOTE, "rank 1");
        CHECK(!mal_initialized() && mal_comm() == MPI_COMM_NULL, "failed init left state");
    }
    test_bad_shmem_init(&cfg);
    setenv("MAL_REDIST", "p2p", 1);
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "init: %s", mal_error_message());
    CHECK(mal_get_redist() == MAL_REDIST_P2P, "MAL_REDIST=p2p not honoured");
    unsetenv("MAL_REDIST");
    /* shmem is chosen at mal_init only: it decides where structures live. */
    EXPECT(mal_set_redist(MAL_REDIST_SHMEM), MAL_ERR_UNSUPPORTED, "chosen at mal_init");
    CHECK(mal_get_redist() == MAL_REDIST_P2P, "refused set_redist changed the method");
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ALREADY_INITIALIZED, "twice");
}

static void test_bad_alloc(void)
{
    mal_array_t *a = NULL;
    int windows = mal_window_count();
    char long_name[80];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    MPI_Datatype shifted;
    MPI_Type_create_resized(MPI_DOUBLE, 8, 16, &shifted);
    EXPECT(mal_alloc_window(NULL, MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, "name");
    EXPECT(mal_alloc_window("", MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, "name");
    EXPECT(mal_alloc_window(long_name, MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, "name");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, 1, MAL_BLOCK, NULL), MAL_ERR_ARG, "array");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 0, 1, MAL_BLOCK, &a), MAL_ERR_ARG, "global_rows");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, -3, 1, MAL_BLOCK, &a), MAL_ERR_ARG, "global_rows");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, 0, MAL_BLOCK, &a), MAL_ERR_ARG, "row_len");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, 1, (mal_distribution_t)9, &a), MAL_ERR_ARG,
           "distribution");
    EXPECT(mal_alloc_window("x", MPI_DATATYPE_NULL, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, "type");
    EXPECT(mal_alloc_window("x", shifted, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, "lower bound");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, INT64_MAX / 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG,
           "overflows");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, INT64_C(1) << 40, MAL_BLOCK, &a), MAL_ERR_ARG,
           "row_len");
    CHECK(a == NULL && mal_find_window("x") == NULL, "a failed alloc registered something");
    CHECK(mal_window_count() == windows, "a failed alloc created windows");
    MPI_Type_free(&shifted);
}

static void test_collective_disagreement(mal_array_t *keep)
{
    mal_array_t *a = NULL;
    int windows = mal_window_count();
    EXPECT(mal_alloc_window("keep", MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_EXISTS,
           "already registered");
    CHECK(mal_find_window("keep") == keep, "duplicate replaced the original");
    if (size > 1) {
        /* Rows differ between ranks: every rank is told, none allocates. */
        EXPECT(mal_alloc_window("y", MPI_DOUBLE, 10 + rank, 1, MAL_BLOCK, &a),
               MAL_ERR_MISMATCH, "differ");
        /* One rank's argument is bad: it names the argument, the others name the rank. */
        if (rank == 1)
            EXPECT(mal_alloc_window("y", MPI_DOUBLE, 10, 1, MAL_BLOCK, NULL), MAL_ERR_ARG,
                   "array");
        else
            EXPECT(mal_alloc_window("y", MPI_DOUBLE, 10, 1, MAL_BLOCK, &a), MAL_ERR_REMOTE,
                   "rank 1");
    }
    if (size > 1) {
        /* Freeing NULL on one rank and a structure on the others: refused everywhere. */
        EXPECT(mal_free_window(rank == 0 ? NULL : keep), MAL_ERR_MISMATCH, "differ");
        CHECK(mal_find_window("keep") == keep, "a refused free unregistered the structure");
    }
    CHECK(a == NULL && mal_find_window("y") == NULL, "disagreeing alloc registered");
    CHECK(mal_window_count() == windows, "disagreeing alloc created windows");
}

/* Fill `a` with its global row index; return how many local rows no longer match. */
static int64_t fill_or_count(mal_array_t *a, bool fill)
{
    double *d = mal_local_data(a);
    int64_t bad = 0, first = mal_first_row(a);
    for (int64_t r = 0; r < mal_local_rows(a); r++) {
        if (fill)
            d[r] = (double)(first + r) + 0.5;
        else
            bad += d[r] != (double)(first + r) + 0.5;
    }
    return bad;
}

static void test_bad_rebalance(mal_array_t *a)
{
    double *w = malloc((size_t)size * sizeof *w);
    for (int r = 0; r < size; r++)
        w[r] = 1.0 + r;
    fill_or_count(a, true);
    void *data = mal_local_data(a);
    int64_t first = mal_first_row(a), rows = mal_local_rows(a);
    int windows = mal_window_count();
    EXPECT(mal_rebalance(NULL), MAL_ERR_ARG, "weights is NULL");
    w[size - 1] = -1.0;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, "weights[");
    w[size - 1] = NAN;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, "finite");
    w[size - 1] = INFINITY;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, "finite");
    for (int r = 0; r < size; r++)
        w[r] = 0.0;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, "zero");
    if (size > 1) {
        for (int r = 0; r < size; r++)
            w[r] = r == 0 ? 1.0 + rank : 1.0; /* weights differ between ranks */
        EXPECT(mal_rebalance(w), MAL_ERR_MISMATCH, "differ");
        for (int r = 0; r < size; r++)
            w[r] = 1.0;
        mal_set_redist(rank == 0 ? MAL_REDIST_RMA : MAL_REDIST_ALLTOALLV);
        EXPECT(mal_rebalance(w), MAL_ERR_MISMATCH, "differ");
        mal_set_redist(MAL_REDIST_RMA);
    }
    EXPECT(mal_set_redist((mal_redist_t)17), MAL_ERR_ARG, "17");
    CHECK(mal_local_data(a) == data && mal_first_row(a) == first && mal_local_rows(a) == rows,
          "a refused rebalance changed the layout");
    CHECK(fill_or_count(a, false) == 0, "a refused rebalance changed the data");
    CHECK(mal_window_count() == windows, "a refused rebalance changed the windows");
    free(w);
}

/* min_rows that the rows cannot cover is refused, and the data stay. */
static void test_min_rows(void)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.log_errors = false;
    cfg.min_rows = 3;
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "init with min_rows");
    mal_array_t *a = NULL;
    CHECK(mal_alloc_window("small", MPI_DOUBLE, 3 * size - 1, 1, MAL_BLOCK, &a) == MAL_OK,
          "alloc: %s", mal_error_message());
    fill_or_count(a, true);
    double *w = malloc((size_t)size * sizeof *w);
    for (int r = 0; r < size; r++)
        w[r] = 1.0;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, "min_rows");
    CHECK(fill_or_count(a, false) == 0, "refused min_rows rebalance changed data");
    w[0] = 0.0;
    CHECK(size == 1 || mal_rebalance(w) == MAL_OK, "feasible min_rows: %s",
          mal_error_message());
    CHECK(fill_or_count(a, false) == 0, "min_rows rebalance lost data");
    CHECK(rank == 0 || size == 1 || mal_local_rows(a) >= 3, "rank below min_rows");
    free(w);
    mal_finalize();
}

/* A rank without memory to gather the monitor's interval: every rank's mal_step fails
 * (none is left in the gather), nothing else changes, and the next interval works. */
static void test_monitor_fault(void)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.log_errors = false;
    cfg.summary = false;
    cfg.policy = "off";
    cfg.sample_interval = 2;
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "init: %s", mal_error_message());
    mal_array_t *a = NULL;
    CHECK(mal_alloc_window("keep", MPI_DOUBLE, 40, 1, MAL_BLOCK, &a) == MAL_OK, "alloc");
    fill_or_count(a, true);
    CHECK(mal_step() == MAL_CONTINUE, "step 1: %s", mal_error_message());
    bool faulty = rank == size - 1;
    if (faulty)
        setenv("MAL_FAULT_MONITOR", "1", 1);
    EXPECT(mal_step(), faulty ? MAL_ERR_NOMEM : MAL_ERR_REMOTE,
           faulty ? "MAL_FAULT_MONITOR" : "sampling interval");
    unsetenv("MAL_FAULT_MONITOR");
    CHECK(fill_or_count(a, false) == 0, "a failed gather changed the data");
    CHECK(mal_iteration() == 2, "iteration %lld after the failed step, not 2",
          (long long)mal_iteration());
    CHECK(mal_step() == MAL_CONTINUE && mal_step() == MAL_CONTINUE,
          "the interval after a failed gather: %s", mal_error_message());
    CHECK(fill_or_count(a, false) == 0, "the interval after a failed gather lost data");
    mal_finalize();
}

static void test_status_strings(void)
{
    CHECK(strcmp(mal_strerror(MAL_OK), "success") == 0, "MAL_OK string");
    for (int s = -8; s < 0; s++)
        CHECK(strcmp(mal_strerror((mal_status_t)s), "unknown libmal status") != 0,
              "status %d has no string", s);
    CHECK(strcmp(mal_strerror((mal_status_t)-1000), "unknown libmal status") == 0,
          "unknown status");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_status_strings();
    test_before_init();
    test_bad_init();
    mal_array_t *keep = NULL;
    CHECK(mal_alloc_window("keep", MPI_DOUBLE, 40, 1, MAL_BLOCK, &keep) == MAL_OK, "alloc");
    test_bad_alloc();
    test_collective_disagreement(keep);
    test_bad_rebalance(keep);
    CHECK(mal_free_window(NULL) == MAL_OK, "free(NULL) is a no-op");
    CHECK(mal_free_window(keep) == MAL_OK && mal_window_count() == 0, "free");
    CHECK(mal_finalize() == MAL_OK, "finalize");
    test_min_rows();
    test_monitor_fault();
    int rc = mpitest_verdict("test_errors", "every bad input refused, nothing changed");
    MPI_Finalize();
    return rc;
}
