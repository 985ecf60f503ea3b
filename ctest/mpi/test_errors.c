/* Bad input: every call returns the exact mal_ error, whose message starts with the
 * public call the user made and names the problem, and changes nothing (layout, data,
 * registry and window count stay as they were).
 *
 * Every call of mal.h that returns a mal_status_t has a case here, before mal_init
 * (MAL_ERR_NOT_INITIALIZED) and with bad input after it. Skipped, because they cannot
 * fail (no status; a bad handle gives NULL, -1, "none" or false, tested with the
 * structures they read in test_rebalance and test_csr): mal_strerror,
 * mal_error_message, mal_is_initialized, mal_comm, mal_find_array, mal_local_data,
 * mal_first_row, mal_local_rows, mal_global_rows, mal_row_len, mal_redist_supported,
 * mal_get_redist, mal_redist_name, mal_buffer_count, mal_memory_name, mal_find_csr,
 * mal_csr_rowptr, mal_csr_colind, mal_csr_values, mal_csr_memory_name,
 * mal_csr_first_row, mal_csr_local_rows, mal_csr_local_nnz, mal_csr_global_rows,
 * mal_csr_global_cols, mal_csr_global_nnz, mal_iteration, mal_is_initial_process,
 * mal_monitor_counter, mal_halo_rows. */
#include "mal.h"
#include "mpitest.h"
#include "sparse_rows.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* Whether `message` starts with the name of `call` ("mal_alloc_window(" or
 * "mal_alloc_window:", not "mal_alloc_array_aligned"). */
static bool starts_with_call(const char *message, const char *call)
{
    size_t n = strlen(call);
    return strncmp(message, call, n) == 0 && !isalnum((unsigned char)message[n]) &&
           message[n] != '_';
}

/* The call returned `want`, and the message starts with the public call `fn` and
 * mentions `needle`. */
#define EXPECT(call, want, fn, needle)                                                \
    do {                                                                              \
        mal_status_t got_ = (call);                                                   \
        CHECK(got_ == (want), "%s returned %d (%s), want %s", #call, (int)got_,       \
              mal_strerror(got_), #want);                                             \
        CHECK(starts_with_call(mal_error_message(), (fn)),                            \
              "%s: message \"%s\" does not start with %s", #call, mal_error_message(), \
              (fn));                                                                  \
        CHECK(strstr(mal_error_message(), (needle)) != NULL,                          \
              "%s: message \"%s\" does not name \"%s\"", #call, mal_error_message(),  \
              (needle));                                                              \
    } while (0)

/* Every call that needs mal_init refuses, naming itself. */
static void test_before_init(void)
{
    mal_array_t *a = NULL;
    mal_csr_t *m = NULL;
    double w[1] = {1}, value = 0;
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_NOT_INITIALIZED,
           "mal_alloc_window", "before mal_init");
    CHECK(a == NULL, "output written on failure");
    EXPECT(mal_alloc_array_weighted("x", MPI_DOUBLE, 4, 1, w, &a), MAL_ERR_NOT_INITIALIZED,
           "mal_alloc_array_weighted", "before mal_init");
    EXPECT(mal_alloc_array_aligned("x", MPI_DOUBLE, 1, NULL, &a), MAL_ERR_NOT_INITIALIZED,
           "mal_alloc_array_aligned", "before mal_init");
    EXPECT(mal_alloc_csr("m", 4, 4, MPI_DOUBLE, &m), MAL_ERR_NOT_INITIALIZED,
           "mal_alloc_csr", "before mal_init");
    EXPECT(mal_csr_set_rows(NULL, 0, 0, NULL, NULL, NULL), MAL_ERR_NOT_INITIALIZED,
           "mal_csr_set_rows", "before mal_init");
    EXPECT(mal_free_csr(NULL), MAL_ERR_NOT_INITIALIZED, "mal_free_csr", "before mal_init");
    EXPECT(mal_rebalance(w), MAL_ERR_NOT_INITIALIZED, "mal_rebalance", "before mal_init");
    EXPECT(mal_free_array(NULL), MAL_ERR_NOT_INITIALIZED, "mal_free_array",
           "before mal_init");
    EXPECT(mal_finalize(), MAL_ERR_NOT_INITIALIZED, "mal_finalize", "before mal_init");
    EXPECT(mal_set_redist(MAL_REDIST_RMA), MAL_ERR_NOT_INITIALIZED, "mal_set_redist",
           "before mal_init");
    mal_rebalance_stats_t rs;
    EXPECT(mal_last_rebalance(&rs), MAL_ERR_NOT_INITIALIZED, "mal_last_rebalance",
           "before mal_init");
    EXPECT(mal_step(), MAL_ERR_NOT_INITIALIZED, "mal_step", "before mal_init");
    EXPECT(mal_register_value("v", &value, sizeof value), MAL_ERR_NOT_INITIALIZED,
           "mal_register_value", "before mal_init");
    EXPECT(mal_expand(1, MAL_SPAWN_DEFAULT, NULL), MAL_ERR_NOT_INITIALIZED, "mal_expand",
           "before mal_init");
    EXPECT(mal_shrink(1, NULL, NULL), MAL_ERR_NOT_INITIALIZED, "mal_shrink",
           "before mal_init");
    int up = -7, down = -7;
    EXPECT(mal_alloc_halo("x", MPI_DOUBLE, 4, 1, 1, &a), MAL_ERR_NOT_INITIALIZED,
           "mal_alloc_halo", "before mal_init");
    EXPECT(mal_neighbors(NULL, &up, &down), MAL_ERR_NOT_INITIALIZED, "mal_neighbors",
           "before mal_init");
    CHECK(up == -7 && down == -7, "mal_neighbors wrote its outputs on failure");
    EXPECT(mal_halo_exchange(NULL), MAL_ERR_NOT_INITIALIZED, "mal_halo_exchange",
           "before mal_init");
    EXPECT(mal_swap_arrays(NULL, NULL), MAL_ERR_NOT_INITIALIZED, "mal_swap_arrays",
           "before mal_init");
    mal_monitor_t mon;
    mal_prediction_t pred;
    mal_decision_t dec;
    mal_reconfig_stats_t rc;
    EXPECT(mal_monitor_read(&mon), MAL_ERR_NOT_INITIALIZED, "mal_monitor_read",
           "before mal_init");
    EXPECT(mal_set_work(1.0), MAL_ERR_NOT_INITIALIZED, "mal_set_work", "before mal_init");
    EXPECT(mal_last_prediction(&pred), MAL_ERR_NOT_INITIALIZED, "mal_last_prediction",
           "before mal_init");
    EXPECT(mal_last_decision(&dec), MAL_ERR_NOT_INITIALIZED, "mal_last_decision",
           "before mal_init");
    EXPECT(mal_last_reconfig(&rc), MAL_ERR_NOT_INITIALIZED, "mal_last_reconfig",
           "before mal_init");
    CHECK(mal_comm() == MPI_COMM_NULL && !mal_is_initialized(), "state before init");
    CHECK(mal_find_array("x") == NULL && mal_buffer_count() == 0, "registry before init");
}

/* "I:w=1:1:..." with `count` weights, after `prefix`. */
static void weights_plan(char *plan, size_t len, const char *prefix, int iteration, int count)
{
    int n = snprintf(plan, len, "%s%d:w=1", prefix, iteration);
    for (int r = 1; r < count; r++)
        n += snprintf(plan + n, len - (size_t)n, ":1");
}

/* The SHMEM transport refused before shmem_init is ever reached (this test runs under
 * mpiexec): a plan that changes the process set, a communicator short of the job. */
static void test_bad_shmem_init(const mal_config_t *base)
{
    mal_config_t cfg = *base;
    cfg.redist = MAL_REDIST_SHMEM;
    char plan[128];
    weights_plan(plan, sizeof plan, "", 5, size);
    strcat(plan, ",10:+1");
    cfg.plan = plan;
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_UNSUPPORTED, "mal_init",
           "plan entry 2 (iteration 10)");
    cfg.plan = NULL;
    if (size > 1) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        EXPECT(mal_init(half, &cfg), MAL_ERR_UNSUPPORTED, "mal_init",
               mal_redist_supported(MAL_REDIST_SHMEM) ? "over all" : "without OpenSHMEM");
        MPI_Comm_free(&half);
    }
    CHECK(!mal_is_initialized(), "a refused SHMEM init left libmal initialised");
}

/* The settings every rank computes with must agree; the duplicate is released. */
static void test_init_disagreement(mal_config_t cfg)
{
    cfg.headroom = rank == 1 ? 0.25 : 0.5;
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_MISMATCH, "mal_init", "differ");
    cfg.headroom = 0.5;
    if (rank == 1)
        setenv("MAL_MAX_COUNT", "1000", 1);
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_MISMATCH, "mal_init", "MAL_MAX_COUNT");
    unsetenv("MAL_MAX_COUNT");
    mal_config_t bad = cfg;
    bad.headroom = -1.0;
    if (rank == 1)
        EXPECT(mal_init(MPI_COMM_WORLD, &bad), MAL_ERR_ARG, "mal_init", "headroom");
    else
        EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_REMOTE, "mal_init", "rank 1");
    CHECK(!mal_is_initialized() && mal_comm() == MPI_COMM_NULL, "failed init left state");
}

/* The configuration's size: recorded by mal_config_init as the program was compiled,
 * checked by mal_init; a structure not filled by it, or from a newer mal.h, is refused;
 * the fields past a smaller size take their defaults. */
static void test_config_size(void)
{
    mal_config_t cfg;
    CHECK(mal_config_init(&cfg) == MAL_OK && cfg.size == sizeof cfg, "size %zu recorded",
          cfg.size);
    CHECK((mal_config_init)(&cfg) == MAL_OK && cfg.size == sizeof cfg, "the function");
    EXPECT(mal_config_init_size(&cfg, 4), MAL_ERR_ARG, "mal_config_init", "at least");
    EXPECT(mal_config_init_size(&cfg, sizeof cfg + 8), MAL_ERR_ARG, "mal_config_init",
           "newer mal.h");
    mal_config_t zeroed = {0}; /* not filled by mal_config_init */
    EXPECT(mal_init(MPI_COMM_WORLD, &zeroed), MAL_ERR_ARG, "mal_init", "mal_config_init");
    zeroed.size = sizeof zeroed + 16;
    EXPECT(mal_init(MPI_COMM_WORLD, &zeroed), MAL_ERR_ARG, "mal_init", "newer mal.h");
    CHECK(!mal_is_initialized(), "a refused configuration initialised libmal");
    /* The smallest structure this libmal reads: its last field's end. Bytes past it are
     * not the caller's and must not be read: filled with garbage here. */
    size_t first = offsetof(mal_config_t, async) + sizeof cfg.async;
    memset(&cfg, 0x5a, sizeof cfg);
    CHECK(mal_config_init_size(&cfg, first) == MAL_OK && cfg.size == first &&
          cfg.async == -1, "a configuration of %zu bytes", first);
    for (size_t b = first; b < sizeof cfg; b++)
        CHECK(((unsigned char *)&cfg)[b] == 0x5a, "byte %zu past the caller's size written",
              b);
}

static void test_bad_init(void)
{
    mal_config_t cfg;
    EXPECT(mal_config_init(NULL), MAL_ERR_ARG, "mal_config_init", "config");
    test_config_size();
    mal_config_init(&cfg);
    cfg.log_errors = false;
    cfg.summary = false;
    EXPECT(mal_init(MPI_COMM_NULL, &cfg), MAL_ERR_ARG, "mal_init", "comm");
    cfg.headroom = NAN;
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "mal_init", "headroom");
    cfg.headroom = 0.5;
    cfg.min_rows = -2;
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "mal_init", "min_rows");
    cfg.min_rows = 0;
    cfg.redist = (mal_redist_t)42;
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "mal_init", "42");
    cfg.redist = MAL_REDIST_DEFAULT;
    setenv("MAL_REDIST", "carrier-pigeon", 1);
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "mal_init", "MAL_REDIST");
    unsetenv("MAL_REDIST");
    setenv("MAL_MAX_COUNT", "-3", 1); /* a message written without the call's name */
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "mal_init", "MAL_MAX_COUNT");
    unsetenv("MAL_MAX_COUNT");
    if (size > 1)
        test_init_disagreement(cfg);
    test_bad_shmem_init(&cfg);
    setenv("MAL_REDIST", "p2p", 1);
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "init: %s", mal_error_message());
    CHECK(mal_get_redist() == MAL_REDIST_P2P, "MAL_REDIST=p2p not honoured");
    unsetenv("MAL_REDIST");
    /* shmem is chosen at mal_init only: it decides where structures live. */
    EXPECT(mal_set_redist(MAL_REDIST_SHMEM), MAL_ERR_UNSUPPORTED, "mal_set_redist",
           "chosen at mal_init");
    CHECK(mal_get_redist() == MAL_REDIST_P2P, "refused set_redist changed the method");
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ALREADY_INITIALIZED, "mal_init", "twice");
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

/* What a refused call must leave as it was: the structure's layout and data, the
 * registry, the window count. */
typedef struct {
    mal_array_t *keep;
    void *data;
    int64_t first, rows;
    int windows;
} snapshot_t;

static snapshot_t take_snapshot(mal_array_t *keep)
{
    return (snapshot_t){keep, mal_local_data(keep), mal_first_row(keep), mal_local_rows(keep),
                        mal_buffer_count()};
}

static void check_unchanged(const snapshot_t *s, const char *what)
{
    CHECK(mal_local_data(s->keep) == s->data && mal_first_row(s->keep) == s->first &&
              mal_local_rows(s->keep) == s->rows,
          "%s changed the layout", what);
    CHECK(fill_or_count(s->keep, false) == 0, "%s changed the data", what);
    CHECK(mal_buffer_count() == s->windows, "%s changed the windows (%d, was %d)", what,
          mal_buffer_count(), s->windows);
    CHECK(mal_find_array("keep") == s->keep, "%s changed the registry", what);
}

static void test_bad_alloc(mal_array_t *keep)
{
    mal_array_t *a = NULL;
    snapshot_t snap = take_snapshot(keep);
    char long_name[80];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    MPI_Datatype shifted;
    MPI_Type_create_resized(MPI_DOUBLE, 8, 16, &shifted);
    const char *fn = "mal_alloc_window";
    EXPECT(mal_alloc_window(NULL, MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, fn, "name");
    EXPECT(mal_alloc_window("", MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, fn, "name");
    EXPECT(mal_alloc_window(long_name, MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, fn,
           "name");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, 1, MAL_BLOCK, NULL), MAL_ERR_ARG, fn, "array");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 0, 1, MAL_BLOCK, &a), MAL_ERR_ARG, fn,
           "global_rows");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, -3, 1, MAL_BLOCK, &a), MAL_ERR_ARG, fn,
           "global_rows");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, 0, MAL_BLOCK, &a), MAL_ERR_ARG, fn, "row_len");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, 1, (mal_distribution_t)9, &a), MAL_ERR_ARG,
           fn, "distribution");
    EXPECT(mal_alloc_window("x", MPI_DATATYPE_NULL, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, fn,
           "type");
    EXPECT(mal_alloc_window("x", shifted, 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG, fn,
           "lower bound");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, INT64_MAX / 4, 1, MAL_BLOCK, &a), MAL_ERR_ARG,
           fn, "overflows");
    EXPECT(mal_alloc_window("x", MPI_DOUBLE, 4, INT64_C(1) << 40, MAL_BLOCK, &a), MAL_ERR_ARG,
           fn, "row_len");
    CHECK(a == NULL && mal_find_array("x") == NULL, "a failed alloc registered something");
    check_unchanged(&snap, "a refused mal_alloc_window");
    MPI_Type_free(&shifted);
}

static void test_bad_weighted_alloc(mal_array_t *keep)
{
    mal_array_t *a = NULL;
    snapshot_t snap = take_snapshot(keep);
    double *w = malloc((size_t)size * sizeof *w);
    for (int r = 0; r < size; r++)
        w[r] = 1.0;
    const char *fn = "mal_alloc_array_weighted";
    EXPECT(mal_alloc_array_weighted("w", MPI_DOUBLE, 10, 1, NULL, &a), MAL_ERR_ARG, fn,
           "weights is NULL");
    EXPECT(mal_alloc_array_weighted(NULL, MPI_DOUBLE, 10, 1, w, &a), MAL_ERR_ARG, fn, "name");
    EXPECT(mal_alloc_array_weighted("w", MPI_DOUBLE, 0, 1, w, &a), MAL_ERR_ARG, fn,
           "global_rows");
    EXPECT(mal_alloc_array_weighted("keep", MPI_DOUBLE, 10, 1, w, &a), MAL_ERR_EXISTS, fn,
           "already registered");
    w[size - 1] = -1.0;
    EXPECT(mal_alloc_array_weighted("w", MPI_DOUBLE, 10, 1, w, &a), MAL_ERR_ARG, fn,
           "weights[");
    if (size > 1) {
        w[size - 1] = 1.0 + rank; /* weights differ between ranks */
        char expected[160];
        snprintf(expected, sizeof expected, "arguments differ between ranks: weights[%d] is 1 "
                 "on rank 0, %d on rank %d", size - 1, size, size - 1);
        EXPECT(mal_alloc_array_weighted("w", MPI_DOUBLE, 10, 1, w, &a), MAL_ERR_MISMATCH,
               fn, expected);
    }
    CHECK(a == NULL && mal_find_array("w") == NULL, "a refused weighted alloc registered");
    check_unchanged(&snap, "a refused mal_alloc_array_weighted");
    free(w);
}

static void test_collective_disagreement(mal_array_t *keep)
{
    mal_array_t *a = NULL;
    snapshot_t snap = take_snapshot(keep);
    EXPECT(mal_alloc_window("keep", MPI_DOUBLE, 4, 1, MAL_BLOCK, &a), MAL_ERR_EXISTS,
           "mal_alloc_window", "already registered");
    if (size > 1) {
        /* Rows differ between ranks: every rank is told, none allocates. */
        char expected[160];
        snprintf(expected, sizeof expected, "arguments differ between ranks: global_rows is 10 "
                 "on rank 0, %d on rank %d", 10 + size - 1, size - 1);
        EXPECT(mal_alloc_window("y", MPI_DOUBLE, 10 + rank, 1, MAL_BLOCK, &a),
               MAL_ERR_MISMATCH, "mal_alloc_window", expected);
        /* An enum is named, not numbered; the last rank differs from the others. */
        mal_distribution_t dist = rank == size - 1 ? MAL_REPLICATED : MAL_BLOCK;
        snprintf(expected, sizeof expected, "distribution is MAL_BLOCK on rank 0, "
                 "MAL_REPLICATED on rank %d", size - 1);
        EXPECT(mal_alloc_window("y", MPI_DOUBLE, 10, 1, dist, &a), MAL_ERR_MISMATCH,
               "mal_alloc_window", expected);
        /* The type differs: the bytes of a row say so. */
        EXPECT(mal_alloc_window("y", rank == 0 ? MPI_DOUBLE : MPI_INT, 10, 2, MAL_BLOCK, &a),
               MAL_ERR_MISMATCH, "mal_alloc_window",
               "the bytes of a row (the type's size times row_len) is 8 on rank 1, 16 on "
               "rank 0");
        /* Names: which ranks, not the texts. */
        EXPECT(mal_alloc_window(rank == 0 ? "y" : "z", MPI_DOUBLE, 10, 1, MAL_BLOCK, &a),
               MAL_ERR_MISMATCH, "mal_alloc_window", "the name differs between rank");
        /* One rank's argument is bad: it names the argument, the others name the rank. */
        if (rank == 1)
            EXPECT(mal_alloc_window("y", MPI_DOUBLE, 10, 1, MAL_BLOCK, NULL), MAL_ERR_ARG,
                   "mal_alloc_window", "array");
        else
            EXPECT(mal_alloc_window("y", MPI_DOUBLE, 10, 1, MAL_BLOCK, &a), MAL_ERR_REMOTE,
                   "mal_alloc_window", "rank 1");
        /* Expansions and shrinks name what differs, before anything is spawned. */
        snprintf(expected, sizeof expected, "arguments differ between ranks: count is 1 on "
                 "rank 0, %d on rank %d", size, size - 1);
        EXPECT(mal_expand(1 + rank, MAL_SPAWN_DEFAULT, NULL), MAL_ERR_MISMATCH, "mal_expand",
               expected);
        EXPECT(mal_expand(1, rank == 0 ? MAL_SPAWN_BATCHED : MAL_SPAWN_PER_CALL, NULL),
               MAL_ERR_MISMATCH, "mal_expand",
               "mode is MAL_SPAWN_PER_CALL on rank 1, MAL_SPAWN_BATCHED on rank 0");
        int leaver = rank == 0 ? 0 : 1;
        EXPECT(mal_shrink(1, &leaver, NULL), MAL_ERR_MISMATCH, "mal_shrink",
               "ranks differs between rank");
        /* A bad count is refused without reading the ranks or the weights it would size. */
        double w1 = 1.0;
        EXPECT(mal_shrink(-1, &leaver, NULL), MAL_ERR_ARG, "mal_shrink", "count is -1");
        EXPECT(mal_expand(-3, MAL_SPAWN_PER_CALL, &w1), MAL_ERR_ARG, "mal_expand",
               "count is -3");
        /* Ranks in different calls: refused everywhere, nobody waits for the others. */
        if (rank == 0)
            EXPECT(mal_alloc_window("y", MPI_DOUBLE, 10, 1, MAL_BLOCK, &a), MAL_ERR_MISMATCH,
                   "mal_alloc_window", "arguments differ between ranks");
        else
            EXPECT(mal_free_array(NULL), MAL_ERR_MISMATCH, "mal_free_array",
                   "arguments differ between ranks");
        /* Freeing NULL on one rank and a structure on the others: refused everywhere. */
        EXPECT(mal_free_array(rank == 0 ? NULL : keep), MAL_ERR_MISMATCH, "mal_free_array",
               "differ");
    }
    CHECK(a == NULL && mal_find_array("y") == NULL, "disagreeing alloc registered");
    check_unchanged(&snap, "a disagreeing alloc or free");
}

static void test_bad_rebalance(mal_array_t *keep)
{
    double *w = malloc((size_t)size * sizeof *w);
    for (int r = 0; r < size; r++)
        w[r] = 1.0 + r;
    snapshot_t snap = take_snapshot(keep);
    const char *fn = "mal_rebalance";
    EXPECT(mal_rebalance(NULL), MAL_ERR_ARG, fn, "weights is NULL");
    w[size - 1] = -1.0;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, fn, "weights[");
    w[size - 1] = NAN;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, fn, "finite");
    w[size - 1] = INFINITY;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, fn, "finite");
    for (int r = 0; r < size; r++)
        w[r] = 0.0;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, fn, "zero");
    if (size > 1) {
        for (int r = 0; r < size; r++)
            w[r] = r == 0 ? 1.0 + rank : 1.0; /* weights differ between ranks */
        char expected[160];
        snprintf(expected, sizeof expected, "arguments differ between ranks: weights[0] is 1 "
                 "on rank 0, %d on rank %d", size, size - 1);
        EXPECT(mal_rebalance(w), MAL_ERR_MISMATCH, fn, expected);
        for (int r = 0; r < size; r++)
            w[r] = 1.0;
        mal_set_redist(rank == 0 ? MAL_REDIST_RMA : MAL_REDIST_ALLTOALLV);
        EXPECT(mal_rebalance(w), MAL_ERR_MISMATCH, fn,
               "the method (mal_set_redist) is rma on rank 0, alltoallv on rank 1");
        mal_set_redist(MAL_REDIST_RMA);
    }
    EXPECT(mal_set_redist((mal_redist_t)17), MAL_ERR_ARG, "mal_set_redist", "17");
    check_unchanged(&snap, "a refused rebalance");
    free(w);
}

/* min_rows that the rows cannot cover is refused, and the data stay. */
static void test_min_rows(void)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.log_errors = false;
    cfg.summary = false;
    cfg.min_rows = 3;
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "init with min_rows");
    mal_array_t *a = NULL;
    CHECK(mal_alloc_window("small", MPI_DOUBLE, 3 * size - 1, 1, MAL_BLOCK, &a) == MAL_OK,
          "alloc: %s", mal_error_message());
    fill_or_count(a, true);
    double *w = malloc((size_t)size * sizeof *w);
    for (int r = 0; r < size; r++)
        w[r] = 1.0;
    EXPECT(mal_rebalance(w), MAL_ERR_ARG, "mal_rebalance", "min_rows");
    CHECK(fill_or_count(a, false) == 0, "refused min_rows rebalance changed data");
    w[0] = 0.0;
    CHECK(size == 1 || mal_rebalance(w) == MAL_OK, "feasible min_rows: %s",
          mal_error_message());
    CHECK(fill_or_count(a, false) == 0, "min_rows rebalance lost data");
    CHECK(rank == 0 || size == 1 || mal_local_rows(a) >= 3, "rank below min_rows");
    free(w);
    mal_finalize();
}

/* ---- sparse matrices ------------------------------------------------------------- */

/* The matrix of sparse_rows.h, rows split evenly, version 0; NULL on failure. */
static mal_csr_t *make_matrix(void)
{
    mal_csr_t *m = NULL;
    if (mal_alloc_csr("A", SP_ROWS, SP_COLS, MPI_DOUBLE, &m) != MAL_OK)
        return NULL;
    int64_t first = mal_csr_first_row(m), count = mal_csr_local_rows(m), *rp;
    mal_colind_t *c;
    double *v;
    int64_t nnz = sp_block(first, count, 0, 0, &rp, &c, &v);
    CHECK(mal_csr_set_rows(m, count, nnz, rp, c, v) == MAL_OK, "set_rows: %s",
          mal_error_message());
    free(rp);
    free(c);
    free(v);
    return m;
}

static void check_matrix(const mal_csr_t *m, const char *what)
{
    CHECK(sp_count_bad(m, 0, 0) == 0, "%s changed the matrix's rows", what);
}

static void test_bad_alloc_csr(void)
{
    mal_csr_t *m = NULL;
    const char *fn = "mal_alloc_csr";
    EXPECT(mal_alloc_csr(NULL, 10, 10, MPI_DOUBLE, &m), MAL_ERR_ARG, fn, "name");
    EXPECT(mal_alloc_csr("B", 10, 10, MPI_DOUBLE, NULL), MAL_ERR_ARG, fn, "csr is NULL");
    EXPECT(mal_alloc_csr("B", 0, 10, MPI_DOUBLE, &m), MAL_ERR_ARG, fn, "global_rows");
    EXPECT(mal_alloc_csr("B", 10, (int64_t)MAL_COLIND_MAX + 1, MPI_DOUBLE, &m), MAL_ERR_ARG,
           fn, "global_cols");
    EXPECT(mal_alloc_csr("B", 10, 10, MPI_DATATYPE_NULL, &m), MAL_ERR_ARG, fn, "type");
    CHECK(m == NULL && mal_find_csr("B") == NULL, "a refused mal_alloc_csr registered");
}

/* The last rank gives a bad block: it names the problem, the others name the rank. */
static void expect_set_rows(mal_status_t st, const char *needle)
{
    if (rank == size - 1)
        EXPECT(st, MAL_ERR_ARG, "mal_csr_set_rows", needle);
    else
        EXPECT(st, MAL_ERR_REMOTE, "mal_csr_set_rows", "rank");
}

static void test_bad_set_rows(mal_csr_t *m)
{
    int64_t first = mal_csr_first_row(m), count = mal_csr_local_rows(m), *rp;
    mal_colind_t *c;
    double *v;
    int64_t nnz = sp_block(first, count, 0, 1, &rp, &c, &v);
    bool last = rank == size - 1;
    EXPECT(mal_csr_set_rows(NULL, count, nnz, rp, c, v), MAL_ERR_ARG, "mal_csr_set_rows",
           "csr is NULL");
    expect_set_rows(mal_csr_set_rows(m, last ? -1 : count, nnz, rp, c, v), "local_rows");
    expect_set_rows(mal_csr_set_rows(m, count, last ? nnz + 1 : nnz, rp, c, v), "spans");
    mal_colind_t saved = c[nnz - 1];
    c[nnz - 1] = last ? SP_COLS : saved;
    expect_set_rows(mal_csr_set_rows(m, count, nnz, rp, c, v), "outside the");
    c[nnz - 1] = saved;
    int64_t none = 0; /* rows that do not add up: every rank's error */
    EXPECT(rank == 0 ? mal_csr_set_rows(m, 0, 0, &none, NULL, NULL)
                     : mal_csr_set_rows(m, count, nnz, rp, c, v),
           MAL_ERR_ARG, "mal_csr_set_rows", "rows in all");
    check_matrix(m, "a refused mal_csr_set_rows");
    free(rp);
    free(c);
    free(v);
}

static void test_bad_aligned(mal_csr_t *m, mal_array_t *keep)
{
    mal_array_t *a = NULL;
    snapshot_t snap = take_snapshot(keep);
    const char *fn = "mal_alloc_array_aligned";
    EXPECT(mal_alloc_array_aligned("x", MPI_DOUBLE, 1, NULL, &a), MAL_ERR_ARG, fn,
           "matrix is NULL");
    EXPECT(mal_alloc_array_aligned(NULL, MPI_DOUBLE, 1, m, &a), MAL_ERR_ARG, fn, "name");
    EXPECT(mal_alloc_array_aligned("x", MPI_DOUBLE, 0, m, &a), MAL_ERR_ARG, fn, "row_len");
    EXPECT(mal_alloc_array_aligned("x", MPI_DATATYPE_NULL, 1, m, &a), MAL_ERR_ARG, fn,
           "type");
    EXPECT(mal_alloc_array_aligned("x", MPI_DOUBLE, 1, m, NULL), MAL_ERR_ARG, fn, "array");
    EXPECT(mal_alloc_array_aligned("keep", MPI_DOUBLE, 1, m, &a), MAL_ERR_EXISTS, fn,
           "already registered");
    CHECK(a == NULL && mal_find_array("x") == NULL, "a refused aligned alloc registered");
    check_unchanged(&snap, "a refused mal_alloc_array_aligned");
    check_matrix(m, "a refused mal_alloc_array_aligned");
}

/* A matrix with a follower cannot be freed; nor is a NULL on some ranks accepted. */
static void test_bad_free_csr(mal_csr_t *m)
{
    mal_array_t *x = NULL;
    CHECK(mal_alloc_array_aligned("x", MPI_DOUBLE, 1, m, &x) == MAL_OK, "aligned: %s",
          mal_error_message());
    EXPECT(mal_free_csr(m), MAL_ERR_ARG, "mal_free_csr", "aligned");
    CHECK(mal_find_csr("A") == m, "a refused mal_free_csr unregistered the matrix");
    CHECK(mal_free_array(x) == MAL_OK, "free x: %s", mal_error_message());
    if (size > 1)
        EXPECT(mal_free_csr(rank == 0 ? NULL : m), MAL_ERR_MISMATCH, "mal_free_csr", "differ");
    check_matrix(m, "a refused mal_free_csr");
}

/* With a matrix registered the weights are first checked by its nnz-weighted layout:
 * the message still names mal_rebalance. */
static void test_bad_csr_rebalance(mal_csr_t *m, mal_array_t *keep)
{
    double *w = malloc((size_t)size * sizeof *w);
    snapshot_t snap = take_snapshot(keep);
    for (int r = 0; r < size; r++)
        w[r] = 1.0 + r;
    w[0] = rank == size - 1 ? -1.0 : 1.0;
    if (rank == size - 1)
        EXPECT(mal_rebalance(w), MAL_ERR_ARG, "mal_rebalance", "weights[0]");
    else
        EXPECT(mal_rebalance(w), MAL_ERR_REMOTE, "mal_rebalance", "failed");
    if (size > 1) {
        w[0] = 1.0 + rank; /* weights differ between ranks */
        EXPECT(mal_rebalance(w), MAL_ERR_MISMATCH, "mal_rebalance", "differ");
    }
    check_unchanged(&snap, "a refused rebalance with a matrix");
    check_matrix(m, "a refused rebalance");
    free(w);
}

static void test_bad_csr(mal_array_t *keep)
{
    test_bad_alloc_csr();
    mal_csr_t *m = make_matrix();
    CHECK(m != NULL, "mal_alloc_csr: %s", mal_error_message());
    if (m == NULL)
        return;
    mal_csr_t *again = NULL;
    EXPECT(mal_alloc_csr("A", 10, 10, MPI_DOUBLE, &again), MAL_ERR_EXISTS, "mal_alloc_csr",
           "already registered");
    test_bad_set_rows(m);
    test_bad_aligned(m, keep);
    test_bad_free_csr(m);
    test_bad_csr_rebalance(m, keep);
    CHECK(mal_free_csr(m) == MAL_OK, "free the matrix: %s", mal_error_message());
}

/* ---- stencil codes: halos, neighbours, swaps ----------------------------------------- */

/* The call returned `want` with exactly `message`. */
#define EXPECT_EXACT(call, want, message)                                             \
    do {                                                                              \
        mal_status_t got_ = (call);                                                   \
        CHECK(got_ == (want), "%s returned %d (%s), want %s", #call, (int)got_,       \
              mal_strerror(got_), #want);                                             \
        CHECK(strcmp(mal_error_message(), (message)) == 0,                            \
              "%s: message \"%s\", want \"%s\"", #call, mal_error_message(), (message)); \
    } while (0)

static void test_bad_halo_alloc(mal_array_t *keep)
{
    mal_array_t *a = NULL;
    snapshot_t snap = take_snapshot(keep);
    const char *fn = "mal_alloc_halo";
    EXPECT_EXACT(mal_alloc_halo("h", MPI_DOUBLE, 10, 2, -1, &a), MAL_ERR_ARG,
                 "mal_alloc_halo(\"h\"): halo_rows is -1, must be 0..10 (at most the global "
                 "rows)");
    EXPECT_EXACT(mal_alloc_halo("h", MPI_DOUBLE, 10, 2, 11, &a), MAL_ERR_ARG,
                 "mal_alloc_halo(\"h\"): halo_rows is 11, must be 0..10 (at most the global "
                 "rows)");
    EXPECT(mal_alloc_halo("h", MPI_DOUBLE, 10, 2, 1, NULL), MAL_ERR_ARG, fn, "array is NULL");
    EXPECT(mal_alloc_halo("h", MPI_DOUBLE, 0, 2, 1, &a), MAL_ERR_ARG, fn, "global_rows");
    EXPECT(mal_alloc_halo("keep", MPI_DOUBLE, 10, 2, 1, &a), MAL_ERR_EXISTS, fn,
           "already registered");
    if (size > 1) /* the halo is one of the arguments that must agree, and is named */
        EXPECT(mal_alloc_halo("h", MPI_DOUBLE, 10, 2, 1 + rank % 2, &a), MAL_ERR_MISMATCH, fn,
               "arguments differ between ranks: halo_rows is 1 on rank 0, 2 on rank 1");
    CHECK(a == NULL && mal_find_array("h") == NULL, "a refused mal_alloc_halo registered");
    check_unchanged(&snap, "a refused mal_alloc_halo");
}

static void test_bad_neighbors(mal_array_t *keep, mal_array_t *repl)
{
    int up = -7, down = -7;
    EXPECT_EXACT(mal_neighbors(NULL, &up, &down), MAL_ERR_ARG, "mal_neighbors: array is NULL");
    EXPECT_EXACT(mal_neighbors(keep, NULL, &down), MAL_ERR_ARG,
                 "mal_neighbors(\"keep\"): up is NULL");
    EXPECT_EXACT(mal_neighbors(keep, &up, NULL), MAL_ERR_ARG,
                 "mal_neighbors(\"keep\"): down is NULL");
    EXPECT_EXACT(mal_neighbors(repl, &up, &down), MAL_ERR_ARG,
                 "mal_neighbors(\"repl\"): a replicated array has no neighbours (every rank "
                 "holds every row)");
    CHECK(up == -7 && down == -7, "a refused mal_neighbors wrote its outputs");
    EXPECT_EXACT(mal_halo_exchange(NULL), MAL_ERR_ARG, "mal_halo_exchange: array is NULL");
    EXPECT_EXACT(mal_halo_exchange(keep), MAL_ERR_ARG,
                 "mal_halo_exchange(\"keep\"): the array has no halo (allocate it with "
                 "mal_alloc_halo)");
    EXPECT_EXACT(mal_halo_exchange(repl), MAL_ERR_ARG,
                 "mal_halo_exchange(\"repl\"): a replicated array has no neighbours (every "
                 "rank holds every row)");
}

/* The message of a swap of `a` and `b`, whose block layouts differ: the first rank whose
 * rows differ, as every rank sees it. */
static void layouts_differ(mal_array_t *a, mal_array_t *b, char *message, size_t len)
{
    int64_t mine[4] = {mal_first_row(a), mal_local_rows(a), mal_first_row(b),
                       mal_local_rows(b)};
    int64_t *all = malloc((size_t)size * sizeof mine);
    MPI_Allgather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, mal_comm());
    int r = 0;
    while (r < size - 1 && all[4 * r] == all[4 * r + 2] && all[4 * r + 1] == all[4 * r + 3])
        r++;
    snprintf(message, len, "mal_swap_arrays(\"even\", \"wt\"): block layouts differ (rank %d "
             "holds rows %lld..%lld of the first, %lld..%lld of the second)", r,
             (long long)all[4 * r], (long long)(all[4 * r] + all[4 * r + 1] - 1),
             (long long)all[4 * r + 2], (long long)(all[4 * r + 2] + all[4 * r + 3] - 1));
    free(all);
}

/* Arrays of every other layout than u's: each swap with u is refused naming what differs;
 * the last two are plain arrays, refused with another of their own layout. */
static void test_swap_layouts(mal_array_t *u, mal_csr_t *m)
{
    mal_array_t *o[9] = {NULL};
    double *w = malloc((size_t)size * sizeof *w);
    for (int r = 0; r < size; r++)
        w[r] = r + 1.0;
    bool ok = mal_alloc_halo("wide", MPI_DOUBLE, 40, 2, 2, &o[0]) == MAL_OK &&
              mal_alloc_halo("long", MPI_DOUBLE, 40, 3, 1, &o[1]) == MAL_OK &&
              mal_alloc_halo("ints", MPI_INT, 40, 2, 1, &o[2]) == MAL_OK &&
              mal_alloc_halo("tall", MPI_DOUBLE, 41, 2, 1, &o[3]) == MAL_OK &&
              mal_alloc_window("rep", MPI_DOUBLE, 40, 2, MAL_REPLICATED, &o[4]) == MAL_OK &&
              mal_alloc_array_weighted("wt", MPI_DOUBLE, 40, 2, w, &o[5]) == MAL_OK &&
              mal_alloc_window("rm", MPI_DOUBLE, 40, 2,
                               (mal_distribution_t)(MAL_BLOCK | MAL_READ_MOSTLY), &o[6]) ==
                  MAL_OK &&
              mal_alloc_window("even", MPI_DOUBLE, 40, 2, MAL_BLOCK, &o[7]) == MAL_OK &&
              mal_alloc_window("own", MPI_DOUBLE, SP_ROWS, 2, MAL_BLOCK, &o[8]) == MAL_OK;
    CHECK(ok, "allocations for the swaps: %s", mal_error_message());
    const char *fn = "mal_swap_arrays(\"u\", ";
    char want[256];
    snprintf(want, sizeof want, "%s\"wide\"): halo rows differ (1 and 2)", fn);
    EXPECT_EXACT(mal_swap_arrays(u, o[0]), MAL_ERR_ARG, want);
    snprintf(want, sizeof want, "%s\"long\"): row lengths differ (2 and 3)", fn);
    EXPECT_EXACT(mal_swap_arrays(u, o[1]), MAL_ERR_ARG, want);
    snprintf(want, sizeof want, "%s\"ints\"): row sizes in bytes differ (16 and 8)", fn);
    EXPECT_EXACT(mal_swap_arrays(u, o[2]), MAL_ERR_ARG, want);
    snprintf(want, sizeof want, "%s\"tall\"): global rows differ (40 and 41)", fn);
    EXPECT_EXACT(mal_swap_arrays(u, o[3]), MAL_ERR_ARG, want);
    snprintf(want, sizeof want, "%s\"rep\"): distributions differ (MAL_BLOCK and "
             "MAL_REPLICATED)", fn);
    EXPECT_EXACT(mal_swap_arrays(u, o[4]), MAL_ERR_ARG, want);
    if (size > 1) { /* one rank: the weighted split is the even one */
        layouts_differ(o[7], o[5], want, sizeof want);
        EXPECT_EXACT(mal_swap_arrays(o[7], o[5]), MAL_ERR_ARG, want);
    }
    EXPECT_EXACT(mal_swap_arrays(u, o[6]), MAL_ERR_ARG, "mal_swap_arrays: \"rm\" is "
                 "MAL_READ_MOSTLY (its rows must not change between iterations)");
    mal_array_t *x = NULL;
    CHECK(mal_alloc_array_aligned("x", MPI_DOUBLE, 2, m, &x) == MAL_OK, "aligned: %s",
          mal_error_message());
    EXPECT_EXACT(mal_swap_arrays(o[8], x), MAL_ERR_ARG, "mal_swap_arrays(\"own\", \"x\"): they "
                 "follow different layouts (their own and the rows of \"A\")");
    mal_free_array(x);
    for (int i = 8; i >= 0; i--)
        mal_free_array(o[i]);
    free(w);
}

/* Every refusal leaves both arrays holding what they held, where they held it. */
static void test_bad_swap(mal_array_t *keep)
{
    mal_array_t *u = NULL, *v = NULL;
    mal_csr_t *m = make_matrix();
    CHECK(m != NULL && mal_alloc_halo("u", MPI_DOUBLE, 40, 2, 1, &u) == MAL_OK &&
              mal_alloc_halo("v", MPI_DOUBLE, 40, 2, 1, &v) == MAL_OK,
          "allocations: %s", mal_error_message());
    if (u == NULL || v == NULL || m == NULL)
        return;
    double *du = mal_local_data(u), *dv = mal_local_data(v);
    for (int64_t i = 0; i < 2 * mal_local_rows(u); i++) {
        du[i] = 1.0 + (double)i;
        dv[i] = -1.0 - (double)i;
    }
    snapshot_t snap = take_snapshot(keep);
    EXPECT_EXACT(mal_swap_arrays(NULL, v), MAL_ERR_ARG, "mal_swap_arrays: a is NULL");
    EXPECT_EXACT(mal_swap_arrays(u, NULL), MAL_ERR_ARG, "mal_swap_arrays: b is NULL");
    EXPECT_EXACT(mal_swap_arrays(u, u), MAL_ERR_ARG,
                 "mal_swap_arrays(\"u\", \"u\"): a and b are the same array");
    test_swap_layouts(u, m);
    int64_t bad = 0;
    for (int64_t i = 0; i < 2 * mal_local_rows(u); i++)
        bad += du[i] != 1.0 + (double)i || dv[i] != -1.0 - (double)i;
    CHECK(mal_local_data(u) == du && mal_local_data(v) == dv && bad == 0,
          "a refused swap changed the arrays (%lld values)", (long long)bad);
    check_unchanged(&snap, "a refused mal_swap_arrays");
    mal_free_array(v);
    mal_free_array(u);
    mal_free_csr(m);
}

static void test_bad_stencil(mal_array_t *keep)
{
    mal_array_t *repl = NULL;
    CHECK(mal_alloc_window("repl", MPI_DOUBLE, 8, 1, MAL_REPLICATED, &repl) == MAL_OK,
          "alloc: %s", mal_error_message());
    test_bad_halo_alloc(keep);
    test_bad_neighbors(keep, repl);
    test_bad_swap(keep);
    mal_free_array(repl);
}

/* ---- malleability, values, the monitor ---------------------------------------------- */

/* Refused before anything is spawned or released; the last reconfiguration says so. */
static void test_bad_resize(mal_array_t *keep)
{
    snapshot_t snap = take_snapshot(keep);
    double *w = malloc(((size_t)size + 1) * sizeof *w);
    for (int r = 0; r <= size; r++) /* the last weight is bad for size + 1 or size - 1 */
        w[r] = r == size || r == size - 2 ? -1.0 : 1.0;
    EXPECT(mal_expand(0, MAL_SPAWN_DEFAULT, NULL), MAL_ERR_ARG, "mal_expand", "count");
    EXPECT(mal_expand(1, (mal_spawn_mode_t)9, NULL), MAL_ERR_ARG, "mal_expand", "spawn mode");
    EXPECT(mal_expand(1, MAL_SPAWN_PER_CALL, w), MAL_ERR_ARG, "mal_expand", "weights[");
    mal_reconfig_stats_t s;
    CHECK(mal_last_reconfig(&s) == MAL_OK && s.action == MAL_ACTION_EXPAND &&
              s.status == MAL_ERR_ARG && s.procs_after == size,
          "a refused expansion is not reported as such");
    EXPECT(mal_shrink(0, NULL, NULL), MAL_ERR_ARG, "mal_shrink", "count");
    EXPECT(mal_shrink(size, NULL, NULL), MAL_ERR_ARG, "mal_shrink", "count");
    if (size > 1) {
        int out_of_range[1] = {size};
        EXPECT(mal_shrink(1, out_of_range, NULL), MAL_ERR_ARG, "mal_shrink", "ranks[0]");
        EXPECT(mal_shrink(1, NULL, w), MAL_ERR_ARG, "mal_shrink", "weights[");
    }
    if (size > 2) {
        int twice[2] = {0, 0};
        EXPECT(mal_shrink(2, twice, NULL), MAL_ERR_ARG, "mal_shrink", "twice");
    }
    CHECK(mal_comm() != MPI_COMM_NULL, "a refused shrink released this process");
    check_unchanged(&snap, "a refused expand or shrink");
    free(w);
}

static void test_bad_values(void)
{
    double v = 1.5;
    char long_name[80];
    memset(long_name, 'v', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    const char *fn = "mal_register_value";
    EXPECT(mal_register_value(NULL, &v, sizeof v), MAL_ERR_ARG, fn, "name is NULL");
    EXPECT(mal_register_value("v", NULL, sizeof v), MAL_ERR_ARG, fn, "value is NULL");
    EXPECT(mal_register_value("", &v, sizeof v), MAL_ERR_ARG, fn, "name");
    EXPECT(mal_register_value(long_name, &v, sizeof v), MAL_ERR_ARG, fn, "name");
    EXPECT(mal_register_value("v", &v, 0), MAL_ERR_ARG, fn, "0 bytes");
    EXPECT(mal_register_value("v", &v, (2u << 20)), MAL_ERR_ARG, fn, "bytes");
    CHECK(v == 1.5, "a refused registration changed the value");
}

static void test_bad_getters(void)
{
    EXPECT(mal_last_rebalance(NULL), MAL_ERR_ARG, "mal_last_rebalance", "stats is NULL");
    EXPECT(mal_last_reconfig(NULL), MAL_ERR_ARG, "mal_last_reconfig", "stats is NULL");
    EXPECT(mal_monitor_read(NULL), MAL_ERR_ARG, "mal_monitor_read", "m is NULL");
    EXPECT(mal_last_prediction(NULL), MAL_ERR_ARG, "mal_last_prediction", "p is NULL");
    EXPECT(mal_last_decision(NULL), MAL_ERR_ARG, "mal_last_decision", "d is NULL");
    mal_monitor_t before, after;
    CHECK(mal_monitor_read(&before) == MAL_OK, "monitor read");
    EXPECT(mal_set_work(-1.0), MAL_ERR_ARG, "mal_set_work", "units");
    EXPECT(mal_set_work(NAN), MAL_ERR_ARG, "mal_set_work", "units");
    EXPECT(mal_set_work(INFINITY), MAL_ERR_ARG, "mal_set_work", "units");
    CHECK(mal_monitor_read(&after) == MAL_OK && after.work == before.work,
          "a refused mal_set_work counted work");
}

/* A configuration for one mal_step scenario: quiet, the policy off. */
static mal_config_t step_config(void)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.log_errors = false;
    cfg.summary = false;
    cfg.policy = "off";
    return cfg;
}

/* Plan entries the process set they meet cannot carry out: mal_init refuses the plan,
 * naming the entry and how the count came to be. */
static void test_bad_plan(void)
{
    char plan[256], expected[256];
    mal_config_t cfg = step_config();
    weights_plan(plan, sizeof plan, "", 1, size + 1); /* one weight too many */
    cfg.plan = plan;
    snprintf(expected, sizeof expected, "entry 1 (iteration 1, \"w=\" with %d weights): %d "
             "process%s run%s then (%d at the start)", size + 1, size, size == 1 ? "" : "es",
             size == 1 ? "s" : "", size);
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "mal_init", expected);
    snprintf(plan, sizeof plan, "1:+1,2:-%d", size + 1);
    snprintf(expected, sizeof expected, "entry 2 (iteration 2, releases %d processes, which "
             "leaves none): %d or %d processes run then (%d at the start, +1 at iteration "
             "1; each change may fail)", size + 1, size, size + 1, size);
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "mal_init", expected);
    snprintf(plan, sizeof plan, "1:+1,3:-@%d", size + 1);
    snprintf(expected, sizeof expected, "entry 2 (iteration 3, releases rank %d)", size + 1);
    EXPECT(mal_init(MPI_COMM_WORLD, &cfg), MAL_ERR_ARG, "mal_init", expected);
    CHECK(!mal_is_initialized(), "a refused plan leaves libmal uninitialised");
}

/* A plan entry that meets another process count than mal_init predicted, because the
 * expansion before it failed (its program cannot be spawned): mal_step fails naming
 * itself (then the call it made for the entry), and the data stay. */
static void test_bad_step(void)
{
    char plan[256];
    weights_plan(plan, sizeof plan, "1:+1,", 2, size + 1);
    mal_config_t cfg = step_config();
    cfg.plan = plan;
    cfg.spawn_program = "/nonexistent/libmal-test-program";
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "init with plan '%s': %s", plan,
          mal_error_message());
    mal_array_t *a = NULL;
    CHECK(mal_alloc_window("keep", MPI_DOUBLE, 40, 1, MAL_BLOCK, &a) == MAL_OK, "alloc");
    fill_or_count(a, true);
    snapshot_t snap = take_snapshot(a);
    if (mal_spawn_supported(NULL)) /* the spawn of the missing program fails */
        EXPECT(mal_step(), MAL_ERR_SPAWN, "mal_step",
               rank == 0 ? "cannot spawn" : "could not spawn");
    else /* an MPI that cannot spawn refuses first, on every rank */
        EXPECT(mal_step(), MAL_ERR_UNSUPPORTED, "mal_step", "cannot start processes");
    check_unchanged(&snap, "a plan entry whose spawn failed");
    EXPECT(mal_step(), MAL_ERR_ARG, "mal_step", "weights for");
    check_unchanged(&snap, "a plan entry with the wrong weight count");
    CHECK(mal_step() == MAL_CONTINUE, "mal_step after the plan: %s", mal_error_message());
    mal_finalize();
}

/* A rank without memory to gather the monitor's interval: every rank's mal_step fails
 * (none is left in the gather), nothing else changes, and the next interval works. */
static void test_monitor_fault(void)
{
    mal_config_t cfg = step_config();
    cfg.sample_interval = 2;
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "init: %s", mal_error_message());
    mal_array_t *a = NULL;
    CHECK(mal_alloc_window("keep", MPI_DOUBLE, 40, 1, MAL_BLOCK, &a) == MAL_OK, "alloc");
    fill_or_count(a, true);
    snapshot_t snap = take_snapshot(a);
    CHECK(mal_step() == MAL_CONTINUE, "step 1: %s", mal_error_message());
    bool faulty = rank == size - 1;
    if (faulty)
        setenv("MAL_FAULT_MONITOR", "1", 1);
    EXPECT(mal_step(), faulty ? MAL_ERR_NOMEM : MAL_ERR_REMOTE, "mal_step",
           faulty ? "MAL_FAULT_MONITOR" : "sampling interval");
    unsetenv("MAL_FAULT_MONITOR");
    check_unchanged(&snap, "a failed gather");
    CHECK(mal_iteration() == 2, "iteration %lld after the failed step, not 2",
          (long long)mal_iteration());
    CHECK(mal_step() == MAL_CONTINUE && mal_step() == MAL_CONTINUE,
          "the interval after a failed gather: %s", mal_error_message());
    check_unchanged(&snap, "the interval after a failed gather");
    mal_finalize();
}

static void test_status_strings(void)
{
    CHECK(strcmp(mal_strerror(MAL_OK), "success") == 0, "MAL_OK string");
    for (int s = -11; s < 0; s++)
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
    fill_or_count(keep, true);
    test_bad_alloc(keep);
    test_bad_weighted_alloc(keep);
    test_collective_disagreement(keep);
    test_bad_rebalance(keep);
    test_bad_csr(keep);
    test_bad_stencil(keep);
    test_bad_resize(keep);
    test_bad_values();
    test_bad_getters();
    CHECK(mal_free_array(NULL) == MAL_OK, "free(NULL) is a no-op");
    CHECK(mal_free_array(keep) == MAL_OK && mal_buffer_count() == 0, "free");
    CHECK(mal_finalize() == MAL_OK, "finalize");
    test_min_rows();
    test_bad_plan();
    test_bad_step();
    test_monitor_fault();
    int rc = mpitest_verdict("test_errors", "every bad input refused, nothing changed");
    MPI_Finalize();
    return rc;
}
